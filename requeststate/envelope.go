package requeststate

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/parley-mcp/parley/server"
)

// The envelope is the plaintext a Codec seals: the claims that bind a token
// to its time window, request, audience, principal and questions, followed
// by the handler's own state. It is a fixed binary layout rather than JSON
// because it is built and parsed on every round and its parser faces bytes
// that (with a custom codec) nothing but the codec vouches for:
//
//	version      1 byte   envelopeVersion
//	issued       8 bytes  Unix milliseconds, big-endian
//	expires      8 bytes  Unix milliseconds, big-endian
//	request     32 bytes  SHA-256 of method, target and arguments
//	flags        1 byte   bit 0: a principal claim follows; bit 1: an id follows;
//	                      bit 2: annotations follow
//	principal   32 bytes  (if flagged) salt[16] || SHA-256(salt, principal)[:16]
//	id          16 bytes  (if flagged) random: the name single use records
//	annotations (if flagged) uvarint count, then per annotation, in
//	            increasing key order: uvarint key length, key, uvarint
//	            value length, value (server.Request.AnnotateState)
//	audience    uvarint length, then the bytes (length 0: no audience)
//	questions   uvarint count, then per question, in increasing key order:
//	            uvarint key length, key, SHA-256 of the question[:16]
//	state       the rest: the handler's plaintext
//
// The parser checks every length against what is left and refuses trailing
// garbage in the claims, an unknown version or unknown flags.
const (
	envelopeVersion  = 1
	flagPrincipal    = 1 << 0
	flagID           = 1 << 1
	flagAnnotations  = 1 << 2
	idLen            = 16
	digestLen        = 32
	saltLen          = 16
	principalTagLen  = 16
	principalLen     = saltLen + principalTagLen
	questionTagLen   = 16
	fixedHeaderLen   = 1 + 8 + 8 + digestLen + 1
	maxQuestionCount = 1 << 16
)

// claims is a parsed envelope. Its slices point into the plaintext.
type claims struct {
	issued, expires int64
	request         [digestLen]byte
	principal       []byte // salt || tag, or nil
	id              []byte // the single-use id, or nil
	annotations     []byte // the encoded annotations, count excluded, or nil
	audience        []byte
	questions       []byte // the encoded question list, count excluded
	nQuestions      int
	state           []byte

	// principalKey is not in the envelope: the principal the token
	// verified for, set by the boundary before it consumes the token.
	principalKey string
}

// question is one input request of the round a token was issued for.
type question struct {
	key    string
	digest [questionTagLen]byte
}

// sealing is what a new envelope holds. Strings, not byte slices, so that
// the handler's state and the audience are copied once, into the envelope.
type sealing struct {
	issued, expires int64
	request         [digestLen]byte
	principal       *[principalLen]byte // nil: no principal
	id              *StateID            // nil: sealed without single use
	annotations     []server.StateAnnotation
	audience        string
	questions       []question
	state           string
}

// len is the exact length of the envelope, so its buffer is allocated once.
func (s *sealing) len() int {
	n := envelopeLen(len(s.audience), len(s.state), s.principal != nil, s.questions)
	if s.id != nil {
		n += idLen
	}
	if len(s.annotations) > 0 {
		n += uvarintLen(uint64(len(s.annotations)))
		for _, a := range s.annotations {
			n += uvarintLen(uint64(len(a.Key))) + len(a.Key) + uvarintLen(uint64(len(a.Value))) + len(a.Value)
		}
	}
	return n
}

// sortAnnotations returns as, sorted by key, in a copy when it was not
// sorted already (the request's own slice is never reordered).
func sortAnnotations(as []server.StateAnnotation) []server.StateAnnotation {
	byKey := func(a, b server.StateAnnotation) int { return cmp.Compare(a.Key, b.Key) }
	if slices.IsSortedFunc(as, byKey) {
		return as
	}
	as = slices.Clone(as)
	slices.SortFunc(as, byKey)
	return as
}

// appendEnvelope appends the envelope of s to dst.
func appendEnvelope(dst []byte, s *sealing) []byte {
	dst = append(dst, envelopeVersion)
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.issued))
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.expires))
	dst = append(dst, s.request[:]...)
	var flags byte
	if s.principal != nil {
		flags |= flagPrincipal
	}
	if s.id != nil {
		flags |= flagID
	}
	if len(s.annotations) > 0 {
		flags |= flagAnnotations
	}
	dst = append(dst, flags)
	if s.principal != nil {
		dst = append(dst, s.principal[:]...)
	}
	if s.id != nil {
		dst = append(dst, s.id[:]...)
	}
	if len(s.annotations) > 0 {
		dst = binary.AppendUvarint(dst, uint64(len(s.annotations)))
		for _, a := range s.annotations {
			dst = binary.AppendUvarint(dst, uint64(len(a.Key)))
			dst = append(dst, a.Key...)
			dst = binary.AppendUvarint(dst, uint64(len(a.Value)))
			dst = append(dst, a.Value...)
		}
	}
	dst = binary.AppendUvarint(dst, uint64(len(s.audience)))
	dst = append(dst, s.audience...)
	dst = binary.AppendUvarint(dst, uint64(len(s.questions)))
	for _, q := range s.questions {
		dst = binary.AppendUvarint(dst, uint64(len(q.key)))
		dst = append(dst, q.key...)
		dst = append(dst, q.digest[:]...)
	}
	return append(dst, s.state...)
}

