package streamhttp

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

// This file holds the edges named by the surviving mutations of
// docs/testing.md (SH05, SH11–SH14, SH16, SH23, SH25, SH32, SH35).

// TestOriginSurvivorEdges pins origin and host refusals that no other test
// reached.
func TestOriginSurvivorEdges(t *testing.T) {
	s := newFixture().s
	loopback := net.ParseIP("127.0.0.1")
	public := net.ParseIP("192.0.2.10")
	for _, tt := range []struct {
		name         string
		opts         *HandlerOptions
		local        net.IP
		host, origin string
		status       int
	}{
		// SH05: a malformed Origin is refused even when the Host is empty
		// (HTTP/1.0 allows none), where an empty normalized origin would
		// compare equal to the empty Host.
		{"no Host, no Origin (control)", nil, public, "", "", 200},
		{"no Host, Origin null", nil, public, "", "null", 403},
		{"no Host, Origin without scheme", nil, public, "", "app.example", 403},

		// SH11: only loopback IP literals count as loopback.
		{"loopback listener, public IP Host", nil, loopback, "203.0.113.5", "", 403},
		{"loopback listener, public IP Host with port", nil, loopback, "203.0.113.5:8080", "", 403},
		{"loopback listener, public IP Origin", nil, loopback, "localhost", "http://203.0.113.5", 403},
		{"loopback listener, public IPv6 Origin", nil, loopback, "localhost", "http://[2001:db8::1]", 403},
		{"loopback listener, loopback IP Origin (control)", nil, loopback, "127.0.0.1", "http://127.0.0.1", 200},

		// SH12: a name ending in "localhost" is not localhost.
		{"loopback listener, evillocalhost Host", nil, loopback, "evillocalhost", "", 403},
		{"loopback listener, evillocalhost Origin", nil, loopback, "localhost", "http://evillocalhost", 403},
		{"loopback listener, evil.localhost-like Origin", nil, loopback, "localhost", "http://evil-localhost:3000", 403},
		{"loopback listener, LOCALHOST Origin (control)", nil, loopback, "localhost", "http://LOCALHOST:3000", 200},

		// SH13: an Origin with userinfo is not a serialized origin, and an
		// AllowedOrigins entry with userinfo is ignored.
		{"userinfo in AllowedOrigins and Origin", &HandlerOptions{AllowedOrigins: []string{"http://u@app.example"}}, public, "mcp.example.com", "http://u@app.example", 403},
		{"userinfo in Origin only", &HandlerOptions{AllowedOrigins: []string{"http://app.example"}}, public, "mcp.example.com", "http://u:p@app.example", 403},
		{"loopback listener, userinfo Origin", nil, loopback, "localhost", "http://u@localhost", 403},
		{"userinfo-free AllowedOrigins entry (control)", &HandlerOptions{AllowedOrigins: []string{"http://app.example"}}, public, "mcp.example.com", "http://app.example", 200},

		// SH14: an Origin with a path is not a serialized origin.
		{"loopback listener, Origin with a path", nil, loopback, "localhost", "http://localhost/x", 403},
		{"same host, Origin with a path", nil, public, "mcp.example.com", "https://mcp.example.com/mcp", 403},
		{"loopback listener, Origin with a bare slash (control)", nil, loopback, "localhost", "http://localhost/", 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, body := originStatus(t, NewHandler(s, tt.opts), tt.local, tt.host, tt.origin); got != tt.status {
				t.Errorf("local %s Host %q Origin %q: status %d, want %d: %s", tt.local, tt.host, tt.origin, got, tt.status, body)
			}
		})
	}
}

// TestOriginNoHostOverHTTP10 sends a real HTTP/1.0 request without a Host
// header to a server on a non-loopback listener, as the SH05 edge arises
// on the wire. It skips when the machine has no non-loopback address.
func TestOriginNoHostOverHTTP10(t *testing.T) {
	ip := nonLoopbackIP()
	if ip == nil {
		t.Skip("no non-loopback address to listen on")
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		t.Skipf("cannot listen on %s: %v", ip, err)
	}
	srv := httptest.NewUnstartedServer(NewHandler(newFixture().s, nil))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)

	status := func(origin string) int {
		t.Helper()
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		body := rawRequest(1, "server/discover", "")
		var b strings.Builder
		b.WriteString("POST /mcp HTTP/1.0\r\n")
		for k, vs := range stdHeaders("server/discover", "") {
			for _, v := range vs {
				b.WriteString(k + ": " + v + "\r\n")
			}
		}
		if origin != "" {
			b.WriteString("Origin: " + origin + "\r\n")
		}
		b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
		if _, err := conn.Write([]byte(b.String())); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status(""); got != 200 {
		t.Fatalf("HTTP/1.0 without Host or Origin: status %d, want 200", got)
	}
	if got := status("null"); got != 403 {
		t.Errorf("HTTP/1.0 without Host, Origin null: status %d, want 403", got)
	}
}

func nonLoopbackIP() net.IP {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil && !n.IP.IsLinkLocalUnicast() {
			return n.IP
		}
	}
	return nil
}

