package oncestore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

// The wrappers' errors stand in for these: the store returns them as they
// are (Replayed) or wrapped with the limit (Full, ShareFull).
var (
	errReplayed  = errors.New("replayed")
	errFull      = errors.New("full")
	errShareFull = errors.New("share full")
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// newStore is a store of int ids on a clock of the test's own at t0.
func newStore(t *testing.T, maxEntries, perCaller int) (*Store[int], *clock) {
	t.Helper()
	clk := &clock{t: t0}
	s, err := New[int](config(maxEntries, perCaller, clk.now))
	if err != nil {
		t.Fatal(err)
	}
	return s, clk
}

func config(maxEntries, perCaller int, now func() time.Time) Config {
	return Config{
		MaxEntries:          maxEntries,
		MaxEntriesPerCaller: perCaller,
		Now:                 now,
		DefaultMaxEntries:   32,
		DefaultCallerShares: 16,
		Pkg:                 "pkg",
		Noun:                "things",
		Replayed:            errReplayed,
		Full:                errFull,
		ShareFull:           errShareFull,
	}
}

// consume fills s with n new ids from next on, for caller, each held for
// an hour; every one must be accepted.
func consume(t *testing.T, s *Store[int], clk *clock, next *int, n int, caller string) {
	t.Helper()
	for range n {
		if err := s.Consume(*next, clk.now().Add(time.Hour), caller); err != nil {
			t.Fatalf("id %d of %q: %v", *next, caller, err)
		}
		*next++
	}
}

// check holds the store's invariants: the heap ordered, one entry for each
// held id, the callers' counts the entries that point at them.
func check(t *testing.T, s *Store[int]) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) != len(s.held) {
		t.Fatalf("%d entries queued, %d held", len(s.queue), len(s.held))
	}
	counts := map[*callerCount]int{}
	for i, e := range s.queue {
		if i > 0 && s.queue[(i-1)/2].exp > e.exp {
			t.Fatalf("heap out of order at %d", i)
		}
		if _, ok := s.held[e.id]; !ok {
			t.Fatalf("queued id %d not held", e.id)
		}
		if e.caller != nil {
			counts[e.caller]++
		}
	}
	for key, cc := range s.callers {
		if cc.key != key || cc.n <= 0 || counts[cc] != cc.n {
			t.Fatalf("caller %q counts %d (key %q), holds %d", key, cc.n, cc.key, counts[cc])
		}
	}
	if len(counts) != len(s.callers) {
		t.Fatalf("%d callers with entries, %d counted", len(counts), len(s.callers))
	}
}

func TestOnce(t *testing.T) {
	s, clk := newStore(t, 8, -1)
	exp := clk.now().Add(time.Minute)
	if err := s.Consume(1, exp, ""); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		// The wrapper's own value, not wrapped: callers compare with ==
		// as well as errors.Is.
		if err := s.Consume(1, exp.Add(time.Hour), "a"); err != errReplayed {
			t.Fatalf("again: %v, want the Replayed error", err)
		}
	}
	if err := s.Consume(2, exp, ""); err != nil {
		t.Fatalf("another id: %v", err)
	}
	if s.Len() != 2 {
		t.Fatalf("Len = %d, want 2", s.Len())
	}
	check(t, s)
}

// An id is held up to, not including, its expiry instant; one whose expiry
// is not after now is not recorded at all.
func TestExactlyAtExpiry(t *testing.T) {
	s, clk := newStore(t, 8, 4)
	exp := t0.Add(10 * time.Second)
	if err := s.Consume(1, exp, "a"); err != nil {
		t.Fatal(err)
	}
	clk.set(exp.Add(-time.Nanosecond))
	if err := s.Consume(1, exp.Add(time.Hour), "a"); err != errReplayed {
		t.Fatalf("a nanosecond before expiry: %v, want the Replayed error", err)
	}
	clk.set(exp)
	if err := s.Consume(1, exp.Add(time.Second), "a"); err != nil {
		t.Fatalf("at the expiry instant: %v, want nil (dropped, recorded anew)", err)
	}
	if s.Len() != 1 || s.CallerLen("a") != 1 {
		t.Fatalf("Len %d, CallerLen %d; want 1, 1", s.Len(), s.CallerLen("a"))
	}
	check(t, s)

	// Expiring now or before: accepted, and nothing held for it.
	for _, e := range []time.Time{exp, exp.Add(-time.Hour)} {
		for range 2 {
			if err := s.Consume(2, e, "b"); err != nil {
				t.Fatalf("expiry %v at %v: %v, want nil", e, exp, err)
			}
			if s.Len() != 1 || s.CallerLen("b") != 0 {
				t.Fatalf("expiry %v at %v recorded: Len %d, CallerLen %d", e, exp, s.Len(), s.CallerLen("b"))
			}
		}
	}
}