// envelopeLen is the exact length appendEnvelope will produce, so the
// buffer is allocated once.
func envelopeLen(audience, state int, principal bool, qs []question) int {
	n := fixedHeaderLen + uvarintLen(uint64(audience)) + audience + uvarintLen(uint64(len(qs))) + state
	if principal {
		n += principalLen
	}
	for _, q := range qs {
		n += uvarintLen(uint64(len(q.key))) + len(q.key) + questionTagLen
	}
	return n
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// parseEnvelope parses plaintext into cl. The reason is "" on success.
func parseEnvelope(p []byte, cl *claims) string {
	if len(p) < 1 {
		return reasonEnvelope
	}
	if p[0] != envelopeVersion {
		return reasonVersion
	}
	if len(p) < fixedHeaderLen {
		return reasonEnvelope
	}
	cl.issued = int64(binary.BigEndian.Uint64(p[1:9]))
	cl.expires = int64(binary.BigEndian.Uint64(p[9:17]))
	copy(cl.request[:], p[17:17+digestLen])
	flags := p[17+digestLen]
	p = p[fixedHeaderLen:]
	if flags&^(flagPrincipal|flagID|flagAnnotations) != 0 {
		return reasonEnvelope
	}
	if flags&flagPrincipal != 0 {
		if len(p) < principalLen {
			return reasonEnvelope
		}
		cl.principal, p = p[:principalLen], p[principalLen:]
	}
	if flags&flagID != 0 {
		if len(p) < idLen {
			return reasonEnvelope
		}
		cl.id, p = p[:idLen], p[idLen:]
	}
	if flags&flagAnnotations != 0 {
		var ok bool
		if cl.annotations, p, ok = parseAnnotations(p); !ok {
			return reasonEnvelope
		}
	}
	var ok bool
	if cl.audience, p, ok = lengthPrefixed(p); !ok {
		return reasonEnvelope
	}
	count, n := binary.Uvarint(p)
	if n <= 0 || count > maxQuestionCount {
		return reasonEnvelope
	}
	p = p[n:]
	start := p
	var prev []byte
	for i := range int(count) {
		var key []byte
		if key, p, ok = lengthPrefixed(p); !ok || len(p) < questionTagLen {
			return reasonEnvelope
		}
		if i > 0 && string(key) <= string(prev) {
			return reasonEnvelope // keys sorted and unique, as sealed
		}
		prev = key
		p = p[questionTagLen:]
	}
	cl.questions = start[:len(start)-len(p)]
	cl.nQuestions = int(count)
	cl.state = p
	return ""
}

// lengthPrefixed splits a uvarint-length-prefixed field off p.
func lengthPrefixed(p []byte) (field, rest []byte, ok bool) {
	l, n := binary.Uvarint(p)
	if n <= 0 || l > uint64(len(p)-n) {
		return nil, nil, false
	}
	return p[n : n+int(l)], p[n+int(l):], true
}

// eachQuestion calls f for every question of a parsed envelope, in key
// order, until f returns false.
func (cl *claims) eachQuestion(f func(key []byte, digest []byte) bool) {
	p := cl.questions
	for range cl.nQuestions {
		key, rest, _ := lengthPrefixed(p) // validated by parseEnvelope
		if !f(key, rest[:questionTagLen]) {
			return
		}
		p = rest[questionTagLen:]
	}
}

// asked reports whether key was among the questions.
func (cl *claims) asked(key string) (digest []byte, ok bool) {
	cl.eachQuestion(func(k, d []byte) bool {
		if string(k) == key {
			digest, ok = d, true
			return false
		}
		return string(k) < key // sorted: stop once past key
	})
	return digest, ok
}

// parseAnnotations splits the annotations off p: at least one, at most
// server.MaxStateAnnotations, keys sorted and unique, within the bounds
// AnnotateState enforces.
func parseAnnotations(p []byte) (annotations, rest []byte, ok bool) {
	count, n := binary.Uvarint(p)
	if n <= 0 || count == 0 || count > server.MaxStateAnnotations {
		return nil, nil, false
	}
	p = p[n:]
	start := p
	var prev []byte
	for i := range int(count) {
		var key, value []byte
		if key, p, ok = lengthPrefixed(p); !ok || len(key) == 0 || len(key) > server.MaxStateAnnotationKey {
			return nil, nil, false
		}
		if i > 0 && !(string(prev) < string(key)) {
			return nil, nil, false // sorted and unique, as sealed
		}
		prev = key
		if value, p, ok = lengthPrefixed(p); !ok || len(value) > server.MaxStateAnnotationValue {
			return nil, nil, false
		}
	}
	return start[:len(start)-len(p)], p, true
}

// annotation returns the value sealed under key in the parsed annotations.
func (cl *claims) annotation(key string) (string, bool) {
	p := cl.annotations
	for len(p) > 0 {
		k, rest, ok := lengthPrefixed(p)
		if !ok {
			return "", false
		}
		v, rest, ok := lengthPrefixed(rest)
		if !ok {
			return "", false
		}
		if string(k) == key {
			return string(v), true
		}
		p = rest
	}
	return "", false
}
