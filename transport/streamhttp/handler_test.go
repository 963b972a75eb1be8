package streamhttp

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// TestHandlerStatus drives the handler with hand-made POSTs and checks the
// status and JSON-RPC error of each rule.
func TestHandlerStatus(t *testing.T) {
	f := newFixture()
	url, _ := serve(t, NewHandler(f.s, &HandlerOptions{MaxBodyBytes: 4096}))

	with := func(h http.Header, kv ...string) http.Header {
		h = h.Clone()
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				h.Del(kv[i])
			} else {
				h.Set(kv[i], kv[i+1])
			}
		}
		return h
	}
	call := func(args string) string { return rawRequest(7, "tools/call", `"name":"route","arguments":`+args) }
	callH := stdHeaders("tools/call", "route")
	b64 := EncodeHeaderValue

	tests := []struct {
		name   string
		header http.Header
		body   string
		status int
		code   int64 // 0: a result is expected
		noID   bool  // the error must have no id (else it must have id 7)
	}{
		// Decoding.
		{"bad JSON", stdHeaders("tools/list", ""), `{"jsonrpc":`, 400, jsonrpc.CodeParseError, true},
		{"batch", stdHeaders("tools/list", ""), "[" + rawRequest(7, "tools/list", "") + "]", 400, jsonrpc.CodeInvalidRequest, true},
		{"response", stdHeaders("tools/list", ""), `{"jsonrpc":"2.0","id":7,"result":{}}`, 400, jsonrpc.CodeInvalidRequest, true},
		{"not an object", stdHeaders("tools/list", ""), `42`, 400, jsonrpc.CodeInvalidRequest, true},
		{"too large", stdHeaders("tools/list", ""), rawRequest(7, "tools/list", `"cursor":"`+strings.Repeat("x", 5000)+`"`), 413, jsonrpc.CodeInvalidRequest, true},
		{"wrong content type", with(stdHeaders("tools/list", ""), "Content-Type", "text/plain"), rawRequest(7, "tools/list", ""), 415, jsonrpc.CodeInvalidRequest, true},

		// _meta and methods.
		{"missing _meta", stdHeaders("tools/list", ""), `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`, 400, jsonrpc.CodeInvalidParams, false},
		{"no params", stdHeaders("tools/list", ""), `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, 400, jsonrpc.CodeInvalidParams, false},
		{"missing capabilities", stdHeaders("tools/list", ""), `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, 400, jsonrpc.CodeInvalidParams, false},
		{"unsupported version", with(stdHeaders("tools/list", ""), HeaderProtocolVersion, "1900-01-01"),
			strings.Replace(rawRequest(7, "tools/list", ""), "2026-07-28", "1900-01-01", 1), 400, mcp.CodeUnsupportedProtocolVersion, false},
		{"unknown method", stdHeaders("no/such", ""), rawRequest(7, "no/such", ""), 404, jsonrpc.CodeMethodNotFound, false},
		{"removed method", stdHeaders("ping", ""), rawRequest(7, "ping", ""), 404, jsonrpc.CodeMethodNotFound, false},
		{"initialize", stdHeaders("initialize", ""), `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`, 404, jsonrpc.CodeMethodNotFound, false},
		{"missing capability", stdHeaders("tools/call", "needs_sampling"), rawRequest(7, "tools/call", `"name":"needs_sampling"`), 400, mcp.CodeMissingRequiredClientCapability, false},
		{"unknown tool is in-band", stdHeaders("tools/call", "nope"), rawRequest(7, "tools/call", `"name":"nope"`), 200, jsonrpc.CodeInvalidParams, false},
		{"unknown resource is in-band", stdHeaders("resources/read", "file:///nope"), rawRequest(7, "resources/read", `"uri":"file:///nope"`), 200, jsonrpc.CodeInvalidParams, false},

		// MCP-Protocol-Version.
		{"version header missing", with(stdHeaders("tools/list", ""), HeaderProtocolVersion, ""), rawRequest(7, "tools/list", ""), 400, mcp.CodeHeaderMismatch, false},
		{"version header differs", with(stdHeaders("tools/list", ""), HeaderProtocolVersion, "2025-11-25"), rawRequest(7, "tools/list", ""), 400, mcp.CodeHeaderMismatch, false},
		{"version header differs from an unsupported version", stdHeaders("server/discover", ""),
			strings.Replace(rawRequest(7, "server/discover", ""), "2026-07-28", "v999.0.0", 1), 400, mcp.CodeHeaderMismatch, false},

		// Mcp-Method.
		{"method header missing", with(stdHeaders("tools/list", ""), HeaderMethod, ""), rawRequest(7, "tools/list", ""), 400, mcp.CodeHeaderMismatch, false},
		{"method header differs", stdHeaders("prompts/list", ""), rawRequest(7, "tools/list", ""), 400, mcp.CodeHeaderMismatch, false},
		{"method header case differs", stdHeaders("TOOLS/LIST", ""), rawRequest(7, "tools/list", ""), 400, mcp.CodeHeaderMismatch, false},
		{"method header padded", with(stdHeaders("tools/list", ""), HeaderMethod, "  tools/list \t"), rawRequest(7, "tools/list", ""), 200, 0, false},

		// Mcp-Name.
		{"name header missing", stdHeaders("tools/call", ""), call(`{"region":"eu"}`), 400, mcp.CodeHeaderMismatch, false},
		{"name header differs", with(callH, HeaderName, "echo"), call(`{"region":"eu"}`), 400, mcp.CodeHeaderMismatch, false},
		{"name header padded", with(callH, HeaderName, "  route  ", HeaderParamPrefix+"Region", "eu"), call(`{"region":"eu"}`), 200, 0, false},
		{"name header in Base64", with(callH, HeaderName, "=?base64?cm91dGU=?=", HeaderParamPrefix+"Region", "eu"), call(`{"region":"eu"}`), 200, 0, false},
		{"name header in bad Base64", with(callH, HeaderName, "=?base64?cm91dGU?=", HeaderParamPrefix+"Region", "eu"), call(`{"region":"eu"}`), 400, mcp.CodeHeaderMismatch, false},
		{"prompt name header differs", stdHeaders("prompts/get", "other"), rawRequest(7, "prompts/get", `"name":"greeting","arguments":{"name":"Ann"}`), 400, mcp.CodeHeaderMismatch, false},
		{"prompt name header", stdHeaders("prompts/get", "greeting"), rawRequest(7, "prompts/get", `"name":"greeting","arguments":{"name":"Ann"}`), 200, 0, false},
		{"resource uri header missing", stdHeaders("resources/read", ""), rawRequest(7, "resources/read", `"uri":"file:///readme.txt"`), 400, mcp.CodeHeaderMismatch, false},
		{"resource uri header differs", stdHeaders("resources/read", "file:///other.txt"), rawRequest(7, "resources/read", `"uri":"file:///readme.txt"`), 400, mcp.CodeHeaderMismatch, false},
		{"resource uri header in Base64", stdHeaders("resources/read", b64(unicodeURI)), rawRequest(7, "resources/read", `"uri":"`+unicodeURI+`"`), 200, 0, false},
		{"resource uri header not encoded", stdHeaders("resources/read", unicodeURI), rawRequest(7, "resources/read", `"uri":"`+unicodeURI+`"`), 400, mcp.CodeHeaderMismatch, false},

		// Mcp-Param-*.
		{"param header missing", callH, call(`{"region":"eu"}`), 400, mcp.CodeHeaderMismatch, false},
		{"param header differs", with(callH, "Mcp-Param-Region", "us"), call(`{"region":"eu"}`), 400, mcp.CodeHeaderMismatch, false},
		{"param header name in lower case", with(callH, "mcp-param-region", "eu"), call(`{"region":"eu"}`), 200, 0, false},
		{"param header in Base64", with(callH, "Mcp-Param-Region", "=?base64?SGVsbG8=?="), call(`{"region":"Hello"}`), 200, 0, false},
		{"param header in Base64 differs", with(callH, "Mcp-Param-Region", "=?base64?SGVsbG8=?="), call(`{"region":"Hallo"}`), 400, mcp.CodeHeaderMismatch, false},
		{"param header with bad Base64 padding", with(callH, "Mcp-Param-Region", "=?base64?SGVsbG8?="), call(`{"region":"Hello"}`), 400, mcp.CodeHeaderMismatch, false},
		{"param header with bad Base64 characters", with(callH, "Mcp-Param-Region", "=?base64?SGVs!!!bG8=?="), call(`{"region":"Hello"}`), 400, mcp.CodeHeaderMismatch, false},
		{"param header without Base64 prefix is literal", with(callH, "Mcp-Param-Region", "SGVsbG8="), call(`{"region":"SGVsbG8="}`), 200, 0, false},
		{"param header without Base64 suffix is literal", with(callH, "Mcp-Param-Region", "=?base64?SGVsbG8="), call(`{"region":"=?base64?SGVsbG8="}`), 200, 0, false},
		{"param header of non-ASCII text", with(callH, "Mcp-Param-Region", b64("Zürich")), call(`{"region":"Zürich"}`), 200, 0, false},
		{"param header of a sentinel-like value", with(callH, "Mcp-Param-Region", b64("=?base64?literal?=")), call(`{"region":"=?base64?literal?="}`), 200, 0, false},
		{"integer header compares numerically", with(callH, "Mcp-Param-Region", "eu", "Mcp-Param-Priority", "42.0"), call(`{"region":"eu","priority":42}`), 200, 0, false},
		{"integer header differs", with(callH, "Mcp-Param-Region", "eu", "Mcp-Param-Priority", "43"), call(`{"region":"eu","priority":42}`), 400, mcp.CodeHeaderMismatch, false},
		{"integer header is not a number", with(callH, "Mcp-Param-Region", "eu", "Mcp-Param-Priority", "84/2"), call(`{"region":"eu","priority":42}`), 400, mcp.CodeHeaderMismatch, false},
		{"boolean header", with(callH, "Mcp-Param-Region", "eu", "Mcp-Param-Verbose", "false"), call(`{"region":"eu","verbose":false}`), 200, 0, false},
		{"boolean header differs", with(callH, "Mcp-Param-Region", "eu", "Mcp-Param-Verbose", "False"), call(`{"region":"eu","verbose":false}`), 400, mcp.CodeHeaderMismatch, false},
		{"nested argument header", with(callH, "Mcp-Param-Region", "eu", "Mcp-Param-Zone", "b"), call(`{"region":"eu","config":{"zone":"b"}}`), 200, 0, false},
		{"nested argument header missing", with(callH, "Mcp-Param-Region", "eu"), call(`{"region":"eu","config":{"zone":"b"}}`), 400, mcp.CodeHeaderMismatch, false},
		{"null argument needs no header", with(callH, "Mcp-Param-Region", "eu"), call(`{"region":"eu","verbose":null}`), 200, 0, false},
		{"header without its argument", with(callH, "Mcp-Param-Region", "eu", "Mcp-Param-Priority", "1"), call(`{"region":"eu"}`), 400, mcp.CodeHeaderMismatch, false},
		{"unannotated header is ignored", with(callH, "Mcp-Param-Region", "eu", "Mcp-Param-Query", "x"), call(`{"region":"eu","query":"y"}`), 200, 0, false},

		// Ignored legacy headers.
		{"session id ignored", with(stdHeaders("tools/list", ""), "Mcp-Session-Id", "abc", "Last-Event-ID", "5"), rawRequest(7, "tools/list", ""), 200, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(t, url, tt.header, tt.body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.status, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			if resp.Header.Get("Mcp-Session-Id") != "" {
				t.Error("response carries an Mcp-Session-Id")
			}
			if tt.code == 0 {
				if bytes.Contains(body, []byte(`"error"`)) {
					t.Fatalf("want a result, got %s", body)
				}
				return
			}
			id, e := rpcError(t, body)
			if e.Code != tt.code {
				t.Fatalf("code %d, want %d: %s", e.Code, tt.code, body)
			}
			if tt.noID && id.IsValid() {
				t.Errorf("error has id %s, want none", id.Raw())
			}
			if !tt.noID && id.Raw() != "7" {
				t.Errorf("error has id %q, want 7", id.Raw())
			}
		})
	}
}

