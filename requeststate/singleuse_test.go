package requeststate_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
)

// singleUse returns a shared-key policy with a memory store on clk.
func singleUse(t *testing.T, clk *clock) (*requeststate.Policy, *requeststate.MemoryStore) {
	t.Helper()
	store, err := requeststate.NewMemoryStore(&requeststate.MemoryStoreOptions{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return &requeststate.Policy{Keys: [][]byte{key(1)}, Now: clk.Now, SingleUse: store}, store
}

// TestSingleUseOnEveryCarrier: a verified state completes its round once;
// the same token again, with the same answers, other answers or none, gets
// the fixed rejection, and the handler does not run again.
func TestSingleUseOnEveryCarrier(t *testing.T) {
	for _, c := range []call{tool("book", map[string]any{"n": 1}), prompt("greet", map[string]string{"who": "ann"}), resource("file:///a")} {
		t.Run(c.method, func(t *testing.T) {
			p, store := singleUse(t, newClock())
			f := newFixture(t, "svc", true, p)
			st := f.begin(c)
			if got := f.do(c.with(st, "confirm")).text(); got != "state=issued-by:"+targetOf(c)+" answers=[confirm] asked=true" {
				t.Fatalf("first use: %q", got)
			}
			runs := f.runs.Load()
			for _, replay := range []call{c.with(st, "confirm"), c.with(st), c.with(st, "confirm", "other")} {
				if got := f.raw(replay); got != wantRejected {
					t.Errorf("replay %v: %s", replay.params["inputResponses"], got)
				}
			}
			if f.runs.Load() != runs {
				t.Errorf("a replay reached the handler (%d runs, want %d)", f.runs.Load(), runs)
			}
			if store.Len() != 1 {
				t.Errorf("store holds %d states, want 1", store.Len())
			}
		})
	}
}

func targetOf(c call) string {
	if uri, ok := c.params["uri"].(string); ok {
		return uri
	}
	return c.params["name"].(string)
}

// TestSingleUseEveryRoundOnce: a flow of several rounds goes through, each
// round's token used once; no round's token can be used again.
func TestSingleUseEveryRoundOnce(t *testing.T) {
	p, store := singleUse(t, newClock())
	s := server.New(mcp.Implementation{Name: "svc", Version: "1"}, nil)
	p.Logger = discard()
	requeststate.MustProtect(s, p)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return &mcp.InputRequiredResult{RequestState: "round after " + p.RequestState}, nil
	})
	ctx := context.Background()
	var tokens []string
	st := handleState(t, s, ctx, "")
	for range 3 {
		tokens = append(tokens, st)
		st = handleState(t, s, ctx, st)
	}
	for i, tok := range tokens {
		if err := handleErr(s, ctx, tok); !mcp.IsInvalidRequestState(err) {
			t.Errorf("token of round %d used again: err = %v", i, err)
		}
	}
	if store.Len() != len(tokens) {
		t.Errorf("store holds %d states, want %d", store.Len(), len(tokens))
	}
}

// TestSingleUseOnlyVerifiedStatesAreConsumed: a request that fails any
// other check (another request, a tampered token, too late, another
// audience) is refused without using up the state, which then still
// completes its round once.
func TestSingleUseOnlyVerifiedStatesAreConsumed(t *testing.T) {
	clk := newClock()
	p, store := singleUse(t, clk)
	f := newFixture(t, "svc", true, p)
	c := tool("book", map[string]any{"n": 1})
	st := f.begin(c)
	other := f.begin(tool("book", map[string]any{"n": 2}))
	// Another service sharing keys and store: its audience differs.
	q, _ := singleUse(t, clk)
	q.SingleUse = p.SingleUse
	g := newFixture(t, "other-svc", true, q)
	tampered := []byte(st)
	tampered[len(tampered)/2] ^= 1
	for name, bad := range map[string]call{
		"other arguments": tool("book", map[string]any{"n": 2}).with(st, "confirm"),
		"other tool":      tool("cancel", map[string]any{"n": 1}).with(st, "confirm"),
		"tampered":        c.with(string(tampered), "confirm"),
		"other's state":   c.with(other, "confirm"),
	} {
		if got := f.raw(bad); got != wantRejected {
			t.Errorf("%s: %s", name, got)
		}
	}
	if got := g.raw(c.with(st, "confirm")); got != wantRejected {
		t.Errorf("other audience: %s", got)
	}
	if store.Len() != 0 {
		t.Fatalf("refused requests used up %d states", store.Len())
	}
	// Too late: refused, and not recorded either.
	clk.Advance(requeststate.DefaultTTL)
	if got := f.raw(c.with(st, "confirm")); got != wantRejected {
		t.Errorf("expired: %s", got)
	}
	if store.Len() != 0 {
		t.Fatalf("an expired state was recorded")
	}
	clk.Advance(-time.Millisecond)
	if got := f.do(c.with(st, "confirm")).text(); got != "state=issued-by:book answers=[confirm] asked=true" {
		t.Fatalf("the state, once valid, was refused: %q", got)
	}
	if got := f.raw(c.with(st, "confirm")); got != wantRejected {
		t.Errorf("second use: %s", got)
	}
}

