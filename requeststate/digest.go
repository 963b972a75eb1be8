package requeststate

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/parley-mcp/parley/internal/jsontext"
)

// The request digest binds a token to the request that earned it: the
// method, the target (tool name, prompt name or resource URI) and the
// arguments. Arguments are digested by meaning, not by spelling, so that a
// client that re-encodes its arguments between rounds (another JSON
// library, another worker) is not refused:
//
//   - white space is ignored;
//   - object members are taken in order of their keys (compared as UTF-8
//     bytes after unescaping);
//   - strings are compared after unescaping: "\u0061" is "a";
//   - numbers are compared by exact decimal value, without going through
//     float64: 1, 1.0, 10e-1 and 1E0 are one number, -0 is 0, and
//     12345678901234567890 stays distinct from 12345678901234567891. A
//     number whose exponent is absurdly large (over 15 digits) is digested
//     by its spelling instead;
//   - absent or null arguments are the empty object.
//
// Two argument texts that digest alike must also be read alike by the
// handler, whatever decoder it uses, or a token verified for one text
// would vouch for what the handler reads from another. Texts decoders read
// differently therefore have no digest at all (jsontext.CheckUnambiguous):
// two members of one object whose names are equal, or equal under case
// folding (Go's encoding/json fills one field from {"amount":1} and
// {"Amount":1000}, the last one winning, so reordering them would change
// the value under an unchanged digest); invalid UTF-8 and escaped lone
// surrogates (decoded to one or several U+FFFD, or kept, or refused). A
// request whose arguments have no digest can neither earn a token nor
// present one.
//
// Nothing else of the request is bound: not _meta (which changes every
// round: capabilities, progress tokens) and not inputResponses (which
// answer the round, and are pinned separately).
//
// What goes into the hash is not JSON but a prefix-free binary form of the
// value: a tag byte per value, strings and numbers terminated by 0x00 0x00
// with 0x00 inside them written as 0x00 0xFF. Two different values can
// therefore never produce the same byte stream.

// Domain-separation prefixes of the hashes in this package.
const (
	domainRequest   = "parley/requeststate/v1/request\x00"
	domainQuestion  = "parley/requeststate/v1/question\x00"
	domainPrincipal = "parley/requeststate/v1/principal\x00"
)

// The grammar is checked by the shared validating scanner
// (internal/jsontext), which refuses what json.Valid refuses and anything
// nested deeper than jsontext.MaxDepth, the limit the JSON-RPC layer puts
// on whole messages: the digest has no parser of its own, only the
// canonical writer below.

var errBadJSON = errors.New("requeststate: arguments are not valid JSON")

// canon writes the canonical form of JSON values into a hash, through a
// small buffer so that the hash sees few, large writes.
type canon struct {
	h   hash.Hash
	n   int
	buf [512]byte
	out [sha256.Size]byte // Sum's destination: on the heap already, with c
}

// canons recycles hashers: a request digests its arguments on the way in
// and again on the way out, and a fresh SHA-256 state per digest would be
// most of the boundary's allocations.
var canons = sync.Pool{New: func() any { return &canon{h: sha256.New()} }}

// getCanon returns a reset canon that has written domain.
func getCanon(domain string) *canon {
	c := canons.Get().(*canon)
	c.h.Reset()
	c.n = 0
	c.writeString(domain)
	return c
}

func putCanon(c *canon) { canons.Put(c) }

func (c *canon) flush() {
	c.h.Write(c.buf[:c.n])
	c.n = 0
}

func (c *canon) byte(b byte) {
	if c.n == len(c.buf) {
		c.flush()
	}
	c.buf[c.n] = b
	c.n++
}

func (c *canon) writeString(s string) {
	for len(s) > 0 {
		if c.n == len(c.buf) {
			c.flush()
		}
		k := copy(c.buf[c.n:], s)
		c.n += k
		s = s[k:]
	}
}

func (c *canon) write(p []byte) {
	for len(p) > 0 {
		if c.n == len(c.buf) {
			c.flush()
		}
		k := copy(c.buf[c.n:], p)
		c.n += k
		p = p[k:]
	}
}

// text writes a terminated text: the bytes of s, with 0x00 escaped.
func (c *canon) text(s []byte) {
	c.escapeZeros(s)
	c.end()
}

func (c *canon) textString(s string) {
	for {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			c.writeString(s)
			break
		}
		c.writeString(s[:i+1])
		c.byte(0xFF)
		s = s[i+1:]
	}
	c.end()
}

func (c *canon) end() { c.byte(0); c.byte(0) }

// sum returns the digest.
func (c *canon) sum() (d [32]byte) {
	c.flush()
	c.h.Sum(c.out[:0])
	return c.out
}

// member is one object member: the spans of its key (quotes excluded) and
// of its value.
type member struct {
	key        []byte
	escaped    bool // the key contains a backslash
	valueStart int
	valueEnd   int
}

