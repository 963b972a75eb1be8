package streamhttp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// This file reproduces issue 30's attack on the limits per caller: many
// source addresses of one machine (loopback addresses, or one IPv6 /64)
// each taking a caller's share of listen streams and legacy sessions, and
// many distinct callers together filling a pool for the next honest one.

// peerHeader is how the tests below name the address a request comes
// from: asPeer copies it into RemoteAddr before the handler sees it, so
// that one test process can speak from forty addresses.
const peerHeader = "X-Test-Peer"

// asPeer sets each request's RemoteAddr from peerHeader.
type asPeer struct{ next http.Handler }

func (p asPeer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if a := r.Header.Get(peerHeader); a != "" {
		r.RemoteAddr = net.JoinHostPort(a, "40000")
	}
	p.next.ServeHTTP(w, r)
}

// listenServer is a server whose listen streams may subscribe to
// resources, served over HTTP behind asPeer, with legacy sessions on.
func listenServer(t *testing.T, o *HandlerOptions) (url string, h *Handler) {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "fair", Version: "1"}, nil)
	s.HandleReadResource(func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	if o == nil {
		o = &HandlerOptions{}
	}
	o.Logger = slog.New(slog.DiscardHandler)
	h = NewHandler(s, o)
	ts := httptest.NewServer(asPeer{h})
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		EndSessions(h)
	})
	return ts.URL, h
}

// listenFrom opens a subscriptions/listen stream from addr and reports
// whether it opened (its acknowledgement came) or was refused (an error
// came), with the refusal's message. An open stream lasts until the
// test ends.
func listenFrom(t *testing.T, url, addr string) (opened bool, refusal string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	wait, stop := context.WithTimeout(ctx, testwait.FailAfter)
	defer stop()
	body := rawRequest(1, "subscriptions/listen", `"notifications":{"resourceSubscriptions":["file:///a"]}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = stdHeaders("subscriptions/listen", "")
	req.Header.Set(peerHeader, addr)
	type answer struct {
		msg jsonrpc.Message
		err error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- answer{err: err}
			return
		}
		t.Cleanup(func() { resp.Body.Close() })
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			b, _ := io.ReadAll(resp.Body)
			m, _, err := jsonrpc.DecodeMessage(b)
			got <- answer{m, err}
			return
		}
		data, err := newSSEReader(resp.Body, 1<<20).next()
		if err != nil {
			got <- answer{err: err}
			return
		}
		m, _, err := jsonrpc.DecodeMessage(data)
		got <- answer{m, err}
	}()
	var a answer
	select {
	case a = <-got:
	case <-wait.Done():
		t.Fatalf("a listen stream from %s neither opened nor was refused within %v", addr, testwait.FailAfter)
	}
	if a.err != nil {
		t.Fatalf("listen from %s: %v", addr, a.err)
	}
	switch m := a.msg.(type) {
	case *jsonrpc.Request:
		if m.Method != mcp.NotificationSubscriptionsAcknowledged {
			t.Fatalf("listen from %s: first message %s, want the acknowledgement", addr, m.Method)
		}
		return true, ""
	case *jsonrpc.Response:
		if m.Error == nil {
			t.Fatalf("listen from %s: a result before any acknowledgement", addr)
		}
		return false, m.Error.Message
	}
	t.Fatalf("listen from %s: %T", addr, a.msg)
	return false, ""
}

// TestCallersOneMachine is issue 30's attack from one machine: forty of its
// addresses (loopback addresses, or addresses of one IPv6 /64, which one
// host owns whole) each open listen streams, and ten of them open 100
// legacy sessions each. One machine is one caller: it holds one caller's
// listen streams, and the next honest client still opens a session. Keyed
// on the exact address, the forty held 640 streams and the ten filled the
// session pool (the honest client got 503).
func TestCallersOneMachine(t *testing.T) {
	for _, c := range []struct {
		name string
		addr func(i int) string
	}{
		{"loopback", func(i int) string { return fmt.Sprintf("127.0.0.%d", i+1) }},
		{"IPv6 /64", func(i int) string { return fmt.Sprintf("2001:db8:1:2::%x", i+1) }},
		{"IPv6 /64 with zones", func(i int) string { return fmt.Sprintf("2001:db8:1:2:%x::1%%eth%d", i+1, i%3) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			url, h := listenServer(t, nil)
			held := 0
			for i := range 40 {
				for {
					opened, why := listenFrom(t, url, c.addr(i))
					if !opened {
						if !strings.Contains(why, "MaxListenStreamsPerCaller") {
							t.Fatalf("address %d refused for another reason: %s", i, why)
						}
						break
					}
					if held++; held > server.DefaultMaxListenStreamsPerCaller {
						t.Fatalf("one machine holds %d listen streams (address %d of 40 still opening), want one caller's %d",
							held, i, server.DefaultMaxListenStreamsPerCaller)
					}
				}
			}
			if held != server.DefaultMaxListenStreamsPerCaller {
				t.Errorf("one machine holds %d listen streams, want %d", held, server.DefaultMaxListenStreamsPerCaller)
			}
			for i := range 10 {
				for range DefaultMaxSessions / 10 {
					initializeFrom(h, c.addr(i))
				}
			}
			if code, _, body := initializeFrom(h, "198.51.100.1"); code != http.StatusOK {
				t.Fatalf("an honest client after ten addresses of one machine opened %d sessions: %d %s", DefaultMaxSessions, code, body)
			}
		})
	}
}

// TestCallersManyKeepRoomForANewOne: forty distinct callers (addresses of
// forty machines) each open as many sessions as they may; the pool keeps
// room that callers holding their reserve share cannot take, and an honest
// client arriving last still opens a session. Without that room, the first
// ten took the whole pool.
func TestCallersManyKeepRoomForANewOne(t *testing.T) {
	h := sessionHandler(t, nil)
	for i := range 40 {
		for range DefaultMaxSessions / 10 {
			initializeFrom(h, fmt.Sprintf("203.0.113.%d", i+1))
		}
	}
	if code, _, body := initializeFrom(h, "198.51.100.1"); code != http.StatusOK {
		t.Fatalf("an honest client after forty callers took their shares: %d %s (%d sessions open)", code, body, h.sessions.len())
	}
}
