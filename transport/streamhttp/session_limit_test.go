package streamhttp

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// openedGate is a slog.Handler that holds every "legacy session opened"
// record (logged by server.Initialize, after the handler reserved room for
// the session and before it adds it) until release is closed, and reports
// each one on reached. It is the one place a test can hold an initialize
// between the two steps, so that a burst of them is really in flight at
// once rather than served one after another.
type openedGate struct {
	reached chan struct{}
	release chan struct{}
}

func (g *openedGate) Enabled(context.Context, slog.Level) bool { return true }

func (g *openedGate) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "server: legacy session opened" {
		g.reached <- struct{}{}
		<-g.release
	}
	return nil
}

func (g *openedGate) WithAttrs([]slog.Attr) slog.Handler { return g }
func (g *openedGate) WithGroup(string) slog.Handler      { return g }

// TestHandlerLegacySessionLimitUnderBurst: MaxSessions holds for
// initialize requests that arrive together, not only for sessions opened
// one after another: sessions being created count against the limit. A
// burst of burst initializes, released at once by a channel, is held
// inside server.Initialize until every request is either held there or
// answered; exactly max of them then open a session (200) and the others
// get 503.
func TestHandlerLegacySessionLimitUnderBurst(t *testing.T) {
	const max, burst = 3, 20
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	gate := &openedGate{reached: make(chan struct{}, burst), release: make(chan struct{})}
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(gate.release) }) }
	s := server.New(mcp.Implementation{Name: "burst", Version: "1"}, &server.Options{Logger: slog.New(gate)})
	h := NewHandler(s, &HandlerOptions{Sessions: &SessionOptions{MaxSessions: max}, Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(h)
	t.Cleanup(func() { release(); ts.Close(); EndSessions(h) })
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: burst}}
	t.Cleanup(client.CloseIdleConnections)

	start := make(chan struct{})
	statuses := make(chan int, burst) // 0: the request failed
	for range burst {
		go func() {
			<-start
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(srvInitialize))
			if err != nil {
				statuses <- 0
				return
			}
			req.Header = srvHeaders("")
			resp, err := client.Do(req)
			if err != nil {
				statuses <- 0
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	close(start)

	// Hold the admitted ones until every request is accounted for, so that
	// none of them has become an open session while the others arrive.
	counts := map[int]int{}
	held, answered := 0, 0
	for held+answered < burst {
		select {
		case <-gate.reached:
			held++
		case code := <-statuses:
			counts[code]++
			answered++
		case <-ctx.Done():
			t.Fatalf("%d initializes held and %d answered of %d before the deadline", held, answered, burst)
		}
	}
	release()
	for answered < burst {
		select {
		case code := <-statuses:
			counts[code]++
			answered++
		case <-ctx.Done():
			t.Fatalf("%d of %d initializes answered before the deadline", answered, burst)
		}
	}
	if counts[http.StatusOK] != max || counts[http.StatusServiceUnavailable] != burst-max || len(counts) != 2 {
		t.Fatalf("a burst of %d initializes with MaxSessions %d: statuses %v, want %d × 200 and %d × 503 (%d held at once inside initialize)",
			burst, max, counts, max, burst-max, held)
	}
	if held != max {
		// Without the hold the burst is served one by one, and the test
		// proves no more than TestHandlerLegacySessionLimit.
		t.Fatalf("%d initializes were held inside server.Initialize, want %d: openedGate no longer sees the record it waits for", held, max)
	}
	if n := h.sessions.len(); n != max {
		t.Fatalf("%d sessions open, want %d", n, max)
	}
}
