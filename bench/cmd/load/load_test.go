package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// serveEnv makes the test binary act as the serve subcommand, so that the
// smoke test starts each server in a process of its own exactly as the
// harness does.
const serveEnv = "PARLEY_LOAD_TEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		if err := serveMain(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		return
	}
	os.Exit(m.Run())
}

// testHarness starts servers from this test binary.
func testHarness(t *testing.T) harness {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return harness{argv: []string{exe}, env: []string{serveEnv + "=1"}, progress: t.Output()}
}

// TestOneCallEach is the smoke run of `make test`: every server, started
// as its own process the way the harness starts it, answers one checked
// tools/call in each mode, its /proc figures read, and Parley's idle
// session measurement runs on two sessions.
func TestOneCallEach(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h := testHarness(t)
	for _, mode := range []string{modeStateless, modeSession} {
		for _, sdk := range sdks {
			t.Run(mode+"/"+sdk, func(t *testing.T) {
				s, err := startServer(ctx, h.argv, h.env, sdk, mode)
				if err != nil {
					t.Fatal(err)
				}
				defer s.stop()
				c := newConn(s.url, mode)
				defer c.close()
				if err := c.open(ctx); err != nil {
					t.Fatalf("open: %v", err)
				}
				for range 2 {
					if err := c.call(ctx); err != nil {
						t.Fatalf("call: %v", err)
					}
				}
				u, err := readUsage(s.cmd.Process.Pid)
				if err != nil {
					t.Fatal(err)
				}
				if u.peakRSS <= 0 || u.rss <= 0 || u.peakRSS < u.rss {
					t.Errorf("/proc figures: peak RSS %d, RSS %d", u.peakRSS, u.rss)
				}
			})
		}
	}
	t.Run("idle/parley", func(t *testing.T) {
		s, err := startServer(ctx, h.argv, h.env, sdkParley, modeSession)
		if err != nil {
			t.Fatal(err)
		}
		defer s.stop()
		id, err := idleSessions(ctx, s, 2)
		if err != nil {
			t.Fatal(err)
		}
		if id.sessions != 2 {
			t.Errorf("sessions %d, want 2", id.sessions)
		}
	})
}

// TestCheckCall: the driver counts as correct only the echo result to the
// request's id.
func TestCheckCall(t *testing.T) {
	const good = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"orders"}]}}`
	if err := checkCall([]byte(good), 7); err != nil {
		t.Fatalf("the correct result failed: %v", err)
	}
	bad := map[string]string{
		"another id":     strings.Replace(good, `"id":7`, `"id":8`, 1),
		"error answer":   `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params"}}`,
		"tool error":     `{"jsonrpc":"2.0","id":7,"result":{"isError":true,"content":[{"type":"text","text":"orders"}]}}`,
		"wrong text":     strings.Replace(good, `"orders"`, `"order"`, 1),
		"no content":     `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`,
		"null result":    `{"jsonrpc":"2.0","id":7,"result":null}`,
		"not JSON":       `<html>`,
		"not JSON-RPC 2": strings.Replace(good, `"2.0"`, `"1.0"`, 1),
	}
	for name, msg := range bad {
		if err := checkCall([]byte(msg), 7); err == nil {
			t.Errorf("%s: accepted %s", name, msg)
		}
	}
}

// TestReadEvent: on an event stream the driver skips what comes before the
// answer to its id.
func TestReadEvent(t *testing.T) {
	stream := "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\n" +
		"data: \"result\":{\"content\":[{\"type\":\"text\",\"text\":\"orders\"}]}}\n\n"
	msg, err := readEvent(strings.NewReader(stream), 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkCall(msg, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := readEvent(strings.NewReader(stream), 4); err == nil {
		t.Error("a stream without the answer to id 4 was accepted")
	}
}

// TestDriveCountsFailures: a server that answers every call with a tool
// error is counted as failing, not as fast.
func TestDriveCountsFailures(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var seen atomic.Int64
	enough := make(chan struct{})
	ceiling := ceilingHandler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		ceiling.ServeHTTP(rec, r)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(strings.Replace(rec.Body.String(), `"content"`, `"isError":true,"content"`, 1)))
		if seen.Add(1) == 20 {
			close(enough)
		}
	}))
	defer ts.Close()
	wait := func(ctx context.Context) {
		select {
		case <-enough:
		case <-ctx.Done():
		}
	}
	var marks int
	l, err := drive(ctx, ts.URL, modeStateless, 4, phases{warmup: func(context.Context) {}, measured: wait}, func() { marks++ })
	if err != nil {
		t.Fatal(err)
	}
	if l.requests != 0 || l.failures < 20-4 || !strings.Contains(l.failure, "wrong tools/call result") {
		t.Errorf("drive: %d correct, %d failed (%q); want 0 correct, at least 16 failed (20 answered, 4 of them maybe cut by the end)", l.requests, l.failures, l.failure)
	}
	if marks != 2 {
		t.Errorf("measure called %d times, want 2 (start and end of the measured phase)", marks)
	}
}

// TestDriveCountsCorrect: against the ceiling every call is correct, in
// both modes, and each is counted with its latency.
func TestDriveCountsCorrect(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, mode := range []string{modeStateless, modeSession} {
		var calls atomic.Int64
		enough := make(chan struct{})
		ceiling := ceilingHandler()
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ceiling.ServeHTTP(w, r)
			if r.Header.Get("Mcp-Method") == "tools/call" || r.Header.Get("Mcp-Session-Id") != "" {
				if calls.Add(1) == 50 {
					close(enough)
				}
			}
		}))
		wait := func(ctx context.Context) {
			select {
			case <-enough:
			case <-ctx.Done():
			}
		}
		l, err := drive(ctx, ts.URL, mode, 3, phases{warmup: func(context.Context) {}, measured: wait}, func() {})
		ts.Close()
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if l.failures != 0 || l.requests == 0 || len(l.lat) != int(l.requests) {
			t.Errorf("%s: %d correct, %d latencies, %d failed (%q)", mode, l.requests, len(l.lat), l.failures, l.failure)
		}
	}
}

