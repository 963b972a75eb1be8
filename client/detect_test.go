package client_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// refusingEnd is the client's end of a pipe to a fake server, playing an
// HTTP transport: the next error response the fake sends reaches the
// client as the *transport.CallError that streamhttp delivers for a POST
// answered with status (or, with status 0, for a POST that failed).
type refusingEnd struct {
	transport.Conn
	mu     sync.Mutex
	status int  // of the next error response; 0: a failed POST
	armed  bool // the next error response is refused
}

// Read hands the fake's messages on, the armed error response as a
// *transport.CallError.
func (e *refusingEnd) Read(ctx context.Context) ([]byte, error) {
	msg, err := e.Conn.Read(ctx)
	if err != nil {
		return msg, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.armed {
		return msg, nil
	}
	m, _, derr := jsonrpc.DecodeMessage(msg)
	if r, ok := m.(*jsonrpc.Response); derr != nil || !ok || r.Error == nil {
		return msg, nil
	}
	e.armed = false
	var cause error = errors.New("dial tcp: connection refused")
	if e.status != 0 {
		cause = &transport.HTTPStatusError{StatusCode: e.status, Status: strconv.Itoa(e.status) + " " + http.StatusText(e.status)}
	}
	return nil, &transport.CallError{Response: msg, Err: cause}
}

// TestAutoLegacyOverHTTPStatuses: how automatic mode reads the HTTP status
// of a probe's refusal (design 014). A 400, 404 or 405, with the legacy
// server's own JSON-RPC error or an empty body (the transport's -32603
// stand-in), means a legacy server: Connect initializes on the same
// connection. A 401 or 403 belongs to authorization and a 5xx to an
// outage, whatever the body says, and a POST that failed got no answer at
// all: Connect fails with the error, which matches the status, and sends
// nothing more. A modern error in a 400 keeps the client modern.
func TestAutoLegacyOverHTTPStatuses(t *testing.T) {
	const (
		notInitialized = -32000 // what the TypeScript SDK's sessionful server answers
		standIn        = jsonrpc.CodeInternalError
	)
	for _, tc := range []struct {
		name   string
		status int // 0: the POST failed
		code   int64
		legacy bool
	}{
		{"400 not initialized", 400, notInitialized, true},
		{"400 empty body", 400, standIn, true},
		{"404 empty body", 404, standIn, true},
		{"405 empty body", 405, standIn, true},
		{"404 method not found", 404, jsonrpc.CodeMethodNotFound, true},
		{"422", 422, standIn, true},
		{"401", 401, standIn, false},
		{"401 with a JSON-RPC body", 401, notInitialized, false},
		{"403", 403, jsonrpc.CodeInvalidRequest, false},
		{"500", 500, standIn, false},
		{"502", 502, standIn, false},
		{"503 with a JSON-RPC body", 503, jsonrpc.CodeMethodNotFound, false},
		{"400 header mismatch", 400, mcp.CodeHeaderMismatch, false},
		{"400 missing capability", 400, mcp.CodeMissingRequiredClientCapability, false},
		{"POST failed", 0, standIn, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				clientEnd, serverEnd := transport.NewMemoryPipe()
				t.Cleanup(func() { serverEnd.Close() })
				f := &fake{t: t, conn: serverEnd}
				end := &refusingEnd{Conn: clientEnd, status: tc.status, armed: true}
				res := connectAsync(newClient(nil), transport.NewMemoryTransport(end))
				m := f.expect(mcp.MethodDiscover)
				f.fail(m.ID, tc.code, "Bad Request: Server not initialized", "")
				if tc.legacy {
					f.handshake(legacyInit)
					r := <-res
					if r.err != nil {
						t.Fatalf("Connect: %v", r.err)
					}
					defer r.sess.Close()
					if got := r.sess.ProtocolVersion(); got != mcp.Version20251125 {
						t.Errorf("ProtocolVersion() = %q, want %q", got, mcp.Version20251125)
					}
					return
				}
				r := <-res
				if r.err == nil {
					r.sess.Close()
					t.Fatal("Connect succeeded")
				}
				var se *transport.HTTPStatusError
				if tc.status != 0 && (!errors.As(r.err, &se) || se.StatusCode != tc.status) {
					t.Errorf("Connect: %v, want an error matching HTTP %d", r.err, tc.status)
				}
				var rpcErr *jsonrpc.Error
				if !errors.As(r.err, &rpcErr) || rpcErr.Code != tc.code {
					t.Errorf("Connect: %v, want an error matching the answer's %d", r.err, tc.code)
				}
				f.expectClosed() // no initialize
			})
		})
	}
}

// TestAutoModernOverHTTP400: a -32022 in a 400 is a modern server's: the
// client retries server/discover with the version it lists and stays
// modern, without a handshake.
func TestAutoModernOverHTTP400(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clientEnd, serverEnd := transport.NewMemoryPipe()
		t.Cleanup(func() { serverEnd.Close() })
		f := &fake{t: t, conn: serverEnd}
		end := &refusingEnd{Conn: clientEnd, status: 400, armed: true}
		// A client ahead of its server, which could initialize too.
		c := newClient(nil)
		client.SetVersionsForTest(c, futureVersion, mcp.LatestVersion, mcp.Version20251125)
		res := connectAsync(c, transport.NewMemoryTransport(end))
		m := f.expect(mcp.MethodDiscover)
		if v := version(t, m); v != futureVersion {
			t.Fatalf("the probe asks for %q, want %q", v, futureVersion)
		}
		f.unsupported(m.ID, futureVersion, mcp.LatestVersion)
		m = f.expect(mcp.MethodDiscover)
		if v := version(t, m); v != mcp.LatestVersion {
			t.Errorf("the retry asks for %q, want %q", v, mcp.LatestVersion)
		}
		f.reply(m.ID, fakeDiscoverResult)
		r := <-res
		if r.err != nil {
			t.Fatalf("Connect: %v", r.err)
		}
		defer r.sess.Close()
		if got := r.sess.ProtocolVersion(); got != mcp.LatestVersion {
			t.Errorf("ProtocolVersion() = %q, want %q", got, mcp.LatestVersion)
		}
		if r.sess.InitializeResult() != nil {
			t.Error("a modern session has an initialize result")
		}
	})
}
