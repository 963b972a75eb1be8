package requeststate

// This file keeps the argument canonicaliser as it was before it moved onto
// the shared scanner (internal/jsontext), as a test-only oracle: the digest
// of every argument text the old parser accepted must not change
// (TestDigestMatchesOldParser, FuzzDigestMatchesOldParser).

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/parley-mcp/parley/internal/jsontext"
)

// oldRequestDigest is requestDigest of a tools/call with raw arguments, as
// the old canonicaliser computed it.
func oldRequestDigest(name string, raw []byte) (d [digestLen]byte, err error) {
	c := &oldCanon{h: sha256.New()}
	c.writeString(domainRequest)
	c.textString("tools/call")
	c.textString(name)
	if err := c.jsonArguments(raw); err != nil {
		return d, err
	}
	s := c.sum()
	copy(d[:], s[:])
	return d, nil
}

// oldMaxDepth bounds the nesting of digested arguments. The JSON-RPC layer
// already refuses messages nested deeper than 128.
const oldMaxDepth = 256

var errOldBadJSON = errors.New("requeststate: arguments are not valid JSON")

// oldCanon writes the canonical form of JSON values into a hash, through a
// small buffer so that the hash sees few, large writes.
type oldCanon struct {
	h   hash.Hash
	n   int
	buf [512]byte
	out [sha256.Size]byte // Sum's destination: on the heap already, with c
}

func (c *oldCanon) flush() {
	c.h.Write(c.buf[:c.n])
	c.n = 0
}

func (c *oldCanon) byte(b byte) {
	if c.n == len(c.buf) {
		c.flush()
	}
	c.buf[c.n] = b
	c.n++
}

func (c *oldCanon) writeString(s string) {
	for len(s) > 0 {
		if c.n == len(c.buf) {
			c.flush()
		}
		k := copy(c.buf[c.n:], s)
		c.n += k
		s = s[k:]
	}
}

func (c *oldCanon) write(p []byte) {
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
func (c *oldCanon) text(s []byte) {
	c.escapeZeros(s)
	c.end()
}

func (c *oldCanon) textString(s string) {
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

func (c *oldCanon) end() { c.byte(0); c.byte(0) }

// sum returns the digest.
func (c *oldCanon) sum() (d [32]byte) {
	c.flush()
	c.h.Sum(c.out[:0])
	return c.out
}

// oldMember is one object oldMember: the spans of its key (quotes excluded) and
// of its value.
type oldMember struct {
	key        []byte
	escaped    bool // the key contains a backslash
	valueStart int
	valueEnd   int
}

// value writes the canonical form of the JSON value at data[i:] and returns
// the index after it.
func (c *oldCanon) value(data []byte, i, depth int) (int, error) {
	i = oldSkipSpace(data, i)
	if i >= len(data) {
		return 0, errOldBadJSON
	}
	switch data[i] {
	case '{':
		return c.object(data, i, depth)
	case '[':
		if depth >= oldMaxDepth {
			return 0, errOldBadJSON
		}
		c.byte('[')
		i = oldSkipSpace(data, i+1)
		if i < len(data) && data[i] == ']' {
			c.byte(']')
			return i + 1, nil
		}
		for {
			var err error
			if i, err = c.value(data, i, depth+1); err != nil {
				return 0, err
			}
			i = oldSkipSpace(data, i)
			if i >= len(data) {
				return 0, errOldBadJSON
			}
			if data[i] == ']' {
				c.byte(']')
				return i + 1, nil
			}
			if data[i] != ',' {
				return 0, errOldBadJSON
			}
			i++
		}
	case '"':
		end, _, ok := oldScanString(data, i)
		if !ok {
			return 0, errOldBadJSON
		}
		c.byte('s')
		c.unescape(data[i+1 : end-1])
		c.end()
		return end, nil
	case 't':
		return c.literal(data, i, "true", 't')
	case 'f':
		return c.literal(data, i, "false", 'f')
	case 'n':
		return c.literal(data, i, "null", 'n')
	default:
		return c.number(data, i)
	}
}

func (c *oldCanon) literal(data []byte, i int, word string, tag byte) (int, error) {
	if len(data)-i < len(word) || string(data[i:i+len(word)]) != word {
		return 0, errOldBadJSON
	}
	c.byte(tag)
	return i + len(word), nil
}

// object writes an object's members in key order. Values are located with
// a validating skip first and written in a second pass, once the order is
// known.
func (c *oldCanon) object(data []byte, i, depth int) (int, error) {
	if depth >= oldMaxDepth {
		return 0, errOldBadJSON
	}
	var stack [16]oldMember
	ms := stack[:0]
	i = oldSkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		i++
	} else {
		for {
			i = oldSkipSpace(data, i)
			if i >= len(data) || data[i] != '"' {
				return 0, errOldBadJSON
			}
			end, escaped, ok := oldScanString(data, i)
			if !ok {
				return 0, errOldBadJSON
			}
			m := oldMember{key: data[i+1 : end-1], escaped: escaped}
			i = oldSkipSpace(data, end)
			if i >= len(data) || data[i] != ':' {
				return 0, errOldBadJSON
			}
			m.valueStart = oldSkipSpace(data, i+1)
			var err error
			if m.valueEnd, err = oldSkipValue(data, m.valueStart, depth+1); err != nil {
				return 0, err
			}
			ms = append(ms, m)
			i = oldSkipSpace(data, m.valueEnd)
			if i >= len(data) {
				return 0, errOldBadJSON
			}
			if data[i] == '}' {
				i++
				break
			}
			if data[i] != ',' {
				return 0, errOldBadJSON
			}
			i++
		}
	}
	if !slices.IsSortedFunc(ms, oldCompareMembers) {
		slices.SortStableFunc(ms, oldCompareMembers)
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

func (c *oldCanon) escapeZeros(s []byte) {
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

// oldCompareMembers orders members by unescaped key. Keys without escapes,
// nearly all of them, compare in place.
func oldCompareMembers(a, b oldMember) int {
	if !a.escaped && !b.escaped {
		return oldCompareBytes(a.key, b.key)
	}
	return oldCompareBytes(oldAppendUnescaped(nil, a.key), oldAppendUnescaped(nil, b.key))
}

func oldCompareBytes(a, b []byte) int {
	switch {
	case string(a) < string(b):
		return -1
	case string(a) > string(b):
		return 1
	}
	return 0
}

// unescape writes the unescaped bytes of a string body (already validated
// by oldScanString), with 0x00 escaped.
func (c *oldCanon) unescape(s []byte) {
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			c.escapeZeros(s)
			return
		}
		c.escapeZeros(s[:i])
		var tmp [8]byte
		out, n := oldUnescapeOne(tmp[:0], s[i:])
		c.escapeZeros(out)
		s = s[i+n:]
	}
}

// oldAppendUnescaped appends the unescaped bytes of a validated string body.
func oldAppendUnescaped(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			dst = append(dst, s[i])
			i++
			continue
		}
		var n int
		dst, n = oldUnescapeOne(dst, s[i:])
		i += n
	}
	return dst
}

