package client

import "github.com/parley-mcp/parley/mcp"

// SetVersionsForTest makes c speak exactly vs, newest (preferred) first.
// Parley speaks a single modern version today, so the tests use it to play
// a client that is ahead of its server, as every client will be once a
// newer version exists.
func SetVersionsForTest(c *Client, vs ...mcp.ProtocolVersion) {
	c.versions = vs
}
