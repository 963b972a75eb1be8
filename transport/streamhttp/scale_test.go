package streamhttp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// How cost grows with the work over HTTP (issue 35, design record 050):
// what an idle listen stream and an idle legacy session hold, and what a
// large result costs to serve. Memory is read from runtime.MemStats after
// collections, beside a bare net/http handler measured the same way in the
// same test where one means something; the figures are asserted with
// margins and without -race (make allocs), which changes them.

// heldNow is the heap in use and goroutine stacks after two collections,
// and the goroutines.
func heldNow() (float64, int) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapInuse + ms.StackInuse), runtime.NumGoroutine()
}

// openListens opens n listen streams to url, each on a connection of its
// own, and returns once each has its first event; they stay open until
// the test ends. It reports what the process held per stream meanwhile
// (client and server: the same client is used against every server, so
// differences between servers are the servers') and goroutines per stream.
func openListens(t *testing.T, url string, n int) (bytesPer, goroutinesPer float64) {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: -1}
	hc := &http.Client{Transport: tr}
	bodies := make([]io.Closer, 0, n)
	t.Cleanup(func() {
		for _, b := range bodies {
			b.Close()
		}
		tr.CloseIdleConnections()
	})
	held0, g0 := heldNow()
	for i := range n {
		body := rawRequest(i+1, "subscriptions/listen", fmt.Sprintf(`"notifications":{"resourceSubscriptions":["file:///%d"]}`, i))
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = stdHeaders("subscriptions/listen", "")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, resp.Body)
		r := bufio.NewReader(resp.Body)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("stream %d ended before its first event: %v", i, err)
			}
			if strings.HasPrefix(line, "data:") {
				break
			}
		}
	}
	held1, g1 := heldNow()
	return (held1 - held0) / float64(n), float64(g1-g0) / float64(n)
}

// listenStreamOverBare is how much more an idle listen stream may hold
// than a bare net/http streaming response: issue 35's 4 KiB, with a
// margin for the noise of a collection (it measures 1–2 KiB; 13 KiB and
// one goroutine more before the stream's keep-alive became a timer and
// its changes a queue).
const listenStreamOverBare = 6 << 10

// TestIdleListenStreamAllocBudget: an idle listen stream holds no more
// goroutines than a bare net/http handler holding a streaming response
// open, and at most listenStreamOverBare bytes more.
func TestIdleListenStreamAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("memory figures are meaningless under -race; make test checks the budget in a separate run without it")
	}
	if inFreshProcess(t) {
		return
	}
	s := server.New(mcp.Implementation{Name: "scale", Version: "1"}, &server.Options{
		Logger: slog.New(slog.DiscardHandler), MaxListenStreamsPerCaller: -1,
	})
	s.HandleReadResource(func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	// Middleware with a frame of some size, as a server's own would be
	// (mcpserver's sealing step, authorization, telemetry): the stream's
	// first flush must not grow the stack of the goroutine it parks.
	s.Use(deepMiddleware, deepMiddleware)
	parley := httptest.NewServer(NewHandler(s, &HandlerOptions{Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(parley.Close) // after the streams are closed: cleanups run last first
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":{}}\n\n"))
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(bare.Close)
	const n = 300
	bareBytes, bareG := openListens(t, bare.URL, n)
	parleyBytes, parleyG := openListens(t, parley.URL, n)
	t.Logf("per idle stream, client and server: Parley %.0f bytes and %.2f goroutines, bare net/http %.0f bytes and %.2f goroutines (+%.0f bytes, budget +%d)",
		parleyBytes, parleyG, bareBytes, bareG, parleyBytes-bareBytes, listenStreamOverBare)
	if parleyG > bareG+0.1 {
		t.Errorf("an idle listen stream holds %.2f goroutines, a bare streaming response %.2f: Parley adds a goroutine per stream", parleyG, bareG)
	}
	if parleyBytes-bareBytes > listenStreamOverBare {
		t.Errorf("an idle listen stream holds %.0f bytes more than a bare streaming response, over the budget of %d", parleyBytes-bareBytes, listenStreamOverBare)
	}
}

// freshProcessEnv names the test a process was started to run alone.
const freshProcessEnv = "PARLEY_STREAMHTTP_FRESH_PROCESS"

// inFreshProcess runs t again in a process of its own and reports true
// (t's result is then the child's), or reports false in that child. A
// memory figure taken after the package's other tests moved by 4–10 KiB
// per stream from run to run (the heap they leave behind, free slots in
// spans still in use, is refilled by whichever side is measured first);
// alone, the figures are those of design record 050, run after run.
func inFreshProcess(t *testing.T) bool {
	t.Helper()
	if os.Getenv(freshProcessEnv) == t.Name() {
		return false
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), freshProcessEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, ".go:") {
			t.Log(strings.TrimSpace(line))
		}
	}
	if err != nil {
		t.Fatalf("%s in a process of its own: %v", t.Name(), err)
	}
	return true
}

