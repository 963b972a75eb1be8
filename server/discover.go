package server

import "github.com/parley-mcp/parley/mcp"

// discover answers server/discover from what is registered.
func (s *Server) discover() *mcp.DiscoverResult {
	return &mcp.DiscoverResult{
		SupportedVersions: s.SupportedVersions(),
		Capabilities:      *s.capabilities(),
		Instructions:      s.opts.Instructions,
		CacheableResult: mcp.CacheableResult{
			TTLMs:      s.opts.DiscoverTTL.Milliseconds(),
			CacheScope: s.opts.CacheScope,
		},
	}
}
