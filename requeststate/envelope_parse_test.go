package requeststate

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/parley-mcp/parley/server"
)

// The envelope parser faces whatever a custom Codec vouches for, so it must
// refuse every plaintext appendEnvelope would not have written, with a
// reason, rather than only not crash (FuzzEnvelope checks that much).

// sampleSealing is an envelope with every optional part present.
func sampleSealing() *sealing {
	var claim [principalLen]byte
	for i := range claim {
		claim[i] = byte(0xa0 + i)
	}
	id := StateID{0xee, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0xef}
	s := &sealing{issued: 1_785_240_000_123, expires: 1_785_240_600_123, audience: "svc", state: "handler-state",
		principal: &claim, id: &id,
		annotations: []server.StateAnnotation{{Key: "a", Value: "1"}, {Key: "trace", Value: "link"}},
		questions:   []question{{key: "a"}, {key: "ab"}, {key: "b"}}}
	for i := range s.request {
		s.request[i] = byte(i)
	}
	for i := range s.questions {
		for j := range s.questions[i].digest {
			s.questions[i].digest[j] = byte(16*i + j)
		}
	}
	return s
}

func envelope(s *sealing) []byte {
	p := appendEnvelope(make([]byte, 0, s.len()), s)
	if len(p) != s.len() {
		panic(fmt.Sprintf("envelope of %d bytes, len() says %d", len(p), s.len()))
	}
	return p
}

// wantRefused fails unless p is refused with reason.
func wantRefused(t *testing.T, what string, p []byte, reason string) {
	t.Helper()
	var cl claims
	if got := parseEnvelope(p, &cl); got != reason {
		if got == "" {
			t.Errorf("%s: accepted (state %q, %d questions), want refused with %q", what, cl.state, cl.nQuestions, reason)
		} else {
			t.Errorf("%s: refused with %q, want %q", what, got, reason)
		}
	}
}

// wantParsed parses p, failing the test unless it is accepted.
func wantParsed(t *testing.T, what string, p []byte) claims {
	t.Helper()
	var cl claims
	if reason := parseEnvelope(p, &cl); reason != "" {
		t.Fatalf("%s: refused (%s)", what, reason)
	}
	return cl
}

func questionKeys(cl *claims) []string {
	var keys []string
	cl.eachQuestion(func(k, _ []byte) bool { keys = append(keys, string(k)); return true })
	return keys
}

// TestEnvelopeRoundTrip: what appendEnvelope writes parses back to exactly
// what was sealed, with and without the optional parts.
func TestEnvelopeRoundTrip(t *testing.T) {
	full := sampleSealing()
	bare := &sealing{issued: 5, expires: 6}
	for _, s := range []*sealing{full, bare} {
		cl := wantParsed(t, "sealed envelope", envelope(s))
		if cl.issued != s.issued || cl.expires != s.expires || cl.request != s.request ||
			string(cl.audience) != s.audience || string(cl.state) != s.state || cl.nQuestions != len(s.questions) {
			t.Fatalf("parsed %+v from %+v", cl, s)
		}
		if (s.principal == nil) != (cl.principal == nil) || s.principal != nil && !bytes.Equal(cl.principal, s.principal[:]) {
			t.Fatalf("principal %x, sealed %v", cl.principal, s.principal)
		}
		if (s.id == nil) != (cl.id == nil) || s.id != nil && !bytes.Equal(cl.id, s.id[:]) {
			t.Fatalf("id %x, sealed %v", cl.id, s.id)
		}
		for _, a := range s.annotations {
			if v, ok := cl.annotation(a.Key); !ok || v != a.Value {
				t.Fatalf("annotation %q = %q, %v; sealed %q", a.Key, v, ok, a.Value)
			}
		}
		if v, ok := cl.annotation("missing"); ok {
			t.Fatalf("annotation that was never sealed: %q", v)
		}
		for i, k := range questionKeys(&cl) {
			d, ok := cl.asked(k)
			if k != s.questions[i].key || !ok || !bytes.Equal(d, s.questions[i].digest[:]) {
				t.Fatalf("question %d: %q %x, sealed %q %x", i, k, d, s.questions[i].key, s.questions[i].digest)
			}
		}
	}
}

