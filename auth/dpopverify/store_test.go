package dpopverify

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

func pid(n int) ProofID {
	var id ProofID
	id[0], id[1], id[31] = byte(n), byte(n>>8), 0x5a
	return id
}

// Once, and until its expiry, to the instant: an id is refused while held
// and forgotten once its expiry is not after the clock.
func TestMemoryStoreOnce(t *testing.T) {
	clk := newClock(t0)
	m, _ := NewMemoryStore(&MemoryStoreOptions{Now: clk.now})
	ctx := context.Background()
	exp := t0.Add(time.Minute)
	if err := m.Consume(ctx, pid(1), exp, "a"); err != nil {
		t.Fatal(err)
	}
	clk.set(exp.Add(-time.Nanosecond))
	if err := m.Consume(ctx, pid(1), exp.Add(time.Hour), "a"); !errors.Is(err, ErrReplayed) {
		t.Fatalf("a nanosecond before the expiry: %v, want ErrReplayed", err)
	}
	clk.set(exp)
	if err := m.Consume(ctx, pid(1), exp.Add(time.Minute), "a"); err != nil {
		t.Fatalf("at the expiry: %v, want it forgotten", err)
	}
	if err := m.Consume(ctx, pid(2), clk.now(), "a"); err != nil || m.Len() != 1 {
		t.Fatalf("an expiry already reached is not recorded: %v, %d held", err, m.Len())
	}
}

// MaxEntries exactly, then the share of one caller: a full store refuses
// (naming the limit) and keeps what it holds; a caller over its share is
// refused while another is not.
func TestMemoryStoreLimits(t *testing.T) {
	clk := newClock(t0)
	m, _ := NewMemoryStore(&MemoryStoreOptions{MaxEntries: 4, MaxEntriesPerCaller: 2, Now: clk.now})
	ctx := context.Background()
	exp := t0.Add(time.Minute)
	for i, caller := range []string{"a", "a", "b", "b"} {
		if err := m.Consume(ctx, pid(i), exp, caller); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
	}
	if err := m.Consume(ctx, pid(9), exp, "c"); !errors.Is(err, ErrStoreFull) {
		t.Fatalf("a fifth entry: %v, want ErrStoreFull", err)
	}
	if err := m.Consume(ctx, pid(0), exp, "c"); !errors.Is(err, ErrReplayed) {
		t.Fatalf("a full store forgot an entry: %v", err)
	}
	clk.set(exp)
	m2, _ := NewMemoryStore(&MemoryStoreOptions{MaxEntries: 10, MaxEntriesPerCaller: 2, Now: clk.now})
	m2.Consume(ctx, pid(1), exp.Add(time.Minute), "a")
	m2.Consume(ctx, pid(2), exp.Add(time.Minute), "a")
	if err := m2.Consume(ctx, pid(3), exp.Add(time.Minute), "a"); !errors.Is(err, ErrCallerShareFull) {
		t.Fatalf("a third for caller a: %v, want ErrCallerShareFull", err)
	}
	if err := m2.Consume(ctx, pid(4), exp.Add(time.Minute), "b"); err != nil {
		t.Fatalf("caller b: %v", err)
	}
	if err := m2.Consume(ctx, pid(5), exp.Add(time.Minute), ""); err != nil {
		t.Fatalf("no caller: %v", err)
	}
	clk.set(exp.Add(time.Minute))
	if err := m2.Consume(ctx, pid(6), exp.Add(2*time.Minute), "a"); err != nil {
		t.Fatalf("caller a after its entries expired: %v", err)
	}
	if _, err := NewMemoryStore(&MemoryStoreOptions{MaxEntries: -1}); err == nil {
		t.Error("a negative MaxEntries was taken")
	}
	unbounded, _ := NewMemoryStore(&MemoryStoreOptions{MaxEntries: 3, MaxEntriesPerCaller: -1, Now: clk.now})
	for i := range 3 {
		if err := unbounded.Consume(ctx, pid(i), clk.now().Add(time.Minute), "a"); err != nil {
			t.Fatalf("no share: entry %d: %v", i, err)
		}
	}
}

