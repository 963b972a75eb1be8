package requeststate

import (
	"context"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

// FuzzUnseal feeds arbitrary tokens to the codec and to the whole inbound
// check. Nothing may panic, and nothing but a token the codec minted may
// unseal. (The seeds are minted afresh in every fuzzing process, with
// fresh nonces, so "minted" is judged by content: whatever unseals must be
// an envelope around one of the seeds' plaintexts, and must be spelt
// exactly as Seal spells it.)
func FuzzUnseal(f *testing.F) {
	b, req, ir := typicalRound(f)
	states := map[string]bool{}
	for _, st := range []string{"", "x", ir.RequestState, strings.Repeat("é", 300)} {
		r := *ir
		r.RequestState = st
		if st == "" {
			r.RequestState = "-"
		}
		var id identity
		tok, err := b.seal(context.Background(), req, &r, &id)
		if err != nil {
			f.Fatal(err)
		}
		states[r.RequestState] = true
		f.Add(tok)
	}
	f.Add("rs1.")
	f.Add("rs1.AAAA")
	f.Add("")
	f.Fuzz(func(t *testing.T, tok string) {
		plain, err := b.codec.Unseal(tok)
		if err == nil {
			var cl claims
			if reason := parseEnvelope(plain, &cl); reason != "" || !states[string(cl.state)] {
				t.Fatalf("a token the codec never minted unsealed: %q -> %q", tok, plain)
			}
			raw, _ := decodeStrict(strings.TrimPrefix(tok, tokenPrefix))
			if tokenPrefix+b64.EncodeToString(raw) != tok {
				t.Fatalf("a non-canonical spelling unsealed: %q", tok)
			}
		}
		v := new(verified)
		err = b.open(context.Background(), req, tok, v)
		if err == nil && !states[string(v.cl.state)] {
			t.Fatalf("a token the boundary never sealed was accepted: %q", tok)
		}
	})
}

// FuzzEnvelope feeds arbitrary plaintext to the envelope parser, as a
// custom codec that authenticates whatever it is given would.
func FuzzEnvelope(f *testing.F) {
	s := sealing{issued: 1, expires: 2, audience: "svc", state: "st",
		questions: []question{{key: "a"}, {key: "b"}}}
	var claim [principalLen]byte
	f.Add(appendEnvelope(nil, &s))
	s.principal = &claim
	f.Add(appendEnvelope(nil, &s))
	s.id = new(StateID)
	f.Add(appendEnvelope(nil, &s))
	f.Add([]byte{envelopeVersion})
	f.Fuzz(func(t *testing.T, p []byte) {
		var cl claims
		if parseEnvelope(p, &cl) != "" {
			return
		}
		n := 0
		cl.eachQuestion(func(key, digest []byte) bool {
			if len(digest) != questionTagLen {
				t.Fatalf("question digest of %d bytes", len(digest))
			}
			if _, ok := cl.asked(string(key)); !ok {
				t.Fatalf("question %q listed but not found", key)
			}
			n++
			return true
		})
		if n != cl.nQuestions {
			t.Fatalf("%d questions listed, %d counted", n, cl.nQuestions)
		}
		v := &verified{cl: cl}
		rs := mcp.InputResponses{"a": nil, "zz": nil}
		v.dropUnasked(&rs)
	})
}