func TestHandlerLimitMessage(t *testing.T) {
	url, _ := serve(t, NewHandler(newFixture().s, &HandlerOptions{MaxBodyBytes: 100}))
	resp, body := post(t, url, stdHeaders("tools/list", ""), rawRequest(1, "tools/list", ""))
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if _, e := rpcError(t, body); !strings.Contains(e.Message, "100 bytes") {
		t.Errorf("message %q does not state the limit", e.Message)
	}
	_, body = post(t, url, stdHeaders("tools/list", ""), `[{"jsonrpc":"2.0","id":1,"method":"x"}]`)
	if _, e := rpcError(t, body); !strings.Contains(e.Message, "batches are not supported") {
		t.Errorf("batch: message %q", e.Message)
	}
}

func TestHandlerMethodNotAllowed(t *testing.T) {
	url, _ := serve(t, NewHandler(newFixture().s, nil))
	for _, method := range []string{http.MethodGet, http.MethodDelete, http.MethodPut, http.MethodOptions} {
		req, _ := http.NewRequest(method, url, nil)
		req.Header.Set("Accept", "text/event-stream")
		// No Mcp-Session-Id: a GET or DELETE that names a session is a
		// legacy client's, and one naming an unknown session gets 404
		// (TestLegacyUnknownSession).
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: status %d, want 405", method, resp.StatusCode)
		}
		if got := resp.Header.Get("Allow"); got != "POST" {
			t.Errorf("%s: Allow %q, want POST", method, got)
		}
	}
}