// The heap against a plain model, over random ids, expiries and clock
// steps, with the invariants checked as it goes.
func TestModel(t *testing.T) {
	s, clk := newStore(t, 1<<20, -1)
	model := map[int]time.Time{}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 20000 {
		if r.IntN(8) == 0 {
			clk.set(clk.now().Add(time.Duration(r.IntN(30)) * time.Second))
		}
		id := r.IntN(500)
		exp := clk.now().Add(time.Duration(r.IntN(120)) * time.Second)
		e, held := model[id]
		held = held && e.After(clk.now())
		err := s.Consume(id, exp, "")
		if held != (err == errReplayed) || (!held && err != nil) {
			t.Fatalf("step %d: held %v, err %v", i, held, err)
		}
		if !held && exp.After(clk.now()) {
			model[id] = exp
		}
		if i%97 == 0 {
			check(t, s)
			live := 0
			for _, e := range model {
				if e.After(clk.now()) {
					live++
				}
			}
			if s.Len() < live {
				t.Fatalf("step %d: Len %d, %d unexpired", i, s.Len(), live)
			}
		}
	}
}

// Entries pushed latest first come out earliest first.
func TestExpiryOrder(t *testing.T) {
	s, clk := newStore(t, 64, -1)
	for i := range 32 {
		if err := s.Consume(i, t0.Add(time.Duration(32-i)*time.Second), ""); err != nil {
			t.Fatal(err)
		}
	}
	check(t, s)
	for step := 1; step <= 32; step++ {
		clk.set(t0.Add(time.Duration(step) * time.Second))
		// id 32-step expired now: a new Consume of it is accepted; the
		// id expiring a second later is still held.
		if err := s.Consume(32-step, clk.now().Add(time.Hour), ""); err != nil {
			t.Fatalf("step %d: id %d: %v, want nil", step, 32-step, err)
		}
		if step < 32 {
			if err := s.Consume(31-step, clk.now().Add(time.Hour), ""); err != errReplayed {
				t.Fatalf("step %d: id %d: %v, want the Replayed error", step, 31-step, err)
			}
		}
		check(t, s)
	}
}

func TestBound(t *testing.T) {
	s, clk := newStore(t, 4, -1)
	next := 0
	consume(t, s, clk, &next, 3, "")
	if err := s.Consume(next, t0.Add(time.Minute), ""); err != nil {
		t.Fatalf("the fourth of four, expiring first: %v", err)
	}
	next++
	err := s.Consume(next, t0.Add(time.Hour), "")
	if !errors.Is(err, errFull) || errors.Is(err, errShareFull) || !strings.Contains(err.Error(), "MaxEntries (4) unexpired things") ||
		!strings.HasPrefix(err.Error(), "full: ") {
		t.Fatalf("the fifth: %v, want the Full error naming MaxEntries (4)", err)
	}
	// Full, a held id is still a replay, not a full store.
	if err := s.Consume(0, t0.Add(time.Hour), ""); err != errReplayed {
		t.Fatalf("a held id when full: %v, want the Replayed error", err)
	}
	clk.set(t0.Add(time.Minute))
	if err := s.Consume(next, t0.Add(time.Hour), ""); err != nil {
		t.Fatalf("after one expired: %v", err)
	}
	if err := s.Consume(next+1, t0.Add(time.Hour), ""); !errors.Is(err, errFull) {
		t.Fatalf("full again: %v", err)
	}
	check(t, s)
}

