package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"

	"github.com/parley-mcp/parley/transport"
)

// silentServer is a transport whose server reads every request and never
// answers, as a program that is not an MCP server on stdio does.
func silentServer() func(context.Context) (transport.Transport, error) {
	return func(context.Context) (transport.Transport, error) {
		client, server := transport.NewMemoryPipe()
		go func() {
			for {
				if _, err := server.Read(context.Background()); err != nil {
					server.Close()
					return
				}
			}
		}()
		return transport.NewMemoryTransport(client), nil
	}
}

// A server that never answers gets 10 seconds (of the bubble's clock) for
// its first answer; then parley says what is likely wrong, and how to wait
// longer, with exit code 4.
func TestFirstAnswerDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := runApp(t, &app{dial: silentServer()}, "tools", "list")
		want := "parley: the server has not answered in 10s; a stdio server must speak JSON-RPC on its standard output (--connect-timeout sets the wait)\n"
		if r.code != exitConnection || r.stderr != want {
			t.Errorf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, exitConnection, want)
		}
	})
}

// --connect-timeout sets the deadline; 0 lifts it (the wait then ends only
// with the run's own context, here the test's 30 seconds).
func TestConnectTimeoutFlag(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := runApp(t, &app{dial: silentServer()}, "--connect-timeout", "20s", "tools", "list")
		if r.code != exitConnection || !strings.Contains(r.stderr, "has not answered in 20s") {
			t.Errorf("--connect-timeout 20s: exit %d, stderr %q", r.code, r.stderr)
		}
	})
	for _, bad := range []string{"-1s", "soon"} {
		if _, _, err := parseArgs([]string{"--connect-timeout", bad, "info"}); err == nil {
			t.Errorf("--connect-timeout %s: accepted", bad)
		}
	}
	o, _, err := parseArgs([]string{"--connect-timeout", "0", "info"})
	if err != nil || o.connectTimeout != 0 {
		t.Errorf("--connect-timeout 0: %v, %v", o, err)
	}
	if r := runFixture(t, "--connect-timeout", "0", "tools", "list"); r.code != exitOK {
		t.Errorf("--connect-timeout 0: exit %d, stderr %q; want no deadline", r.code, r.stderr)
	}
}

// A URL gets no deadline for its first answer (its connection may include
// a login in the browser): a server over HTTP slower than
// --connect-timeout is waited for.
func TestConnectTimeoutNotForURLs(t *testing.T) {
	s, err := newFixture()
	if err != nil {
		t.Fatal(err)
	}
	h := s.HTTPHandler(nil)
	var first sync.Once
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first.Do(func() { time.Sleep(300 * time.Millisecond) }) // longer than the deadline below
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		h.Shutdown(context.Background())
		slow.Close()
	})
	r := runApp(t, &app{configDir: t.TempDir()}, "--connect-timeout", "10ms", slow.URL, "tools", "call", "add", "a=1", "b=2")
	if r.code != exitOK || r.stdout != "3\n" {
		t.Errorf("exit %d, stdout %q, stderr %q; want the slow server waited for", r.code, r.stdout, r.stderr)
	}
}

// The deadline bounds only the first answer: a session that answered in
// time is not ended by it later.
func TestFirstAnswerDeadlineOnlyFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := mcpserver.New(mcp.Implementation{Name: "slow", Version: "1"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := mcpserver.AddTool(s, &mcp.Tool{Name: "slow"}, func(context.Context, *mcpserver.Call, none) (string, error) {
			time.Sleep(20 * time.Second)
			return "done after 20s", nil
		}); err != nil {
			t.Fatal(err)
		}
		dial := func(context.Context) (transport.Transport, error) { return s.InMemoryTransport(), nil }
		r := runApp(t, &app{dial: dial}, "--connect-timeout", "1s", "tools", "call", "slow")
		if r.code != exitOK || r.stdout != "done after 20s\n" {
			t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})
}

// A real program that never speaks (sleep) gets the same message.
func TestFirstAnswerDeadlineStdio(t *testing.T) {
	r := runApp(t, &app{}, "--connect-timeout", "100ms", "tools", "list", "--", "sleep", "100")
	if r.code != exitConnection || !strings.Contains(r.stderr, "the server has not answered in 100ms; a stdio server must speak JSON-RPC") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}