func TestHandlerNotification(t *testing.T) {
	url, _ := serve(t, NewHandler(newFixture().s, nil))
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/whatever"}`,
	} {
		// Notification POSTs need no MCP headers.
		h := http.Header{"Content-Type": {"application/json"}}
		resp, b := post(t, url, h, body)
		if resp.StatusCode != http.StatusAccepted || len(b) != 0 {
			t.Errorf("%s: status %d body %q, want 202 and no body", body, resp.StatusCode, b)
		}
	}
}

// TestHandlerJSONOnlyClient: a client that accepts only JSON gets its
// result without the notifications, and cannot listen.
func TestHandlerJSONOnlyClient(t *testing.T) {
	url, _ := serve(t, NewHandler(newFixture().s, nil))
	h := stdHeaders("tools/call", "work")
	h.Set("Accept", "application/json")
	body := strings.Replace(rawRequest(3, "tools/call", `"name":"work"`), `"_meta":{`, `"_meta":{"progressToken":"p","io.modelcontextprotocol/logLevel":"debug",`, 1)
	resp, b := post(t, url, h, body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || !bytes.Contains(b, []byte("done")) {
		t.Fatalf("status %d, type %q, body %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	h = stdHeaders("subscriptions/listen", "")
	h.Set("Accept", "application/json, text/event-stream;q=0")
	resp, b = post(t, url, h, rawRequest(4, "subscriptions/listen", `"notifications":{"toolsListChanged":true}`))
	if resp.StatusCode != http.StatusNotAcceptable {
		t.Fatalf("listen: status %d, want 406: %s", resp.StatusCode, b)
	}
}

// TestHandlerSSEResponse checks the event stream of a request that reports
// progress and logs: its headers, framing and order.
func TestHandlerSSEResponse(t *testing.T) {
	url, _ := serve(t, NewHandler(newFixture().s, nil))
	body := strings.Replace(rawRequest(3, "tools/call", `"name":"work"`), `"_meta":{`, `"_meta":{"progressToken":"p","io.modelcontextprotocol/logLevel":"info",`, 1)
	resp, b := post(t, url, stdHeaders("tools/call", "work"), body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	for k, want := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	events := strings.Split(strings.TrimSuffix(string(b), "\n\n"), "\n\n")
	wantMethods := []string{`"method":"notifications/progress"`, `"method":"notifications/progress"`, `"method":"notifications/message"`, `"id":3,"result"`}
	if len(events) != len(wantMethods) {
		t.Fatalf("%d events, want %d:\n%s", len(events), len(wantMethods), b)
	}
	for i, ev := range events {
		lines := strings.Split(ev, "\n")
		if len(lines) != 2 || lines[0] != "event: message" || !strings.HasPrefix(lines[1], "data: {") {
			t.Errorf("event %d is not framed as event+data: %q", i, ev)
		}
		if !strings.Contains(ev, wantMethods[i]) {
			t.Errorf("event %d = %q, want it to contain %s", i, ev, wantMethods[i])
		}
		if strings.Contains(ev, "\nid:") || strings.HasPrefix(ev, "id:") {
			t.Errorf("event %d carries an id", i)
		}
	}
}

func TestDNSRebindingProtection(t *testing.T) {
	f := newFixture()
	discover := rawRequest(1, "server/discover", "")
	tests := []struct {
		name   string
		opts   *HandlerOptions
		host   string
		origin string
		status int
	}{
		{"localhost", nil, "localhost", "", 200},
		{"127.0.0.1 with port", nil, "127.0.0.1:9999", "", 200},
		{"[::1]", nil, "[::1]:80", "", 200},
		{"foreign host", nil, "evil.example.com", "", 403},
		{"foreign host and origin", nil, "evil.example.com", "http://evil.example.com", 403},
		{"foreign origin", nil, "localhost", "http://evil.example.com", 403},
		{"loopback origin on another port", nil, "127.0.0.1:3000", "http://localhost:5173", 200},
		{"opaque origin", nil, "localhost", "null", 403},
		{"allowed host", &HandlerOptions{AllowedHosts: []string{"mcp.example.com"}}, "mcp.example.com:443", "", 200},
		{"allowed host replaces loopback names", &HandlerOptions{AllowedHosts: []string{"mcp.example.com:8443"}}, "localhost", "", 403},
		{"allowed host, other port", &HandlerOptions{AllowedHosts: []string{"mcp.example.com:8443"}}, "mcp.example.com:443", "", 403},
		{"allowed origin", &HandlerOptions{AllowedOrigins: []string{"https://App.example.com"}}, "localhost", "https://app.example.com", 200},
		{"check disabled", &HandlerOptions{DisableHostCheck: true}, "evil.example.com", "http://evil.example.com", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, _ := serve(t, NewHandler(f.s, tt.opts))
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(discover))
			req.Header = stdHeaders("server/discover", "")
			req.Host = tt.host
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			b.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, b.Bytes())
			}
			if tt.status == 403 {
				if id, e := rpcError(t, b.Bytes()); id.IsValid() || e.Code != jsonrpc.CodeInvalidRequest {
					t.Errorf("403 body %s", b.Bytes())
				}
			}
		})
	}
}

