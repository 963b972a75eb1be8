package interop

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/parley-mcp/parley/bridge"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport/stdio"
)

// TestTypeScriptClientThroughBridge: the TypeScript SDK v2 client spawns
// the bridge as its stdio server (the test binary, as `parley bridge URL`
// would be) and calls a tool that asks for a name.
//
//   - legacy: the client pinned to the 2025 generation (initialize, and
//     2025-11-25) reaches a Parley server that speaks 2026-07-28 only; the
//     server's input_required round reaches the client as
//     elicitation/create, sent by the bridge.
//   - auto: the client speaking 2026-07-28 to the bridge reaches a
//     TypeScript server of the 2025 generation (sessionful Streamable
//     HTTP); the server's elicitation/create reaches the client as an
//     input_required round, which it answers by calling again.
func TestTypeScriptClientThroughBridge(t *testing.T) {
	needNode(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	modern, err := newParleyServer(mcp.LatestVersion)
	if err != nil {
		t.Fatal(err)
	}
	modernSrv := httptest.NewServer(modern.HTTPHandler(nil))
	t.Cleanup(modernSrv.Close)
	for _, tc := range []struct {
		name, mode string
		remote     func(t *testing.T) string
		version    mcp.ProtocolVersion
	}{
		{"legacy-client/parley-2026-server", "legacy", func(*testing.T) string { return modernSrv.URL }, mcp.Version20251125},
		{"2026-client/ts-2025-server", "auto", func(t *testing.T) string { return startHTTPServer(t, "stateful") }, mcp.LatestVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := nodeCommand(t, "client.mjs", tc.mode, "stdio", self)
			cmd.Env = append(os.Environ(), serveEnv+"=bridge", bridgeURLEnv+"="+tc.remote(t))
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("client.mjs %s stdio (the bridge): %v", tc.mode, err)
			}
			checkClientReport(t, out, string(tc.version), " through the bridge")
		})
	}
}

// serveBridge is the bridge on the process's stdin and stdout, to the
// server at $PARLEY_INTEROP_BRIDGE_URL, until stdin closes: the test
// binary's third life, as the TypeScript client's stdio server. It
// returns the process's exit code.
func serveBridge() int {
	url := os.Getenv(bridgeURLEnv)
	if url == "" {
		fmt.Fprintln(os.Stderr, "parley bridge: no", bridgeURLEnv)
		return 2
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := bridge.ServeURL(context.Background(), stdio.ServerConn(nil), url, &bridge.Options{Logger: logger}); err != nil {
		fmt.Fprintln(os.Stderr, "parley bridge:", err)
		return 1
	}
	return 0
}