// value writes the canonical form of the JSON value at data[i:] and returns
// the index after it.
func (c *canon) value(data []byte, i, depth int) (int, error) {
	i = jsontext.SkipSpace(data, i)
	if i >= len(data) {
		return 0, errBadJSON
	}
	switch data[i] {
	case '{':
		return c.object(data, i, depth)
	case '[':
		if depth >= jsontext.MaxDepth {
			return 0, errBadJSON
		}
		c.byte('[')
		i = jsontext.SkipSpace(data, i+1)
		if i < len(data) && data[i] == ']' {
			c.byte(']')
			return i + 1, nil
		}
		for {
			var err error
			if i, err = c.value(data, i, depth+1); err != nil {
				return 0, err
			}
			i = jsontext.SkipSpace(data, i)
			if i >= len(data) {
				return 0, errBadJSON
			}
			if data[i] == ']' {
				c.byte(']')
				return i + 1, nil
			}
			if data[i] != ',' {
				return 0, errBadJSON
			}
			i++
		}
	case '"':
		end, _, err := jsontext.ScanString(data, i)
		if err != nil {
			return 0, errBadJSON
		}
		c.byte('s')
		c.unescape(data[i+1 : end-1])
		c.end()
		return end, nil
	case 't':
		return c.literal(data, i, 't')
	case 'f':
		return c.literal(data, i, 'f')
	case 'n':
		return c.literal(data, i, 'n')
	default:
		return c.number(data, i)
	}
}

// literal writes true, false or null, whose first byte is tag.
func (c *canon) literal(data []byte, i int, tag byte) (int, error) {
	end, err := jsontext.SkipValue(data, i, 0)
	if err != nil {
		return 0, errBadJSON
	}
	c.byte(tag)
	return end, nil
}

// object writes an object's members in key order. Values are located with
// a validating skip first and written in a second pass, once the order is
// known.
func (c *canon) object(data []byte, i, depth int) (int, error) {
	if depth >= jsontext.MaxDepth {
		return 0, errBadJSON
	}
	var stack [16]member
	ms := stack[:0]
	i = jsontext.SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		i++
	} else {
		for {
			i = jsontext.SkipSpace(data, i)
			if i >= len(data) || data[i] != '"' {
				return 0, errBadJSON
			}
			end, escaped, err := jsontext.ScanString(data, i)
			if err != nil {
				return 0, errBadJSON
			}
			m := member{key: data[i+1 : end-1], escaped: escaped}
			i = jsontext.SkipSpace(data, end)
			if i >= len(data) || data[i] != ':' {
				return 0, errBadJSON
			}
			m.valueStart = jsontext.SkipSpace(data, i+1)
			if m.valueEnd, err = jsontext.SkipValue(data, m.valueStart, depth+1); err != nil {
				return 0, errBadJSON
			}
			ms = append(ms, m)
			i = jsontext.SkipSpace(data, m.valueEnd)
			if i >= len(data) {
				return 0, errBadJSON
			}
			if data[i] == '}' {
				i++
				break
			}
			if data[i] != ',' {
				return 0, errBadJSON
			}
			i++
		}
	}
	if !slices.IsSortedFunc(ms, compareMembers) {
		slices.SortStableFunc(ms, compareMembers)
	}
	c.byte('{')
	for _, m := range ms {
		c.byte('s')
		if m.escaped {
			c.unescape(m.key)
		} else {
			c.escapeZeros(m.key)
		}
		c.end()
		if _, err := c.value(data, m.valueStart, depth+1); err != nil {
			return 0, err
		}
	}
	c.byte('}')
	return i, nil
}

func (c *canon) escapeZeros(s []byte) {
	for {
		i := bytes.IndexByte(s, 0)
		if i < 0 {
			c.write(s)
			return
		}
		c.write(s[:i+1])
		c.byte(0xFF)
		s = s[i+1:]
	}
}

// compareMembers orders members by unescaped key. Keys without escapes,
// nearly all of them, compare in place.
func compareMembers(a, b member) int {
	if !a.escaped && !b.escaped {
		return compareBytes(a.key, b.key)
	}
	return compareBytes(appendUnescaped(nil, a.key), appendUnescaped(nil, b.key))
}

func compareBytes(a, b []byte) int {
	switch {
	case string(a) < string(b):
		return -1
	case string(a) > string(b):
		return 1
	}
	return 0
}

// unescape writes the unescaped bytes of a string body (already validated
// by the scanner), with 0x00 escaped.
func (c *canon) unescape(s []byte) {
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			c.escapeZeros(s)
			return
		}
		c.escapeZeros(s[:i])
		var tmp [8]byte
		out, n := unescapeOne(tmp[:0], s[i:])
		c.escapeZeros(out)
		s = s[i+n:]
	}
}

// appendUnescaped appends the unescaped bytes of a validated string body.
func appendUnescaped(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			dst = append(dst, s[i])
			i++
			continue
		}
		var n int
		dst, n = unescapeOne(dst, s[i:])
		i += n
	}
	return dst
}