// TestTargets: the verdicts read from a run, on made-up figures.
func TestTargets(t *testing.T) {
	mk := func(sdk string, conns int, n int64, p99 time.Duration) cell {
		lat := make([]time.Duration, 100)
		for i := range lat {
			lat[i] = p99
		}
		return cell{sdk: sdk, mode: modeStateless, conns: conns, load: load{requests: n, elapsed: time.Second, lat: lat}}
	}
	res := &results{
		cells: []cell{
			mk(sdkCeiling, 1, 1000, time.Millisecond), mk(sdkParley, 1, 950, time.Millisecond), mk(sdkGosdk, 1, 100, time.Millisecond), mk(sdkMcpgo, 1, 300, time.Millisecond),
			mk(sdkCeiling, 16, 1000, time.Millisecond), mk(sdkParley, 16, 800, 2*time.Millisecond), mk(sdkGosdk, 16, 100, time.Millisecond), mk(sdkMcpgo, 16, 900, time.Millisecond),
		},
		idle: map[string]idle{sdkParley: {sessions: 10, heapPer: 20 * 1024}},
	}
	res.all = res.cells
	want := map[string]bool{
		"calls/s at every":   false, // 80 % at 16
		"p99 ≤ 1.2×":         false, // 2× at 16
		"ahead of go-sdk":    false, // behind mcp-go at 16
		"idle 2025-11-25 se": false, // 20 KiB
	}
	ts := res.targets()
	if len(ts) != 4 {
		t.Fatalf("%d targets, want 4: %+v", len(ts), ts)
	}
	for _, tg := range ts {
		for k, met := range want {
			if strings.Contains(tg.Goal, k) && (tg.Met != met || tg.Missing) {
				t.Errorf("%s: met %v (missing %v), want %v; measured %s", tg.Goal, tg.Met, tg.Missing, met, tg.Measured)
			}
		}
	}
	// Stacks count: 8 KiB of heap and 9 of stacks is over 16.
	res.idle[sdkParley] = idle{sessions: 10, heapPer: 8 * 1024, stackPer: 9 * 1024}
	for _, tg := range res.targets() {
		if strings.Contains(tg.Goal, "idle") && tg.Met {
			t.Errorf("%s: met with 17 KiB held", tg.Goal)
		}
	}
	// The same run with Parley's figures raised meets every target.
	res.cells[5] = mk(sdkParley, 16, 950, time.Millisecond)
	res.all = res.cells
	res.idle[sdkParley] = idle{sessions: 10, heapPer: 8 * 1024, stackPer: 4 * 1024}
	var sb strings.Builder
	if !res.writeTargets(&sb) {
		t.Errorf("targets not met:\n%s", sb.String())
	}
}

// TestMedians: each cell of a run is its round of median calls/s, with
// the failures of every round, and a round that could not be measured is
// left out.
func TestMedians(t *testing.T) {
	mk := func(n int64, failures int64) cell {
		return cell{sdk: sdkParley, mode: modeStateless, conns: 16, load: load{requests: n, failures: failures, elapsed: time.Second}}
	}
	broken := cell{sdk: sdkParley, mode: modeStateless, conns: 16, err: fmt.Errorf("did not start")}
	other := cell{sdk: sdkGosdk, mode: modeStateless, conns: 16, load: load{requests: 5, elapsed: time.Second}}
	got := medians([]cell{mk(300, 1), other, mk(100, 0), broken, mk(200, 2)})
	if len(got) != 2 || got[0].sdk != sdkParley || got[1].sdk != sdkGosdk {
		t.Fatalf("medians: %+v", got)
	}
	if got[0].load.requests != 200 || got[0].load.failures != 3 || got[0].err != nil {
		t.Errorf("parley: %d calls, %d failures, err %v; want the 200 round with 3 failures", got[0].load.requests, got[0].load.failures, got[0].err)
	}
	if only := medians([]cell{broken}); len(only) != 1 || only[0].err == nil {
		t.Errorf("a cell never measured lost its error: %+v", only)
	}
}

// TestRatioWithinRounds: a ratio to the ceiling is the median of each
// round's ratio, so that a burst of other work that slowed both cells of
// one round does not move it.
func TestRatioWithinRounds(t *testing.T) {
	mk := func(sdk string, round int, n int64) cell {
		return cell{sdk: sdk, mode: modeStateless, conns: 16, round: round, load: load{requests: n, elapsed: time.Second}}
	}
	res := &results{all: []cell{
		mk(sdkCeiling, 0, 1000), mk(sdkParley, 0, 950),
		mk(sdkCeiling, 1, 500), mk(sdkParley, 1, 480), // a burst slowed both
		mk(sdkCeiling, 2, 1000), mk(sdkParley, 2, 900),
		mk(sdkParley, 3, 10), // no ceiling in this round: left out
	}}
	x, ok := res.ratio(sdkParley, sdkCeiling, modeStateless, 16, rateOf)
	if !ok || x < 0.9499 || x > 0.9501 {
		t.Errorf("ratio %v (%v), want 0.95, the median of 0.95, 0.96 and 0.90", x, ok)
	}
	if _, ok := res.ratio(sdkGosdk, sdkCeiling, modeStateless, 16, rateOf); ok {
		t.Error("a ratio for a server never measured")
	}
}
