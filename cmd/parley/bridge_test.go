package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
	"github.com/parley-mcp/parley/transport/stdio"
)

// TestBridgeCommand: parley bridge URL serves a 2025-11-25 host on its
// stdin and stdout and relays its calls to the 2026-07-28 server at URL;
// when the host leaves, parley exits 0. Without a URL it is a usage error.
func TestBridgeCommand(t *testing.T) {
	url := serveFixtureHTTP(t)

	hostOut, bridgeIn := io.Pipe() // host writes, parley reads its stdin
	bridgeOut, hostIn := io.Pipe() // parley writes its stdout, host reads
	var stderr lockedBuffer
	a := &app{stdin: hostOut, stdout: hostIn, stderr: &stderr, configDir: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	exited := make(chan int, 1)
	go func() {
		exited <- run(ctx, a, []string{"bridge", url})
		hostIn.Close()
	}()

	host := client.New(mcp.Implementation{Name: "desktop-host", Version: "1"}, &client.Options{ProtocolVersion: "2025-11-25"})
	sess, err := host.Connect(ctx, transport.NewMemoryTransport(stdio.NewConn(bridgeOut, bridgeIn, nil)))
	if err != nil {
		t.Fatalf("the host's initialize through the bridge: %v (stderr %s)", err, stderr.String())
	}
	if got := sess.ServerInfo(); got == nil || got.Name != "fixture" {
		t.Errorf("the host sees server %+v, want the remote's", got)
	}
	res, err := sess.CallTool(ctx, "add", map[string]int{"a": 1, "b": 2})
	if err != nil || len(res.Content) != 1 {
		t.Fatalf("tools/call through the bridge: %+v %v", res, err)
	}
	if text, ok := res.Content[0].(*mcp.TextContent); !ok || text.Text != "3" {
		t.Fatalf("tools/call through the bridge: %+v %v", res, err)
	}
	sess.Close()
	bridgeIn.Close()
	select {
	case code := <-exited:
		if code != exitOK {
			t.Errorf("exit %d when the host left, stderr:\n%s", code, stderr.String())
		}
	case <-ctx.Done():
		t.Fatal("parley bridge did not exit when the host left")
	}

	r := runApp(t, &app{}, "bridge")
	if r.code != exitUsage || !strings.Contains(r.stderr, "URL") {
		t.Errorf("bridge without a URL: exit %d, stderr %q", r.code, r.stderr)
	}
}
