package resourceserver_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/auth/resourceserver"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

// tokenState is what a switchable verifier answers for the token "t".
type tokenState int32

const (
	stateValid       tokenState = iota
	stateRevoked                // ErrInvalidToken
	stateUnavailable            // ErrUnavailable
	stateBroken                 // an error of the verifier's own
	stateNarrowed               // valid, without the required scope
)

// switchable is a verifier whose answer the test changes while a request
// runs, and which counts its calls.
type switchable struct {
	state atomic.Int32
	calls atomic.Int32
}

func (s *switchable) Verify(_ context.Context, token string) (*auth.Info, error) {
	s.calls.Add(1)
	info := &auth.Info{ClientID: "app", Issuer: issuer, Subject: "alice", Scopes: []string{"mcp"}}
	switch tokenState(s.state.Load()) {
	case stateRevoked:
		return nil, fmt.Errorf("%w: inactive", resourceserver.ErrInvalidToken)
	case stateUnavailable:
		return nil, fmt.Errorf("%w: introspection endpoint down", resourceserver.ErrUnavailable)
	case stateBroken:
		return nil, fmt.Errorf("verifier bug")
	case stateNarrowed:
		info.Scopes = nil
	}
	return info, nil
}

func (s *switchable) set(st tokenState) { s.state.Store(int32(st)) }

// streamServer is a ResourceServer with RecheckInterval interval in front
// of a handler that holds its request open like a stream: until
// auth.Revoked closes (recorded in ended) or the request's context ends.
// A handler that does not ask (no "watch" in the path) only waits.
type streamServer struct {
	h     http.Handler
	v     *switchable
	logs  *syncBuffer
	ended chan time.Time // when a watched request saw its token refused
}

func newStreamServer(t *testing.T, interval time.Duration) *streamServer {
	t.Helper()
	s := &streamServer{v: &switchable{}, logs: new(syncBuffer), ended: make(chan time.Time, 4)}
	rs, err := resourceserver.New(&resourceserver.Options{
		Metadata:        resourceserver.Metadata{Resource: resource, AuthorizationServers: []string{issuer}},
		Verifier:        s.v,
		Scopes:          []string{"mcp"},
		RecheckInterval: interval,
		Logger:          slog.New(slog.NewTextHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	s.h = rs.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.Path, "watch") {
			<-r.Context().Done()
			return
		}
		revoked := auth.Revoked(r.Context())
		if interval <= 0 && revoked != nil {
			t.Errorf("auth.Revoked = %v without a RecheckInterval, want nil", revoked)
		}
		select {
		case <-revoked:
			s.ended <- time.Now()
		case <-r.Context().Done():
		}
	}))
	return s
}

// open starts a request for path with the token "t" and returns a cancel
// function (the client leaving) and a channel closed when it returns. The
// client leaves at the latest when the test ends, so that a failed test
// leaves nothing blocked in its bubble.
func (s *streamServer) open(t *testing.T, path string) (context.CancelFunc, chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "https://mcp.example.com"+path, nil)
	r.Header.Set("Authorization", "Bearer t")
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.h.ServeHTTP(httptest.NewRecorder(), r)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return cancel, done
}

// within waits, in a synctest bubble, for ch for at most d of the bubble's
// time: a regression fails at once instead of waiting on go test's
// timeout (a bubble whose goroutines all block runs its clock on).
func within[T any](t *testing.T, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("%s: not within %v", what, d)
		panic("unreachable")
	}
}

