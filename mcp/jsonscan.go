package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"unicode/utf8"
)

var (
	stringType = reflect.TypeFor[string]()
	boolType   = reflect.TypeFor[bool]()
)

// This file holds a small JSON scanner used by the hand-written decoders of
// the types that are decoded on every request (_meta, tools/call params,
// client capabilities) or every result (tools/call, prompts/get and
// resources/read results, text content, serverInfo) and by the union
// decoders that must look at one member (a discriminator) before choosing a
// Go type.
//
// It walks an object's members (or an array's elements) in place,
// validating the grammar as it goes, and hands back the key and the raw
// value of each member as sub-slices of the input. Nothing is allocated
// unless a key contains escapes.
//
// The decoders that replace encoding/json for a struct keep its rules, so
// that they accept exactly the same inputs: member names match
// case-insensitively when they match no field exactly (foldKey), a null
// member leaves a string, number or bool field alone, a later duplicate
// member wins, and malformed JSON anywhere is reported before a value of
// the wrong type.

// maxDepth bounds nesting, as encoding/json does.
const maxDepth = 10000

// syntaxError reports malformed JSON found by the scanner.
type syntaxError struct {
	msg string
	off int
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("mcp: invalid JSON at offset %d: %s", e.off, e.msg)
}

// objectIter iterates over the members of one JSON object:
//
//	it := newObjectIter(data)
//	for it.next() {
//		switch string(it.key) { ... it.val ... }
//	}
//	if it.err != nil { ... }
//
// The whole input must be exactly one object, optionally surrounded by
// whitespace. Keys are unescaped; values are raw JSON texts, validated.
type objectIter struct {
	data  []byte
	pos   int
	state uint8 // 0 before '{', 1 inside, 2 done
	key   []byte
	val   []byte
	err   error
}

func newObjectIter(data []byte) objectIter { return objectIter{data: data} }

func (it *objectIter) fail(msg string, off int) bool {
	it.err = &syntaxError{msg: msg, off: off}
	it.state = 2
	return false
}

// next advances to the next member and reports whether there is one.
func (it *objectIter) next() bool {
	d := it.data
	switch it.state {
	case 2:
		return false
	case 0:
		i := skipSpace(d, 0)
		if i >= len(d) || d[i] != '{' {
			if bytes.HasPrefix(d[i:], []byte("null")) {
				return it.fail("expected an object, found null", i)
			}
			return it.fail("expected an object", i)
		}
		i = skipSpace(d, i+1)
		if i < len(d) && d[i] == '}' {
			return it.finish(i + 1)
		}
		it.pos = i
		it.state = 1
	default:
		i := skipSpace(d, it.pos)
		if i >= len(d) {
			return it.fail("unexpected end of input in object", i)
		}
		switch d[i] {
		case '}':
			return it.finish(i + 1)
		case ',':
			it.pos = skipSpace(d, i+1)
		default:
			return it.fail("expected ',' or '}' after object member", i)
		}
	}
	// Parse one member at it.pos.
	i := it.pos
	if i >= len(d) || d[i] != '"' {
		return it.fail("expected a string key", i)
	}
	end, esc, err := scanString(d, i)
	if err != nil {
		it.err, it.state = err, 2
		return false
	}
	if esc || !utf8.Valid(d[i+1:end-1]) {
		// Escapes, or invalid UTF-8 that encoding/json would replace.
		var s string
		if err := json.Unmarshal(d[i:end], &s); err != nil {
			return it.fail("bad key: "+err.Error(), i)
		}
		it.key = []byte(s)
	} else {
		it.key = d[i+1 : end-1]
	}
	i = skipSpace(d, end)
	if i >= len(d) || d[i] != ':' {
		return it.fail("expected ':' after object key", i)
	}
	i = skipSpace(d, i+1)
	vend, err := skipValue(d, i, 1) // inside the object: one level deep
	if err != nil {
		it.err, it.state = err, 2
		return false
	}
	it.val = d[i:vend]
	it.pos = vend
	return true
}

// finish ends the iteration at offset i (just after the closing brace),
// checking that only whitespace follows.
func (it *objectIter) finish(i int) bool {
	it.state = 2
	if j := skipSpace(it.data, i); j != len(it.data) {
		return it.fail("unexpected data after object", j)
	}
	return false
}

