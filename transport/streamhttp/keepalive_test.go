package streamhttp

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/parley-mcp/parley/mcp"
)

// streamRecorder is a ResponseWriter for tests inside a synctest bubble,
// where real sockets cannot be used: it keeps what is written and counts
// flushes.
type streamRecorder struct {
	mu      sync.Mutex
	header  http.Header
	status  int
	buf     bytes.Buffer
	flushes int
}

func (w *streamRecorder) Header() http.Header { return w.header }
func (w *streamRecorder) WriteHeader(s int)   { w.status = s }
func (w *streamRecorder) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(b)
}
func (w *streamRecorder) Flush() {
	w.mu.Lock()
	w.flushes++
	w.mu.Unlock()
}
func (w *streamRecorder) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestKeepAlive: a quiet listen stream gets a keep-alive comment every
// KeepAlive, and every event but the last is flushed as it is written.
func TestKeepAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture()
		h := NewHandler(f.s, &HandlerOptions{KeepAlive: 10 * time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		ctx = context.WithValue(ctx, http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80})
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://localhost/mcp",
			strings.NewReader(rawRequest(1, "subscriptions/listen", `"notifications":{"toolsListChanged":true}`)))
		req.Header = stdHeaders("subscriptions/listen", "")
		w := &streamRecorder{header: http.Header{}}
		done := make(chan struct{})
		go func() {
			h.ServeHTTP(w, req)
			close(done)
		}()

		synctest.Wait()
		if got := w.String(); !strings.Contains(got, mcp.NotificationSubscriptionsAcknowledged) || strings.Contains(got, "keep-alive") {
			t.Fatalf("at start: %q", got)
		}
		time.Sleep(35 * time.Second)
		synctest.Wait()
		if n := strings.Count(w.String(), ": keep-alive\n\n"); n != 3 {
			t.Errorf("%d keep-alives after 35s, want 3:\n%s", n, w.String())
		}
		f.s.NotifyToolListChanged()
		synctest.Wait()
		if !strings.Contains(w.String(), mcp.NotificationToolListChanged) {
			t.Errorf("no list_changed:\n%s", w.String())
		}
		f.s.EndSubscriptions()
		<-done
		out := w.String()
		if !strings.HasSuffix(out, `"id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fixture","version":"0.1.0"},"io.modelcontextprotocol/subscriptionId":1},"resultType":"complete"}}`+"\n\n") &&
			!strings.Contains(out, `"id":1,"result"`) {
			t.Errorf("the stream does not end with the listen result:\n%s", out)
		}
		w.mu.Lock()
		flushes := w.flushes
		w.mu.Unlock()
		// ack, 3 keep-alives, list_changed; the result goes out with the
		// end of the response, which net/http flushes when ServeHTTP
		// returns (one write fewer).
		if flushes != 5 {
			t.Errorf("%d flushes, want 5", flushes)
		}
		if w.status != 200 || w.header.Get("Content-Type") != "text/event-stream" {
			t.Errorf("status %d, header %v", w.status, w.header)
		}
		// Nothing is written after the handler returned.
		time.Sleep(time.Minute)
		synctest.Wait()
		if w.String() != out {
			t.Error("written to after ServeHTTP returned")
		}
		cancel()
	})
}

// TestKeepAliveStopsWithClient: when the client goes away, the listen
// handler and the keep-alive loop end.
func TestKeepAliveStopsWithClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture()
		h := NewHandler(f.s, &HandlerOptions{KeepAlive: time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://localhost/mcp",
			strings.NewReader(rawRequest(1, "subscriptions/listen", `"notifications":{"toolsListChanged":true}`)))
		req.Header = stdHeaders("subscriptions/listen", "")
		w := &streamRecorder{header: http.Header{}}
		done := make(chan struct{})
		go func() {
			h.ServeHTTP(w, req)
			close(done)
		}()
		time.Sleep(2500 * time.Millisecond)
		cancel()
		<-done
		synctest.Wait() // the keep-alive goroutine must have exited too
		if n := strings.Count(w.String(), "keep-alive"); n != 2 {
			t.Errorf("%d keep-alives, want 2", n)
		}
	})
}