// A revoked token ends the stream at the first re-check after the
// revocation, within one interval; until then, and for as long as the
// token stays valid, the stream goes on, checked once per interval.
func TestRecheckEndsRevokedStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStreamServer(t, time.Minute)
		start := time.Now()
		_, done := s.open(t, "/mcp/watch")
		time.Sleep(10*time.Minute + time.Second) // virtual time: ten re-checks, all valid
		synctest.Wait()
		if len(s.ended) != 0 {
			t.Fatal("a stream whose token stays valid ended")
		}
		if n := s.v.calls.Load(); n != 11 {
			t.Errorf("%d verifications in 10 minutes, want 11 (the request's, then one a minute)", n)
		}
		s.v.set(stateRevoked)
		end := within(t, s.ended, time.Hour, "the end of the revoked stream")
		if got, want := end.Sub(start), 11*time.Minute; got != want {
			t.Errorf("the stream ended %v after it opened, want %v: at the first re-check after the revocation", got, want)
		}
		within(t, done, time.Hour, "the request's return")
		if !strings.Contains(s.logs.String(), "re-check refused") {
			t.Errorf("the refusal is not logged:\n%s", s.logs)
		}
		time.Sleep(time.Hour)
		if n := s.v.calls.Load(); n != 12 {
			t.Errorf("%d verifications, want 12: no re-check after the stream ended", n)
		}
	})
}

// A token that no longer grants a required scope ends the stream too.
func TestRecheckEndsStreamWithoutScope(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStreamServer(t, time.Minute)
		start := time.Now()
		_, done := s.open(t, "/mcp/watch")
		synctest.Wait()
		s.v.set(stateNarrowed)
		if got := within(t, s.ended, time.Hour, "the end of the stream").Sub(start); got != time.Minute {
			t.Errorf("ended after %v, want one interval", got)
		}
		within(t, done, time.Hour, "the request's return")
	})
}

// A verifier that cannot decide leaves the stream open (fail open: the
// expiry still bounds it, and an outage must not end every stream at
// once), logs a warning, and the checks go on: once the verifier answers
// again and refuses, the stream ends.
func TestRecheckVerifierErrorKeepsStream(t *testing.T) {
	for _, st := range []tokenState{stateUnavailable, stateBroken} {
		synctest.Test(t, func(t *testing.T) {
			s := newStreamServer(t, time.Minute)
			start := time.Now()
			_, done := s.open(t, "/mcp/watch")
			synctest.Wait()
			s.v.set(st)
			time.Sleep(5*time.Minute + time.Second)
			synctest.Wait()
			if len(s.ended) != 0 {
				t.Fatalf("state %d: a verifier that cannot decide ended the stream", st)
			}
			if log := s.logs.String(); !strings.Contains(log, "level=WARN") || !strings.Contains(log, "cannot re-check") {
				t.Errorf("state %d: the failed re-checks are not logged as warnings:\n%s", st, log)
			}
			s.v.set(stateRevoked)
			if got := within(t, s.ended, time.Hour, "the end of the stream").Sub(start); got != 6*time.Minute {
				t.Errorf("state %d: ended after %v, want at the first re-check that refused (6m)", st, got)
			}
			within(t, done, time.Hour, "the request's return")
		})
	}
}

// Only requests that ask are re-checked, and a request that ended is not
// re-checked any more; without RecheckInterval nothing is, and
// auth.Revoked is nil.
func TestRecheckOnlyWhileAsked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStreamServer(t, time.Minute)
		cancel, done := s.open(t, "/mcp/quiet")
		time.Sleep(time.Hour)
		if n := s.v.calls.Load(); n != 1 {
			t.Errorf("%d verifications of a request that never asked, want 1", n)
		}
		cancel()
		<-done

		cancel, done = s.open(t, "/mcp/watch")
		time.Sleep(90 * time.Second)
		cancel() // the client leaves before the token is refused
		<-done
		before := s.v.calls.Load()
		time.Sleep(time.Hour)
		if n := s.v.calls.Load(); n != before {
			t.Errorf("%d re-checks after the request ended, want none", n-before)
		}
		if len(s.ended) != 0 {
			t.Error("a stream ended by its client was reported refused")
		}
	})
	for _, interval := range []time.Duration{0, -time.Minute} {
		synctest.Test(t, func(t *testing.T) {
			s := newStreamServer(t, interval)
			cancel, done := s.open(t, "/mcp/watch")
			s.v.set(stateRevoked)
			time.Sleep(time.Hour)
			if n := s.v.calls.Load(); n != 1 || len(s.ended) != 0 {
				t.Errorf("RecheckInterval %v: %d verifications, ended %v; want 1, not ended", interval, n, len(s.ended) != 0)
			}
			cancel()
			<-done
		})
	}
}

