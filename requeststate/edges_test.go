package requeststate_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
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

// S32: every round re-seals with a fresh expiry, so the TTL bounds the
// think time of one round, not the whole flow.

// threeRounds is a tool that asks "confirm" three times, carrying the
// round it reached in its plaintext state, and then completes.
func threeRounds(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	var n int
	if p.RequestState != "" {
		if _, err := fmt.Sscanf(p.RequestState, "round=%d", &n); err != nil {
			return nil, wire.InvalidParams("Invalid params: state %q", p.RequestState)
		}
	}
	if n == 3 {
		return mcp.TextResult("done after 3 rounds"), nil
	}
	return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"confirm": confirmQ}, RequestState: fmt.Sprintf("round=%d", n+1)}, nil
}

// TestTTLBoundsEachRoundNotTheFlow: a three-round flow whose every answer
// comes just under the TTL succeeds, though it lasts nearly three TTLs; a
// flow in which any one round takes the whole TTL fails there with the
// fixed error, and the log says it expired.
func TestTTLBoundsEachRoundNotTheFlow(t *testing.T) {
	const ttl = time.Minute
	c := tool("steps", map[string]any{"n": 1})
	for slow := 0; slow <= 3; slow++ { // the round that takes the whole TTL; 0: none
		name := "every round just under the TTL"
		if slow > 0 {
			name = fmt.Sprintf("round %d takes the TTL", slow)
		}
		t.Run(name, func(t *testing.T) {
			clk := newClock()
			logger, logs := newLogger()
			f := newFixture(t, "svc", true, &requeststate.Policy{Keys: [][]byte{key(1)}, TTL: ttl, Now: clk.Now, Logger: logger})
			f.s.HandleCallTool(threeRounds)
			start := clk.Now()
			st := f.begin(c)
			for round := 1; round <= 3; round++ {
				think := ttl - time.Millisecond
				if round == slow {
					think = ttl
				}
				clk.Advance(think)
				if round == slow {
					if got := f.raw(c.with(st, "confirm")); got != wantRejected {
						t.Fatalf("round %d answered after %v: %s, want the fixed error", round, think, got)
					}
					if warns := logs.lines("WARN"); len(warns) != 1 || warns[0]["reason"] != "expired" {
						t.Fatalf("logged %v, want one Warn line saying expired", warns)
					}
					return
				}
				r := f.do(c.with(st, "confirm"))
				if r.Error != nil {
					t.Fatalf("round %d answered after %v (%v into the flow): %v", round, think, clk.Now().Sub(start), r.Error)
				}
				if round == 3 {
					if r.text() != "done after 3 rounds" {
						t.Fatalf("last round: %+v", r)
					}
					break
				}
				next, _ := r.Result["requestState"].(string)
				if next == "" || next == st {
					t.Fatalf("round %d was not sealed afresh: %q", round, next)
				}
				st = next
			}
			if took := clk.Now().Sub(start); took <= 2*ttl {
				t.Fatalf("the flow took %v; the test means a flow far longer than the TTL (%v)", took, ttl)
			}
		})
	}
}

// S39: the SDK binds the time window, principal, request, questions and
// audience whatever the codec. signingCodec is a custom Codec that is not
// AES: it signs with HMAC-SHA256 and does not encrypt. Its tokens are
// "hs1." and unpadded base64url of plaintext || tag, so a client can read
// every claim; what it cannot do is change or move one.
type signingCodec struct{ key []byte }

const signingPrefix = "hs1."

func (c signingCodec) tag(plaintext []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(signingPrefix))
	m.Write(plaintext)
	return m.Sum(nil)
}

func (c signingCodec) Seal(plaintext []byte) (string, error) {
	raw := append(slices.Clip(plaintext), c.tag(plaintext)...)
	return signingPrefix + base64.RawURLEncoding.EncodeToString(raw), nil
}