// oldUnescapeOne decodes the escape at the start of s (validated by
// oldScanString). A surrogate pair becomes its code point; a lone surrogate is
// written in the 3-byte form UTF-8 would give it, so that it stays distinct
// from every real character.
func oldUnescapeOne(dst, s []byte) ([]byte, int) {
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
		r := oldHex4(s[2:6])
		if r >= 0xD800 && r < 0xDC00 && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if lo := oldHex4(s[8:12]); lo >= 0xDC00 && lo < 0xE000 {
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

func oldHex4(s []byte) rune {
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

func oldIsHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// oldScanString validates the string starting at data[i] (a quote) and
// returns the index after its closing quote and whether it has escapes.
func oldScanString(data []byte, i int) (end int, escaped, ok bool) {
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return j + 1, escaped, true
		case c == '\\':
			escaped = true
			if j+1 >= len(data) {
				return 0, false, false
			}
			switch data[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if j+5 >= len(data) || !oldIsHex(data[j+2]) || !oldIsHex(data[j+3]) || !oldIsHex(data[j+4]) || !oldIsHex(data[j+5]) {
					return 0, false, false
				}
				j += 5
			default:
				return 0, false, false
			}
		case c < 0x20:
			return 0, false, false
		}
	}
	return 0, false, false
}

// oldSkipValue validates the value at data[i] and returns the index after it.
func oldSkipValue(data []byte, i, depth int) (int, error) {
	i = oldSkipSpace(data, i)
	if i >= len(data) {
		return 0, errOldBadJSON
	}
	switch data[i] {
	case '{', '[':
		if depth >= oldMaxDepth {
			return 0, errOldBadJSON
		}
		closer := byte('}')
		if data[i] == '[' {
			closer = ']'
		}
		object := closer == '}'
		i = oldSkipSpace(data, i+1)
		if i < len(data) && data[i] == closer {
			return i + 1, nil
		}
		for {
			i = oldSkipSpace(data, i)
			if object {
				if i >= len(data) || data[i] != '"' {
					return 0, errOldBadJSON
				}
				end, _, ok := oldScanString(data, i)
				if !ok {
					return 0, errOldBadJSON
				}
				i = oldSkipSpace(data, end)
				if i >= len(data) || data[i] != ':' {
					return 0, errOldBadJSON
				}
				i++
			}
			var err error
			if i, err = oldSkipValue(data, i, depth+1); err != nil {
				return 0, err
			}
			i = oldSkipSpace(data, i)
			if i >= len(data) {
				return 0, errOldBadJSON
			}
			if data[i] == closer {
				return i + 1, nil
			}
			if data[i] != ',' {
				return 0, errOldBadJSON
			}
			i++
		}
	case '"':
		end, _, ok := oldScanString(data, i)
		if !ok {
			return 0, errOldBadJSON
		}
		return end, nil
	case 't':
		return oldSkipWord(data, i, "true")
	case 'f':
		return oldSkipWord(data, i, "false")
	case 'n':
		return oldSkipWord(data, i, "null")
	}
	n, ok := oldScanNumber(data, i)
	if !ok {
		return 0, errOldBadJSON
	}
	return n.end, nil
}

func oldSkipWord(data []byte, i int, word string) (int, error) {
	if len(data)-i < len(word) || string(data[i:i+len(word)]) != word {
		return 0, errOldBadJSON
	}
	return i + len(word), nil
}

func oldSkipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// oldNumberSpan is a validated JSON number: the spans of its integer and
// fraction digits and of its exponent digits.
type oldNumberSpan struct {
	neg                bool
	intStart, intEnd   int
	fracStart, fracEnd int
	expNeg             bool
	expStart, expEnd   int
	start, end         int
}

// oldScanNumber validates the JSON number at data[i].
func oldScanNumber(data []byte, i int) (oldNumberSpan, bool) {
	n := oldNumberSpan{start: i}
	if i < len(data) && data[i] == '-' {
		n.neg = true
		i++
	}
	n.intStart = i
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && '1' <= data[i] && data[i] <= '9':
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
	default:
		return n, false
	}
	n.intEnd = i
	n.fracStart, n.fracEnd = i, i
	if i < len(data) && data[i] == '.' {
		i++
		n.fracStart = i
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
		if i == n.fracStart {
			return n, false
		}
		n.fracEnd = i
	}
	n.expStart, n.expEnd = i, i
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			n.expNeg = data[i] == '-'
			i++
		}
		n.expStart = i
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
		if i == n.expStart {
			return n, false
		}
		n.expEnd = i
	}
	n.end = i
	return n, true
}

