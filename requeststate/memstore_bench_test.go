package requeststate

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"testing"
	"time"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// steadyStore is a memory store in its steady state: every Consume records
// a new id that expires a thousand calls later, and drops one that expired.
type steadyStore struct {
	m   *MemoryStore
	now time.Time
	n   uint64
}

func newSteadyStore(tb testing.TB) *steadyStore {
	s := &steadyStore{now: time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)}
	var err error
	if s.m, err = NewMemoryStore(&MemoryStoreOptions{Now: func() time.Time { return s.now }}); err != nil {
		tb.Fatal(err)
	}
	for range 5000 {
		s.consume(tb)
	}
	return s
}

func (s *steadyStore) consume(tb testing.TB) {
	s.n++
	s.now = s.now.Add(time.Microsecond)
	var id StateID
	for i := range 8 {
		id[i] = byte(s.n >> (8 * i))
	}
	if err := s.m.Consume(context.Background(), id, s.now.Add(time.Millisecond)); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkMemoryStoreConsume: what single use adds to a verified round
// with the in-memory store: one id recorded, one expired id dropped.
func BenchmarkMemoryStoreConsume(b *testing.B) {
	s := newSteadyStore(b)
	b.ReportAllocs()
	for b.Loop() {
		s.consume(b)
	}
}

// chainedRounds is a flow of middle rounds through a boundary: each round
// echoes the token the previous one sealed (with single use, a token is
// accepted once, so the benchmark cannot echo one token again). The clock
// moves a millisecond a round and the TTL is a second, so a memory store
// holds about a thousand states.
type chainedRounds struct {
	h     func(ctx context.Context, req *server.Request) (mcp.AnyResult, error)
	req   *server.Request
	p     *mcp.CallToolRequestParams
	token string
}

func newChainedRounds(tb testing.TB, singleUse bool) *chainedRounds {
	_, req, ir := typicalRound(tb)
	now := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	p := &Policy{Keys: [][]byte{benchKey[:]}, TTL: time.Second, Now: clock}
	if singleUse {
		store, err := NewMemoryStore(&MemoryStoreOptions{Now: clock})
		if err != nil {
			tb.Fatal(err)
		}
		p.SingleUse = store
	}
	b, err := NewBoundary("bench-server", p)
	if err != nil {
		tb.Fatal(err)
	}
	c := &chainedRounds{req: req, p: req.Params.(*mcp.CallToolRequestParams)}
	c.h = b.wrap(func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
		now = now.Add(time.Millisecond)
		return ir, nil
	})
	c.p.InputResponses = mcp.InputResponses{"confirm": json.RawMessage(`{"action":"accept","content":{"ok":true}}`)}
	var id identity
	if c.token, err = b.seal(context.Background(), req, ir, &id); err != nil {
		tb.Fatal(err)
	}
	return c
}

func (c *chainedRounds) run(tb testing.TB) {
	c.p.RequestState = c.token
	res, err := c.h(context.Background(), c.req)
	if err != nil {
		tb.Fatal(err)
	}
	c.token = res.(*mcp.InputRequiredResult).RequestState
}

// BenchmarkSealUnsealSingleUse: a middle round (verify the echo, seal the
// next state, 200 bytes of state and one question) without single use
// and with the in-memory store.
func BenchmarkSealUnsealSingleUse(bm *testing.B) {
	for _, v := range []struct {
		name string
		on   bool
	}{{"off", false}, {"memory", true}} {
		bm.Run(v.name, func(bm *testing.B) {
			c := newChainedRounds(bm, v.on)
			bm.ReportAllocs()
			for bm.Loop() {
				c.run(bm)
			}
		})
	}
}

// TestMemoryStoreAllocBudget: in its steady state the store allocates
// nothing per Consume (the map and the heap reuse their space).
func TestMemoryStoreAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	s := newSteadyStore(t)
	if got := testing.AllocsPerRun(2000, func() { s.consume(t) }); got > 0 {
		t.Errorf("%v allocations per Consume, budget 0", got)
	} else {
		t.Logf("%v allocations per Consume", got)
	}
	// A middle round with single use stays within the boundary's budget
	// of 10 (TestSealUnsealAllocBudget): the id lives in the envelope.
	c := newChainedRounds(t, true)
	if got := testing.AllocsPerRun(500, func() { c.run(t) }); got > 10 {
		t.Errorf("%v allocations per middle round with single use, budget 10", got)
	} else {
		t.Logf("%v allocations per middle round with single use", got)
	}
}

// benchKey is a fixed key that passes the entropy check (a repeated byte
// would not).
var benchKey = sha256.Sum256([]byte("memstore bench key"))
