package server

import (
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

// TestMaxListenStreamsResolved: zero means the default, negative no bound.
func TestMaxListenStreamsResolved(t *testing.T) {
	for opt, want := range map[int]int{0: DefaultMaxListenStreams, -1: 0, 5: 5} {
		s := New(mcp.Implementation{Name: "l", Version: "1"}, &Options{MaxListenStreams: opt})
		if got := s.maxListenStreams(); got != want {
			t.Errorf("MaxListenStreams %d resolves to %d, want %d", opt, got, want)
		}
	}
}
