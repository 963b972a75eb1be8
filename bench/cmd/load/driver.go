package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The driver is one code path for every server: the same requests, the
// same HTTP/1.1 client, the same check of every answer. Each connection is
// a goroutine with an http.Transport of its own that keeps one connection
// alive, so N connections are N keep-alive TCP connections, each with one
// call in flight.

// echoText is what every call asks the echo tool to answer, and what the
// driver checks it answered.
const echoText = "orders"

// Protocol versions of the two modes.
const (
	versionStateless = "2026-07-28"
	versionSession   = "2025-11-25"
)

// clientMeta is what a 2026-07-28 request carries in _meta in place of a
// session: the version, the client's capabilities and identity.
const clientMeta = `{"io.modelcontextprotocol/protocolVersion":"` + versionStateless + `","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"load","version":"1.0.0"}}`

// conn is one client connection of the driver.
type conn struct {
	hc      *http.Client
	url     string
	mode    string
	session string // Mcp-Session-Id, in session mode once open
	nextID  int64
	body    []byte // reused request buffer
}

// newConn is a client with a keep-alive connection of its own to url.
func newConn(url, mode string) *conn {
	t := &http.Transport{
		MaxConnsPerHost:     1,
		MaxIdleConnsPerHost: 1,
		DisableCompression:  true,
		IdleConnTimeout:     time.Minute,
	}
	return &conn{hc: &http.Client{Transport: t}, url: url, mode: mode, nextID: 1}
}

// close drops the connection.
func (c *conn) close() { c.hc.CloseIdleConnections() }

// open starts a 2025-11-25 session in session mode: initialize, then
// notifications/initialized with the session ID the server gave. In
// stateless mode there is nothing to open.
func (c *conn) open(ctx context.Context) error {
	if c.mode != modeSession {
		return nil
	}
	id := c.nextID
	c.nextID++
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"load","version":"1.0.0"}}}`, id, versionSession)
	resp, msg, err := c.post(ctx, body, "initialize", "", id)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if err := checkInitialize(msg, id); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	c.session = resp.Header.Get("Mcp-Session-Id")
	if c.session == "" {
		return errors.New("initialize: no Mcp-Session-Id in the answer")
	}
	resp, _, err = c.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), "notifications/initialized", "", 0)
	if err != nil {
		return fmt.Errorf("notifications/initialized: %w", err)
	}
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("notifications/initialized: status %d, want 202", resp.StatusCode)
	}
	return nil
}

// call makes one tools/call of echo and checks that its answer is the
// correct result.
func (c *conn) call(ctx context.Context) error {
	id := c.nextID
	c.nextID++
	b := c.body[:0]
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"tools/call","params":{`...)
	if c.mode == modeStateless {
		b = append(b, `"_meta":`+clientMeta+`,`...)
	}
	b = append(b, `"name":"echo","arguments":{"name":"`+echoText+`"}}}`...)
	c.body = b
	_, msg, err := c.post(ctx, b, "tools/call", "echo", id)
	if err != nil {
		return err
	}
	return checkCall(msg, id)
}

// post sends one JSON-RPC message and returns the answer to id: the JSON
// body, or the message with that id on an event stream. For a
// notification (id 0) it returns the response alone.
func (c *conn) post(ctx context.Context, body []byte, method, name string, id int64) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	h := req.Header
	h["Content-Type"] = []string{"application/json"}
	h["Accept"] = []string{"application/json, text/event-stream"}
	switch {
	case c.mode == modeStateless:
		h["Mcp-Protocol-Version"] = []string{versionStateless}
		h["Mcp-Method"] = []string{method}
		if name != "" {
			h["Mcp-Name"] = []string{name}
		}
	case c.session != "":
		h["Mcp-Protocol-Version"] = []string{versionSession}
		h["Mcp-Session-Id"] = []string{c.session}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if id == 0 {
		io.Copy(io.Discard, resp.Body)
		return resp, nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return resp, nil, fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		msg, err := readEvent(resp.Body, id)
		return resp, msg, err
	}
	msg, err := io.ReadAll(resp.Body)
	return resp, msg, err
}

// readEvent reads an event stream until the message whose id is id, which
// it returns; notifications before it are skipped.
func readEvent(r io.Reader, id int64) ([]byte, error) {
	want := strconv.FormatInt(id, 10)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(d, []byte(" "))...)
			continue
		}
		if len(line) != 0 || len(data) == 0 {
			continue
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(data, &m) == nil && string(m.ID) == want {
			return data, nil
		}
		data = nil
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("event stream ended without the answer to id %d", id)
}

