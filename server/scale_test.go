package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"testing"

	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// How cost grows with the work (issue 35, design record 050): what an idle
// legacy session and an idle listen stream hold, and what a publish costs
// among many streams. Memory is read from runtime.MemStats after
// collections and goroutines from runtime.NumGoroutine, with generous
// margins; like the allocation budgets they run without -race (make
// allocs), which changes both.

// heldBytes is the heap in use and goroutine stacks after two collections.
func heldBytes() float64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapInuse + ms.StackInuse)
}

// idleLegacySessionBudget bounds what the server package holds for an
// idle legacy session, in bytes (about 1 KiB measured; a goroutine and a
// channel of 64 changes made it about 7 KiB before issue 35).
const idleLegacySessionBudget = 3 << 10

// TestIdleLegacySessionAllocBudget: an idle legacy session holds no
// goroutine and no buffer for changes that have not come.
func TestIdleLegacySessionAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("memory figures are meaningless under -race; make test checks the budget in a separate run without it")
	}
	s := server.New(mcp.Implementation{Name: "scale", Version: "1"}, &server.Options{Logger: slog.New(slog.DiscardHandler)})
	msg := &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: mcp.MethodInitialize,
		Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)}
	const n = 2000
	sessions := make([]*server.Session, 0, n)
	notify := func(context.Context, string, any) error { return nil }
	g0, h0 := runtime.NumGoroutine(), heldBytes()
	for range n {
		ss, _, err := s.Initialize(context.Background(), msg, &server.SessionOptions{Notify: notify})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, ss)
	}
	g1, h1 := runtime.NumGoroutine(), heldBytes()
	per := (h1 - h0) / n
	t.Logf("an idle legacy session holds %.0f bytes and %.2f goroutines (budget %d bytes, no goroutine)", per, float64(g1-g0)/n, idleLegacySessionBudget)
	if g1-g0 > n/100 {
		t.Errorf("%d idle legacy sessions hold %d goroutines, want none", n, g1-g0)
	}
	if per > idleLegacySessionBudget {
		t.Errorf("an idle legacy session holds %.0f bytes, over the budget of %d", per, idleLegacySessionBudget)
	}
	for _, ss := range sessions {
		ss.Close()
	}
}

