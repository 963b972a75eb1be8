package streamhttp

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// TestLegacyGetStreamEndsAtTokenExpiry: a legacy session's GET stream
// opened with a bearer token ends when that token expires (the Expiry the
// verifier reported), not before; the session stays open for the client
// to reconnect with a fresh token. A GET with a token that states no
// expiry lasts until the client leaves.
func TestLegacyGetStreamEndsAtTokenExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := server.New(mcp.Implementation{Name: "exp", Version: "1"}, nil)
		h := NewHandler(s, &HandlerOptions{Logger: slog.New(slog.DiscardHandler)})
		defer EndSessions(h)
		expiry := time.Now().Add(time.Hour)
		withToken := func(r *http.Request, exp time.Time) *http.Request {
			return r.WithContext(auth.WithInfo(r.Context(), &auth.Info{ClientID: "c", Subject: "ann", Expiry: exp}))
		}
		init := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(srvInitialize))
		init.Header = srvHeaders("")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, withToken(init, expiry))
		sid := w.Header().Get(HeaderSessionID)
		if w.Code != http.StatusOK || sid == "" {
			t.Fatalf("initialize: %d %s", w.Code, w.Body)
		}

		get := func(ctx context.Context, exp time.Time) (chan struct{}, *httptest.ResponseRecorder) {
			r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
			r.Header = srvGetHeaders(sid, "")
			rec := httptest.NewRecorder()
			done := make(chan struct{})
			go func() {
				defer close(done)
				h.ServeHTTP(rec, withToken(r, exp))
			}()
			return done, rec
		}
		done, rec := get(context.Background(), expiry)
		synctest.Wait()
		select {
		case <-done:
			t.Fatalf("the GET stream ended at once: %d %s", rec.Code, rec.Body)
		default:
		}
		select { // every goroutine blocked: the fake clock runs on to what ends the stream
		case <-done:
		case <-time.After(2 * time.Hour): // virtual time
			t.Fatal("the GET stream outlived its token")
		}
		if now := time.Now(); !now.Equal(expiry) {
			t.Fatalf("the GET stream ended at %v, want the token's expiry %v", now, expiry)
		}
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
			t.Fatalf("GET: %d %q", rec.Code, rec.Header().Get("Content-Type"))
		}
		if h.sessions.byID[sid] == nil {
			t.Fatal("the session closed with the stream")
		}

		// No expiry stated: the stream lasts until the client leaves.
		ctx, cancel := context.WithCancel(context.Background())
		done, _ = get(ctx, time.Time{})
		select {
		case <-done:
			t.Fatal("a GET stream without an expiry ended")
		case <-time.After(1000 * time.Hour): // virtual time
		}
		cancel()
		<-done
	})
}

// TestLegacyGetStreamEndsWhenTokenRevoked: a legacy session's GET stream
// whose token a re-check refuses (auth.Revoked closes) ends then, well
// before the token's expiry; the session stays for the client to
// reconnect with a valid token. The stream asks once, which is what
// starts the middleware's checks.
func TestLegacyGetStreamEndsWhenTokenRevoked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := server.New(mcp.Implementation{Name: "rev", Version: "1"}, nil)
		h := NewHandler(s, &HandlerOptions{Logger: slog.New(slog.DiscardHandler)})
		defer EndSessions(h)
		info := &auth.Info{ClientID: "c", Subject: "ann", Expiry: time.Now().Add(24 * time.Hour)}
		init := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(srvInitialize))
		init.Header = srvHeaders("")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, init.WithContext(auth.WithInfo(init.Context(), info)))
		sid := w.Header().Get(HeaderSessionID)
		if w.Code != http.StatusOK || sid == "" {
			t.Fatalf("initialize: %d %s", w.Code, w.Body)
		}

		revoked := make(chan struct{})
		asked := make(chan struct{}, 4)
		ctx := auth.WithRevocation(auth.WithInfo(context.Background(), info), func() <-chan struct{} {
			asked <- struct{}{}
			return revoked
		})
		r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
		r.Header = srvGetHeaders(sid, "")
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(rec, r)
		}()
		time.Sleep(time.Hour)
		synctest.Wait()
		select {
		case <-done:
			t.Fatalf("the GET stream ended before its token was refused: %d %s", rec.Code, rec.Body)
		default:
		}
		if len(asked) != 1 {
			t.Errorf("the stream asked auth.Revoked %d times, want once", len(asked))
		}
		start := time.Now()
		close(revoked)
		<-done
		if d := time.Since(start); d != 0 {
			t.Errorf("the GET stream ended %v after the refusal, want at once", d)
		}
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
			t.Fatalf("GET: %d %q", rec.Code, rec.Header().Get("Content-Type"))
		}
		if h.sessions.byID[sid] == nil {
			t.Fatal("the session closed with the stream")
		}
	})
}
