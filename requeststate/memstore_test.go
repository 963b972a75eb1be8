package requeststate_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-mcp/parley/requeststate"
)

func memStore(t testing.TB, clk *clock, max int) *requeststate.MemoryStore {
	t.Helper()
	m, err := requeststate.NewMemoryStore(&requeststate.MemoryStoreOptions{Now: clk.Now, MaxEntries: max})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sid(n int) requeststate.StateID {
	var id requeststate.StateID
	id[0], id[1], id[2], id[15] = byte(n), byte(n>>8), byte(n>>16), 0x5a
	return id
}

func TestMemoryStoreOnce(t *testing.T) {
	clk := newClock()
	m := memStore(t, clk, 0)
	ctx := context.Background()
	until := clk.Now().Add(time.Minute)
	if err := m.Consume(ctx, sid(1), until); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := m.Consume(ctx, sid(1), until); !errors.Is(err, requeststate.ErrReplayed) {
			t.Fatalf("second consume: %v, want ErrReplayed", err)
		}
	}
	// A later expiry does not make a held id new again.
	if err := m.Consume(ctx, sid(1), until.Add(time.Hour)); !errors.Is(err, requeststate.ErrReplayed) {
		t.Fatalf("consume with another expiry: %v, want ErrReplayed", err)
	}
	if err := m.Consume(ctx, sid(2), until); err != nil {
		t.Fatalf("another id: %v", err)
	}
}