// deepMiddleware passes a request on from a frame of about 1 KiB.
func deepMiddleware(next server.Handler) server.Handler {
	return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
		var pad [1024]byte
		pad[len(req.Method)%len(pad)] = 1
		runtime.KeepAlive(&pad)
		return next(ctx, req)
	}
}

// idleSessionHTTPBudget is issue 35's bound on an idle 2025-11-25
// session over HTTP, handler and server together (it measures about
// 3 KiB; 8–10 KiB and a goroutine before its changes got a queue that
// holds nothing while idle).
const idleSessionHTTPBudget = 16 << 10

// TestIdleLegacySessionHTTPAllocBudget: an idle 2025-11-25 session,
// opened over HTTP with initialize and notifications/initialized, holds
// at most idleSessionHTTPBudget bytes and no goroutine.
func TestIdleLegacySessionHTTPAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("memory figures are meaningless under -race; make test checks the budget in a separate run without it")
	}
	s := server.New(mcp.Implementation{Name: "scale", Version: "1"}, &server.Options{Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(NewHandler(s, &HandlerOptions{
		Logger:   slog.New(slog.DiscardHandler),
		Sessions: &SessionOptions{MaxSessions: 1 << 20, MaxSessionsPerCaller: -1, IdleTimeout: -1},
	}))
	defer ts.Close()
	hc := ts.Client()
	send := func(body, session string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set(HeaderSessionID, session)
			req.Header.Set(HeaderProtocolVersion, "2025-11-25")
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	const n = 1000
	held0, g0 := heldNow()
	for i := range n {
		resp := send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, i+1), "")
		id := resp.Header.Get(HeaderSessionID)
		if resp.StatusCode != http.StatusOK || id == "" {
			t.Fatalf("initialize: status %d, session %q", resp.StatusCode, id)
		}
		if resp := send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, id); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("notifications/initialized: status %d", resp.StatusCode)
		}
	}
	held1, g1 := heldNow()
	per, perG := (held1-held0)/n, float64(g1-g0)/n
	t.Logf("an idle 2025-11-25 session over HTTP holds %.0f bytes and %.2f goroutines (budget %d bytes, no goroutine)", per, perG, idleSessionHTTPBudget)
	if perG > 0.05 {
		t.Errorf("an idle 2025-11-25 session holds %.2f goroutines, want none", perG)
	}
	if per > idleSessionHTTPBudget {
		t.Errorf("an idle 2025-11-25 session holds %.0f bytes, over the budget of %d", per, idleSessionHTTPBudget)
	}
}

// largeResultBudget bounds what serving a large result allocates on the
// server, as a multiple of its size: issue 35 asks for at most 3× at
// 16 MiB; it measures 1.0× since the result is encoded straight into its
// message (3.0× before: the encoder's buffer, its copy, the message).
const largeResultBudget = 1.5