// The store's last eighth is kept for callers holding little: a caller
// with a sixty-fourth of its share is refused there, one with less is not
// (design record 039).
func TestMemoryStoreReserve(t *testing.T) {
	clk := newClock(t0)
	// 64 entries: a reserve of 8; a share of 64 makes a reserve share of 1.
	m, _ := NewMemoryStore(&MemoryStoreOptions{MaxEntries: 64, MaxEntriesPerCaller: 64, Now: clk.now})
	ctx := context.Background()
	exp := t0.Add(time.Minute)
	for i := range 56 { // up to the reserve
		if err := m.Consume(ctx, pid(i), exp, "a"); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
	}
	if err := m.Consume(ctx, pid(100), exp, "a"); !errors.Is(err, ErrCallerShareFull) || !strings.Contains(err.Error(), "keeps the rest") {
		t.Fatalf("a caller holding much, in the reserve: %v", err)
	}
	if err := m.Consume(ctx, pid(101), exp, "b"); err != nil {
		t.Fatalf("a new caller, in the reserve: %v", err)
	}
	if err := m.Consume(ctx, pid(102), exp, "b"); !errors.Is(err, ErrCallerShareFull) {
		t.Fatalf("that caller again: %v", err)
	}
}

// The heap against a plain model, over random ids, expiries and clock
// steps.
func TestMemoryStoreModel(t *testing.T) {
	clk := newClock(t0)
	m, _ := NewMemoryStore(&MemoryStoreOptions{MaxEntries: 1 << 20, MaxEntriesPerCaller: -1, Now: clk.now})
	model := map[ProofID]time.Time{}
	r := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	for i := range 20000 {
		if r.IntN(10) == 0 {
			clk.set(clk.now().Add(time.Duration(r.IntN(30)) * time.Second))
		}
		id := pid(r.IntN(500))
		exp := clk.now().Add(time.Duration(r.IntN(120)) * time.Second)
		held := false
		if e, ok := model[id]; ok && e.After(clk.now()) {
			held = true
		}
		err := m.Consume(ctx, id, exp, "")
		if held != errors.Is(err, ErrReplayed) {
			t.Fatalf("step %d: held %v, err %v", i, held, err)
		}
		if !held && exp.After(clk.now()) {
			model[id] = exp
		}
	}
}

// Concurrent presentations of one proof: exactly one is accepted.
func TestMemoryStoreConcurrent(t *testing.T) {
	m, _ := NewMemoryStore(nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted := 0
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if m.Consume(context.Background(), pid(7), time.Now().Add(time.Minute), "a") == nil {
				mu.Lock()
				accepted++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if accepted != 1 {
		t.Fatalf("%d of 32 accepted, want 1", accepted)
	}
}

// TestMemoryStoreDefaults: a store with no options holds exactly
// DefaultMaxEntries proofs, and a caller exactly its default share
// (OS23, OS24: the exported defaults are the ones used).
func TestMemoryStoreDefaults(t *testing.T) {
	ctx := context.Background()
	exp := time.Now().Add(time.Hour)
	id := func(n int) ProofID {
		var p ProofID
		p[0], p[1], p[2], p[3], p[31] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24), 0xa5
		return p
	}
	m, err := NewMemoryStore(nil)
	if err != nil {
		t.Fatal(err)
	}
	share := DefaultMaxEntries / DefaultCallerShares
	for i := range share {
		if err := m.Consume(ctx, id(i), exp, "one"); err != nil {
			t.Fatalf("proof %d of the caller's default share (%d): %v", i+1, share, err)
		}
	}
	if err := m.Consume(ctx, id(share), exp, "one"); !errors.Is(err, ErrCallerShareFull) {
		t.Fatalf("one past the default share: %v, want ErrCallerShareFull", err)
	}
	for i := share; i < DefaultMaxEntries; i++ {
		if err := m.Consume(ctx, id(i), exp, ""); err != nil {
			t.Fatalf("proof %d of the default bound (%d): %v", i+1, DefaultMaxEntries, err)
		}
	}
	if err := m.Consume(ctx, id(DefaultMaxEntries), exp, ""); !errors.Is(err, ErrStoreFull) {
		t.Fatalf("one past the default bound: %v, want ErrStoreFull", err)
	}
}