func TestCallerShare(t *testing.T) {
	s, clk := newStore(t, 1024, 3)
	if err := s.Consume(0, t0.Add(time.Minute), "a"); err != nil {
		t.Fatal(err)
	}
	next := 1
	consume(t, s, clk, &next, 2, "a")
	err := s.Consume(next, t0.Add(time.Hour), "a")
	if !errors.Is(err, errShareFull) || errors.Is(err, errFull) || !strings.Contains(err.Error(), "MaxEntriesPerCaller (3) unexpired things") {
		t.Fatalf("a's fourth: %v, want the ShareFull error naming MaxEntriesPerCaller (3)", err)
	}
	if got := s.CallerLen("a"); got != 3 {
		t.Fatalf("CallerLen(a) = %d, want 3", got)
	}
	consume(t, s, clk, &next, 3, "b")
	consume(t, s, clk, &next, 5, "") // no caller: not bounded by a share
	if s.Len() != 11 || s.CallerLen("b") != 3 || s.CallerLen("") != 0 {
		t.Fatalf("Len %d, CallerLen(b) %d, CallerLen(\"\") %d; want 11, 3, 0", s.Len(), s.CallerLen("b"), s.CallerLen(""))
	}
	// a's first expires: its place in a's share is given back.
	clk.set(t0.Add(time.Minute))
	consume(t, s, clk, &next, 1, "a")
	if err := s.Consume(next, t0.Add(time.Hour), "a"); !errors.Is(err, errShareFull) {
		t.Fatalf("a at its share again: %v", err)
	}
	check(t, s)
	// Every entry of a caller gone: the caller is forgotten.
	clk.set(t0.Add(2 * time.Hour))
	s.Consume(-1, clk.now().Add(time.Second), "c")
	s.mu.Lock()
	callers := len(s.callers)
	s.mu.Unlock()
	if callers != 1 || s.CallerLen("a") != 0 || s.CallerLen("c") != 1 {
		t.Fatalf("%d callers counted, CallerLen(a) %d; want only c's", callers, s.CallerLen("a"))
	}
	check(t, s)
}

// The last eighth is kept for callers holding less than a sixty-fourth of
// their share (at least one).
func TestReserve(t *testing.T) {
	// 16 entries: the last 2 kept; a share of 16: a reserve share of 1.
	s, clk := newStore(t, 16, 16)
	next := 0
	consume(t, s, clk, &next, 14, "a") // 13 held when a takes its 14th: not yet the reserve
	err := s.Consume(next, t0.Add(time.Hour), "a")
	if !errors.Is(err, errShareFull) || errors.Is(err, errFull) ||
		!strings.Contains(err.Error(), "holds 14 of MaxEntries (16) and keeps the rest for callers holding fewer than 1 things") {
		t.Fatalf("a in the reserve: %v, want the ShareFull error naming the reserve", err)
	}
	consume(t, s, clk, &next, 1, "b") // new to the store: takes from the reserve
	if err := s.Consume(next, t0.Add(time.Hour), "b"); !errors.Is(err, errShareFull) {
		t.Fatalf("b's second in the reserve: %v, want ShareFull", err)
	}
	consume(t, s, clk, &next, 1, "") // no caller: the reserve does not apply
	if err := s.Consume(next, t0.Add(time.Hour), "c"); !errors.Is(err, errFull) {
		t.Fatalf("full: %v, want Full", err)
	}
	check(t, s)

	// A larger share, a larger reserve share: 1024 / 64 = 16 of the last
	// 32 of 256.
	s, clk = newStore(t, 256, 1024)
	next = 0
	consume(t, s, clk, &next, 224, "a")
	consume(t, s, clk, &next, 16, "b")
	if err := s.Consume(next, t0.Add(time.Hour), "b"); !errors.Is(err, errShareFull) {
		t.Fatalf("b holding its reserve share of 16: %v, want ShareFull", err)
	}
}

// A negative share is no bound per caller, and no reserve.
func TestNoCallerBound(t *testing.T) {
	s, clk := newStore(t, 16, -1)
	next := 0
	consume(t, s, clk, &next, 16, "a")
	if err := s.Consume(next, t0.Add(time.Hour), "a"); !errors.Is(err, errFull) || errors.Is(err, errShareFull) {
		t.Fatalf("the seventeenth: %v, want Full", err)
	}
	if s.CallerLen("a") != 0 {
		t.Fatalf("CallerLen(a) = %d, want 0 (not counted)", s.CallerLen("a"))
	}
	check(t, s)
}

// An id recorded for no caller counts only against the store's bound.
func TestNoCallerNamed(t *testing.T) {
	s, clk := newStore(t, 16, 1)
	next := 0
	consume(t, s, clk, &next, 15, "")
	if s.CallerLen("") != 0 {
		t.Fatalf("CallerLen(\"\") = %d, want 0", s.CallerLen(""))
	}
	consume(t, s, clk, &next, 1, "a") // in the reserve, holding nothing
	if err := s.Consume(next, t0.Add(time.Hour), ""); !errors.Is(err, errFull) {
		t.Fatalf("the seventeenth: %v, want Full", err)
	}
	check(t, s)
}

