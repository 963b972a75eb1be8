package streamhttp

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestHandlerLegacyRecyclingKeepsTheCount: a caller that recycles its one
// session over and over (a share of one, under pressure) holds one session
// throughout: the eviction that takes its count to zero does not lose
// track of the session that replaces the evicted one. It did, and every
// other initialize of such a caller was counted nowhere.
func TestHandlerLegacyRecyclingKeepsTheCount(t *testing.T) {
	h := sessionHandler(t, &SessionOptions{MaxSessions: 8, MaxSessionsPerCaller: 1})
	for range 6 { // another caller brings the pool under pressure
		if code, _, body := initializeFrom(h, "198.51.100.1"); code != http.StatusOK {
			t.Fatalf("initialize: %d %s", code, body)
		}
	}
	for i := range 5 {
		if code, _, body := initializeFrom(h, "192.0.2.1"); code != http.StatusOK {
			t.Fatalf("initialize %d of a caller recycling its session: %d %s", i, code, body)
		}
		if n := h.sessions.len(); n != 7 {
			t.Fatalf("after initialize %d of a caller with a share of one, %d sessions open, want 7", i, n)
		}
	}
}

// TestHandlerLegacySessionReserve: the last eighth of the pool is kept for
// callers holding no session: there a caller holding some, all busy, gets
// 429 naming the reserve, a caller holding an idle one recycles it, and
// new callers still open sessions until the pool is full.
func TestHandlerLegacySessionReserve(t *testing.T) {
	h := sessionHandler(t, &SessionOptions{MaxSessions: 16, MaxSessionsPerCaller: 8}) // reserve from 14 on, reserve share 1
	for range 12 {
		if code, _, body := initializeFrom(h, "198.51.100.1"); code != http.StatusOK {
			t.Fatalf("initialize: %d %s", code, body)
		}
	}
	for range 2 { // under pressure, under its share, before the reserve
		code, sid, body := initializeFrom(h, "192.0.2.1")
		if code != http.StatusOK {
			t.Fatalf("initialize: %d %s", code, body)
		}
		h.sessions.byID[sid].acquire()
	}
	code, _, body := initializeFrom(h, "192.0.2.1")
	if code != http.StatusTooManyRequests || !strings.Contains(body, "14 of the server's 16 sessions (SessionOptions.MaxSessions)") ||
		!strings.Contains(body, "fewer than 1; this caller has 2") {
		t.Fatalf("a caller holding sessions, in the reserve: %d %s", code, body)
	}
	// A new caller opens a session in the reserve; its next initialize
	// there recycles that session, idle, rather than take more.
	code, first, body := initializeFrom(h, "203.0.113.1")
	if code != http.StatusOK {
		t.Fatalf("a new caller in the reserve: %d %s", code, body)
	}
	if code, _, body := initializeFrom(h, "203.0.113.1"); code != http.StatusOK || h.sessions.byID[first] != nil || h.sessions.len() != 15 {
		t.Fatalf("a caller with an idle session, in the reserve: %d %s, its idle session closed %v, %d open (want 15)",
			code, body, h.sessions.byID[first] == nil, h.sessions.len())
	}
	if code, _, body := initializeFrom(h, "203.0.113.2"); code != http.StatusOK {
		t.Fatalf("the last new caller in the reserve: %d %s", code, body)
	}
	if code, _, body := initializeFrom(h, "203.0.113.9"); code != http.StatusServiceUnavailable {
		t.Fatalf("a new caller with the pool full: %d %s, want 503", code, body)
	}
}

// TestHandlerLegacySessionPressureCountsSessionsBeingCreated: the pool is
// under pressure (shares apply) once three quarters of it are open or
// being opened: initializes in flight count, so that a burst of them
// cannot keep the pool looking empty while a caller goes over its share.
// Here two sessions are open and four are being created in a pool of
// eight: a caller at its share of two (both sessions busy) is refused.
func TestHandlerLegacySessionPressureCountsSessionsBeingCreated(t *testing.T) {
	h := sessionHandler(t, &SessionOptions{MaxSessions: 8, MaxSessionsPerCaller: 2})
	for range 2 {
		code, sid, body := initializeFrom(h, "192.0.2.1")
		if code != http.StatusOK {
			t.Fatalf("initialize: %d %s", code, body)
		}
		h.sessions.byID[sid].acquire() // busy: not to be evicted
	}
	for i := range 4 { // initializes of four other callers, still being served
		if _, err := h.sessions.reserve(fmt.Sprintf("addr:198.51.100.%d", i+1)); err != nil {
			t.Fatalf("reserving an initialize in flight: %v", err)
		}
	}
	if code, _, body := initializeFrom(h, "192.0.2.1"); code != http.StatusTooManyRequests {
		t.Fatalf("a caller at its share with the pool at three quarters (sessions being created included): %d %s, want 429", code, body)
	}
}

// TestHandlerLegacyFailedInitializeGivesBackItsPlace: an initialize the
// server refuses (its params do not parse) gives back the place it held,
// in the pool and in its caller's share: a caller that sends bad
// initializes, more of them than the pool and its share hold, still opens
// a session afterwards.
func TestHandlerLegacyFailedInitializeGivesBackItsPlace(t *testing.T) {
	h := sessionHandler(t, &SessionOptions{MaxSessions: 4, MaxSessionsPerCaller: 1})
	for range 3 { // another caller brings the pool under pressure (3 of 4)
		if code, _, body := initializeFrom(h, "198.51.100.1"); code != http.StatusOK {
			t.Fatalf("initialize: %d %s", code, body)
		}
	}
	const bad = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":7}}`
	for i := range 5 {
		if code, _, body := postFrom(h, "192.0.2.1", bad); code != http.StatusBadRequest {
			t.Fatalf("bad initialize %d: %d %s, want 400", i, code, body)
		}
	}
	if code, _, body := initializeFrom(h, "192.0.2.1"); code != http.StatusOK {
		t.Fatalf("after its failed initializes, a caller's first session: %d %s", code, body)
	}
}
