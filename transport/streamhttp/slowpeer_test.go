package streamhttp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// These tests use a real listener: deadlines are properties of network
// connections, which testing/synctest cannot fake. They assert outcomes
// (a 408, a failed write, a cancelled request), never durations; the
// timeouts under test are short so that the outcomes come quickly, and
// safety is a bound that only a failing build reaches.
const safety = 20 * time.Second

// dialRaw opens a TCP connection to the test server at url.
func dialRaw(t *testing.T, url string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// rawPost is the head of a POST of a tools/call of tool, announcing a body
// of length bytes.
func rawPost(tool string, length int) string {
	return "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
		HeaderProtocolVersion + ": 2026-07-28\r\n" + HeaderMethod + ": tools/call\r\n" + HeaderName + ": " + tool + "\r\n" +
		fmt.Sprintf("Content-Length: %d\r\n\r\n", length)
}

// A body that never finishes is answered with 408 and its connection
// closed, once BodyTimeout has passed.
func TestBodyTimeoutCutsTricklingBody(t *testing.T) {
	f := newFixture()
	ts := httptest.NewServer(NewHandler(f.s, &HandlerOptions{BodyTimeout: 50 * time.Millisecond}))
	t.Cleanup(ts.Close)

	conn := dialRaw(t, ts.URL)
	body := rawRequest(1, "tools/call", `"name":"echo","arguments":{"text":"hi"}`)
	// The headers and a first byte of the body, and then nothing.
	if _, err := io.WriteString(conn, rawPost("echo", len(body))+body[:1]); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(safety))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to a body that never finishes: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("status %d, want 408; body %s", resp.StatusCode, b)
	}
	_, e := rpcError(t, b)
	if !strings.Contains(e.Message, "Request Timeout") || !strings.Contains(e.Message, "50ms") {
		t.Errorf("message %q does not say which limit", e.Message)
	}
	// The connection is closed: it cannot carry another request.
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("connection still open after the timeout (read: %v)", err)
	}
}

// BodyTimeout bounds only the body: a request whose body has arrived runs
// for as long as it takes, well past the timeout.
func TestBodyTimeoutSparesLongRequests(t *testing.T) {
	f := newFixture()
	// The long request is served with a short timeout, the probe below
	// with a longer one on the same server: when the probe is cut, the
	// long request's timeout is long past.
	long := httptest.NewServer(NewHandler(f.s, &HandlerOptions{BodyTimeout: 20 * time.Millisecond, KeepAlive: -1}))
	t.Cleanup(long.Close)
	probe := httptest.NewServer(NewHandler(f.s, &HandlerOptions{BodyTimeout: 200 * time.Millisecond}))
	t.Cleanup(probe.Close)

	conn := dialRaw(t, long.URL)
	body := rawRequest(1, "tools/call", `"name":"slow"`)
	if _, err := io.WriteString(conn, rawPost("slow", len(body))+body); err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.slowStarted:
	case <-time.After(safety):
		t.Fatal("the slow call did not start")
	}

	pc := dialRaw(t, probe.URL)
	io.WriteString(pc, rawPost("echo", 100)+"{")
	pc.SetReadDeadline(time.Now().Add(safety))
	if resp, err := http.ReadResponse(bufio.NewReader(pc), nil); err != nil || resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("probe: %v, %v; want 408", resp, err)
	}

	select {
	case err := <-f.slowEnded:
		t.Fatalf("the long request ended (%v) when its body timeout passed", err)
	default:
	}
	conn.Close() // the client leaves: now the request ends
	select {
	case err := <-f.slowEnded:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the slow call ended with %v, want context.Canceled", err)
		}
	case <-time.After(safety):
		t.Fatal("the slow call did not end when its client left")
	}
}

// floodServer serves a tool "flood" that sends large notifications until
// one fails, then reports the failure and the request context's end.
func floodServer(failed chan<- error, ended chan<- error) *server.Server {
	s := server.New(mcp.Implementation{Name: "flood", Version: "1"}, &server.Options{Logger: slog.New(slog.DiscardHandler)})
	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		return &mcp.ListToolsResult{Tools: []mcp.Tool{{Name: "flood", InputSchema: json.RawMessage(`{"type":"object"}`)}}}, nil
	})
	chunk := strings.Repeat("x", 64<<10)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		for {
			err := req.Notify(ctx, mcp.NotificationMessage, &mcp.LoggingMessageNotificationParams{Level: mcp.LevelInfo, Data: chunk})
			if err == nil {
				err = ctx.Err() // a legacy session keeps events for replay; its request ends
			}
			if err != nil {
				failed <- err
				<-ctx.Done()
				ended <- ctx.Err()
				return nil, err
			}
		}
	})
	return s
}