// TestLargeResultAllocBudget: a 16 MiB tool result, answered as JSON and
// as the last event of a stream, allocates less than largeResultBudget
// times its size, client included (it reads the answer into nothing).
func TestLargeResultAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation figures are meaningless under -race; make test checks the budget in a separate run without it")
	}
	const size = 16 << 20
	text := strings.Repeat("0123456789abcdef", size/16)
	s := server.New(mcp.Implementation{Name: "scale", Version: "1"}, &server.Options{Logger: slog.New(slog.DiscardHandler)})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if p.Name == "stream" {
			req.Notify(ctx, mcp.NotificationMessage, &mcp.LoggingMessageNotificationParams{Level: mcp.LevelInfo, Data: json.RawMessage(`"starting"`)})
		}
		return mcp.TextResult(text), nil
	})
	ts := httptest.NewServer(NewHandler(s, &HandlerOptions{Logger: slog.New(slog.DiscardHandler)}))
	defer ts.Close()
	hc := ts.Client()
	buf := make([]byte, 64<<10)
	for _, tool := range []string{"json", "stream"} {
		call := func() {
			req, err := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(rawRequest(1, "tools/call", `"name":"`+tool+`","arguments":{}`)))
			if err != nil {
				t.Fatal(err)
			}
			req.Header = stdHeaders("tools/call", tool)
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			n, err := io.ReadFull(resp.Body, buf[:64])
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: status %d, %v: %q", tool, resp.StatusCode, err, buf[:n])
			}
			rest, _ := io.CopyBuffer(io.Discard, resp.Body, buf)
			if int64(n)+rest < size {
				t.Fatalf("%s: %d bytes of answer, want at least %d", tool, int64(n)+rest, size)
			}
		}
		call() // warm: connections, pools
		runtime.GC()
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		const calls = 3
		for range calls {
			call()
		}
		runtime.ReadMemStats(&b)
		x := float64(b.TotalAlloc-a.TotalAlloc) / calls / size
		t.Logf("%s: serving a 16 MiB result allocates %.2f× its size (budget %.1f×)", tool, x, largeResultBudget)
		if x > largeResultBudget {
			t.Errorf("%s: serving a 16 MiB result allocates %.2f× its size, over the budget of %.1f×", tool, x, largeResultBudget)
		}
	}
}

// TestAppendOutcomeFraming: a result encoded straight into its message is
// the message jsonrpc writes for it, for any id; an error is encoded as
// before.
func TestAppendOutcomeFraming(t *testing.T) {
	results := []any{
		mcp.TextResult("hello <&> \"world\"\n"),
		&mcp.EmptyResult{},
		nil,
		json.RawMessage(`{"a": [1, 2]}`),
		map[string]any{"x": 1},
	}
	ids := []jsonrpc.ID{jsonrpc.Int64ID(7), jsonrpc.StringID("a\"b"), {}}
	for _, id := range ids {
		for _, res := range results {
			raw, err := mcp.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			want, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: raw})
			if err != nil {
				t.Fatal(err)
			}
			for _, prefix := range [][]byte{nil, eventPrefix} {
				got, status := appendOutcome(bytes.Clone(prefix), id, res, nil, slog.New(slog.DiscardHandler))
				if status != http.StatusOK || !bytes.Equal(got[len(prefix):], want) || !bytes.Equal(got[:len(prefix)], prefix) {
					t.Errorf("id %s, %T: %d %s, want 200 %s%s", id, res, status, got, prefix, want)
				}
			}
		}
	}
	// Errors and results that cannot be encoded are answered as before.
	id := jsonrpc.Int64ID(3)
	got, status := appendOutcome(nil, id, nil, &jsonrpc.Error{Code: -32602, Message: "bad"}, slog.New(slog.DiscardHandler))
	if want, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: -32602, Message: "bad"}}); status != statusOf(-32602) || !bytes.Equal(got, want) {
		t.Errorf("error: %d %s, want %d %s", status, got, statusOf(-32602), want)
	}
	got, status = appendOutcome([]byte("x"), id, func() {}, nil, slog.New(slog.DiscardHandler))
	if status != http.StatusInternalServerError || !bytes.HasPrefix(got, []byte(`x{"jsonrpc":"2.0","id":3,"error":{"code":-32603`)) {
		t.Errorf("a result that cannot be encoded: %d %s", status, got)
	}
}

// TestLargeOutcomeNotPooled: a message too large for the pool is handed
// over in the buffer it was encoded into, not copied out of it with the
// large buffer put back in the pool, where it would stay (16 MiB held by
// an idle server) until two collections pass (GR08).
func TestLargeOutcomeNotPooled(t *testing.T) {
	res := mcp.TextResult(strings.Repeat("x", 4*maxPooledOut))
	msg, status := encodeOutcome(jsonrpc.Int64ID(1), res, nil, slog.New(slog.DiscardHandler))
	if status != http.StatusOK || len(msg) < 4*maxPooledOut {
		t.Fatalf("encodeOutcome: %d, %d bytes", status, len(msg))
	}
	var got []*[]byte
	for range 8 {
		bp := outBufPool.Get().(*[]byte)
		got = append(got, bp)
		if cap(*bp) > maxPooledOut {
			t.Errorf("the pool holds a buffer of %d bytes, over its bound of %d", cap(*bp), maxPooledOut)
		}
	}
	for _, bp := range got {
		if cap(*bp) <= maxPooledOut {
			outBufPool.Put(bp)
		}
	}
}
