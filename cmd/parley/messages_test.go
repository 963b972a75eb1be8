package main

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/transport"
)

// A refused connection and a server command that does not exist are said
// as such, in one line, without the JSON-RPC error and the transport's
// layers they came through; with --json, stdout holds the same as JSON.
func TestConnectionFailureWords(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/mcp"
	ln.Close() // nothing listens there now
	missing := filepath.Join(t.TempDir(), "no-such-server")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{closed, "info"}, "cannot reach the server at " + closed + ": connection refused (is the server running, and on that port?)"},
		{[]string{"info", "--", missing}, "cannot start the server " + missing + ": no such file or directory"},
	} {
		r := runApp(t, &app{configDir: t.TempDir()}, c.args...)
		if r.code != exitConnection || r.stderr != "parley: "+c.want+"\n" {
			t.Errorf("parley %v: exit %d, stderr %q; want %d and %q", c.args, r.code, r.stderr, exitConnection, c.want)
		}
		r = runApp(t, &app{configDir: t.TempDir()}, append([]string{"--json"}, c.args...)...)
		var doc struct {
			Error struct {
				Code    *int   `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.Error.Message != c.want || doc.Error.Code != nil {
			t.Errorf("parley --json %v: stdout %q (%v); want the message, without a JSON-RPC code", c.args, r.stdout, err)
		}
	}
}

func TestOpenable(t *testing.T) {
	for _, ok := range []string{"https://example.com/connect", "https://127.0.0.1:8443/x", "http://127.0.0.1:8080/cb", "http://localhost/cb", "http://[::1]:9/x", "http://127.1.2.3/"} {
		if err := openable(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"http://example.com/connect", "file:///etc/passwd", "javascript:alert(1)", "ssh://host", "vscode://x/y", "https:///nohost", "http://localhost.example.com/", "http://10.0.0.1/", "smb://share/x", "-blah", ""} {
		if err := openable(bad); err == nil {
			t.Errorf("%s: opened", bad)
		}
	}
}

// urlServer asks for the URL given as its argument.
func urlServer(t *testing.T) func(context.Context) (transport.Transport, error) {
	t.Helper()
	s, err := mcpserver.New(mcp.Implementation{Name: "urls", Version: "1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	type args struct {
		URL string `json:"url"`
	}
	if err := mcpserver.AddTool(s, &mcp.Tool{Name: "visit"}, func(_ context.Context, c *mcpserver.Call, in args) (mcp.CallToolOutcome, error) {
		if !c.InputResponses().Has("v") {
			return &mcp.InputRequiredResult{
				InputRequests: mcp.InputRequests{"v": mcp.NewElicitURLRequest("Go there", in.URL)},
				RequestState:  "v1",
			}, nil
		}
		return mcp.TextResult("visited"), nil
	}); err != nil {
		t.Fatal(err)
	}
	return func(context.Context) (transport.Transport, error) { return s.InMemoryTransport(), nil }
}

// A URL question opened with --open reaches the browser only when it is
// https, or http on this machine; any other is shown, not opened.
func TestOpenOnlyWebURLs(t *testing.T) {
	dial := urlServer(t)
	for u, want := range map[string]bool{
		"https://example.com/connect":  true,
		"http://127.0.0.1:8080/done":   true,
		"http://example.com/connect":   false,
		"file:///etc/passwd":           false,
		"javascript:alert(document)":   false,
		"x-terminal-emulator://run/sh": false,
	} {
		var opened []string
		var screen lockedBuffer
		a := &app{dial: dial, openURL: func(u string) error { opened = append(opened, u); return nil }}
		a.tty = &terminal{in: strings.NewReader("\n"), out: &screen}
		r := runApp(t, a, "--open", "tools", "call", "visit", "url="+u)
		if r.code != exitOK || (len(opened) == 1) != want {
			t.Errorf("%s: exit %d, opened %q, want opened %v\nscreen:\n%s", u, r.code, opened, want, screen.String())
		}
		if !want && !strings.Contains(screen.String(), "not opened: --open opens https URLs") {
			t.Errorf("%s: the screen does not say why it was not opened:\n%s", u, screen.String())
		}
	}
}