// number writes a number as sign, significant digits and decimal exponent:
// value = digits × 10^exp, with no leading or trailing zeros in digits.
func (c *oldCanon) number(data []byte, i int) (int, error) {
	n, ok := oldScanNumber(data, i)
	if !ok {
		return 0, errOldBadJSON
	}
	// The exponent, as written.
	expDigits := data[n.expStart:n.expEnd]
	for len(expDigits) > 0 && expDigits[0] == '0' {
		expDigits = expDigits[1:]
	}
	if len(expDigits) > 15 {
		c.byte('r')
		c.text(data[n.start:n.end])
		return n.end, nil
	}
	var exp int64
	for _, d := range expDigits {
		exp = exp*10 + int64(d-'0')
	}
	if n.expNeg {
		exp = -exp
	}
	// The digits of integer and fraction, read as one integer: value =
	// digits × 10^(exp - len(fraction)).
	digits := func(k int) byte { // k-th digit of int||frac
		if k < n.intEnd-n.intStart {
			return data[n.intStart+k]
		}
		return data[n.fracStart+k-(n.intEnd-n.intStart)]
	}
	total := (n.intEnd - n.intStart) + (n.fracEnd - n.fracStart)
	exp -= int64(n.fracEnd - n.fracStart)
	first, last := 0, total
	for first < total && digits(first) == '0' {
		first++
	}
	if first == total {
		c.byte('0') // zero, of either sign
		return n.end, nil
	}
	for digits(last-1) == '0' {
		last--
		exp++
	}
	c.byte('d')
	if n.neg {
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
	return n.end, nil
}

// jsonArguments writes tool arguments: absent or null is the empty object.
// Arguments that decoders read differently are refused (see the top of
// this file).
func (c *oldCanon) jsonArguments(raw []byte) error {
	i := oldSkipSpace(raw, 0)
	if i == len(raw) || (len(raw)-i >= 4 && string(raw[i:i+4]) == "null" && oldSkipSpace(raw, i+4) == len(raw)) {
		c.byte('{')
		c.byte('}')
		return nil
	}
	end, err := c.value(raw, i, 0)
	if err != nil {
		return err
	}
	if oldSkipSpace(raw, end) != len(raw) {
		return errOldBadJSON
	}
	// Checked once the text is known to be valid JSON, which is what the
	// check expects.
	if err := jsontext.CheckUnambiguous(raw); err != nil {
		return fmt.Errorf("%w: %w", errAmbiguous, err)
	}
	return nil
}
