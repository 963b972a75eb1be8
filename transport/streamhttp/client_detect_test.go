package streamhttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// What the TypeScript SDK's Streamable HTTP server answers a request other
// than initialize that comes without a session (sessionful mode), and a
// request whose MCP-Protocol-Version it does not know (stateless mode).
const (
	tsNotInitialized = `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`
	tsBadVersion     = `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Unsupported protocol version: 2026-07-28 (supported versions: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05, 2024-10-07)"},"id":null}`
)

// TestAutoFallbackOverHTTP: a client in automatic mode against HTTP
// endpoints that refuse its server/discover probe in the ways deployed
// servers do (design 014). A 400, 404 or 405 whose body is a legacy
// server's JSON-RPC error, empty, or not JSON-RPC means a legacy server:
// Connect initializes and the session speaks 2025-11-25. A 401 or 403
// (authorization), a 5xx (an outage), and an error only 2026-07-28
// defines are never a legacy server: Connect fails with an error that
// carries the status, and no initialize is POSTed.
func TestAutoFallbackOverHTTP(t *testing.T) {
	for _, tc := range []struct {
		name        string
		status      int
		contentType string
		body        string
		legacy      bool
	}{
		{"400 server not initialized", 400, "application/json", tsNotInitialized, true},
		{"400 unsupported version header", 400, "application/json", tsBadVersion, true},
		{"400 empty", 400, "", "", true},
		{"404 empty", 404, "", "", true},
		{"404 page", 404, "text/plain", "404 page not found", true},
		{"405 empty", 405, "", "", true},
		{"405 method not found", 405, "application/json", `{"jsonrpc":"2.0","id":$ID,"error":{"code":-32601,"message":"Method not found"}}`, true},
		{"401", 401, "", "", false},
		{"401 with a JSON-RPC body", 401, "application/json", tsNotInitialized, false},
		{"403", 403, "application/json", `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Forbidden: Host not allowed"}}`, false},
		{"500", 500, "", "", false},
		{"502 page", 502, "text/html", "<html>bad gateway</html>", false},
		{"503 with a JSON-RPC body", 503, "application/json", tsNotInitialized, false},
		{"400 header mismatch", 400, "application/json", `{"jsonrpc":"2.0","id":$ID,"error":{"code":-32020,"message":"Header mismatch"}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newLegacyEndpoint(t, "s1", "2025-11-25", func(e *legacyEndpoint) {
				e.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message, _ []byte) bool {
					req, ok := m.(*jsonrpc.Request)
					if !ok || req.Method != mcp.MethodDiscover {
						return false
					}
					if tc.contentType != "" {
						w.Header().Set("Content-Type", tc.contentType)
					}
					if tc.status == 401 {
						w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="https://example.test/.well-known/oauth-protected-resource"`)
					}
					w.WriteHeader(tc.status)
					io.WriteString(w, strings.ReplaceAll(tc.body, "$ID", req.ID.Raw()))
					return true
				}
			})
			c := client.New(mcp.Implementation{Name: "test-client", Version: "1"}, nil)
			sess, err := c.Connect(context.Background(), NewClientTransport(e.url, nil))
			inits := len(e.requests("POST", mcp.MethodInitialize))
			if tc.legacy {
				if err != nil {
					t.Fatalf("Connect: %v", err)
				}
				defer sess.Close()
				if got := sess.ProtocolVersion(); got != mcp.Version20251125 {
					t.Errorf("ProtocolVersion() = %q, want %q", got, mcp.Version20251125)
				}
				if inits != 1 {
					t.Errorf("%d initialize POSTs, want 1", inits)
				}
				return
			}
			if err == nil {
				sess.Close()
				t.Fatal("Connect succeeded")
			}
			var se *transport.HTTPStatusError
			if !errors.As(err, &se) || se.StatusCode != tc.status {
				t.Errorf("Connect: %v, want an error carrying HTTP %d", err, tc.status)
			}
			if inits != 0 {
				t.Errorf("%d initialize POSTs after HTTP %d", inits, tc.status)
			}
		})
	}
}

// TestAutoModernOverHTTP400: a -32022 in a 400 names a modern server: the
// client retries server/discover with a version it lists and stays modern,
// without initialize.
func TestAutoModernOverHTTP400(t *testing.T) {
	var discovers atomic.Int32
	e := newLegacyEndpoint(t, "s1", "2025-11-25", func(e *legacyEndpoint) {
		e.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message, _ []byte) bool {
			req, ok := m.(*jsonrpc.Request)
			if !ok || req.Method != mcp.MethodDiscover {
				return false
			}
			w.Header().Set("Content-Type", "application/json")
			if discovers.Add(1) == 1 {
				w.WriteHeader(400)
				io.WriteString(w, `{"jsonrpc":"2.0","id":`+req.ID.Raw()+`,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2026-07-28"}}}`)
				return true
			}
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+req.ID.Raw()+`,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"private"}}`)
			return true
		}
	})
	c := client.New(mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	sess, err := c.Connect(context.Background(), NewClientTransport(e.url, nil))
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer sess.Close()
	if got := sess.ProtocolVersion(); got != mcp.LatestVersion {
		t.Errorf("ProtocolVersion() = %q, want %q", got, mcp.LatestVersion)
	}
	if n := discovers.Load(); n != 2 {
		t.Errorf("%d server/discover POSTs, want 2", n)
	}
	if n := len(e.requests("POST", mcp.MethodInitialize)); n != 0 {
		t.Errorf("%d initialize POSTs", n)
	}
}
