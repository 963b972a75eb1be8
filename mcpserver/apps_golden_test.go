package mcpserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/internal/wiregolden"
	"github.com/parley-mcp/parley/transport"
)

// TestAppsGolden replays the exchanges of testdata/apps/*.txtar against
// newAppServer (internal/wiregolden: "in" the messages sent, "out" every
// message the server sent, byte for byte). An archive whose first message
// is an initialize is a 2025-11-25 session; each message the server sends
// is validated against its generation's schema (not held to the members
// it names: tool schemas carry JSON Schema keywords, and a 2025-era
// initialize carries capabilities.extensions, as the extension has it).
// PARLEY_UPDATE_GOLDEN=1 rewrites "out" after a deliberate change; review
// the diff.
func TestAppsGolden(t *testing.T) {
	wiregolden.Each(t, "testdata/apps/*.txtar", replayApps)
}

func replayApps(t *testing.T, input []byte) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := newAppServer(t)
	clientEnd, serverEnd := transport.NewMemoryPipe()
	done := make(chan error, 1)
	go func() { done <- s.ServeConn(ctx, serverEnd) }()
	lines := wiregolden.Lines(input)
	version := wiregolden.Version(lines)
	got := wiregolden.Replay(t, ctx, clientEnd, lines, func(method string, msg []byte) {
		spectest.ValidateMessage(t, version, msg, method)
	})
	clientEnd.Close()
	if err := <-done; err != nil {
		t.Errorf("ServeConn: %v", err)
	}
	return got
}
