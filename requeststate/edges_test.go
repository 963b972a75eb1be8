package requeststate_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parley-mcp/parley/requeststate"
)

// TestSealedExpiryWithDifferingTTLs pins the edges of a token's lifetime
// when the minting and the verifying instance disagree on the TTL (a TTL
// rollout, services sharing an audience). Whichever bound is the tighter
// one decides, to the millisecond: the instant before it the token is
// honoured, at it and after it the token is refused.
//
//   - minter short, verifier long: the expiry sealed into the token is the
//     only guard, so an off-by-one in the comparison, or an expiry stamped a
//     little late or early, shows here and nowhere else;
//   - minter long, verifier short: the verifier's own TTL, counted from the
//     sealed issue time, is the only guard.
func TestSealedExpiryWithDifferingTTLs(t *testing.T) {
	const short, long = time.Minute, time.Hour
	for _, c := range []struct {
		name         string
		mint, verify time.Duration // the two policies' TTLs
		bound        time.Duration // the tighter of the two
	}{
		{name: "sealed expiry (minter shorter)", mint: short, verify: long, bound: short},
		{name: "verifier TTL (verifier shorter)", mint: long, verify: short, bound: short},
		{name: "sealed expiry (minter 1500ms, verifier default)", mint: 1500 * time.Millisecond, verify: 0, bound: 1500 * time.Millisecond},
	} {
		for _, probe := range []struct {
			name   string
			offset time.Duration
			accept bool
		}{
			{"just before", -time.Millisecond, true},
			{"exactly at", 0, false},
			{"just after", time.Millisecond, false},
		} {
			t.Run(c.name+"/"+probe.name, func(t *testing.T) {
				clk := newClock()
				// A mint instant that is a whole millisecond (the unit of
				// the sealed times) but not a whole second.
				clk.Advance(4321 * time.Millisecond)
				minter := newFixture(t, "svc", true, &requeststate.Policy{Keys: [][]byte{key(1)}, TTL: c.mint, Now: clk.Now})
				verifier := newFixture(t, "svc", true, &requeststate.Policy{Keys: [][]byte{key(1)}, TTL: c.verify, Now: clk.Now})
				ask := tool("ask", map[string]any{"n": 1})
				st := minter.begin(ask)
				clk.Advance(c.bound + probe.offset)
				got := verifier.raw(ask.with(st, "confirm"))
				if !probe.accept {
					if got != wantRejected {
						t.Fatalf("minted with TTL %v, verified with TTL %v, presented at %v%+v: accepted: %s",
							c.mint, c.verify, c.bound, probe.offset, got)
					}
					return
				}
				if got == wantRejected {
					t.Fatalf("minted with TTL %v, verified with TTL %v, presented at %v%+v: refused a live token",
						c.mint, c.verify, c.bound, probe.offset)
				}
				r := verifier.do(ask.with(st, "confirm"))
				if want := "state=issued-by:ask answers=[confirm] asked=true"; r.text() != want {
					t.Fatalf("retry: %q (%+v), want %q", r.text(), r, want)
				}
			})
		}
	}
}

// TestSealedExpiryNotExtendedByVerifier: a token whose sealed lifetime is
// over stays refused however long the verifier's TTL and however often it
// is presented; a fresh token from the same minter is live again.
func TestSealedExpiryNotExtendedByVerifier(t *testing.T) {
	clk := newClock()
	minter := newFixture(t, "svc", true, &requeststate.Policy{Keys: [][]byte{key(1)}, TTL: 2 * time.Second, Now: clk.Now})
	verifier := newFixture(t, "svc", true, &requeststate.Policy{Keys: [][]byte{key(1)}, TTL: 24 * time.Hour, Now: clk.Now})
	ask := tool("ask", nil)
	st := minter.begin(ask)
	clk.Advance(2 * time.Second)
	for i := range 3 {
		if got := verifier.raw(ask.with(st, "confirm")); got != wantRejected {
			t.Fatalf("presentation %d past the sealed expiry accepted: %s", i, got)
		}
		clk.Advance(time.Hour)
	}
	fresh := minter.begin(ask)
	clk.Advance(2*time.Second - time.Millisecond)
	if got := verifier.raw(ask.with(fresh, "confirm")); got == wantRejected {
		t.Fatal("a fresh token was refused")
	}
}

