package client_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport/stdio"
)

// syncBuffer is a bytes.Buffer safe for the copying goroutine of exec.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// serverCommand returns a command that runs this test binary as a stdio
// MCP server in mode, and a buffer collecting its stderr.
func serverCommand(t *testing.T, mode string) (*exec.Cmd, *stdio.CommandTransport, *syncBuffer) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("cannot find the test binary: %v", err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	// Under -race the child would sleep a second at exit (the race
	// runtime's atexit_sleep_ms) before the parent sees it go.
	cmd.Env = append(os.Environ(), serverEnv+"="+mode, "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	stderr := new(syncBuffer)
	t.Cleanup(func() {
		if t.Failed() && stderr.String() != "" {
			t.Logf("server stderr:\n%s", stderr)
		}
	})
	return cmd, stdio.NewCommandTransport(cmd, &stdio.CommandOptions{Stderr: stderr}), stderr
}

// flowDeadline bounds the whole flow of a test that runs a server
// process: Connect, Listen (which no RequestTimeout cuts) and the calls.
const flowDeadline = 30 * time.Second

func TestStdioEndToEnd(t *testing.T) {
	cmd, tr, _ := serverCommand(t, "serve")
	started := make(chan struct{}, 1)
	c := newClient(&client.Options{OnProgress: func(ctx context.Context, p *mcp.ProgressNotificationParams) {
		if p.Message == "started" {
			select {
			case started <- struct{}{}:
			default:
			}
		}
	}})
	ctx, cancelFlow := context.WithTimeout(context.Background(), flowDeadline)
	defer cancelFlow()
	sess, err := c.Connect(ctx, tr)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	closed := false
	defer func() {
		if !closed {
			sess.Close()
		}
	}()
	if v := sess.ProtocolVersion(); v != mcp.LatestVersion {
		t.Errorf("ProtocolVersion() = %q", v)
	}
	if info := sess.ServerInfo(); info == nil || info.Name != "test-server" {
		t.Errorf("ServerInfo() = %+v", info)
	}

	// List tools (three pages) and call one.
	var names []string
	for tool, err := range sess.Tools(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if want := []string{"t1", "t2", "t3", "t4", "t5"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	res, err := sess.CallTool(ctx, "echo", map[string]string{"text": "over stdio"})
	if err != nil || text(res) != "over stdio" {
		t.Fatalf("CallTool = %+v, %v", res, err)
	}

	// A listen stream, and its cancellation, over stdio.
	sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true})
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	if !sub.Granted.ToolsListChanged {
		t.Errorf("Granted = %+v", sub.Granted)
	}
	if _, err := sess.CallTool(ctx, "notify", nil); err != nil {
		t.Fatal(err)
	}
	if e := testwait.Recv(t, sub.Events(), "the tool list change on the listen stream"); e.Method != mcp.NotificationToolListChanged {
		t.Errorf("event %+v", e)
	}
	sub.Close()
	if err := sub.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("Err() = %v after Close", err)
	}

	// Cancelling a call stops its handler in the server process.
	cctx, cancel := context.WithCancel(ctx)
	done := async(func() error { _, err := sess.CallTool(cctx, "slow", nil); return err })
	testwait.Recv(t, started, "the slow call's start")
	cancel()
	if err := testwait.Recv(t, done, "the end of the cancelled call"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled CallTool: %v", err)
	}
	if res, err := sess.CallTool(ctx, "slow-ended", nil); err != nil || text(res) != "it ended" {
		t.Errorf("slow-ended = %+v, %v", res, err)
	}

	// Close shuts the server down and reaps it.
	closed = true
	if err := sess.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if cmd.ProcessState == nil {
		t.Fatal("the server process was not reaped")
	}
	if !cmd.ProcessState.Exited() || cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("server ended with %v, want exit status 0", cmd.ProcessState)
	}
	select {
	case <-sess.Done():
	default:
		t.Error("Done not closed after Close")
	}
}

func TestStdioServerCrashes(t *testing.T) {
	cmd, tr, _ := serverCommand(t, "crash")
	ctx, cancelFlow := context.WithTimeout(context.Background(), flowDeadline)
	defer cancelFlow()
	sess, err := newClient(nil).Connect(ctx, tr)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.CallTool(ctx, "echo", nil); !errors.Is(err, jsonrpc.ErrConnClosed) {
		t.Errorf("CallTool on a crashing server: %v, want ErrConnClosed", err)
	}
	testwait.Recv(t, sess.Done(), "the end of the session whose server crashed")
	testwait.Recv(t, sub.Done(), "the end of the listen stream whose server crashed")
	if err := sub.Err(); !errors.Is(err, jsonrpc.ErrConnClosed) {
		t.Errorf("subscription Err() = %v, want ErrConnClosed", err)
	}
	err = sess.Close()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 3 {
		t.Errorf("Close: %v, want the server's exit status 3", err)
	}
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 3 {
		t.Errorf("ProcessState = %v", cmd.ProcessState)
	}
}

func TestStdioConnectFailsCleanly(t *testing.T) {
	// A version the client cannot speak never starts the process.
	cmd, tr, _ := serverCommand(t, "serve")
	_, err := newClient(&client.Options{ProtocolVersion: mcp.Version20241105}).Connect(context.Background(), tr)
	if !errors.Is(err, client.ErrUnsupportedVersion) {
		t.Fatalf("Connect: %v", err)
	}
	if cmd.Process != nil {
		t.Error("the server was started for a version the client cannot speak")
	}
}

// TestStdioAutoFallsBackToALegacyServer: in automatic mode the client
// probes with server/discover; a legacy server that exits on it is started
// again, and the session settles on the initialize handshake.
func TestStdioAutoFallsBackToALegacyServer(t *testing.T) {
	_, tr, stderr := serverCommand(t, "legacy-only")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := client.New(mcp.Implementation{Name: "auto", Version: "1"}, nil).Connect(ctx, tr)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer sess.Close()
	if sess.ProtocolVersion().Era() != mcp.EraLegacy {
		t.Errorf("ProtocolVersion = %s, want a legacy version", sess.ProtocolVersion())
	}
	if !strings.Contains(stderr.String(), "expected initialize first") {
		t.Errorf("the first server process did not see the probe; stderr:\n%s", stderr)
	}
	res, err := sess.CallTool(ctx, "echo", map[string]string{"text": "after the fallback"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "after the fallback" {
		t.Errorf("echo = %q", got)
	}
}

// TestStdioLegacyWire: over stdio too, a legacy session's messages both
// ways name only what 2025-11-25 defines (legacyWire checks each), the
// cacheable results of a Parley server included.
func TestStdioLegacyWire(t *testing.T) {
	spectest.Dir(t) // a missing fixture fails here, not on legacyWire's reading goroutine, where FailNow would stall
	_, tr, _ := serverCommand(t, "serve")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := newClient(pinned(client.Options{})).Connect(ctx, legacyWireTransport{t, tr})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer sess.Close()
	if _, err := sess.ListTools(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.ListResourceTemplates(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.ReadResource(ctx, "file:///readme.txt"); err != nil {
		t.Fatal(err)
	}
}