// TestEnvelopeRefusesUnknownVersionAndFlags: every version but the one it
// writes, and every flag bit it does not define, alone or beside the
// principal flag, is refused.
func TestEnvelopeRefusesUnknownVersionAndFlags(t *testing.T) {
	good := envelope(sampleSealing())
	for _, v := range []byte{0, envelopeVersion + 1, 0x7f, 0x80, 0xff} {
		p := bytes.Clone(good)
		p[0] = v
		wantRefused(t, fmt.Sprintf("version %d", v), p, reasonVersion)
	}
	flagsAt := fixedHeaderLen - 1
	if good[flagsAt] != flagPrincipal|flagID|flagAnnotations {
		t.Fatalf("flags byte is %#x, want the principal, id and annotations flags", good[flagsAt])
	}
	for bit := 3; bit < 8; bit++ {
		for _, base := range []byte{0, flagPrincipal, flagID, flagPrincipal | flagID, flagPrincipal | flagID | flagAnnotations} {
			p := bytes.Clone(good)
			p[flagsAt] = base | 1<<bit
			wantRefused(t, fmt.Sprintf("flags %#08b", p[flagsAt]), p, reasonEnvelope)
		}
	}
	noPrincipal := sampleSealing()
	noPrincipal.principal = nil
	noPrincipal.id = nil
	noPrincipal.annotations = nil
	p := envelope(noPrincipal)
	p[flagsAt] = 0xff &^ (flagPrincipal | flagID | flagAnnotations)
	wantRefused(t, "every unknown flag, no principal", p, reasonEnvelope)
}

// TestEnvelopeRefusesQuestionOrder: keys must be strictly increasing, as
// appendEnvelope writes them (questionDigests sorts them; a map has no
// duplicates): a duplicate, a key out of order or a shorter key after its
// own extension is refused, wherever in the list it sits.
func TestEnvelopeRefusesQuestionOrder(t *testing.T) {
	for _, c := range []struct {
		keys []string
		ok   bool
	}{
		{[]string{"a"}, true},
		{[]string{"", "a"}, true},
		{[]string{"a", "ab", "b"}, true},
		{[]string{"A", "a"}, true}, // byte order, not case-folded
		{[]string{"a", "a"}, false},
		{[]string{"", ""}, false},
		{[]string{"b", "a"}, false},
		{[]string{"ab", "a"}, false},
		{[]string{"a", "b", "b"}, false},
		{[]string{"a", "c", "b"}, false},
		{[]string{"b", "a", "c"}, false},
		{[]string{"a", "b", "c", "a"}, false},
		{[]string{"a", "A"}, false},
	} {
		s := sampleSealing()
		s.questions = make([]question, len(c.keys))
		for i, k := range c.keys {
			s.questions[i] = question{key: k}
		}
		p := envelope(s)
		what := fmt.Sprintf("keys %q", c.keys)
		if !c.ok {
			wantRefused(t, what, p, reasonEnvelope)
			continue
		}
		cl := wantParsed(t, what, p)
		if got := questionKeys(&cl); fmt.Sprint(got) != fmt.Sprint(c.keys) || string(cl.state) != s.state {
			t.Errorf("%s: parsed keys %q, state %q", what, got, cl.state)
		}
	}
}

// TestEnvelopeQuestionCountLimit: at most maxQuestionCount questions; a
// count above it is refused before anything is read.
func TestEnvelopeQuestionCountLimit(t *testing.T) {
	s := &sealing{issued: 1, expires: 2, audience: "svc", questions: make([]question, maxQuestionCount+1)}
	for i := range s.questions {
		s.questions[i].key = fmt.Sprintf("%06d", i)
	}
	wantRefused(t, "one question over the limit", envelope(s), reasonEnvelope)
	s.questions = s.questions[:maxQuestionCount]
	if cl := wantParsed(t, "questions at the limit", envelope(s)); cl.nQuestions != maxQuestionCount {
		t.Fatalf("%d questions", cl.nQuestions)
	}
	// A huge count with nothing behind it.
	p := envelope(&sealing{issued: 1, expires: 2, audience: "svc"})
	p = binary.AppendUvarint(p[:len(p)-1], 1<<62)
	wantRefused(t, "count 2^62", p, reasonEnvelope)
}

// TestEnvelopeTruncatedAtEveryOffset cuts a sealed envelope at every
// offset: every cut inside the claims is refused (as malformed, or for the
// version when not even that byte is left); every cut inside the state
// parses to the same claims and a shortened state.
func TestEnvelopeTruncatedAtEveryOffset(t *testing.T) {
	for _, s := range []*sealing{sampleSealing(), {issued: 1, expires: 2}} {
		full := envelope(s)
		claimsEnd := len(full) - len(s.state)
		want := wantParsed(t, "whole envelope", full)
		for i := range full {
			cut := bytes.Clone(full[:i]) // a fresh array: a read past the end panics
			if i < claimsEnd {
				wantRefused(t, fmt.Sprintf("cut at %d of %d claim bytes", i, claimsEnd), cut, reasonEnvelope)
				continue
			}
			cl := wantParsed(t, fmt.Sprintf("cut at %d, inside the state", i), cut)
			if string(cl.state) != s.state[:i-claimsEnd] || cl.nQuestions != want.nQuestions ||
				!bytes.Equal(cl.questions, want.questions) || !bytes.Equal(cl.audience, want.audience) {
				t.Fatalf("cut at %d: claims changed: %+v, want %+v", i, cl, want)
			}
		}
	}
}