// TestDecodeHeaderValueControlBound (SH16): every control byte but tab is
// refused, 0x1f included; 0x20 is the first byte accepted.
func TestDecodeHeaderValueControlBound(t *testing.T) {
	for c := 0; c < 0x20; c++ {
		if c == '\t' {
			continue
		}
		v := "a" + string(rune(c)) + "b"
		if got, err := DecodeHeaderValue(v); err == nil {
			t.Errorf("DecodeHeaderValue(%q) = %q, want an error", v, got)
		}
	}
	if got, err := DecodeHeaderValue("a\x20b"); err != nil || got != "a b" {
		t.Errorf(`DecodeHeaderValue("a b") = %q, %v`, got, err)
	}
	if got, err := DecodeHeaderValue("a\tb"); err != nil || got != "a\tb" {
		t.Errorf(`DecodeHeaderValue("a\tb") = %q, %v`, got, err)
	}
}

// callRoute sends a tools/call of the fixture's "route" tool straight to
// h, with args as its arguments member (omitted when empty) and the extra
// headers kv, and returns the status and body.
func callRoute(t *testing.T, h http.Handler, args string, kv ...string) (int, []byte) {
	t.Helper()
	params := `"name":"route"`
	if args != "" {
		params += `,"arguments":` + args
	}
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(rawRequest(7, "tools/call", params)))
	req.Header = stdHeaders("tools/call", "route")
	for i := 0; i < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Code, w.Body.Bytes()
}

// TestParamHeaderSurvivorEdges pins Mcp-Param-* checks that no other test
// reached.
func TestParamHeaderSurvivorEdges(t *testing.T) {
	h := NewHandler(newFixture().s, nil)
	for _, tt := range []struct {
		name     string
		args     string
		kv       []string
		mismatch bool
	}{
		// SH23: headers are checked even when the call has no arguments.
		{"no arguments, param header", "", []string{"Mcp-Param-Region", "eu"}, true},
		{"null arguments, param header", "null", []string{"Mcp-Param-Region", "eu"}, true},
		{"empty arguments, param header", "{}", []string{"Mcp-Param-Region", "eu"}, true},
		{"empty arguments, empty param header", "{}", []string{"Mcp-Param-Region", ""}, true},
		{"no arguments, no param header (control)", "", nil, false},

		// SH25: an argument set to "" still needs its header.
		{"empty string argument, no header", `{"region":""}`, nil, true},
		{"empty string argument, empty header (control)", `{"region":""}`, []string{"Mcp-Param-Region", ""}, false},

		// SH32: a header number smaller than the argument is a mismatch.
		{"integer header smaller", `{"region":"eu","priority":2}`, []string{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "1"}, true},
		{"integer header smaller, other spelling", `{"region":"eu","priority":42}`, []string{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "41.5"}, true},
		{"negative integer header", `{"region":"eu","priority":0}`, []string{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "-1"}, true},
		{"integer header equal (control)", `{"region":"eu","priority":2}`, []string{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "2.0"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body := callRoute(t, h, tt.args, tt.kv...)
			if !tt.mismatch {
				if status != 200 || strings.Contains(string(body), `"error"`) {
					t.Fatalf("status %d, want a result: %s", status, body)
				}
				return
			}
			if status != 400 {
				t.Fatalf("status %d, want 400: %s", status, body)
			}
			if _, e := rpcError(t, body); e.Code != mcp.CodeHeaderMismatch {
				t.Fatalf("code %d, want %d: %s", e.Code, mcp.CodeHeaderMismatch, body)
			}
		})
	}
}

// TestMatchesArgumentOrder (SH32): numbers must be equal, neither smaller
// nor larger.
func TestMatchesArgumentOrder(t *testing.T) {
	for _, tt := range []struct {
		header, value string
		match         bool
	}{
		{"1", "2", false}, {"3", "2", false}, {"2", "2", true}, {"2.0", "2", true},
		{"-3", "-2", false}, {"1.5", "2", false}, {"1e0", "2", false}, {"2e0", "2", true},
	} {
		if got := matchesArgument("integer", tt.header, json.RawMessage(tt.value)); got != tt.match {
			t.Errorf("matchesArgument(%q, %s) = %v, want %v", tt.header, tt.value, got, tt.match)
		}
	}
}

// TestParamHeaderUnderNestedDefs (SH35): an annotation inside $defs (or
// another name-to-schema map) under a property is not reachable through
// properties only, however deep properties go below it.
func TestParamHeaderUnderNestedDefs(t *testing.T) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"object","$defs":{"X":{"type":"object","properties":{"b":{"type":"string","x-mcp-header":"B"}}}}}}}`,
		`{"type":"object","properties":{"a":{"type":"object","definitions":{"X":{"type":"object","properties":{"b":{"type":"string","x-mcp-header":"B"}}}}}}}`,
		`{"type":"object","properties":{"a":{"type":"object","patternProperties":{"^x":{"type":"object","properties":{"b":{"type":"string","x-mcp-header":"B"}}}}}}}`,
		`{"type":"object","properties":{"a":{"type":"object","dependentSchemas":{"X":{"type":"object","properties":{"b":{"type":"string","x-mcp-header":"B"}}}}}}}`,
		`{"type":"object","properties":{"a":{"type":"object","$defs":{"X":{"type":"string","x-mcp-header":"B"}}}}}`,
	} {
		got, err := parseParamHeaders(json.RawMessage(s))
		if err == nil {
			t.Errorf("%s: accepted, found %v", s, got)
			continue
		}
		if !strings.Contains(err.Error(), "not reachable from the root through properties only") {
			t.Errorf("%s: error %q, want the not-reachable error", s, err)
		}
	}
}