// TestMemoryStoreExpiry: an entry is held until its expiry, then dropped
// (memory returns, and the id is new again: nothing is promised past the
// expiry). An expiry already past is not recorded.
func TestMemoryStoreExpiry(t *testing.T) {
	clk := newClock()
	m := memStore(t, clk, 0)
	ctx := context.Background()
	t0 := clk.Now()
	for i := range 10 {
		if err := m.Consume(ctx, sid(i), t0.Add(time.Duration(i+1)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(time.Second - time.Nanosecond)
	if err := m.Consume(ctx, sid(0), t0.Add(time.Hour)); !errors.Is(err, requeststate.ErrReplayed) {
		t.Fatalf("just before its expiry: %v, want ErrReplayed", err)
	}
	clk.Advance(time.Nanosecond) // sid(0) expires now
	if err := m.Consume(ctx, sid(100), t0); err != nil {
		t.Fatalf("expiry already past: %v", err)
	}
	if m.Len() != 9 {
		t.Fatalf("after one expiry: %d held, want 9 (and the past-expiry id not recorded)", m.Len())
	}
	if err := m.Consume(ctx, sid(100), t0); err != nil {
		t.Fatalf("past-expiry id was recorded: %v", err)
	}
	clk.Advance(5 * time.Second)
	if err := m.Consume(ctx, sid(0), t0.Add(time.Hour)); err != nil {
		t.Fatalf("an expired id: %v", err)
	}
	if m.Len() != 4+1 {
		t.Fatalf("%d held, want 5", m.Len())
	}
}

// TestMemoryStoreExpiryOrder checks the expiry heap against a plain model:
// ids inserted with random expiries are held exactly until their own.
func TestMemoryStoreExpiryOrder(t *testing.T) {
	clk := newClock()
	m := memStore(t, clk, 0)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	model := map[requeststate.StateID]time.Time{}
	for step := range 2000 {
		now := clk.Now()
		for id, exp := range model {
			if !now.Before(exp) {
				delete(model, id)
			}
		}
		id := sid(rng.IntN(300))
		exp := now.Add(time.Duration(1+rng.IntN(500)) * time.Millisecond)
		err := m.Consume(ctx, id, exp)
		if _, held := model[id]; held {
			if !errors.Is(err, requeststate.ErrReplayed) {
				t.Fatalf("step %d: held id accepted: %v", step, err)
			}
		} else {
			if err != nil {
				t.Fatalf("step %d: free id refused: %v", step, err)
			}
			model[id] = exp
		}
		if m.Len() != len(model) {
			t.Fatalf("step %d: %d held, model %d", step, m.Len(), len(model))
		}
		clk.Advance(time.Duration(rng.IntN(5)) * time.Millisecond)
	}
}

// TestMemoryStoreLimit: a full store refuses new ids with ErrStoreFull,
// naming its limit, still recognises replays, and takes new ids again once
// entries expire.
func TestMemoryStoreLimit(t *testing.T) {
	clk := newClock()
	m := memStore(t, clk, 3)
	ctx := context.Background()
	t0 := clk.Now()
	for i := range 3 {
		if err := m.Consume(ctx, sid(i), t0.Add(time.Duration(i+1)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	err := m.Consume(ctx, sid(3), t0.Add(time.Minute))
	if !errors.Is(err, requeststate.ErrStoreFull) || !strings.Contains(err.Error(), "MaxEntries (3)") {
		t.Fatalf("full: %v, want ErrStoreFull naming the limit", err)
	}
	if err := m.Consume(ctx, sid(1), t0.Add(time.Minute)); !errors.Is(err, requeststate.ErrReplayed) {
		t.Fatalf("replay into a full store: %v, want ErrReplayed", err)
	}
	if m.Len() != 3 {
		t.Fatalf("%d held, want 3", m.Len())
	}
	clk.Advance(time.Second)
	if err := m.Consume(ctx, sid(3), t0.Add(time.Minute)); err != nil {
		t.Fatalf("after one expiry: %v", err)
	}
	if err := m.Consume(ctx, sid(4), t0.Add(time.Minute)); !errors.Is(err, requeststate.ErrStoreFull) {
		t.Fatalf("full again: %v", err)
	}
}

func TestMemoryStoreOptions(t *testing.T) {
	if _, err := requeststate.NewMemoryStore(&requeststate.MemoryStoreOptions{MaxEntries: -1}); err == nil || !strings.Contains(err.Error(), "MaxEntries") {
		t.Fatalf("negative MaxEntries: %v", err)
	}
	m, err := requeststate.NewMemoryStore(nil)
	if err != nil {
		t.Fatal(err)
	}
	// The default clock is the real one: an expiry an hour ahead holds.
	ctx := context.Background()
	if err := m.Consume(ctx, sid(1), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := m.Consume(ctx, sid(1), time.Now().Add(time.Hour)); !errors.Is(err, requeststate.ErrReplayed) {
		t.Fatalf("replay: %v", err)
	}
}

// TestMemoryStoreConcurrent: goroutines race to consume each id; exactly
// one wins each.
func TestMemoryStoreConcurrent(t *testing.T) {
	clk := newClock()
	m := memStore(t, clk, 0)
	const goroutines, ids = 16, 64
	until := clk.Now().Add(time.Minute)
	wins := make([]int, ids)
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range goroutines {
		wg.Go(func() {
			<-start
			for i := range ids {
				err := m.Consume(context.Background(), sid(i), until)
				switch {
				case err == nil:
					mu.Lock()
					wins[i]++
					mu.Unlock()
				case !errors.Is(err, requeststate.ErrReplayed):
					t.Errorf("id %d: %v", i, err)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	for i, w := range wins {
		if w != 1 {
			t.Errorf("id %d consumed %d times, want exactly once", i, w)
		}
	}
}

// TestMemoryStoreDefaults: a store with no options holds exactly
// DefaultMaxEntries states, and a caller exactly its default share
// (OS19, OS20: the exported defaults are the ones used).
func TestMemoryStoreDefaults(t *testing.T) {
	ctx := context.Background()
	exp := time.Now().Add(time.Hour)
	id := func(n int) requeststate.StateID {
		var s requeststate.StateID
		s[0], s[1], s[2], s[3], s[15] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24), 0xd5
		return s
	}
	m, err := requeststate.NewMemoryStore(nil)
	if err != nil {
		t.Fatal(err)
	}
	share := requeststate.DefaultMaxEntries / requeststate.DefaultCallerShares
	for i := range share {
		if err := m.ConsumeAs(ctx, id(i), exp, "one"); err != nil {
			t.Fatalf("state %d of the caller's default share (%d): %v", i+1, share, err)
		}
	}
	if err := m.ConsumeAs(ctx, id(share), exp, "one"); !errors.Is(err, requeststate.ErrCallerShareFull) {
		t.Fatalf("one past the default share: %v, want ErrCallerShareFull", err)
	}
	for i := share; i < requeststate.DefaultMaxEntries; i++ {
		if err := m.Consume(ctx, id(i), exp); err != nil {
			t.Fatalf("state %d of the default bound (%d): %v", i+1, requeststate.DefaultMaxEntries, err)
		}
	}
	if err := m.Consume(ctx, id(requeststate.DefaultMaxEntries), exp); !errors.Is(err, requeststate.ErrStoreFull) {
		t.Fatalf("one past the default bound: %v, want ErrStoreFull", err)
	}
}
