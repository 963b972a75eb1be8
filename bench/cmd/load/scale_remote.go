package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The curves measured against a server in a process of its own (started
// from the serve subcommand, like the load harness's): what the server
// holds is its alone, and the driver's own connections and goroutines do
// not count.

// remoteServers are the servers of a remote curve: the SDKs, and the bare
// handler when it has a meaning there.
func remoteServers(cfg *scaleConfig, bare bool) []string {
	var out []string
	if bare {
		out = append(out, sdkCeiling)
	}
	return append(out, cfg.sdks...)
}

// seriesName is the name of a server's line: the ceiling is the bare
// net/http handler.
func seriesName(sdk string) string {
	if sdk == sdkCeiling {
		return seriesBare
	}
	return sdk
}

// held is the memory a server holds: heap and stacks after a collection.
func held(h heapReport) float64 { return float64(h.HeapInuse + h.StackInuse) }

// measureSessions: for each SDK, one server (its session limits lifted)
// on which 2025-11-25 sessions are opened in steps to each count and left
// idle; at each count, what the server holds per session (the growth of
// its heap and stacks since before the first, over the count), and the
// latency and server allocations of calls on one more session among them.
func measureSessions(ctx context.Context, cfg *scaleConfig, sh *sheet) error {
	for _, sdk := range remoteServers(cfg, false) {
		if err := sessionsOn(ctx, cfg, sh, sdk); err != nil {
			return fmt.Errorf("%s: %w", sdk, err)
		}
	}
	return nil
}

func sessionsOn(ctx context.Context, cfg *scaleConfig, sh *sheet, sdk string) error {
	s, err := startServer(ctx, cfg.argv, cfg.env, sdk, modeMany)
	if err != nil {
		return err
	}
	defer s.stop()
	caller := newConn(s.url, modeSession)
	defer caller.close()
	if err := caller.open(ctx); err != nil {
		return err
	}
	if err := caller.call(ctx); err != nil {
		return err
	}
	before, err := heapInuse(ctx, s.url)
	if err != nil {
		return err
	}
	opened := 0
	for _, n := range cfg.sessionCounts() {
		if err := openSessions(ctx, s.url, n-opened); err != nil {
			return err
		}
		opened = n
		now, err := heapInuse(ctx, s.url)
		if err != nil {
			return err
		}
		x := float64(n)
		sh.add("sessions.mem", sdk, x, (held(now)-held(before))/x)
		sh.add("sessions.goroutines", sdk, x, float64(now.Goroutines-before.Goroutines)/x)
		lat, allocs, err := remoteCalls(ctx, s.url, cfg.duration, caller.call)
		if err != nil {
			return err
		}
		sh.add("sessions.call.ns", sdk, x, lat)
		sh.add("sessions.call.allocs", sdk, x, allocs)
	}
	return nil
}

// remoteCalls makes calls with call for about d and returns their median
// latency in ns and the server's allocations per call (its Mallocs
// before and after, each read after a collection; the reads' own few
// allocations are spread over the calls).
func remoteCalls(ctx context.Context, url string, d time.Duration, call func(context.Context) error) (float64, float64, error) {
	a, err := heapInuse(ctx, url)
	if err != nil {
		return 0, 0, err
	}
	var lats []time.Duration
	end := time.Now().Add(d)
	for len(lats) < 10 || (time.Now().Before(end) && len(lats) < 100_000) {
		start := time.Now()
		if err := call(ctx); err != nil {
			return 0, 0, err
		}
		lats = append(lats, time.Since(start))
	}
	b, err := heapInuse(ctx, url)
	if err != nil {
		return 0, 0, err
	}
	slices.Sort(lats)
	return float64(lats[len(lats)/2].Nanoseconds()), float64(b.Mallocs-a.Mallocs) / float64(len(lats)), nil
}

// openSessions opens k 2025-11-25 sessions through a few keep-alive
// connections and leaves them open and idle.
func openSessions(ctx context.Context, url string, k int) error {
	const workers = 8
	jobs := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range workers {
		c := newConn(url, modeSession)
		defer c.close()
		wg.Go(func() {
			for range jobs {
				c.session = ""
				if err := c.open(ctx); err != nil {
					mu.Lock()
					first = cmp(first, err)
					mu.Unlock()
				}
			}
		})
	}
	for range k {
		jobs <- struct{}{}
	}
	close(jobs)
	wg.Wait()
	return first
}

// measureStreams: for the bare handler and each SDK, one server on which
// 2026-07-28 subscriptions/listen streams are opened in steps to each
// count (each subscribed to a resource of its own) and left idle; at each
// count, what the server holds per stream, and what one publish of a
// change costs the server when one stream (the driver's, drained) among
// them all is subscribed to it.
func measureStreams(ctx context.Context, cfg *scaleConfig, sh *sheet) error {
	for _, sdk := range remoteServers(cfg, true) {
		if err := streamsOn(ctx, cfg, sh, sdk); err != nil {
			return fmt.Errorf("%s: %w", sdk, err)
		}
	}
	return nil
}

func streamsOn(ctx context.Context, cfg *scaleConfig, sh *sheet, sdk string) error {
	s, err := startServer(ctx, cfg.argv, cfg.env, sdk, modeListen)
	if err != nil {
		return err
	}
	defer s.stop()
	ls := newListeners(s.url)
	defer ls.close()
	// The hot stream, drained as it goes: publishes reach it.
	hot, err := ls.open(ctx, hotURI)
	if err != nil {
		return fmt.Errorf("the hot stream: %w", err)
	}
	got := make(chan struct{}, 1)
	go func() {
		sc := bufio.NewScanner(hot)
		for sc.Scan() {
			if strings.Contains(sc.Text(), hotURI) {
				select {
				case got <- struct{}{}:
				default:
				}
			}
		}
	}()
	before, err := heapInuse(ctx, s.url)
	if err != nil {
		return err
	}
	opened := 0
	// The bare handler publishes nothing, and mcp-go has no publish by
	// resource (scale_serve.go).
	delivers := sdk != sdkCeiling && sdk != sdkMcpgo
	for _, n := range cfg.streamCounts() {
		if err := ls.openMany(ctx, opened, n); err != nil {
			return err
		}
		opened = n
		now, err := heapInuse(ctx, s.url)
		if err != nil {
			return err
		}
		x := float64(n)
		name := seriesName(sdk)
		sh.add("streams.mem", name, x, (held(now)-held(before))/x)
		sh.add("streams.goroutines", name, x, float64(now.Goroutines-before.Goroutines)/x)
		if !delivers {
			continue
		}
		// The publish must reach the hot stream, or its cost means nothing.
		if _, err := publishOnce(ctx, s.url, 1); err != nil {
			return err
		}
		select {
		case <-got:
		case <-time.After(10 * time.Second):
			return fmt.Errorf("a published change of %s did not reach the stream subscribed to it", hotURI)
		}
		rep, err := publishOnce(ctx, s.url, publishCount(cfg))
		if err != nil {
			return err
		}
		sh.add("streams.publish.ns", name, x, rep.NS)
		sh.add("streams.publish.allocs", name, x, rep.Allocs)
	}
	return nil
}

// publishCount is how many publishes one figure is the mean of: enough to
// average the clock, few enough that the hot stream's queue keeps up.
func publishCount(cfg *scaleConfig) int {
	if cfg.smoke {
		return 5
	}
	return 50
}

func publishOnce(ctx context.Context, base string, n int) (publishReport, error) {
	var rep publishReport
	u := strings.TrimSuffix(base, endpoint) + publishPath + "?uri=" + url.QueryEscape(hotURI) + "&n=" + strconv.Itoa(n)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return rep, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return rep, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return rep, fmt.Errorf("publish: status %d", resp.StatusCode)
	}
	return rep, json.NewDecoder(resp.Body).Decode(&rep)
}

