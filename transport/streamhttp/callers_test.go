package streamhttp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
)

// TestCallersIdleBounded: requests run on caller goroutines that wait for
// the next request once answered, at most maxIdleCallers of them, and Close
// waits for the idle ones to end.
func TestCallersIdleBounded(t *testing.T) {
	const n = maxIdleCallers + 3
	var (
		mu      sync.Mutex
		arrived int
		all     = make(chan struct{})
	)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &m)
		mu.Lock()
		if arrived++; arrived == n {
			close(all)
		}
		mu.Unlock()
		<-all // the first n requests are in flight together
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
	}))
	defer ts.Close()
	ctx := context.Background()
	conn, err := NewClientTransport(ts.URL, nil).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := conn.(*clientConn)
	send := func(id int) {
		t.Helper()
		if err := c.Write(ctx, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id)); err != nil {
			t.Fatal(err)
		}
	}
	read := func() {
		t.Helper()
		msg, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(msg, &r) != nil || r.Result == nil {
			t.Fatalf("not a result: %s", msg)
		}
	}
	settle := func() {
		// The callers go idle after delivering their responses; no clock
		// is needed to wait for that.
		for c.idle.Load() < maxIdleCallers {
			runtime.Gosched()
		}
	}
	for i := range n {
		send(i + 1)
	}
	for range n {
		read()
	}
	settle()
	if got := c.idle.Load(); got != maxIdleCallers {
		t.Fatalf("%d idle callers after %d requests, want %d", got, n, maxIdleCallers)
	}
	send(n + 1) // runs on an idle caller, which then waits again
	read()
	settle()
	if got := c.idle.Load(); got != maxIdleCallers {
		t.Fatalf("%d idle callers after another request, want %d", got, maxIdleCallers)
	}
	c.Close()
	if got := c.idle.Load(); got != 0 {
		t.Fatalf("%d callers still idle after Close", got)
	}
}
