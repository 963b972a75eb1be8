package interop

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// TestParleyClientAcrossTypeScriptRestart: the sessionful TypeScript
// server (server-http.mjs stateful) is killed and started again on the
// same port under a Parley client, twice, as a deployment restarts: its
// sessions are gone. The restarted server answers the old session id 400
// "Server not initialized" (not the 404 the specification asks for), and
// a ping on the session confirms the loss (issue 30 §4, design record
// 041). The client opens a new session and repeats what is safe to repeat:
// tools/list goes through; the server's elicitation reaches the client on
// the new session; a tools/call of a tool without hints is not repeated
// (*client.SessionEndedError, a new session open), and the caller's own
// call then goes through.
func TestParleyClientAcrossTypeScriptRestart(t *testing.T) {
	needNode(t)
	conns := &connTracker{}
	srv := startRestartable(t, "")
	var asked atomic.Int32
	c := client.New(mcp.Implementation{Name: "parley-interop", Version: "1.0.0"}, &client.Options{
		Logger: slog.New(slog.DiscardHandler),
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
	defer cancel()
	tr := streamhttp.NewClientTransport(srv.url, &streamhttp.ClientOptions{
		Logger:     slog.New(slog.DiscardHandler),
		HTTPClient: &http.Client{Transport: &http.Transport{DialContext: conns.dial}},
	})
	sess, err := c.Connect(ctx, tr)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer sess.Close()
	if v := sess.ProtocolVersion(); v != mcp.Version20251125 {
		t.Fatalf("ProtocolVersion %q, want a legacy session", v)
	}
	call := func(name string) (string, error) {
		res, err := sess.CallTool(ctx, name, nil)
		if err != nil {
			return "", err
		}
		return text(res), nil
	}
	if got, err := call("ask"); err != nil || got != "accept:Ada" {
		t.Fatalf("ask: %q, %v", got, err)
	}
	first := sess.TransportSessionID()

	// The server restarts; a list goes through on a new session.
	srv = srv.restart(t, conns)
	tools, err := sess.ListTools(ctx, "")
	if err != nil || len(tools.Tools) != 2 {
		t.Fatalf("ListTools after the restart: %+v, %v", tools, err)
	}
	if id := sess.TransportSessionID(); id == "" || id == first {
		t.Errorf("session id %q after the restart, was %q", id, first)
	}
	if got, err := call("ask"); err != nil || got != "accept:Ada" {
		t.Fatalf("ask on the new session: %q, %v", got, err)
	}
	if n := asked.Load(); n != 2 {
		t.Errorf("asked %d times, want 2", n)
	}

	// Again; a tool without hints is not repeated.
	srv.restart(t, conns)
	_, err = call("greet")
	var ended *client.SessionEndedError
	if !errors.As(err, &ended) || !ended.Reinitialized || !errors.Is(err, client.ErrSessionEnded) {
		t.Fatalf("greet after the second restart: %v, want a *client.SessionEndedError with Reinitialized", err)
	}
	if got, err := call("greet"); err != nil || got != "hello" {
		t.Fatalf("greet, sent again: %q, %v", got, err)
	}
}

// restartable is a server-http.mjs stateful process that a test kills and
// starts again on the same port.
type restartable struct {
	url   string
	port  string
	cmd   *exec.Cmd
	stdin io.Closer
}

// startRestartable starts server-http.mjs stateful on port ("" for any),
// and stops it when the test ends.
func startRestartable(t *testing.T, port string) *restartable {
	t.Helper()
	args := []string{"stateful"}
	if port != "" {
		args = append(args, port)
	}
	cmd := nodeCommand(t, "server-http.mjs", args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &restartable{cmd: cmd, stdin: stdin}
	t.Cleanup(func() { r.stop() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("server-http.mjs did not start: %v", err)
	}
	u, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok {
		t.Fatalf("server-http.mjs printed %q", line)
	}
	go io.Copy(io.Discard, stdout)
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	r.url, r.port = u, parsed.Port()
	return r
}

// stop ends the process, once.
func (r *restartable) stop() {
	if r.cmd.ProcessState != nil {
		return
	}
	r.stdin.Close()
	r.cmd.Process.Kill()
	r.cmd.Wait()
}

// restart kills the server, as a crash or a deployment does, waits until
// the client has seen its connections close (as it has by the time it
// sends anything after a real restart), and starts a new one on the same
// port.
func (r *restartable) restart(t *testing.T, conns *connTracker) *restartable {
	t.Helper()
	before := conns.snapshot()
	r.stop()
	conns.waitClosed(t, before)
	next := startRestartable(t, r.port)
	if next.url != r.url {
		t.Fatalf("the restarted server listens at %s, not %s", next.url, r.url)
	}
	return next
}

// connTracker tracks the connections a client's HTTP transport dials.
type connTracker struct {
	mu     sync.Mutex
	open   map[*trackedConn]bool
	change chan struct{} // closed and replaced when a connection closes
}

type trackedConn struct {
	net.Conn
	ct   *connTracker
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.ct.mu.Lock()
		delete(c.ct.open, c)
		if c.ct.change != nil {
			close(c.ct.change)
			c.ct.change = nil
		}
		c.ct.mu.Unlock()
	})
	return c.Conn.Close()
}

func (ct *connTracker) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: conn, ct: ct}
	ct.mu.Lock()
	if ct.open == nil {
		ct.open = make(map[*trackedConn]bool)
	}
	ct.open[tc] = true
	ct.mu.Unlock()
	return tc, nil
}

func (ct *connTracker) snapshot() []*trackedConn {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	var out []*trackedConn
	for c := range ct.open {
		out = append(out, c)
	}
	return out
}

// waitClosed waits until the client has closed every connection of
// conns, failing the test after processTimeout.
func (ct *connTracker) waitClosed(t *testing.T, conns []*trackedConn) {
	t.Helper()
	deadline := time.NewTimer(processTimeout)
	defer deadline.Stop()
	for {
		ct.mu.Lock()
		left := 0
		for _, c := range conns {
			if ct.open[c] {
				left++
			}
		}
		if ct.change == nil {
			ct.change = make(chan struct{})
		}
		change := ct.change
		ct.mu.Unlock()
		if left == 0 {
			return
		}
		select {
		case <-change:
		case <-deadline.C:
			t.Fatalf("waited %v for the client to close %d connections to the killed server", processTimeout, left)
		}
	}
}