// Several streams at once, each with its own checks (run with -race):
// valid, they all go on; once the token is revoked, each ends within one
// interval.
func TestRecheckConcurrentStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStreamServer(t, time.Minute)
		var wg sync.WaitGroup
		var cancels []context.CancelFunc
		for range 3 {
			cancel, done := s.open(t, "/mcp/watch")
			cancels = append(cancels, cancel)
			wg.Go(func() { <-done })
		}
		time.Sleep(5 * time.Minute)
		if len(s.ended) != 0 {
			t.Fatal("a valid stream ended")
		}
		s.v.set(stateRevoked)
		time.Sleep(time.Minute)
		synctest.Wait()
		if len(s.ended) != 3 {
			t.Errorf("%d of 3 streams ended after the revocation", len(s.ended))
		}
		for _, c := range cancels {
			c()
		}
		wg.Wait()
	})
}

// streamWriter is a ResponseWriter whose body may be read while the
// handler writes it.
type streamWriter struct {
	mu     sync.Mutex
	header http.Header
	status int
	body   strings.Builder
}

func (w *streamWriter) Header() http.Header { return w.header }
func (w *streamWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status == 0 {
		w.status = code
	}
}
func (w *streamWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(p)
}
func (w *streamWriter) Flush() {}
func (w *streamWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.body.String()
}

// End to end: an mcpserver behind the middleware with RecheckInterval; a
// subscriptions/listen stream opened over Streamable HTTP with a token
// that is revoked later ends within one interval of the revocation, with
// the -32600 error whose data.reason is "token_revoked"; until then it
// delivers.
func TestRecheckEndsListenStreamEndToEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mcpserver.MustNew(mcp.Implementation{Name: "rechecked", Version: "1"}, &mcpserver.Options{Logger: slog.New(slog.DiscardHandler)})
		if err := mcpserver.AddTool(s, &mcp.Tool{Name: "noop"}, func(context.Context, *mcpserver.Call, struct{}) (string, error) { return "", nil }); err != nil {
			t.Fatal(err)
		}
		v := &switchable{}
		rs, err := resourceserver.New(&resourceserver.Options{
			Metadata:        resourceserver.Metadata{Resource: resource, AuthorizationServers: []string{issuer}},
			Verifier:        v,
			RecheckInterval: 5 * time.Minute,
			Logger:          slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatal(err)
		}
		h := rs.Wrap(s.HTTPHandler(nil))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"toolsListChanged":true}}}`
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, resource, strings.NewReader(body))
		for k, val := range map[string]string{"Authorization": "Bearer t", "Content-Type": "application/json",
			"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"} {
			req.Header.Set(k, val)
		}
		w := &streamWriter{header: http.Header{}}
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(w, req)
		}()
		time.Sleep(12 * time.Minute)
		if err := mcpserver.AddTool(s, &mcp.Tool{Name: "noop2"}, func(context.Context, *mcpserver.Call, struct{}) (string, error) { return "", nil }); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		got := w.String()
		if !strings.Contains(got, mcp.NotificationSubscriptionsAcknowledged) || !strings.Contains(got, mcp.NotificationToolListChanged) {
			t.Fatalf("before the revocation, the stream did not deliver:\n%s", got)
		}
		select {
		case <-done:
			t.Fatalf("the stream ended while its token was valid:\n%s", got)
		default:
		}
		v.set(stateRevoked)
		revokedAt := time.Now()
		within(t, done, time.Hour, "the end of the revoked stream")
		if d := time.Since(revokedAt); d > 5*time.Minute {
			t.Errorf("the stream ended %v after the revocation, want within the interval (5m)", d)
		}
		got = w.String()
		if !strings.Contains(got, `"code":-32600`) || !strings.Contains(got, `"reason":"token_revoked"`) {
			t.Errorf("the stream did not end with the token_revoked error:\n%s", got)
		}
	})
}