// An event stream whose client stopped reading is ended by WriteTimeout:
// the write that the client does not take fails, and the request's
// context ends.
func TestWriteTimeoutEndsStalledStream(t *testing.T) {
	failed, ended := make(chan error, 1), make(chan error, 1)
	ts := httptest.NewServer(NewHandler(floodServer(failed, ended), &HandlerOptions{WriteTimeout: 100 * time.Millisecond}))
	t.Cleanup(ts.Close)

	conn := dialRaw(t, ts.URL)
	body := rawRequest(1, "tools/call", `"name":"flood"`)
	if _, err := io.WriteString(conn, rawPost("flood", len(body))+body); err != nil {
		t.Fatal(err)
	}
	// The client reads nothing: the buffers fill, and a write blocks.
	select {
	case err := <-failed:
		if err == nil {
			t.Fatal("nil error")
		}
	case <-time.After(safety):
		t.Fatal("a stream nobody reads is still being written to")
	}
	select {
	case err := <-ended:
		if err == nil {
			t.Fatal("the request's context did not end")
		}
	case <-time.After(safety):
		t.Fatal("the request's context did not end after its stream failed")
	}
}

// Content-Type and Accept are checked before the body is read, on every
// POST, legacy ones included.
func TestHandlerMediaTypes(t *testing.T) {
	f := newFixture()
	h := NewHandler(f.s, nil)
	url, _ := serve(t, h)
	t.Cleanup(func() { EndSessions(h) })
	with := func(h http.Header, k, v string) http.Header {
		h = h.Clone()
		if v == "" {
			h.Del(k)
		} else {
			h.Set(k, v)
		}
		return h
	}
	list := rawRequest(7, "tools/list", "")
	init := `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	legacyH := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	tests := []struct {
		name   string
		header http.Header
		body   string
		status int
	}{
		{"missing content type", with(stdHeaders("tools/list", ""), "Content-Type", ""), list, 415},
		{"empty content type", with(stdHeaders("tools/list", ""), "Content-Type", " "), list, 415},
		{"content type with charset", with(stdHeaders("tools/list", ""), "Content-Type", "application/json; charset=utf-8"), list, 200},
		{"content type in upper case", with(stdHeaders("tools/list", ""), "Content-Type", "Application/JSON"), list, 200},
		{"JSON-like content type", with(stdHeaders("tools/list", ""), "Content-Type", "application/json-rpc"), list, 415},
		{"legacy, missing content type", with(legacyH, "Content-Type", ""), init, 415},

		{"no Accept", with(stdHeaders("tools/list", ""), "Accept", ""), list, 200},
		{"Accept JSON only", with(stdHeaders("tools/list", ""), "Accept", "application/json"), list, 200},
		{"Accept event stream only", with(stdHeaders("tools/list", ""), "Accept", "text/event-stream"), list, 200},
		{"Accept anything", with(stdHeaders("tools/list", ""), "Accept", "*/*"), list, 200},
		{"Accept application/*", with(stdHeaders("tools/list", ""), "Accept", "application/*"), list, 200},
		{"Accept HTML", with(stdHeaders("tools/list", ""), "Accept", "text/html"), list, 406},
		{"Accept both refused", with(stdHeaders("tools/list", ""), "Accept", "application/json;q=0, text/event-stream;q=0"), list, 406},
		{"legacy, Accept HTML", with(legacyH, "Accept", "text/html"), init, 406},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(t, url, tt.header, tt.body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.status, body)
			}
			if tt.status == 200 {
				return
			}
			id, e := rpcError(t, body)
			if id.IsValid() || e.Code != jsonrpc.CodeInvalidRequest {
				t.Errorf("error %s (id %s), want -32600 without id", body, id.Raw())
			}
		})
	}
}

// Header values repeated in error messages are cut to maxEcho bytes.
func TestHandlerEchoesHeadersShort(t *testing.T) {
	f := newFixture()
	// Not serve: its recorder holds every answer to 2026-07-28, and this
	// test opens a legacy session.
	h := NewHandler(f.s, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { EndSessions(h) })
	url := ts.URL
	long := strings.Repeat("A", 8000)
	list := rawRequest(7, "tools/list", "")
	init := `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	with := func(h http.Header, k, v string) http.Header { h = h.Clone(); h.Set(k, v); return h }

	// A legacy session, for the headers only sessions read.
	resp, _ := post(t, url, http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}, init)
	sid := resp.Header.Get(HeaderSessionID)
	if sid == "" {
		t.Fatal("no session")
	}
	sess := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, HeaderSessionID: {sid}}

	tests := []struct {
		name   string
		method string
		header http.Header
		body   string
	}{
		{"Mcp-Method", "POST", with(stdHeaders("tools/list", ""), HeaderMethod, long), list},
		{"MCP-Protocol-Version", "POST", with(stdHeaders("tools/list", ""), HeaderProtocolVersion, long), list},
		{"Mcp-Name", "POST", stdHeaders("tools/call", long), rawRequest(7, "tools/call", `"name":"echo"`)},
		{"Mcp-Param", "POST", with(stdHeaders("tools/call", "route"), "Mcp-Param-Region", long), rawRequest(7, "tools/call", `"name":"route","arguments":{"region":"eu"}`)},
		{"Content-Type", "POST", with(stdHeaders("tools/list", ""), "Content-Type", "text/"+long), list},
		{"Origin", "POST", with(stdHeaders("tools/list", ""), "Origin", "http://"+long), list},
		{"session version", "POST", with(sess, HeaderProtocolVersion, long), `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`},
		{"Last-Event-ID", "GET", with(with(sess, "Accept", "text/event-stream"), HeaderLastEventID, long), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, url, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header = tt.header
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			_, e := rpcError(t, b)
			if strings.Contains(e.Message, strings.Repeat("A", maxEcho+1)) {
				t.Fatalf("status %d: the message repeats more than %d bytes of the header: %.300s...", resp.StatusCode, maxEcho, e.Message)
			}
			if !strings.Contains(e.Message, strings.Repeat("A", 16)) || !strings.Contains(e.Message, "…") {
				t.Errorf("status %d: the message does not show the start of the value, cut: %.300s", resp.StatusCode, e.Message)
			}
		})
	}
}