// openStream opens a listen stream on s subscribed to uris, whose
// notify is called for what it sends after its acknowledgement; it
// returns once the stream is acknowledged, and ends it when the test
// ends.
func openStream(t *testing.T, s *server.Server, id int, uris []string, notify server.NotifyFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	t.Cleanup(func() { cancel(); <-ended })
	raw, _ := json.Marshal(uris)
	params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"resourceSubscriptions":` + string(raw) + `}}`
	req := &jsonrpc.Request{ID: jsonrpc.Int64ID(int64(id)), Method: mcp.MethodSubscriptionsListen, Params: json.RawMessage(params)}
	acked := make(chan struct{}, 1)
	go func() {
		defer close(ended)
		s.Handle(ctx, req, func(ctx context.Context, method string, params any) error {
			if method == mcp.NotificationSubscriptionsAcknowledged {
				acked <- struct{}{}
				return nil
			}
			if notify != nil {
				return notify(ctx, method, params)
			}
			return nil
		})
	}()
	testwait.Recv(t, acked, "a listen stream's acknowledgement")
}

func listenServer(buffer int) *server.Server {
	s := server.New(mcp.Implementation{Name: "scale", Version: "1"}, &server.Options{
		Logger: slog.New(slog.DiscardHandler), MaxListenStreamsPerCaller: -1, MaxListenStreams: -1, ListenBuffer: buffer,
	})
	s.HandleReadResource(func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	return s
}

// TestPublishFlatInStreamsAllocBudget: a published change costs what its
// matches cost: one resource update that one stream is subscribed to
// (published, and sent by that stream) allocates as much among ten
// thousand idle streams as among ten.
func TestPublishFlatInStreamsAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race; make test checks the budget in a separate run without it")
	}
	perPublish := func(idle int) float64 {
		s := listenServer(0)
		sent := make(chan struct{}, 1)
		openStream(t, s, 0, []string{"file:///hot"}, func(context.Context, string, any) error { sent <- struct{}{}; return nil })
		for i := range idle {
			openStream(t, s, i+1, []string{fmt.Sprintf("file:///%d", i)}, nil)
		}
		publish := func() {
			s.NotifyResourceUpdated("file:///hot")
			testwait.Recv(t, sent, "the change, sent by the stream subscribed to it")
		}
		return testing.AllocsPerRun(200, publish)
	}
	few, many := perPublish(10), perPublish(10_000)
	t.Logf("a publish matching one stream: %.1f allocations among 11 streams, %.1f among 10,001", few, many)
	if many > few+0.5 {
		t.Errorf("a publish matching one stream allocates %.1f times among 10,001 streams, %.1f among 11: it grows with the streams it does not match", many, few)
	}
}

// TestListenQueueKeepsOrderAndLimit: the changes of a stream that is
// busy sending wait in order, at most Options.ListenBuffer of them; the
// ones over are dropped, not waited for; a later change is sent too.
func TestListenQueueKeepsOrderAndLimit(t *testing.T) {
	s := listenServer(4)
	uri := func(i int) string { return fmt.Sprintf("file:///q%d", i) }
	var uris []string
	for i := range 12 {
		uris = append(uris, uri(i))
	}
	got := make(chan string, 16)
	gate := make(chan struct{})
	openStream(t, s, 1, uris, func(ctx context.Context, method string, params any) error {
		u := params.(*mcp.ResourceUpdatedNotificationParams).URI
		got <- u
		if u == uri(0) {
			<-gate
		}
		return nil
	})
	s.NotifyResourceUpdated(uri(0)) // taken at once; its sending waits for the gate
	if u := testwait.Recv(t, got, "the first change"); u != uri(0) {
		t.Fatalf("first change %s, want %s", u, uri(0))
	}
	for i := 1; i <= 10; i++ {
		s.NotifyResourceUpdated(uri(i)) // 1–4 wait, 5–10 are dropped
	}
	close(gate)
	for i := 1; i <= 4; i++ {
		if u := testwait.Recv(t, got, "a waiting change"); u != uri(i) {
			t.Fatalf("change %d sent as %s, want %s", i, u, uri(i))
		}
	}
	s.NotifyResourceUpdated(uri(11))
	if u := testwait.Recv(t, got, "the later change"); u != uri(11) {
		t.Errorf("after the four that fit the buffer the stream sent %s, want %s: the changes over its buffer must be dropped", u, uri(11))
	}
}

// TestLegacySessionQueueKeepsOrderAndLimit: the same for a legacy
// session, whose changes are sent by a goroutine that only a change
// starts: in order, at most Options.ListenBuffer waiting, and a later
// burst starts a sender again.
func TestLegacySessionQueueKeepsOrderAndLimit(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "scale", Version: "1"}, &server.Options{Logger: slog.New(slog.DiscardHandler), ListenBuffer: 2})
	kinds := []func(){s.NotifyToolListChanged, s.NotifyPromptListChanged, s.NotifyResourceListChanged}
	names := []string{mcp.NotificationToolListChanged, mcp.NotificationPromptListChanged, mcp.NotificationResourceListChanged}
	got := make(chan string, 16)
	gate := make(chan struct{})
	first := true
	notify := func(ctx context.Context, method string, params any) error {
		got <- method
		if first {
			first = false
			<-gate
		}
		return nil
	}
	msg := &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: mcp.MethodInitialize,
		Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)}
	ss, _, err := s.Initialize(context.Background(), msg, &server.SessionOptions{Notify: notify})
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	kinds[0]() // taken at once; its sending waits for the gate
	if m := testwait.Recv(t, got, "the first change"); m != names[0] {
		t.Fatalf("first change %s, want %s", m, names[0])
	}
	kinds[1]() // waits
	kinds[2]() // waits
	kinds[0]() // dropped: two wait already
	close(gate)
	for _, want := range names[1:] {
		if m := testwait.Recv(t, got, "a waiting change"); m != want {
			t.Fatalf("sent %s, want %s", m, want)
		}
	}
	kinds[1]() // a later burst: a new sender
	if m := testwait.Recv(t, got, "the later change"); m != names[1] {
		t.Errorf("after the two that fit the buffer the session sent %s, want %s", m, names[1])
	}
}
