package requeststate_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
)

// burnerServer is a protected server whose one tool always asks another
// round, with a memory store of max entries (per-caller share left to its
// default, max / DefaultCallerShares).
func burnerServer(t *testing.T, clk *clock, max int) (*server.Server, *requeststate.MemoryStore) {
	t.Helper()
	store, err := requeststate.NewMemoryStore(&requeststate.MemoryStoreOptions{Now: clk.Now, MaxEntries: max})
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(mcp.Implementation{Name: "svc", Version: "1"}, nil)
	requeststate.MustProtect(s, &requeststate.Policy{Keys: [][]byte{key(1)}, Now: clk.Now, SingleUse: store, Logger: discard()})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return &mcp.InputRequiredResult{RequestState: "round after " + p.RequestState}, nil
	})
	return s, store
}

// burn runs rounds as ctx's caller until one is refused (or limit rounds
// pass) and returns how many were accepted.
func burn(t *testing.T, s *server.Server, ctx context.Context, limit int) int {
	t.Helper()
	st := handleState(t, s, ctx, "")
	for n := range limit {
		res, err := s.Handle(ctx, rpcRequest(mcp.MethodCallTool, toolParams(st)), nil)
		if err != nil {
			if !mcp.IsInvalidRequestState(err) {
				t.Fatalf("round %d: %v, want the fixed requestState error", n, err)
			}
			return n
		}
		st = res.(*mcp.InputRequiredResult).RequestState
	}
	return limit
}

// TestSingleUseBurnerFillsOnlyItsShare: one caller burning rounds as fast
// as it can is refused once it holds its share (MaxEntries /
// DefaultCallerShares); every other caller, authenticated or told apart by
// address, still completes its flows. Before shares, the burner filled the
// whole store and every caller was refused.
func TestSingleUseBurnerFillsOnlyItsShare(t *testing.T) {
	clk := newClock()
	const max = 64
	share := max / requeststate.DefaultCallerShares
	s, store := burnerServer(t, clk, max)
	burner := withAuth(&auth.Info{ClientID: "c", Issuer: "https://as", Subject: "burner"})
	if got := burn(t, s, burner, 2*max); got != share {
		t.Fatalf("the burner had %d rounds accepted, want its share of %d", got, share)
	}
	// A second burner by address only: its own share too.
	byAddr := auth.WithRemoteAddr(context.Background(), "192.0.2.7")
	if got := burn(t, s, byAddr, 2*max); got != share {
		t.Fatalf("a burner known by address had %d rounds accepted, want %d", got, share)
	}
	if n := store.CallerLen("addr:192.0.2.7"); n != share {
		t.Errorf("the address holds %d states, want %d", n, share)
	}
	good := withAuth(&auth.Info{ClientID: "c", Issuer: "https://as", Subject: "alice"})
	other := auth.WithRemoteAddr(context.Background(), "198.51.100.1")
	for _, ctx := range []context.Context{good, other} {
		st := handleState(t, s, ctx, "")
		for round := range share - 1 {
			st = handleState(t, s, ctx, st) // fails the test if refused
			_ = round
		}
	}
	// The burner's share comes back as its states expire.
	clk.Advance(requeststate.DefaultTTL + requeststate.ClockSkew)
	if got := burn(t, s, burner, 1); got != 1 {
		t.Errorf("after its states expired the burner got %d rounds, want 1", got)
	}
}

// TestMemoryStoreCallerShare: the bound per caller, its default and its
// error; a caller of "" and Consume are bounded only by MaxEntries.
func TestMemoryStoreCallerShare(t *testing.T) {
	clk := newClock()
	ctx := context.Background()
	m, err := requeststate.NewMemoryStore(&requeststate.MemoryStoreOptions{Now: clk.Now, MaxEntries: 10, MaxEntriesPerCaller: 3})
	if err != nil {
		t.Fatal(err)
	}
	until := clk.Now().Add(time.Minute)
	for i := range 3 {
		if err := m.ConsumeAs(ctx, sid(i), until, "a"); err != nil {
			t.Fatal(err)
		}
	}
	err = m.ConsumeAs(ctx, sid(3), until, "a")
	if !errors.Is(err, requeststate.ErrCallerShareFull) || errors.Is(err, requeststate.ErrStoreFull) {
		t.Fatalf("over the share: %v", err)
	}
	// A replay is still a replay, not a full share.
	if err := m.ConsumeAs(ctx, sid(0), until, "a"); !errors.Is(err, requeststate.ErrReplayed) {
		t.Fatalf("replay over the share: %v", err)
	}
	for i := 10; i < 15; i++ { // no caller: not bounded per caller
		if err := m.ConsumeAs(ctx, sid(i), until, ""); err != nil {
			t.Fatalf("unknown caller, entry %d: %v", i, err)
		}
	}
	if err := m.ConsumeAs(ctx, sid(20), until, "b"); err != nil {
		t.Fatal(err)
	}
	if err := m.Consume(ctx, sid(21), until); err != nil {
		t.Fatal(err)
	}
	// Full as a whole now (10): a caller under its share is refused by the whole.
	if err := m.ConsumeAs(ctx, sid(22), until, "b"); !errors.Is(err, requeststate.ErrStoreFull) {
		t.Fatalf("store full: %v", err)
	}
	clk.Advance(time.Minute)
	if err := m.ConsumeAs(ctx, sid(3), until.Add(time.Minute), "a"); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if m.CallerLen("a") != 1 || m.CallerLen("b") != 0 {
		t.Errorf("counts after expiry: a=%d b=%d, want 1 and 0", m.CallerLen("a"), m.CallerLen("b"))
	}
	// Negative: no bound per caller.
	n, _ := requeststate.NewMemoryStore(&requeststate.MemoryStoreOptions{Now: clk.Now, MaxEntries: 4, MaxEntriesPerCaller: -1})
	for i := range 4 {
		if err := n.ConsumeAs(ctx, sid(i), until.Add(time.Minute), "a"); err != nil {
			t.Fatalf("unbounded share, entry %d: %v", i, err)
		}
	}
	var _ requeststate.CallerStore = m
}

// A memory store gives each caller its own share: a client that burns
// rounds is refused once it holds its share, and the others are not.
func ExampleMemoryStore_ConsumeAs() {
	store, err := requeststate.NewMemoryStore(&requeststate.MemoryStoreOptions{MaxEntries: 1000, MaxEntriesPerCaller: 2})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	until := time.Now().Add(time.Minute)
	for i := range 3 {
		err := store.ConsumeAs(ctx, requeststate.StateID{byte(i)}, until, "addr:192.0.2.7")
		fmt.Println("burner, round", i+1, "refused:", errors.Is(err, requeststate.ErrCallerShareFull))
	}
	err = store.ConsumeAs(ctx, requeststate.StateID{9}, until, "addr:198.51.100.1")
	fmt.Println("another caller refused:", err != nil)
	// Output:
	// burner, round 1 refused: false
	// burner, round 2 refused: false
	// burner, round 3 refused: true
	// another caller refused: false
}