func TestEchoHeader(t *testing.T) {
	for in, want := range map[string]string{
		"short":                              `"short"`,
		"a\"b\nc":                            `"a\"b\nc"`,
		strings.Repeat("x", maxEcho):         `"` + strings.Repeat("x", maxEcho) + `"`,
		strings.Repeat("x", maxEcho+1):       `"` + strings.Repeat("x", maxEcho) + `"…`,
		strings.Repeat("x", maxEcho-1) + "é": `"` + strings.Repeat("x", maxEcho-1) + `"…`, // not cut inside a rune
	} {
		if got := echoHeader(in); got != want {
			t.Errorf("echoHeader(%.20q...) = %.40s..., want %.40s...", in, got, want)
		}
	}
}

// The same on the stream of a legacy session's request: the write that the
// client does not take fails, the connection is dropped, and (with no
// resume window) the request ends.
func TestWriteTimeoutEndsStalledLegacyStream(t *testing.T) {
	failed, ended := make(chan error, 1), make(chan error, 1)
	h := NewHandler(floodServer(failed, ended), &HandlerOptions{
		WriteTimeout: 100 * time.Millisecond,
		Sessions:     &SessionOptions{ResumeWindow: -1},
	})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { EndSessions(h) })

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(init))
	req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sid := resp.Header.Get(HeaderSessionID)
	if sid == "" {
		t.Fatal("no session")
	}

	conn := dialRaw(t, ts.URL)
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flood"}}`
	head := "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
		HeaderSessionID + ": " + sid + "\r\n" + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body))
	if _, err := io.WriteString(conn, head+body); err != nil {
		t.Fatal(err)
	}
	select {
	case <-failed:
	case <-time.After(safety):
		t.Fatal("a legacy stream nobody reads is still being written to")
	}
	select {
	case err := <-ended:
		if err == nil {
			t.Fatal("the request's context did not end")
		}
	case <-time.After(safety):
		t.Fatal("the request did not end after its stream failed")
	}
}
