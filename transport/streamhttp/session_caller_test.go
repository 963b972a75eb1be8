package streamhttp

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// initializeFrom sends an initialize from the client at addr straight to
// h and returns the status and the session id.
func initializeFrom(h http.Handler, addr string) (int, string, string) {
	return postFrom(h, addr, srvInitialize)
}

// postFrom sends body, a legacy client's POST outside any session, from
// the client at addr straight to h, and returns the status, the session
// id and the body of the answer.
func postFrom(h http.Handler, addr, body string) (int, string, string) {
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	r.Header = srvHeaders("")
	r.RemoteAddr = net.JoinHostPort(addr, "40000")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Header().Get(HeaderSessionID), w.Body.String()
}

func sessionHandler(t *testing.T, o *SessionOptions) *Handler {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "fair", Version: "1"}, nil)
	h := NewHandler(s, &HandlerOptions{Sessions: o, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { EndSessions(h) })
	return h
}

// TestHandlerLegacySessionsBurnerKeepsToItsShare: with default options one
// client opening as many sessions as the pool holds (and never coming
// back) holds at most three quarters of the pool, where shares begin,
// recycling its own least recently used beyond; another client then still
// opens a session. Before shares, the burner took the whole pool and the
// other client got 503 until the idle timeout.
func TestHandlerLegacySessionsBurnerKeepsToItsShare(t *testing.T) {
	h := sessionHandler(t, nil)
	first := ""
	for i := range DefaultMaxSessions {
		code, sid, body := initializeFrom(h, "192.0.2.1")
		if code != http.StatusOK {
			t.Fatalf("the burner's initialize %d: %d %s", i, code, body)
		}
		if i == 0 {
			first = sid
		}
	}
	if code, _, body := initializeFrom(h, "198.51.100.1"); code != http.StatusOK {
		t.Fatalf("another client after the burner: %d %s", code, body)
	}
	if n, want := h.sessions.len(), DefaultMaxSessions-DefaultMaxSessions/4; n != want+1 {
		t.Errorf("%d sessions open, want the burner's %d and one", n, want)
	}
	if h.sessions.byID[first] != nil {
		t.Error("the burner's least recently used session is still open")
	}
}

// TestHandlerLegacySessionsPerCallerLimit: under pressure (four of a pool
// of five open) a caller at its limit whose sessions are all busy gets 429
// naming the limit; once one is idle, the least recently used idle one is
// closed for the new one; other callers are not touched.
func TestHandlerLegacySessionsPerCallerLimit(t *testing.T) {
	h := sessionHandler(t, &SessionOptions{MaxSessions: 5, MaxSessionsPerCaller: 3})
	var sids []string
	for range 3 {
		code, sid, body := initializeFrom(h, "192.0.2.1")
		if code != http.StatusOK {
			t.Fatalf("initialize: %d %s", code, body)
		}
		sids = append(sids, sid)
	}
	_, other, _ := initializeFrom(h, "198.51.100.1")
	for _, sid := range sids {
		h.sessions.byID[sid].acquire() // a request in progress, a GET stream open
	}
	code, _, body := initializeFrom(h, "192.0.2.1")
	msg, _, err := jsonrpc.DecodeMessage([]byte(body))
	resp, _ := msg.(*jsonrpc.Response)
	if code != http.StatusTooManyRequests || err != nil || resp == nil || resp.Error == nil ||
		!strings.Contains(resp.Error.Message, "MaxSessionsPerCaller") || !strings.Contains(resp.Error.Message, "3 sessions") {
		t.Fatalf("over the limit with every session busy: %d %s", code, body)
	}
	// The second and then the first become idle: the second was used
	// last before, so the first is the one to go.
	h.sessions.byID[sids[1]].release()
	h.sessions.byID[sids[0]].release()
	h.sessions.byID[sids[1]].touch()
	if code, _, body := initializeFrom(h, "192.0.2.1"); code != http.StatusOK {
		t.Fatalf("over the limit with an idle session: %d %s", code, body)
	}
	if h.sessions.byID[sids[0]] != nil || h.sessions.byID[sids[1]] == nil || h.sessions.byID[sids[2]] == nil {
		t.Error("the wrong session was evicted: want the least recently used idle one")
	}
	if h.sessions.byID[other] == nil || h.sessions.len() != 4 {
		t.Errorf("other caller's session gone, or %d sessions open (want 4)", h.sessions.len())
	}
	// Unbounded per caller when negative.
	u := sessionHandler(t, &SessionOptions{MaxSessions: 5, MaxSessionsPerCaller: -1})
	for range 5 {
		if code, _, _ := initializeFrom(u, "192.0.2.1"); code != http.StatusOK {
			t.Fatalf("no bound per caller: %d", code)
		}
	}
	if code, _, _ := initializeFrom(u, "192.0.2.1"); code != http.StatusServiceUnavailable {
		t.Fatalf("pool full: %d, want 503", code)
	}
}