// TestSingleUseReplayIsDistinguishableInGo: on the wire a replay is the
// fixed rejection; middleware added before the boundary sees an error that
// matches ErrReplayed (Policy.Rejected sees it), and the log says why.
func TestSingleUseReplayIsDistinguishableInGo(t *testing.T) {
	p, _ := singleUse(t, newClock())
	log, buf := newLogger()
	p.Logger = log
	var mu sync.Mutex
	var seen []error
	var reasons []string
	p.Rejected = func(ctx context.Context, req *server.Request, reason string, err error) {
		mu.Lock()
		seen, reasons = append(seen, err), append(reasons, reason)
		mu.Unlock()
	}
	s := server.New(mcp.Implementation{Name: "svc", Version: "1"}, nil)
	requeststate.MustProtect(s, p)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if p.RequestState == "" {
			return &mcp.InputRequiredResult{RequestState: "s"}, nil
		}
		return mcp.TextResult("done"), nil
	})
	ctx := context.Background()
	st := handleState(t, s, ctx, "")
	if err := handleErr(s, ctx, st); err != nil {
		t.Fatal(err)
	}
	err := handleErr(s, ctx, st)
	if !mcp.IsInvalidRequestState(err) {
		t.Fatalf("wire error %v, want the fixed rejection", err)
	}
	if errors.Is(err, requeststate.ErrReplayed) {
		t.Error("the server's wire error carries the Go reason")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || reasons[0] != "replayed (already accepted once)" {
		t.Fatalf("Rejected saw %v %q, want the one replay", seen, reasons)
	}
	if last := seen[0]; !errors.Is(last, requeststate.ErrReplayed) || !mcp.IsInvalidRequestState(last) || errors.Is(last, requeststate.ErrStoreUnavailable) {
		t.Errorf("Rejected saw %v, want ErrReplayed and the fixed rejection", last)
	}
	warns := buf.lines("WARN")
	if len(warns) != 1 || warns[0]["reason"] != "replayed (already accepted once)" {
		t.Errorf("log: %v", warns)
	}
}

// failingStore is a single-use store that cannot be reached.
type failingStore struct{ err error }

func (s failingStore) Consume(context.Context, requeststate.StateID, time.Time) error { return s.err }

// TestSingleUseFailsClosed: when the store fails, the state is refused
// (the fixed rejection), the handler does not run, the Go error matches
// ErrStoreUnavailable and the store's error, and the log has both.
func TestSingleUseFailsClosed(t *testing.T) {
	down := errors.New("dial tcp: connection refused")
	log, buf := newLogger()
	var rejected error
	p := &requeststate.Policy{Keys: [][]byte{key(1)}, Logger: log, SingleUse: failingStore{down},
		Rejected: func(_ context.Context, _ *server.Request, _ string, err error) { rejected = err }}
	s := server.New(mcp.Implementation{Name: "svc", Version: "1"}, nil)
	requeststate.MustProtect(s, p)
	ran := 0
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		ran++
		return &mcp.InputRequiredResult{RequestState: "s"}, nil
	})
	ctx := context.Background()
	err := handleErr(s, ctx, handleState(t, s, ctx, ""))
	if !mcp.IsInvalidRequestState(err) || !errors.Is(rejected, requeststate.ErrStoreUnavailable) || !errors.Is(rejected, down) || errors.Is(rejected, requeststate.ErrReplayed) {
		t.Fatalf("err = %v, refused for %v; want the fixed rejection, refused for ErrStoreUnavailable and the store's error", err, rejected)
	}
	if ran != 1 {
		t.Fatalf("the handler ran %d times, want once (round one only)", ran)
	}
	warns := buf.lines("WARN")
	if len(warns) != 1 || warns[0]["reason"] != "single-use store failed" || warns[0]["err"] == nil {
		t.Fatalf("log: %v", warns)
	}
}

// recordingStore remembers what it was asked and accepts everything.
type recordingStore struct {
	mu      sync.Mutex
	ids     []requeststate.StateID
	expires []time.Time
}

func (s *recordingStore) Consume(_ context.Context, id requeststate.StateID, expires time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids = append(s.ids, id)
	s.expires = append(s.expires, expires)
	return nil
}

