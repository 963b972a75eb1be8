package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/parley-mcp/parley/internal/jsontext"
)

// This file holds what the append-style encoders share: the string, number
// and raw-JSON writers, the pooled buffer, and AppendJSON and Marshal.
// mcpgen writes the encoders of the //mcp:json types with them
// (json_gen.go); the _meta objects, InputRequiredResult and ElicitResult
// keep encoders written by hand.
//
// Each of those types has an appendJSON method that appends exactly what
// json.Marshal would produce for it: members in the same order, strings
// escaped the same way (including encoding/json's HTML escaping of <, > and
// &, and its replacement of invalid UTF-8), raw JSON compacted and escaped
// as encoding/json compacts the output of a Marshaler. Their MarshalJSON
// methods run appendJSON into a pooled buffer; if it fails (raw JSON that is
// not valid, a value json.Marshal rejects), they fall back to the reference
// encoding through encoding/json, so that errors are reported exactly as
// before.

// jsonAppender is implemented by the types with an encoder of their own:
// every //mcp:json type (json_gen.go, written by mcpgen) and the few
// encoded by hand (InputRequiredResult, ElicitResult, the _meta objects).
type jsonAppender interface {
	// appendJSON appends the JSON encoding of the receiver, identical to
	// json.Marshal's, to dst. A nil receiver appends null. On error the
	// returned slice is unspecified.
	appendJSON(dst []byte) ([]byte, error)
}

// AppendJSON appends the JSON encoding of v to dst and returns the extended
// buffer. The bytes appended are exactly those json.Marshal(v) returns, and
// so are the errors; on error dst is returned unchanged.
//
// For pointers to the package's wire types (every params, result, content
// and schema type) and json.RawMessage it encodes directly into dst,
// without encoding/json's reflection, its intermediate buffers or its
// re-validation of every MarshalJSON method's output; any other value goes
// through json.Marshal. A server or client that writes a message into a
// buffer of its own saves an allocation and a copy per message by calling
// AppendJSON rather than json.Marshal.
func AppendJSON(dst []byte, v any) ([]byte, error) {
	n := len(dst)
	out, err := appendValue(dst, v)
	if err == nil {
		return out, nil
	}
	// Let encoding/json report the error, so that it reads as it always has.
	b, err := json.Marshal(v)
	if err != nil {
		return dst[:n], err
	}
	return append(dst[:n], b...), nil
}

// Marshal returns the JSON encoding of v: exactly the bytes and errors of
// json.Marshal(v). For the types AppendJSON encodes by hand it costs one
// allocation, the result, where json.Marshal costs two (it copies what a
// MarshalJSON method returns after checking it); a json.RawMessage is
// checked and compacted without encoding/json's reflection.
func Marshal(v any) ([]byte, error) {
	switch v := v.(type) {
	case jsonAppender:
		bp := getEncBuf()
		if b, err := v.appendJSON((*bp)[:0]); err == nil {
			return finishEncBuf(bp, b), nil
		}
		encBufPool.Put(bp)
	case json.RawMessage:
		// Pre-encoded arguments, on every call of a client that has them.
		bp := getEncBuf()
		if b, err := appendRawMessage((*bp)[:0], v); err == nil {
			return finishEncBuf(bp, b), nil
		}
		encBufPool.Put(bp)
	}
	return json.Marshal(v)
}

