package streamhttp

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// originStatus sends server/discover to h with the Host and Origin given,
// as if it arrived on local, and returns the status.
func originStatus(t *testing.T, h http.Handler, local net.IP, host, origin string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(rawRequest(1, "server/discover", "")))
	req.Header = stdHeaders("server/discover", "")
	req.Host = host
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	addr := &net.TCPAddr{IP: local, Port: 443}
	req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, addr))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Code, w.Body.String()
}

// TestSameOriginWithPorts pins the same-origin rule of a server on a
// non-loopback address, where the Origin must be the request's own Host:
// a port the Origin or the Host leaves out is the default port of the
// Origin's scheme, so an explicit default port equals no port; any other
// difference in port is a different origin.
func TestSameOriginWithPorts(t *testing.T) {
	h := NewHandler(newFixture().s, nil)
	for _, tt := range []struct {
		host, origin string
		same         bool
	}{
		// A port on one side only, not the default: different origins.
		{"mcp.example.com", "https://mcp.example.com:8443", false},
		{"mcp.example.com:8443", "https://mcp.example.com", false},
		{"mcp.example.com", "http://mcp.example.com:8080", false},
		// The same non-default port on both sides.
		{"mcp.example.com:8443", "https://mcp.example.com:8443", true},
		{"MCP.example.com:8443", "https://mcp.EXAMPLE.com:8443", true},
		// Two different non-default ports.
		{"mcp.example.com:8443", "https://mcp.example.com:9443", false},
		// An explicit default port equals no port, on either side.
		{"x", "https://x:443", true},
		{"x", "http://x:80", true},
		{"x:443", "https://x", true},
		{"x:80", "http://x", true},
		{"x:443", "https://x:443", true},
		{"x:80", "http://x:80", true},
		// The default port of the Origin's scheme, not of any scheme.
		{"x", "https://x:80", false},
		{"x", "http://x:443", false},
		{"x:443", "http://x", false},
		{"x:80", "https://x", false},
		{"x:443", "http://x:80", false},
		// IPv6 literals.
		{"[2001:db8::1]", "https://[2001:db8::1]:443", true},
		{"[2001:db8::1]:443", "https://[2001:db8::1]", true},
		{"[2001:db8::1]", "https://[2001:db8::1]:8443", false},
		// Another host, whatever the ports.
		{"x:443", "https://y:443", false},
		{"x", "https://x.evil.example:443", false},
		// No port anywhere: as before.
		{"mcp.example.com", "https://mcp.example.com", true},
		{"mcp.example.com", "http://mcp.example.com", true},
	} {
		want := http.StatusForbidden
		if tt.same {
			want = http.StatusOK
		}
		if got, body := originStatus(t, h, net.ParseIP("192.0.2.10"), tt.host, tt.origin); got != want {
			t.Errorf("Host %q Origin %q: status %d, want %d: %s", tt.host, tt.origin, got, want, body)
		}
	}
}

// TestAllowedOriginsWithDefaultPorts: an AllowedOrigins entry and an Origin
// header that differ only in an explicit default port name one origin; an
// AllowedHosts entry with the default port admits the Origin that leaves it
// out. Other ports stay distinct.
func TestAllowedOriginsWithDefaultPorts(t *testing.T) {
	s := newFixture().s
	addr := net.ParseIP("192.0.2.10")
	for _, tt := range []struct {
		name   string
		opts   *HandlerOptions
		host   string
		origin string
		status int
	}{
		{"entry with default port, origin without", &HandlerOptions{AllowedOrigins: []string{"https://app.example.com:443"}}, "mcp.example.com", "https://app.example.com", 200},
		{"entry without, origin with default port", &HandlerOptions{AllowedOrigins: []string{"https://app.example.com"}}, "mcp.example.com", "https://app.example.com:443", 200},
		{"http entry with :80", &HandlerOptions{AllowedOrigins: []string{"http://app.example.com:80"}}, "mcp.example.com", "http://app.example.com", 200},
		{"entry with another port", &HandlerOptions{AllowedOrigins: []string{"https://app.example.com:8443"}}, "mcp.example.com", "https://app.example.com", 403},
		{"entry without, origin with another port", &HandlerOptions{AllowedOrigins: []string{"https://app.example.com"}}, "mcp.example.com", "https://app.example.com:8443", 403},
		{"entry's default port is its own scheme's", &HandlerOptions{AllowedOrigins: []string{"https://app.example.com:80"}}, "mcp.example.com", "https://app.example.com", 403},
		{"allowed host with default port", &HandlerOptions{AllowedHosts: []string{"mcp.example.com", "app.example.com:443"}}, "mcp.example.com", "https://app.example.com", 200},
		{"allowed host with default port, origin with it", &HandlerOptions{AllowedHosts: []string{"mcp.example.com", "app.example.com:443"}}, "mcp.example.com", "https://app.example.com:443", 200},
		{"allowed host with another port", &HandlerOptions{AllowedHosts: []string{"mcp.example.com", "app.example.com:8443"}}, "mcp.example.com", "https://app.example.com", 403},
		{"allowed host, any port", &HandlerOptions{AllowedHosts: []string{"mcp.example.com", "app.example.com"}}, "mcp.example.com", "https://app.example.com:8443", 200},
		{"allowed host, http origin on 443", &HandlerOptions{AllowedHosts: []string{"mcp.example.com", "app.example.com:443"}}, "mcp.example.com", "http://app.example.com", 403},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, body := originStatus(t, NewHandler(s, tt.opts), addr, tt.host, tt.origin); got != tt.status {
				t.Errorf("Host %q Origin %q: status %d, want %d: %s", tt.host, tt.origin, got, tt.status, body)
			}
		})
	}
}

// TestLoopbackOriginPortsUnchanged: on a loopback address any loopback
// Origin passes whatever its port, default or not, and a foreign one fails
// whatever its port.
func TestLoopbackOriginPortsUnchanged(t *testing.T) {
	h := NewHandler(newFixture().s, nil)
	for _, tt := range []struct {
		host, origin string
		status       int
	}{
		{"localhost:3000", "http://localhost:80", 200},
		{"localhost:3000", "https://127.0.0.1:443", 200},
		{"localhost", "http://[::1]:5173", 200},
		{"localhost", "https://evil.example.com:443", 403},
		{"localhost:443", "https://localhost.evil.example", 403},
	} {
		if got, body := originStatus(t, h, net.ParseIP("127.0.0.1"), tt.host, tt.origin); got != tt.status {
			t.Errorf("loopback, Host %q Origin %q: status %d, want %d: %s", tt.host, tt.origin, got, tt.status, body)
		}
	}
}

// TestNormalizeOriginDropsDefaultPorts pins the canonical form the origin
// checks compare.
func TestNormalizeOriginDropsDefaultPorts(t *testing.T) {
	for in, want := range map[string]string{
		"https://X.example:443":  "https://x.example",
		"http://x:80":            "http://x",
		"HTTP://x:80/":           "http://x",
		"https://x:80":           "https://x:80",
		"http://x:443":           "http://x:443",
		"https://x:8443":         "https://x:8443",
		"https://[::1]:443":      "https://[::1]",
		"https://[::1]:4430":     "https://[::1]:4430",
		"chrome-extension://abc": "chrome-extension://abc",
		"ws://x:80":              "ws://x:80",
	} {
		if got, ok := normalizeOrigin(in); !ok || got != want {
			t.Errorf("normalizeOrigin(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}