// TestDNSRebindingNonLoopback: on a non-loopback address any Host is
// served, and an Origin must be the request's own.
func TestDNSRebindingNonLoopback(t *testing.T) {
	h := NewHandler(newFixture().s, nil)
	for _, tt := range []struct {
		host, origin string
		status       int
	}{
		{"mcp.example.com", "", 200},
		{"mcp.example.com", "https://mcp.example.com", 200},
		{"mcp.example.com", "https://evil.example.com", 403},
	} {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(rawRequest(1, "server/discover", "")))
		req.Header = stdHeaders("server/discover", "")
		req.Host = tt.host
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		local := &net.TCPAddr{IP: net.ParseIP("192.0.2.10"), Port: 443}
		req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, local))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != tt.status {
			t.Errorf("Host %q Origin %q: status %d, want %d: %s", tt.host, tt.origin, w.Code, tt.status, w.Body.Bytes())
		}
	}
}

// TestHandlerErrorAfterStreamStarted: once the event stream has started,
// even a pinned error travels in-band on the 200 stream.
func TestHandlerErrorAfterStreamStarted(t *testing.T) {
	url, _ := serve(t, NewHandler(newFixture().s, nil))
	body := strings.Replace(rawRequest(5, "tools/call", `"name":"fail_late"`), `"_meta":{`, `"_meta":{"progressToken":"p",`, 1)
	resp, b := post(t, url, stdHeaders("tools/call", "fail_late"), body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if !strings.Contains(string(b), "notifications/progress") || !strings.Contains(string(b), `"id":5,"error":{"code":-32021`) {
		t.Errorf("stream %s", b)
	}
	// Without a progress token the same tool answers with JSON and 400.
	resp, b = post(t, url, stdHeaders("tools/call", "fail_late"), rawRequest(6, "tools/call", `"name":"fail_late"`))
	if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("status %d, type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
}

// TestHandlerFindTool: with FindTool the handler enforces the annotations
// without a tools/list handler.
func TestHandlerFindTool(t *testing.T) {
	f := newFixture()
	s := server.New(mcp.Implementation{Name: "no-list", Version: "1"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return mcp.TextResult("ok"), nil
	})
	var asked []string
	url, _ := serve(t, NewHandler(s, &HandlerOptions{FindTool: func(ctx context.Context, name string) (*mcp.Tool, bool) {
		asked = append(asked, name)
		for _, tool := range f.tools {
			if tool.Name == name {
				return &tool, true
			}
		}
		return nil, false
	}}))
	body := rawRequest(1, "tools/call", `"name":"route","arguments":{"region":"eu"}`)
	if resp, b := post(t, url, stdHeaders("tools/call", "route"), body); resp.StatusCode != 400 {
		t.Errorf("without the header: status %d: %s", resp.StatusCode, b)
	}
	h := stdHeaders("tools/call", "route")
	h.Set("Mcp-Param-Region", "eu")
	if resp, b := post(t, url, h, body); resp.StatusCode != 200 || bytes.Contains(b, []byte(`"error"`)) {
		t.Errorf("with the header: status %d: %s", resp.StatusCode, b)
	}
	// No arguments and no Mcp-Param headers: nothing to look up.
	if resp, b := post(t, url, stdHeaders("tools/call", "route"), rawRequest(2, "tools/call", `"name":"route"`)); resp.StatusCode != 200 {
		t.Errorf("no arguments: status %d: %s", resp.StatusCode, b)
	}
	if len(asked) != 2 {
		t.Errorf("FindTool asked %v, want route twice", asked)
	}
}
