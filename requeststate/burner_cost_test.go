package requeststate

import (
	"context"
	"testing"
	"time"
)

// TestSingleUseBurnerCost measures what one attacking client costs a good
// one (issue 23's closing figures, BENCHMARKS.md "Fair under attack"): a
// burner recording 3,000 states a second (the rate one client reached on
// the 2-core test machine) and a good client running one three-round flow
// a second share the default memory store for 700 simulated seconds (past the TTL, so expiry is in play). Before
// shares every state counted only against the whole store; with them the
// good client loses nothing.
func TestSingleUseBurnerCost(t *testing.T) {
	if raceEnabled {
		t.Skip("millions of store operations: too slow under -race, and it measures nothing the race detector checks")
	}
	const burnRate, seconds = 3000, 700
	run := func(perCaller int, shares bool) (refusedFlows, flows, burned int) {
		now := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
		m, err := NewMemoryStore(&MemoryStoreOptions{Now: func() time.Time { return now }, MaxEntriesPerCaller: perCaller})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		consume := func(id StateID, caller string) error {
			until := now.Add(DefaultTTL + ClockSkew)
			if shares {
				return m.ConsumeAs(ctx, id, until, caller)
			}
			return m.Consume(ctx, id, until) // what the boundary did before shares
		}
		var n uint64
		next := func() StateID {
			n++
			var id StateID
			for i := range 8 {
				id[i] = byte(n >> (8 * i))
			}
			return id
		}
		for range seconds {
			for range burnRate {
				if consume(next(), "principal:burner") == nil {
					burned++
				}
			}
			flows++
			for range 3 {
				if consume(next(), "principal:good") != nil {
					refusedFlows++
					break
				}
			}
			now = now.Add(time.Second)
		}
		return refusedFlows, flows, burned
	}
	beforeRefused, flows, beforeBurned := run(-1, false)
	afterRefused, _, afterBurned := run(0, true)
	t.Logf("burner at %d states/s, good client 1 flow/s of 3 rounds, %d s, default store (%d entries, %d per caller):",
		burnRate, seconds, DefaultMaxEntries, DefaultMaxEntries/DefaultCallerShares)
	t.Logf("  before: %d of %d good flows refused; burner recorded %d states", beforeRefused, flows, beforeBurned)
	t.Logf("  after:  %d of %d good flows refused; burner recorded %d states", afterRefused, flows, afterBurned)
	if afterRefused != 0 {
		t.Errorf("with shares the good client lost %d flows, want 0", afterRefused)
	}
	if beforeRefused == 0 {
		t.Error("without shares the burner cost the good client nothing: the measurement no longer measures the attack")
	}
}