func TestDefaults(t *testing.T) {
	// Zero limits: DefaultMaxEntries (32), and a share of 32 / 16 = 2.
	s, clk := newStore(t, 0, 0)
	next := 0
	consume(t, s, clk, &next, 2, "a")
	if err := s.Consume(next, t0.Add(time.Hour), "a"); !errors.Is(err, errShareFull) || !strings.Contains(err.Error(), "MaxEntriesPerCaller (2)") {
		t.Fatalf("a's third: %v, want ShareFull at 2", err)
	}
	consume(t, s, clk, &next, 30, "")
	if err := s.Consume(next, t0.Add(time.Hour), ""); !errors.Is(err, errFull) || !strings.Contains(err.Error(), "MaxEntries (32)") {
		t.Fatalf("the 33rd: %v, want Full at 32", err)
	}

	// A store smaller than DefaultCallerShares: a share of one.
	s, clk = newStore(t, 8, 0)
	next = 0
	consume(t, s, clk, &next, 1, "a")
	if err := s.Consume(next, t0.Add(time.Hour), "a"); !errors.Is(err, errShareFull) || !strings.Contains(err.Error(), "MaxEntriesPerCaller (1)") {
		t.Fatalf("a's second: %v, want ShareFull at 1", err)
	}

	if _, err := New[int](config(-1, 0, nil)); err == nil || err.Error() != "pkg: MemoryStoreOptions.MaxEntries must not be negative, got -1" {
		t.Fatalf("negative MaxEntries: %v", err)
	}

	// No clock: time.Now.
	w, err := New[int](config(4, 0, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Consume(1, time.Now().Add(time.Hour), ""); err != nil {
		t.Fatal(err)
	}
	if err := w.Consume(2, time.Now().Add(-time.Hour), ""); err != nil || w.Len() != 1 {
		t.Fatalf("an hour ago by time.Now: %v, Len %d; want nil, 1", err, w.Len())
	}
}

// The wrappers' ids: 32-byte arrays.
func TestArrayIDs(t *testing.T) {
	s, err := New[[32]byte](config(4, 0, func() time.Time { return t0 }))
	if err != nil {
		t.Fatal(err)
	}
	var a, b [32]byte
	a[31], b[31] = 1, 2
	if s.Consume(a, t0.Add(time.Minute), "x") != nil || s.Consume(b, t0.Add(time.Minute), "") != nil {
		t.Fatal("new ids refused")
	}
	if err := s.Consume(a, t0.Add(time.Minute), ""); err != errReplayed {
		t.Fatalf("a again: %v", err)
	}
}

// Many goroutines presenting the same ids, under several callers: each id
// is accepted exactly once, and the counts add up (run with -race).
func TestConcurrent(t *testing.T) {
	const ids, workers = 300, 8
	s, clk := newStore(t, 1<<12, 1<<10)
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted := map[int]int{}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			caller := fmt.Sprint("caller", w%3)
			for i := range ids {
				id := (i + w*37) % ids
				err := s.Consume(id, clk.now().Add(time.Hour), caller)
				switch {
				case err == nil:
					mu.Lock()
					accepted[id]++
					mu.Unlock()
				case err != errReplayed:
					t.Errorf("id %d: %v", id, err)
				}
				_ = s.Len() + s.CallerLen(caller)
			}
		}()
	}
	wg.Wait()
	for id := range ids {
		if accepted[id] != 1 {
			t.Fatalf("id %d accepted %d times, want once", id, accepted[id])
		}
	}
	sum := 0
	for c := range 3 {
		sum += s.CallerLen(fmt.Sprint("caller", c))
	}
	if s.Len() != ids || sum != ids {
		t.Fatalf("Len %d, callers hold %d; want %d", s.Len(), sum, ids)
	}
	check(t, s)
}

// In its steady state the store allocates nothing per Consume, nor per
// refusal: the map and the heap reuse their space, the errors are made
// once.
func TestAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	s, clk := newStore(t, 1<<12, 1<<10)
	id := 0
	for ; id < 512; id++ {
		if err := s.Consume(id, clk.now().Add(time.Duration(id+1)*time.Millisecond), "a"); err != nil {
			t.Fatal(err)
		}
	}
	got := testing.AllocsPerRun(2000, func() {
		clk.set(clk.now().Add(time.Millisecond))
		if err := s.Consume(id, clk.now().Add(512*time.Millisecond), "a"); err != nil {
			t.Fatal(err)
		}
		id++
		if err := s.Consume(id-1, clk.now().Add(time.Hour), "a"); err != errReplayed {
			t.Fatal(err)
		}
	})
	if got > 0 {
		t.Errorf("%v allocations per Consume and replay, budget 0", got)
	}
	full, _ := newStore(t, 8, -1)
	for i := range 8 {
		full.Consume(i, t0.Add(time.Hour), "")
	}
	if got := testing.AllocsPerRun(1000, func() { full.Consume(99, t0.Add(time.Hour), "") }); got > 0 {
		t.Errorf("%v allocations per refusal, budget 0", got)
	}
}