// unescapeOne decodes the escape at the start of s (validated by the
// scanner). A surrogate pair becomes its code point; a lone surrogate is
// written in the 3-byte form UTF-8 would give it, so that it stays distinct
// from every real character.
func unescapeOne(dst, s []byte) ([]byte, int) {
	switch s[1] {
	case 'b':
		return append(dst, '\b'), 2
	case 'f':
		return append(dst, '\f'), 2
	case 'n':
		return append(dst, '\n'), 2
	case 'r':
		return append(dst, '\r'), 2
	case 't':
		return append(dst, '\t'), 2
	case 'u':
		r := hex4(s[2:6])
		if r >= 0xD800 && r < 0xDC00 && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if lo := hex4(s[8:12]); lo >= 0xDC00 && lo < 0xE000 {
				return utf8.AppendRune(dst, (r-0xD800)<<10|(lo-0xDC00)+0x10000), 12
			}
		}
		if r >= 0xD800 && r < 0xE000 {
			return append(dst, byte(0xE0|r>>12), byte(0x80|(r>>6)&0x3F), byte(0x80|r&0x3F)), 6
		}
		return utf8.AppendRune(dst, r), 6
	default: // '"', '\\', '/'
		return append(dst, s[1]), 2
	}
}

func hex4(s []byte) rune {
	var r rune
	for _, c := range s {
		r <<= 4
		switch {
		case '0' <= c && c <= '9':
			r |= rune(c - '0')
		case 'a' <= c && c <= 'f':
			r |= rune(c - 'a' + 10)
		default:
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// number writes a number as sign, significant digits and decimal exponent:
// value = digits × 10^exp, with no leading or trailing zeros in digits.
func (c *canon) number(data []byte, i int) (int, error) {
	n, err := jsontext.ScanNumber(data, i)
	if err != nil {
		return 0, errBadJSON
	}
	// The exponent, as written.
	expDigits := data[n.ExpStart:n.ExpEnd]
	for len(expDigits) > 0 && expDigits[0] == '0' {
		expDigits = expDigits[1:]
	}
	if len(expDigits) > 15 {
		c.byte('r')
		c.text(data[n.Start:n.End])
		return n.End, nil
	}
	var exp int64
	for _, d := range expDigits {
		exp = exp*10 + int64(d-'0')
	}
	if n.ExpNeg {
		exp = -exp
	}
	// The digits of integer and fraction, read as one integer: value =
	// digits × 10^(exp - len(fraction)).
	digits := func(k int) byte { // k-th digit of int||frac
		if k < n.IntEnd-n.IntStart {
			return data[n.IntStart+k]
		}
		return data[n.FracStart+k-(n.IntEnd-n.IntStart)]
	}
	total := (n.IntEnd - n.IntStart) + (n.FracEnd - n.FracStart)
	exp -= int64(n.FracEnd - n.FracStart)
	first, last := 0, total
	for first < total && digits(first) == '0' {
		first++
	}
	if first == total {
		c.byte('0') // zero, of either sign
		return n.End, nil
	}
	for digits(last-1) == '0' {
		last--
		exp++
	}
	c.byte('d')
	if n.Neg {
		c.byte('-')
	} else {
		c.byte('+')
	}
	for k := first; k < last; k++ {
		c.byte(digits(k))
	}
	c.byte('e')
	var buf [24]byte
	b := binary.AppendVarint(buf[:0], exp)
	for _, x := range b {
		c.byte(x)
		if x == 0 {
			c.byte(0xFF)
		}
	}
	c.end()
	return n.End, nil
}

// jsonArguments writes tool arguments: absent or null is the empty object.
// Arguments that decoders read differently are refused (see the top of
// this file).
func (c *canon) jsonArguments(raw []byte) error {
	i := jsontext.SkipSpace(raw, 0)
	if i == len(raw) || (len(raw)-i >= 4 && string(raw[i:i+4]) == "null" && jsontext.SkipSpace(raw, i+4) == len(raw)) {
		c.byte('{')
		c.byte('}')
		return nil
	}
	end, err := c.value(raw, i, 0)
	if err != nil {
		return err
	}
	if jsontext.SkipSpace(raw, end) != len(raw) {
		return errBadJSON
	}
	// Checked once the text is known to be valid JSON, which is what the
	// check expects.
	if err := jsontext.CheckUnambiguous(raw); err != nil {
		return fmt.Errorf("%w: %w", errAmbiguous, err)
	}
	return nil
}

var errAmbiguous = errors.New("requeststate: arguments are ambiguous")

// stringMap writes a map of strings (prompt arguments) exactly as the JSON
// object holding the same strings would be written.
func (c *canon) stringMap(m map[string]string) {
	c.byte('{')
	if len(m) > 0 {
		var stack [8]string
		keys := stack[:0]
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			c.byte('s')
			c.textString(k)
			c.byte('s')
			c.textString(m[k])
		}
	}
	c.byte('}')
}