// refusingCodec is a custom Codec that seals with the built-in codec (so
// its tokens are real) but answers every token it did not mint with an
// error of its own that wraps ErrInvalidState, or with a plain failure.
type refusingCodec struct {
	inner  *requeststate.AESGCM
	refuse func() error
}

func (c *refusingCodec) Seal(p []byte) (string, error) { return c.inner.Seal(p) }

func (c *refusingCodec) Unseal(tok string) ([]byte, error) {
	p, err := c.inner.Unseal(tok)
	if err != nil {
		return nil, c.refuse()
	}
	return p, nil
}

// TestCustomCodecRefusalIsTheFixedWireError: whatever a custom Codec's
// Unseal returns for a token it refuses (ErrInvalidState itself, wrapped
// once or twice, or a failure that is no refusal at all), the client gets
// byte for byte the response the built-in codec gives a tampered token, no
// handler runs, and the log says which kind of refusal it was.
func TestCustomCodecRefusalIsTheFixedWireError(t *testing.T) {
	ask := tool("ask", map[string]any{"n": 1})

	builtin := newFixture(t, "svc", true, &requeststate.Policy{Keys: [][]byte{key(1)}})
	st := builtin.begin(ask)
	tampered := st[:len(st)-2] + "AA"
	if tampered == st {
		tampered = st[:len(st)-2] + "BA"
	}
	reference := builtin.raw(ask.with(tampered, "confirm"))
	if reference != wantRejected {
		t.Fatalf("built-in codec, tampered state: %s", reference)
	}

	outage := errors.New("kms: service unavailable")
	for _, c := range []struct {
		name   string
		refuse func() error
		reason string // the reason logged
		cause  string // the error logged, "" for none
	}{
		{"ErrInvalidState", func() error { return requeststate.ErrInvalidState }, "refused by the codec", ""},
		{"wrapped", func() error { return fmt.Errorf("kmscodec: bad tag: %w", requeststate.ErrInvalidState) }, "refused by the codec", ""},
		{"wrapped twice", func() error {
			return fmt.Errorf("kmscodec: %w", fmt.Errorf("open: %w", requeststate.ErrInvalidState))
		}, "refused by the codec", ""},
		{"joined", func() error { return errors.Join(errors.New("kmscodec: v2 token"), requeststate.ErrInvalidState) }, "refused by the codec", ""},
		{"wrapped InvalidStateError", func() error {
			return fmt.Errorf("kmscodec: %w", &requeststate.InvalidStateError{Reason: "kms tag mismatch"})
		}, "kms tag mismatch", ""},
		{"failure, not a refusal", func() error { return fmt.Errorf("kmscodec: %w", outage) }, "codec error", "kmscodec: kms: service unavailable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			logger, logs := newLogger()
			codec := &refusingCodec{inner: mustCodec(t, key(1)), refuse: c.refuse}
			f := newFixture(t, "svc", true, &requeststate.Policy{Codec: codec, Logger: logger})
			own := f.begin(ask)
			runs := f.runs.Load()
			for _, bad := range []string{tampered, own[:len(own)-1], "forged", own + "x"} {
				if got := f.raw(ask.with(bad, "confirm")); got != reference {
					t.Errorf("state %.12q...: got\n%s\nwant (the built-in codec's answer to a tampered state)\n%s", bad, got, reference)
				}
			}
			if n := f.runs.Load() - runs; n != 0 {
				t.Errorf("handlers ran %d times for refused states", n)
			}
			warns := logs.lines("WARN")
			if len(warns) != 4 {
				t.Fatalf("%d Warn lines for 4 refusals:\n%s", len(warns), logs)
			}
			for _, w := range warns {
				if w["reason"] != c.reason {
					t.Errorf("logged reason %q, want %q", w["reason"], c.reason)
				}
				if got, _ := w["err"].(string); got != c.cause {
					t.Errorf("logged err %q, want %q", got, c.cause)
				}
			}
			if strings.Contains(logs.String(), own) {
				t.Error("the log contains the token")
			}
			// The codec's own tokens still pass.
			if r := f.do(ask.with(own, "confirm")); r.Error != nil {
				t.Fatalf("the codec's own token: %v", r.Error)
			}
		})
	}
}
