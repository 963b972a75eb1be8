package requeststate_test

import (
	"testing"
	"time"

	"github.com/parley-mcp/parley/requeststate"
)

// TestClockSkewIsThirtySeconds pins the documented allowance for a minter
// whose clock runs ahead: 30 seconds, to the millisecond. The value is
// written out rather than taken from requeststate.ClockSkew, so widening
// the constant (and with it the window in which a token from the future is
// honoured) fails here. Both instances use injected clocks (Policy.Now).
func TestClockSkewIsThirtySeconds(t *testing.T) {
	const skew = 30 * time.Second
	for _, c := range []struct {
		name   string
		ahead  time.Duration // how far the minter's clock runs ahead
		accept bool
	}{
		{"well within", skew - time.Second, true},
		{"exactly at the skew", skew, true},
		{"1ms past the skew", skew + time.Millisecond, false},
		{"1s past the skew", skew + time.Second, false},
		{"minutes ahead", 5 * time.Minute, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ahead, here := newClock(), newClock()
			// Whole milliseconds (the unit of the sealed times), not whole seconds.
			ahead.Advance(1234 * time.Millisecond)
			here.Advance(1234 * time.Millisecond)
			logger, logs := newLogger()
			minter := newFixture(t, "svc", true, &requeststate.Policy{Keys: [][]byte{key(1)}, Now: ahead.Now})
			verifier := newFixture(t, "svc", true, &requeststate.Policy{Keys: [][]byte{key(1)}, Now: here.Now, Logger: logger})
			ahead.Advance(c.ahead)
			ask := tool("ask", map[string]any{"n": 1})
			st := minter.begin(ask)
			runs := verifier.runs.Load()
			got := verifier.raw(ask.with(st, "confirm"))
			if !c.accept {
				if got != wantRejected {
					t.Fatalf("a token issued %v in the future was accepted: %s", c.ahead, got)
				}
				if n := verifier.runs.Load() - runs; n != 0 {
					t.Errorf("the handler ran %d times for a refused token", n)
				}
				warns := logs.lines("WARN")
				if len(warns) != 1 || warns[0]["reason"] != "issued in the future" {
					t.Fatalf("logged %v, want one Warn with reason %q:\n%s", warns, "issued in the future", logs)
				}
				return
			}
			if got == wantRejected {
				t.Fatalf("a token issued %v in the future (within the %v skew) was refused", c.ahead, skew)
			}
			r := verifier.do(ask.with(st, "confirm"))
			if want := "state=issued-by:ask answers=[confirm] asked=true"; r.text() != want {
				t.Fatalf("retry: %q (%+v), want %q", r.text(), r, want)
			}
		})
	}
}