// TestLegacySessionsBurnerCost measures what one attacking client costs
// others (issue 23's closing figures, BENCHMARKS.md "Fair under attack"):
// a burner sends 2,000 initializes, leaving its sessions idle or holding
// every one busy (a GET stream each), and then a good client sends 100.
// Before shares (MaxSessionsPerCaller negative: one pool) every good
// initialize got 503; with the default share none does.
func TestLegacySessionsBurnerCost(t *testing.T) {
	for _, busy := range []bool{false, true} {
		run := func(o *SessionOptions) (good503, burner429 int) {
			h := sessionHandler(t, o)
			for range 2 * DefaultMaxSessions {
				code, sid, _ := initializeFrom(h, "192.0.2.1")
				if code == http.StatusTooManyRequests {
					burner429++
				}
				if busy && sid != "" {
					h.sessions.byID[sid].acquire()
				}
			}
			for range 100 {
				if code, _, _ := initializeFrom(h, "198.51.100.1"); code == http.StatusServiceUnavailable {
					good503++
				}
			}
			return good503, burner429
		}
		before, _ := run(&SessionOptions{MaxSessionsPerCaller: -1})
		after, refused := run(nil)
		t.Logf("burner sends %d initializes (sessions busy: %v), good client 100: before %d × 503; after %d × 503 (burner refused %d × 429)",
			2*DefaultMaxSessions, busy, before, after, refused)
		if after != 0 || before != 100 {
			t.Errorf("busy %v: good client's 503s before %d (want 100), after %d (want 0)", busy, before, after)
		}
	}
}

// TestHandlerCallerAddressInContext: the handler puts the client's host
// (without its port) in the request's context, where limits per caller
// (the single-use store's shares, listen streams) find it.
func TestHandlerCallerAddressInContext(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "who", Version: "1"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return mcp.TextResult("from " + auth.RemoteAddrFrom(ctx) + " as " + auth.CallerKey(ctx)), nil
	})
	url, _ := serve(t, NewHandler(s, nil))
	resp, b := post(t, url, stdHeaders("tools/call", "who"), rawRequest(1, "tools/call", `"name":"who"`))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "from 127.0.0.1 as addr:loopback") {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
}

// TestHandlerLegacySessionsBehindOneAddress: the clients behind one proxy
// share an address; below the pool's pressure mark they are not held to one
// client's share: 256 sessions from one address all open and stay open
// (a load test through one address found them evicted at 100).
func TestHandlerLegacySessionsBehindOneAddress(t *testing.T) {
	h := sessionHandler(t, nil)
	var sids []string
	for i := range 256 {
		code, sid, body := initializeFrom(h, "10.0.0.1")
		if code != http.StatusOK {
			t.Fatalf("initialize %d behind one address: %d %s", i, code, body)
		}
		sids = append(sids, sid)
	}
	for i, sid := range sids {
		if h.sessions.byID[sid] == nil {
			t.Fatalf("session %d of 256 behind one address was closed", i)
		}
	}
}