// answer is the shape of a JSON-RPC answer that the checks read.
type answer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// decodeAnswer parses msg as the answer to id, and fails on an error
// answer.
func decodeAnswer(msg []byte, id int64) (json.RawMessage, error) {
	var a answer
	if err := json.Unmarshal(msg, &a); err != nil {
		return nil, fmt.Errorf("answer is not JSON: %w: %.200q", err, msg)
	}
	if a.JSONRPC != "2.0" || string(a.ID) != strconv.FormatInt(id, 10) {
		return nil, fmt.Errorf("answer is not the response to id %d: %.200q", id, msg)
	}
	if a.Error != nil {
		return nil, fmt.Errorf("error answer %d: %s", a.Error.Code, a.Error.Message)
	}
	if len(a.Result) == 0 || string(a.Result) == "null" {
		return nil, fmt.Errorf("answer has no result: %.200q", msg)
	}
	return a.Result, nil
}

// checkCall fails unless msg is the correct echo result to id: one text
// content whose text is echoText, not a tool error.
func checkCall(msg []byte, id int64) error {
	raw, err := decodeAnswer(msg, id)
	if err != nil {
		return err
	}
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("result is not a tools/call result: %w", err)
	}
	if r.IsError || len(r.Content) != 1 || r.Content[0].Type != "text" || r.Content[0].Text != echoText {
		return fmt.Errorf("wrong tools/call result: %.200q", raw)
	}
	return nil
}

// checkInitialize fails unless msg is an initialize result to id at the
// session version.
func checkInitialize(msg []byte, id int64) error {
	raw, err := decodeAnswer(msg, id)
	if err != nil {
		return err
	}
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.ProtocolVersion != versionSession {
		return fmt.Errorf("initialize result not at %s: %.200q", versionSession, raw)
	}
	return nil
}

// load is what one run of the driver measured.
type load struct {
	requests int64           // correct answers in the measured period
	failures int64           // wrong answers and errors, warm-up included
	failure  string          // the first failure
	elapsed  time.Duration   // the measured period
	lat      []time.Duration // every measured call's latency, sorted
}

// rate is the correct answers per second.
func (l load) rate() float64 {
	if l.elapsed <= 0 {
		return 0
	}
	return float64(l.requests) / l.elapsed.Seconds()
}

// quantile is the q-quantile of the latencies (0 with none).
func (l load) quantile(q float64) time.Duration {
	if len(l.lat) == 0 {
		return 0
	}
	i := int(q*float64(len(l.lat)) + 0.5)
	return l.lat[min(max(i-1, 0), len(l.lat)-1)]
}

// phases are how long the driver calls before it measures, and then how
// long it measures: each returns when its phase is over. The harness
// sleeps for -warmup and -duration; a test waits for counts.
type phases struct {
	warmup, measured func(ctx context.Context)
}

// timed is phases of warmup and then duration of wall time.
func timed(warmup, duration time.Duration) phases {
	return phases{
		warmup:   func(ctx context.Context) { sleep(ctx, warmup) },
		measured: func(ctx context.Context) { sleep(ctx, duration) },
	}
}

// drive opens conns connections to url in mode, calls on each of them
// through the phases, and returns what the measured phase saw. measure is
// called when the measured phase starts and again when it ends: the caller
// reads the server's CPU time there.
func drive(ctx context.Context, url, mode string, conns int, ph phases, measure func()) (load, error) {
	cs := make([]*conn, conns)
	for i := range cs {
		cs[i] = newConn(url, mode)
		defer cs[i].close()
	}
	// Sessions are opened before the clock starts, a few at a time.
	var openErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for _, c := range cs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := c.open(ctx); err != nil {
				mu.Lock()
				openErr = cmp(openErr, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if openErr != nil {
		return load{}, fmt.Errorf("opening a %s connection: %w", mode, openErr)
	}

	var measuring atomic.Bool
	var failures atomic.Int64
	var firstFailure atomic.Pointer[string]
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	lats := make([][]time.Duration, conns)
	for i, c := range cs {
		wg.Go(func() {
			var mine []time.Duration
			for runCtx.Err() == nil {
				start := time.Now()
				err := c.call(runCtx)
				took := time.Since(start)
				if err != nil {
					if runCtx.Err() != nil {
						break // cut by the end of the run, not a failure
					}
					failures.Add(1)
					msg := err.Error()
					firstFailure.CompareAndSwap(nil, &msg)
					continue
				}
				if measuring.Load() {
					mine = append(mine, took)
				}
			}
			lats[i] = mine
		})
	}
	ph.warmup(ctx)
	measure()
	measuring.Store(true)
	start := time.Now()
	ph.measured(ctx)
	measuring.Store(false)
	elapsed := time.Since(start)
	measure()
	stop()
	wg.Wait()

	l := load{failures: failures.Load(), elapsed: elapsed}
	if p := firstFailure.Load(); p != nil {
		l.failure = *p
	}
	for _, m := range lats {
		l.lat = append(l.lat, m...)
	}
	slices.Sort(l.lat)
	l.requests = int64(len(l.lat))
	return l, ctx.Err()
}

// cmp keeps the first error.
func cmp(first, next error) error {
	if first != nil {
		return first
	}
	return next
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