// TestSingleUseIDAndRetention: every sealed round gets its own id, and the
// store is asked to hold it until the token's sealed expiry plus the
// clock skew instances tolerate.
func TestSingleUseIDAndRetention(t *testing.T) {
	clk := newClock()
	store := new(recordingStore)
	s := server.New(mcp.Implementation{Name: "svc", Version: "1"}, nil)
	requeststate.MustProtect(s, &requeststate.Policy{Keys: [][]byte{key(1)}, Now: clk.Now, TTL: time.Minute, SingleUse: store, Logger: discard()})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return &mcp.InputRequiredResult{RequestState: "same plaintext every time"}, nil
	})
	ctx := context.Background()
	issued := clk.Now()
	a, b := handleState(t, s, ctx, ""), handleState(t, s, ctx, "")
	clk.Advance(10 * time.Second)
	handleState(t, s, ctx, a)
	handleState(t, s, ctx, b)
	if len(store.ids) != 2 || store.ids[0] == store.ids[1] || store.ids[0] == (requeststate.StateID{}) {
		t.Fatalf("ids %v: want two distinct, non-zero", store.ids)
	}
	want := issued.Add(time.Minute + requeststate.ClockSkew)
	for i, e := range store.expires {
		if !e.Equal(want) {
			t.Errorf("round %d held until %v, want %v (sealed expiry + ClockSkew)", i, e, want)
		}
	}
	if got := store.ids[0].String(); len(got) != 32 {
		t.Errorf("StateID.String() = %q, want 32 hex digits", got)
	}
}

// TestSingleUseRefusesStateSealedWithoutIt: a token sealed by an instance
// without single use carries no id; an instance with single use refuses it
// rather than accept a state it cannot record.
func TestSingleUseRefusesStateSealedWithoutIt(t *testing.T) {
	clk := newClock()
	plain := newFixture(t, "svc", true, &requeststate.Policy{Keys: [][]byte{key(1)}, Now: clk.Now})
	p, store := singleUse(t, clk)
	log, buf := newLogger()
	p.Logger = log
	once := newFixture(t, "svc", true, p)
	c := tool("book", map[string]any{"n": 1})
	st := plain.begin(c)
	if got := once.raw(c.with(st, "confirm")); got != wantRejected {
		t.Fatalf("a state without an id: %s", got)
	}
	if warns := buf.lines("WARN"); len(warns) != 1 || warns[0]["reason"] != "no single-use id (sealed by an instance without single use)" {
		t.Errorf("log: %v", warns)
	}
	// The other way round is fine: the id is a claim only single use reads.
	st = once.begin(c)
	if got := plain.do(c.with(st, "confirm")).text(); got == "" {
		t.Errorf("an instance without single use refused a state with an id")
	}
	if store.Len() != 0 {
		t.Errorf("store holds %d", store.Len())
	}
}

// TestSingleUseConcurrentReplays: many requests carrying one token at once;
// exactly one gets through, every other gets ErrReplayed.
func TestSingleUseConcurrentReplays(t *testing.T) {
	p, _ := singleUse(t, newClock())
	p.Logger = discard()
	var mu sync.Mutex
	var rejected []error
	p.Rejected = func(_ context.Context, _ *server.Request, _ string, err error) {
		mu.Lock()
		rejected = append(rejected, err)
		mu.Unlock()
	}
	s := server.New(mcp.Implementation{Name: "svc", Version: "1"}, nil)
	requeststate.MustProtect(s, p)
	ran := 0
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if p.RequestState == "" {
			return &mcp.InputRequiredResult{RequestState: "s"}, nil
		}
		mu.Lock()
		ran++
		mu.Unlock()
		return mcp.TextResult("done"), nil
	})
	token := handleState(t, s, context.Background(), "")
	const n = 32
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = handleErr(s, context.Background(), token)
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !mcp.IsInvalidRequestState(err):
			t.Errorf("request %d: %v, want the fixed rejection", i, err)
		}
	}
	for i, err := range rejected {
		if !errors.Is(err, requeststate.ErrReplayed) {
			t.Errorf("refusal %d: %v, want ErrReplayed", i, err)
		}
	}
	if len(rejected) != n-1 {
		t.Errorf("Rejected called %d times, want %d", len(rejected), n-1)
	}
	if won != 1 || ran != 1 {
		t.Fatalf("%d requests won, the handler ran %d times; want exactly one", won, ran)
	}
}

// TestSingleUseSharedStoreAcrossInstances: two instances sharing keys and
// a store accept a state once between them.
func TestSingleUseSharedStoreAcrossInstances(t *testing.T) {
	clk := newClock()
	p, store := singleUse(t, clk)
	q := *p
	a, b := newFixture(t, "svc", true, p), newFixture(t, "svc", true, &q)
	c := tool("book", map[string]any{"n": 1})
	st := a.begin(c)
	if got := b.do(c.with(st, "confirm")).text(); got == "" {
		t.Fatal("the sister instance refused the first use")
	}
	for i, f := range []*fixture{a, b} {
		if got := f.raw(c.with(st, "confirm")); got != wantRejected {
			t.Errorf("replay on instance %d: %s", i, got)
		}
	}
	if store.Len() != 1 {
		t.Errorf("store holds %d", store.Len())
	}
}

func ExampleMemoryStore() {
	store, err := requeststate.NewMemoryStore(nil) // DefaultMaxEntries
	if err != nil {
		panic(err)
	}
	s := server.New(mcp.Implementation{Name: "payments", Version: "1.0.0"}, nil)
	p := requeststate.ProcessLocal() // a fleet: shared Keys and redisstore
	p.SingleUse = store
	requeststate.MustProtect(s, p)
	fmt.Println("every sealed round of", s.Info().Name, "is accepted at most once")
	// Output: every sealed round of payments is accepted at most once
}