// TestEnvelopeRefusesLengthsPastTheEnd: a length or count that promises
// more bytes than follow is refused, never read short.
func TestEnvelopeRefusesLengthsPastTheEnd(t *testing.T) {
	header := func(flags byte) []byte {
		p := envelope(&sealing{issued: 1, expires: 2})
		p = p[:fixedHeaderLen]
		p[fixedHeaderLen-1] = flags
		return p
	}
	q := func(p []byte, key string, tag int) []byte {
		p = binary.AppendUvarint(p, uint64(len(key)))
		p = append(p, key...)
		return append(p, make([]byte, tag)...)
	}
	for _, c := range []struct {
		name string
		p    []byte
	}{
		{"principal flagged, 31 bytes follow", append(header(flagPrincipal), make([]byte, principalLen-1)...)},
		{"id flagged, 15 bytes follow", append(header(flagID), make([]byte, idLen-1)...)},
		{"principal and id flagged, 47 bytes follow", append(header(flagPrincipal|flagID), make([]byte, principalLen+idLen-1)...)},
		{"audience of 4, 3 follow", append(header(0), 4, 's', 'v', 'c')},
		{"audience length overflowing", binary.AppendUvarint(header(0), 1<<63)},
		{"audience length of 11 bytes", append(header(0), 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01)},
		{"no question count", append(header(0), 0)},
		{"2 questions counted, 1 present", q(append(header(0), 0, 2), "a", questionTagLen)},
		{"question tag 15 bytes", q(append(header(0), 0, 1), "a", questionTagLen-1)},
		{"question key of 2, 1 follows", append(header(0), 0, 1, 2, 'a')},
	} {
		wantRefused(t, c.name, c.p, reasonEnvelope)
	}
}

// TestEnvelopeTrailingBytesAreState: the envelope has no end marker, the
// handler's state being everything after the claims, so bytes appended to
// an envelope cannot be refused by the parser (only the codec's
// authentication refuses them). What the parser owes is that they never
// become claims: bytes shaped like a further question, after a list whose
// count does not include it, stay state and are never asked.
func TestEnvelopeTrailingBytesAreState(t *testing.T) {
	s := sampleSealing()
	s.state = ""
	full := envelope(s)
	want := wantParsed(t, "sealed", full)
	extra := binary.AppendUvarint(nil, 1)
	extra = append(extra, 'z')
	extra = append(extra, make([]byte, questionTagLen)...)
	cl := wantParsed(t, "trailing question", append(bytes.Clone(full), extra...))
	if cl.nQuestions != want.nQuestions || !bytes.Equal(cl.questions, want.questions) || !bytes.Equal(cl.state, extra) {
		t.Fatalf("trailing bytes changed the claims: %d questions, state %x", cl.nQuestions, cl.state)
	}
	if _, ok := cl.asked("z"); ok {
		t.Fatal("a trailing question-shaped state was asked")
	}
}

// TestEnvelopeRefusesBadAnnotations: annotations flagged but absent, none
// (a count of 0), too many, keys out of order or duplicated, an empty key
// and a key or value over the bounds are refused.
func TestEnvelopeRefusesBadAnnotations(t *testing.T) {
	build := func(as []server.StateAnnotation) []byte {
		s := &sealing{issued: 1, expires: 2, annotations: as}
		return envelope(s)
	}
	long := func(n int) string { return string(bytes.Repeat([]byte("k"), n)) }
	many := make([]server.StateAnnotation, server.MaxStateAnnotations+1)
	for i := range many {
		many[i] = server.StateAnnotation{Key: fmt.Sprintf("k%02d", i)}
	}
	for what, as := range map[string][]server.StateAnnotation{
		"out of order": {{Key: "b"}, {Key: "a"}},
		"duplicate":    {{Key: "a"}, {Key: "a"}},
		"empty key":    {{Key: ""}},
		"long key":     {{Key: long(server.MaxStateAnnotationKey + 1)}},
		"long value":   {{Key: "a", Value: long(server.MaxStateAnnotationValue + 1)}},
		"too many":     many,
	} {
		wantRefused(t, what, build(as), reasonEnvelope)
	}
	p := envelope(&sealing{issued: 1, expires: 2})
	p[fixedHeaderLen-1] |= flagAnnotations
	wantRefused(t, "flagged without any", p, reasonEnvelope)
	// The same with a count of 0 written: the rest would parse.
	zero := append(append(bytes.Clone(p[:fixedHeaderLen]), 0), p[fixedHeaderLen:]...)
	wantRefused(t, "a count of 0", zero, reasonEnvelope)
	wantParsed(t, "bounds exactly", build([]server.StateAnnotation{{Key: long(server.MaxStateAnnotationKey), Value: long(server.MaxStateAnnotationValue)}}))
}