func skipSpace(d []byte, i int) int {
	for i < len(d) {
		switch d[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the offset just past the JSON value starting at d[i].
func skipValue(d []byte, i, depth int) (int, error) {
	if i >= len(d) {
		return i, &syntaxError{msg: "unexpected end of input", off: i}
	}
	switch c := d[i]; {
	case c == '"':
		end, _, err := scanString(d, i)
		return end, err
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return i, &syntaxError{msg: "exceeded max depth", off: i}
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		j := skipSpace(d, i+1)
		if j < len(d) && d[j] == closer {
			return j + 1, nil
		}
		for {
			if c == '{' {
				if j >= len(d) || d[j] != '"' {
					return j, &syntaxError{msg: "expected a string key", off: j}
				}
				end, _, err := scanString(d, j)
				if err != nil {
					return end, err
				}
				j = skipSpace(d, end)
				if j >= len(d) || d[j] != ':' {
					return j, &syntaxError{msg: "expected ':' after object key", off: j}
				}
				j = skipSpace(d, j+1)
			}
			end, err := skipValue(d, j, depth+1)
			if err != nil {
				return end, err
			}
			j = skipSpace(d, end)
			if j >= len(d) {
				return j, &syntaxError{msg: "unexpected end of input", off: j}
			}
			if d[j] == closer {
				return j + 1, nil
			}
			if d[j] != ',' {
				return j, &syntaxError{msg: "expected ',' or closing bracket", off: j}
			}
			j = skipSpace(d, j+1)
		}
	case c == 't':
		return skipLiteral(d, i, "true")
	case c == 'f':
		return skipLiteral(d, i, "false")
	case c == 'n':
		return skipLiteral(d, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return scanNumber(d, i)
	default:
		return i, &syntaxError{msg: fmt.Sprintf("invalid character %q looking for a value", c), off: i}
	}
}

func skipLiteral(d []byte, i int, lit string) (int, error) {
	if len(d)-i < len(lit) || string(d[i:i+len(lit)]) != lit {
		return i, &syntaxError{msg: "invalid literal", off: i}
	}
	return i + len(lit), nil
}

// scanString returns the offset just past the string starting at d[i] (a
// quote), and whether it contains escapes.
func scanString(d []byte, i int) (end int, escaped bool, err error) {
	for j := i + 1; j < len(d); j++ {
		// Skip the plain bytes, the common case, in a tight loop.
		for j < len(d) && plainStringByte[d[j]] {
			j++
		}
		if j >= len(d) {
			break
		}
		switch c := d[j]; {
		case c == '"':
			return j + 1, escaped, nil
		case c == '\\':
			escaped = true
			j++
			if j >= len(d) {
				break
			}
			switch d[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(d)-j < 5 || !isHex(d[j+1]) || !isHex(d[j+2]) || !isHex(d[j+3]) || !isHex(d[j+4]) {
					return j, false, &syntaxError{msg: "invalid \\u escape in string", off: j}
				}
				j += 4
			default:
				return j, false, &syntaxError{msg: "invalid escape in string", off: j}
			}
		case c < 0x20:
			return j, false, &syntaxError{msg: "control character in string", off: j}
		}
	}
	return len(d), false, &syntaxError{msg: "unterminated string", off: i}
}

// plainStringByte marks the bytes that need no attention inside a string:
// everything but the quote, the backslash and control characters.
var plainStringByte = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// scanNumber returns the offset just past the number starting at d[i].
func scanNumber(d []byte, i int) (int, error) {
	start := i
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	default:
		return i, &syntaxError{msg: "invalid number", off: start}
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || !isDigit(d[i]) {
			return i, &syntaxError{msg: "invalid number", off: start}
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || !isDigit(d[i]) {
			return i, &syntaxError{msg: "invalid number", off: start}
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	return i, nil
}

// isNullJSON reports whether raw is the literal null (ignoring whitespace).
func isNullJSON(raw []byte) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// isJSONNullText reports whether data is the literal null surrounded only
// by JSON whitespace (isNullJSON also trims \f and \v, which encoding/json
// rejects).
func isJSONNullText(data []byte) bool {
	i := skipSpace(data, 0)
	return len(data)-i >= 4 && string(data[i:i+4]) == "null" && skipSpace(data, i+4) == len(data)
}

// jsonKind returns the first significant byte of raw, or 0 when raw is empty.
func jsonKind(raw []byte) byte {
	if i := skipSpace(raw, 0); i < len(raw) {
		return raw[i]
	}
	return 0
}

// decodeString decodes a JSON string value. Plain ASCII or UTF-8 without
// escapes takes a fast path with a single allocation. null decodes to "",
// as encoding/json does.
func decodeString(raw []byte) (string, error) {
	if string(raw) == "null" {
		return "", nil
	}
	if len(raw) < 2 || raw[0] != '"' {
		return "", &json.UnmarshalTypeError{Value: describe(raw), Type: stringType}
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// decodeBool decodes a JSON boolean value; null decodes to false.
func decodeBool(raw []byte) (bool, error) {
	switch string(raw) {
	case "true":
		return true, nil
	case "false", "null":
		return false, nil
	}
	return false, &json.UnmarshalTypeError{Value: describe(raw), Type: boolType}
}

// cloneRaw copies raw so the result does not alias a caller's buffer.
func cloneRaw(raw []byte) json.RawMessage {
	return append(json.RawMessage(nil), raw...)
}

// describe names the JSON kind of raw for error messages.
func describe(raw []byte) string {
	switch jsonKind(raw) {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	case 0:
		return "nothing"
	default:
		return "number"
	}
}

// peekMember returns the raw value of the top-level member key of the JSON
// object raw, or nil when there is none. It stops at the first match, so the
// rest of the object is not validated; callers decode raw fully afterwards.
func peekMember(raw []byte, key string) ([]byte, error) {
	it := newObjectIter(raw)
	for it.next() {
		if string(it.key) == key {
			return it.val, nil
		}
	}
	return nil, it.err
}

// peekString is peekMember for a member that must be a string when present.
// It reports whether the member was present.
func peekString(raw []byte, key string) (string, bool, error) {
	v, err := peekMember(raw, key)
	if err != nil || v == nil {
		return "", false, err
	}
	s, err := decodeString(v)
	if err != nil {
		return "", true, fmt.Errorf("mcp: member %q: %w", key, err)
	}
	return s, true, nil
}

// prependMember returns the JSON object b with member (a `"key":value`
// text) inserted first. It is how variant types write their discriminator.
func prependMember(member string, b []byte, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("mcp: internal error: expected an object, got %s", b)
	}
	out := make([]byte, 0, len(b)+len(member)+2)
	out = append(out, '{')
	out = append(out, member...)
	if len(b) > 2 {
		out = append(out, ',')
	}
	return append(out, b[1:]...), nil
}

// arrayIter iterates over the elements of one JSON array, as objectIter
// does over an object's members:
//
//	it := newArrayIter(data)
//	for it.next() { ... it.val ... }
//	if it.err != nil { ... }
//
// The whole input must be exactly one array, optionally surrounded by
// whitespace. Values are raw JSON texts, validated.
type arrayIter struct {
	data  []byte
	pos   int
	state uint8 // 0 before '[', 1 inside, 2 done
	val   []byte
	err   error
}

func newArrayIter(data []byte) arrayIter { return arrayIter{data: data} }

func (it *arrayIter) fail(msg string, off int) bool {
	it.err = &syntaxError{msg: msg, off: off}
	it.state = 2
	return false
}

// next advances to the next element and reports whether there is one.
func (it *arrayIter) next() bool {
	d := it.data
	switch it.state {
	case 2:
		return false
	case 0:
		i := skipSpace(d, 0)
		if i >= len(d) || d[i] != '[' {
			return it.fail("expected an array", i)
		}
		i = skipSpace(d, i+1)
		if i < len(d) && d[i] == ']' {
			return it.finish(i + 1)
		}
		it.pos = i
		it.state = 1
	default:
		i := skipSpace(d, it.pos)
		if i >= len(d) {
			return it.fail("unexpected end of input in array", i)
		}
		switch d[i] {
		case ']':
			return it.finish(i + 1)
		case ',':
			it.pos = skipSpace(d, i+1)
		default:
			return it.fail("expected ',' or ']' after array element", i)
		}
	}
	end, err := skipValue(d, it.pos, 1)
	if err != nil {
		it.err, it.state = err, 2
		return false
	}
	it.val = d[it.pos:end]
	it.pos = end
	return true
}

func (it *arrayIter) finish(i int) bool {
	it.state = 2
	if j := skipSpace(it.data, i); j != len(it.data) {
		return it.fail("unexpected data after array", j)
	}
	return false
}

// strArena hands out the string values of one JSON text as substrings of a
// single copy of the text, made on first need: decoding an object with
// several strings (a tool result's text and its serverInfo, say) then costs
// one allocation instead of one per string. The strings keep the whole copy
// alive, so decoders use an arena only for small texts (see arenaMax) or
// for objects made mostly of strings. Values with escapes or invalid UTF-8,
// and values that are not sub-slices of the text, are decoded on their own.
// A nil *strArena decodes every string on its own.
type strArena struct {
	src  []byte
	s    string
	made bool
}

// arenaMax is the largest text whose strings decoders take from one arena.
// Beyond it, a small string kept from a large text (a name beside a big
// structuredContent) would keep the whole text alive.
const arenaMax = 4 << 10

// newArena returns an arena for data when it is small enough to share.
func newArena(data []byte) *strArena {
	if len(data) > arenaMax {
		return nil
	}
	return &strArena{src: data}
}

// str decodes the JSON string value v (null gives ""), as decodeString does.
func (a *strArena) str(v []byte) (string, error) {
	if a != nil && len(v) >= 2 && v[0] == '"' {
		if off, ok := a.offset(v); ok {
			body := v[1 : len(v)-1]
			if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
				if !a.made {
					a.s, a.made = string(a.src), true
				}
				return a.s[off+1 : off+len(v)-1], nil
			}
		}
	}
	return decodeString(v)
}

// offset returns where v starts in a.src, if v is a sub-slice of it.
func (a *strArena) offset(v []byte) (int, bool) {
	off := cap(a.src) - cap(v)
	if len(v) == 0 || off < 0 || off+len(v) > len(a.src) {
		return 0, false
	}
	return off, &a.src[off] == &v[0]
}

// decodeMembers walks the members of the object data for a one-pass
// decoder that keeps encoding/json's rules for a struct: each member is
// named by its field in keys, exactly or else under case folding (members
// that match no field are skipped), and handed to member. After the first
// error member returns, values are no longer decoded but the rest is still
// scanned: fieldErr is that first error, wrapped with what and the field;
// err reports malformed JSON and takes precedence. When rt is not nil it
// receives the raw value of the last member named exactly "resultType",
// for the result decoders to classify, even after a field error.
func decodeMembers(data []byte, what string, keys []string, rt *[]byte, member func(key string, v []byte) error) (fieldErr, err error) {
	it := newObjectIter(data)
	for it.next() {
		key := exactKey(it.key, keys)
		if key == "" {
			if key = foldKey(it.key, keys); key == "" {
				continue
			}
		} else if rt != nil && key == "resultType" {
			*rt = it.val
		}
		if fieldErr != nil {
			continue
		}
		if ferr := member(key, it.val); ferr != nil {
			fieldErr = fmt.Errorf("mcp: %s %q: %w", what, key, ferr)
		}
	}
	return fieldErr, it.err
}

// exactKey returns the name in names that key equals exactly, or "". The
// name, not key, is what decoders keep: it is a constant, so errors that
// quote it allocate nothing for it.
func exactKey(key []byte, names []string) string {
	for _, n := range names {
		if string(key) == n {
			return n
		}
	}
	return ""
}

// foldKey returns the name in names that key equals under case folding, as
// encoding/json matches a member name that matches no field exactly; ""
// when there is none. The one-pass decoders of types that used to be
// decoded by encoding/json call it for the keys they do not know, so that
// they accept the same spellings.
func foldKey(key []byte, names []string) string {
	for _, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return n
		}
	}
	return ""
}