// appendValue appends the JSON encoding of v, using the hand-written
// encoders where there is one and json.Marshal elsewhere.
func appendValue(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case jsonAppender:
		return v.appendJSON(dst)
	case json.RawMessage:
		return appendRawMessage(dst, v)
	case string:
		return appendJSONString(dst, v), nil
	case nil:
		return append(dst, "null"...), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// appendRawMessage appends raw as encoding/json encodes a json.RawMessage:
// nil as null, anything else validated, compacted and HTML-escaped.
func appendRawMessage(dst []byte, raw json.RawMessage) ([]byte, error) {
	if raw == nil {
		return append(dst, "null"...), nil
	}
	return appendCompactJSON(dst, raw)
}

// encBufPool holds scratch buffers for MarshalJSON, which returns an exact
// copy of what it appended there: one allocation per call, whatever the size.
var encBufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledBuf bounds the buffers kept in encBufPool.
const maxPooledBuf = 64 << 10

// largeString is the length above which appendJSONString makes room for
// the whole string before it starts.
const largeString = 4 << 10

func getEncBuf() *[]byte { return encBufPool.Get().(*[]byte) }

// finishEncBuf returns a copy of b, an extension of *bp, and puts the buffer
// back in the pool. A buffer too large for the pool is not kept, so it is
// returned as it is (copying it would hold a large result twice), and the
// small one it grew from goes back.
func finishEncBuf(bp *[]byte, b []byte) []byte {
	if cap(b) > maxPooledBuf {
		encBufPool.Put(bp) // b outgrew it: *bp is still the small buffer
		return b
	}
	out := bytes.Clone(b)
	*bp = b[:0]
	encBufPool.Put(bp)
	return out
}

// hexDigits are the digits of \u escapes.
const hexDigits = "0123456789abcdef"

// htmlSafe marks the ASCII bytes that encoding/json writes unescaped in a
// string when it escapes HTML (as json.Marshal does): everything but the
// control characters, the quote, the backslash, <, > and &.
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONString appends s as a JSON string exactly as json.Marshal writes
// it: \b \f \n \r \t and \u00XX for other control characters, <, > and &
// escaped as \u003c, \u003e and \u0026, invalid UTF-8 replaced by \ufffd,
// and U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, s string) []byte {
	if len(s) > largeString {
		// Room for the string and its quotes at once: appending a long
		// string piece by piece between escapes would grow dst by a
		// quarter at a time, allocating several times its size.
		dst = slices.Grow(dst, len(s)+len(s)/64+2)
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if htmlSafe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// compactAttention marks the bytes that make appendCompactJSON rewrite a
// raw value: insignificant whitespace, the HTML characters encoding/json
// escapes and the first byte of U+2028 and U+2029.
var compactAttention = func() (t [256]bool) {
	for _, c := range []byte{' ', '\t', '\n', '\r', '<', '>', '&', 0xE2} {
		t[c] = true
	}
	return t
}()

// appendCompactJSON appends the raw JSON value raw as encoding/json writes
// the output of a Marshaler (or a json.RawMessage): checked, with
// insignificant whitespace removed and <, >, &, U+2028 and U+2029 escaped.
// Raw values that need none of that, the common case, are copied as they
// are.
func appendCompactJSON(dst, raw []byte) ([]byte, error) {
	i := skipSpace(raw, 0)
	end, err := jsontext.SkipValue(raw, i, 0)
	if err != nil {
		return dst, syntaxError(err)
	}
	if j := skipSpace(raw, end); j != len(raw) {
		return dst, syntaxError(&jsontext.SyntaxError{Msg: "unexpected data after value", Offset: j})
	}
	v := raw[i:end]
	clean := true
	for _, c := range v {
		if compactAttention[c] {
			clean = false
			break
		}
	}
	if clean {
		return append(dst, v...), nil
	}
	// v is valid JSON, so strings are well formed and every escape is
	// complete.
	inString := false
	start := 0
	for j := 0; j < len(v); j++ {
		c := v[j]
		if !inString {
			switch c {
			case ' ', '\t', '\n', '\r':
				dst = append(dst, v[start:j]...)
				start = j + 1
			case '"':
				inString = true
			}
			continue
		}
		switch {
		case c == '\\':
			j++ // the escaped byte is never special
		case c == '"':
			inString = false
		case c == '<' || c == '>' || c == '&':
			dst = append(dst, v[start:j]...)
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			start = j + 1
		case c == 0xE2 && j+2 < len(v) && v[j+1] == 0x80 && v[j+2]&^1 == 0xA8:
			dst = append(dst, v[start:j]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[v[j+2]&0xF])
			j += 2
			start = j + 1
		}
	}
	return append(dst, v[start:]...), nil
}

// objAppender appends the members of a JSON object.
type objAppender struct {
	buf []byte
	n   int
}

// key starts a member.
func (w *objAppender) key(k string) {
	if w.n == 0 {
		w.buf = append(w.buf, '{')
	} else {
		w.buf = append(w.buf, ',')
	}
	w.n++
	w.buf = appendJSONString(w.buf, k)
	w.buf = append(w.buf, ':')
}

// str appends a string member, skipping empty values.
func (w *objAppender) str(k, v string) {
	if v != "" {
		w.key(k)
		w.buf = appendJSONString(w.buf, v)
	}
}

// raw appends a member whose value is raw JSON, compacted.
func (w *objAppender) raw(k string, v []byte) error {
	w.key(k)
	var err error
	w.buf, err = appendCompactJSON(w.buf, v)
	return err
}

// value appends a member holding the encoding of v.
func (w *objAppender) value(k string, v jsonAppender) error {
	w.key(k)
	var err error
	w.buf, err = v.appendJSON(w.buf)
	return err
}

// extra appends the members of e in key order, skipping keys for which skip
// is true; an empty value is written as null.
func (w *objAppender) extra(e MetaExtra, skip func(string) bool) error {
	if len(e) == 0 {
		return nil
	}
	var arr [8]string
	keys := arr[:0]
	for k := range e {
		if !skip(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := e[k]
		if len(v) == 0 {
			v = json.RawMessage("null")
		}
		if err := w.raw(k, v); err != nil {
			return err
		}
	}
	return nil
}

func (w *objAppender) finish() []byte {
	if w.n == 0 {
		return append(w.buf, '{', '}')
	}
	return append(w.buf, '}')
}

// appendSortedMap appends m as encoding/json encodes a map with string keys
// (members in key order), each value written by appendValue.
func appendSortedMap[V any](dst []byte, m map[string]V, appendValue func([]byte, V) ([]byte, error)) ([]byte, error) {
	var arr [8]string
	keys := arr[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = appendValue(dst, m[k]); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendMarshal appends json.Marshal(v), for the members that have no
// hand-written encoder.
func appendMarshal(dst []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// appendJSONFloat appends f as encoding/json writes a float of the given
// bit size: the shortest text that reads back as f, in exponent form below
// 1e-6 and from 1e21 on (with a one-digit negative exponent, e-7 not e-07).
// NaN and the infinities have no JSON text: an error, which sends the
// caller to encoding/json for the error it reports.
func appendJSONFloat(dst []byte, f float64, bits int) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, errUnsupportedFloat
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// errUnsupportedFloat is appendJSONFloat's error; callers fall back to
// encoding/json, whose error names the value.
var errUnsupportedFloat = errors.New("mcp: NaN or infinite number")