func (c signingCodec) Unseal(token string) ([]byte, error) {
	body, ok := strings.CutPrefix(token, signingPrefix)
	if !ok {
		return nil, &requeststate.InvalidStateError{Reason: "hs1: malformed token"}
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(body)
	if err != nil || base64.RawURLEncoding.EncodeToString(raw) != body || len(raw) < sha256.Size {
		return nil, &requeststate.InvalidStateError{Reason: "hs1: malformed token"}
	}
	plaintext, tag := raw[:len(raw)-sha256.Size], raw[len(raw)-sha256.Size:]
	if !hmac.Equal(tag, c.tag(plaintext)) {
		return nil, &requeststate.InvalidStateError{Reason: "hs1: bad signature"}
	}
	return plaintext, nil
}

// flipChar changes the character at i of a base64url token to another
// letter of the alphabet.
func flipChar(s string, i int) string {
	c := byte('A')
	if s[i] == 'A' {
		c = 'B'
	}
	return s[:i] + string(c) + s[i+1:]
}

// rewordedQ is confirmQ after a redeploy that changed its message.
var rewordedQ = mcp.NewElicitFormRequest("Please confirm again", mcp.ElicitRequestedSchema{
	Properties: map[string]mcp.PrimitiveSchemaDefinition{"ok": &mcp.BooleanSchema{}},
	Required:   []string{"ok"},
})

// TestCustomCodecBindings: under a codec that only signs, every binding
// of the envelope still holds. A token replayed under another principal,
// onto another tool, other arguments or another method, at another
// service sharing the codec's key, or presented after its TTL, is refused
// with the fixed error and its reason logged; answers are pinned to the
// rendered questions of the round that was sealed.
func TestCustomCodecBindings(t *testing.T) {
	const ttl = time.Minute
	clk := newClock()
	logger, logs := newLogger()
	codec := signingCodec{key: key(9)}
	policy := func() *requeststate.Policy {
		return &requeststate.Policy{Codec: codec, TTL: ttl, Now: clk.Now, Logger: logger,
			Principal: func(ctx context.Context, req *server.Request) (string, error) {
				if ci := req.ClientInfo(); ci != nil {
					return ci.Name, nil
				}
				return "", nil
			}}
	}
	f := newFixture(t, "svc", true, policy())
	other := newFixture(t, "other-svc", true, policy()) // the same key, another name

	base := tool("ask", map[string]any{"n": 1}).as("alice")
	st := f.begin(base)
	if !strings.HasPrefix(st, signingPrefix) {
		t.Fatalf("state %q was not sealed by the custom codec", st)
	}
	// The codec does not encrypt: the claims are there to read, so what
	// holds below holds by the boundary's checks, not by secrecy.
	if plain, err := codec.Unseal(st); err != nil || !strings.Contains(string(plain), "issued-by:ask") || !strings.Contains(string(plain), "svc") {
		t.Fatalf("unsealed %q, %v: want the readable envelope", plain, err)
	}
	foreign := other.begin(base)

	for _, c := range []struct {
		name   string
		c      call
		reason string
	}{
		{"another principal", base.as("bob").with(st, "confirm"), "principal mismatch"},
		{"no principal", base.as("").with(st, "confirm"), "principal drift (bound with a principal and presented without one, or the reverse)"},
		{"another tool", tool("other", map[string]any{"n": 1}).as("alice").with(st, "confirm"), "bound to another request (method, target or arguments differ)"},
		{"other arguments", tool("ask", map[string]any{"n": 2}).as("alice").with(st, "confirm"), "bound to another request (method, target or arguments differ)"},
		{"another method", prompt("ask", nil).as("alice").with(st, "confirm"), "bound to another request (method, target or arguments differ)"},
		{"another service's token", base.with(foreign, "confirm"), "audience mismatch"},
		{"altered", base.with(flipChar(st, len(st)/2), "confirm"), "hs1: bad signature"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before, runs := len(logs.lines("WARN")), f.runs.Load()
			if got := f.raw(c.c); got != wantRejected {
				t.Fatalf("got %s, want %s", got, wantRejected)
			}
			if f.runs.Load() != runs {
				t.Error("a handler ran")
			}
			warns := logs.lines("WARN")
			if len(warns) != before+1 || warns[before]["reason"] != c.reason {
				t.Errorf("logged %v, want the reason %q", warns[before:], c.reason)
			}
		})
	}

	t.Run("time window", func(t *testing.T) {
		fresh := f.begin(base)
		clk.Advance(ttl - time.Millisecond)
		if r := f.do(base.with(fresh, "confirm")); r.Error != nil {
			t.Fatalf("just under the TTL: %v", r.Error)
		}
		clk.Advance(time.Millisecond)
		if got := f.raw(base.with(fresh, "confirm")); got != wantRejected {
			t.Fatalf("at the TTL: %s", got)
		}
		if warns := logs.lines("WARN"); warns[len(warns)-1]["reason"] != "expired" {
			t.Errorf("logged %v, want expired", warns[len(warns)-1])
		}
		// Both bounds hold under this codec: the expiry sealed into the
		// token (minted with the shorter TTL) and the verifier's own TTL
		// (verifying with the shorter one), each alone at its edge.
		short, long := policy(), policy()
		long.TTL = time.Hour
		for _, pair := range []struct {
			name           string
			minter, holder *requeststate.Policy
		}{{"sealed expiry", short, long}, {"verifier's TTL", long, short}} {
			minter, holder := newFixture(t, "svc", true, pair.minter), newFixture(t, "svc", true, pair.holder)
			tok := minter.begin(base)
			clk.Advance(ttl - time.Millisecond)
			if r := holder.do(base.with(tok, "confirm")); r.Error != nil {
				t.Fatalf("%s: just under the TTL: %v", pair.name, r.Error)
			}
			clk.Advance(time.Millisecond)
			if got := holder.raw(base.with(tok, "confirm")); got != wantRejected {
				t.Errorf("%s: at the TTL: %s", pair.name, got)
			}
		}
	})

	t.Run("questions", func(t *testing.T) {
		// The sealed round asked confirmQ under "confirm": an answer to
		// it counts for that question only, and an answer under a key the
		// round did not ask never reaches the handler.
		f.s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
			if p.RequestState == "" {
				return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"confirm": confirmQ}, RequestState: "asked"}, nil
			}
			return mcp.TextResult(fmt.Sprintf("answers=%v asked=%v reworded=%v", slices.Sorted(maps.Keys(p.InputResponses)),
				requeststate.Asked(ctx, "confirm", confirmQ), requeststate.Asked(ctx, "confirm", rewordedQ))), nil
		})
		qs := f.begin(base)
		if r := f.do(base.with(qs, "confirm", "unasked")); r.text() != "answers=[confirm] asked=true reworded=false" {
			t.Fatalf("retry: %q (%+v)", r.text(), r)
		}
	})
}