// listeners opens and holds subscriptions/listen streams, each on a
// connection of its own (an open stream keeps its connection busy).
type listeners struct {
	url    string
	hc     *http.Client
	mu     sync.Mutex
	bodies []io.Closer
	nextID int
}

func newListeners(url string) *listeners {
	t := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: -1}
	return &listeners{url: url, hc: &http.Client{Transport: t}}
}

// open opens one stream subscribed to uri and returns its body once the
// first event (the acknowledgement) has arrived; the body stays open.
func (l *listeners) open(ctx context.Context, uri string) (*bufio.Reader, error) {
	l.mu.Lock()
	l.nextID++
	id := l.nextID
	l.mu.Unlock()
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"_meta":%s,"notifications":{"resourceSubscriptions":[%q]}}}`, id, clientMeta, uri)
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPost, l.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	h := req.Header
	h["Content-Type"] = []string{"application/json"}
	h["Accept"] = []string{"application/json, text/event-stream"}
	h["Mcp-Protocol-Version"] = []string{versionStateless}
	h["Mcp-Method"] = []string{"subscriptions/listen"}
	resp, err := l.hc.Do(req)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.bodies = append(l.bodies, resp.Body)
	l.mu.Unlock()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("listen: status %d, %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), bytes.TrimSpace(b))
	}
	r := bufio.NewReaderSize(resp.Body, 512)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("listen: the stream ended before its first event: %w", err)
		}
		if strings.HasPrefix(line, "data:") {
			if strings.Contains(line, `"error"`) {
				return nil, fmt.Errorf("listen: %s", strings.TrimSpace(line))
			}
			return r, nil
		}
	}
}

// openMany opens the streams from, from+1, … to-1, a few at a time.
func (l *listeners) openMany(ctx context.Context, from, to int) error {
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range 16 {
		wg.Go(func() {
			for i := range jobs {
				if _, err := l.open(ctx, itemURI(i)); err != nil {
					mu.Lock()
					first = cmp(first, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := from; i < to; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return first
}

// close ends every stream.
func (l *listeners) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range l.bodies {
		b.Close()
	}
	l.hc.CloseIdleConnections()
}

// measureCores: the stateless HTTP server of each SDK and the bare
// handler, each in a process of its own with GOMAXPROCS 1 and then 2,
// under the same closed-loop load (coresConns connections, one call in
// flight on each): calls per second, and the server's CPU per call.
func measureCores(ctx context.Context, cfg *scaleConfig, sh *sheet) error {
	conns := 16
	warm := 300 * time.Millisecond
	if cfg.smoke {
		conns, warm = 2, 50*time.Millisecond
	}
	// Each server's two cells follow each other, so that its ratio of 2
	// to 1 is of two runs seconds apart.
	for _, sdk := range remoteServers(cfg, true) {
		for _, procs := range []int{1, 2} {
			s, err := startServer(ctx, cfg.argv, append(slices.Clip(cfg.env), "GOMAXPROCS="+strconv.Itoa(procs)), sdk, modeStateless)
			if err != nil {
				return err
			}
			pid := s.cmd.Process.Pid
			var marks []usage
			l, err := drive(ctx, s.url, modeStateless, conns, timed(warm, cfg.coresDur), func() {
				u, _ := readUsage(pid)
				marks = append(marks, u)
			})
			s.stop()
			if err != nil {
				return fmt.Errorf("%s at GOMAXPROCS=%d: %w", sdk, procs, err)
			}
			if l.failures > 0 {
				return fmt.Errorf("%s at GOMAXPROCS=%d: %d failed calls: %s", sdk, procs, l.failures, l.failure)
			}
			x := float64(procs)
			name := seriesName(sdk)
			sh.add("cores.rate", name, x, l.rate())
			if len(marks) == 2 && l.requests > 0 {
				sh.add("cores.cpu", name, x, float64((marks[1].cpu-marks[0].cpu).Microseconds())/float64(l.requests))
			}
		}
	}
	return nil
}
