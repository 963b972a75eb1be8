package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"unicode/utf8"

	"github.com/parley-mcp/parley/internal/jsontext"
)

var (
	stringType = reflect.TypeFor[string]()
	boolType   = reflect.TypeFor[bool]()
)

// This file holds the helpers of the hand-written decoders of
// the types that are decoded on every request (_meta, tools/call params,
// client capabilities) or every result (tools/call, prompts/get and
// resources/read results, text content, serverInfo) and by the union
// decoders that must look at one member (a discriminator) before choosing a
// Go type.
//
// They walk an object's members (or an array's elements) in place with the
// validating scanner of internal/jsontext (jsontext.ObjectIter and
// ArrayIter), which checks the grammar as it goes and hands back the key
// and the raw value of each member as sub-slices of the input. Nothing is
// allocated unless a key contains escapes.
//
// The decoders that replace encoding/json for a struct keep its rules, so
// that they accept exactly the same inputs: member names match
// case-insensitively when they match no field exactly (foldKey), a null
// member leaves a string, number or bool field alone, a later duplicate
// member wins, and malformed JSON anywhere is reported before a value of
// the wrong type.

// objectIter is jsontext.ObjectIter whose errors say they are mcp's, as
// every error of this package does: they reach peers in -32602 messages.
type objectIter struct{ jsontext.ObjectIter }

func newObjectIter(data []byte) objectIter { return objectIter{jsontext.NewObjectIter(data)} }

// Next advances to the next member and reports whether there is one.
func (it *objectIter) Next() bool {
	if it.ObjectIter.Next() {
		return true
	}
	it.Err = syntaxError(it.Err)
	return false
}

// arrayIter is jsontext.ArrayIter with mcp's errors, as objectIter is.
type arrayIter struct{ jsontext.ArrayIter }

func newArrayIter(data []byte) arrayIter { return arrayIter{jsontext.NewArrayIter(data)} }

// Next advances to the next element and reports whether there is one.
func (it *arrayIter) Next() bool {
	if it.ArrayIter.Next() {
		return true
	}
	it.Err = syntaxError(it.Err)
	return false
}

// mcpSyntaxError is a *jsontext.SyntaxError reported by this package.
type mcpSyntaxError struct{ *jsontext.SyntaxError }

func (e mcpSyntaxError) Error() string { return "mcp: " + e.SyntaxError.Error() }
func (e mcpSyntaxError) Unwrap() error { return e.SyntaxError }

// syntaxError marks a scanner error as mcp's (once); other errors, nil
// included, pass unchanged.
func syntaxError(err error) error {
	if se, ok := err.(*jsontext.SyntaxError); ok {
		return mcpSyntaxError{se}
	}
	return err
}

// skipSpace returns the offset of the first non-whitespace byte at or
// after i.
func skipSpace(d []byte, i int) int { return jsontext.SkipSpace(d, i) }

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
	for it.Next() {
		if string(it.Key) == key {
			return it.Val, nil
		}
	}
	return nil, it.Err
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
	for it.Next() {
		key := exactKey(it.Key, keys)
		if key == "" {
			if key = foldKey(it.Key, keys); key == "" {
				continue
			}
		} else if rt != nil && key == "resultType" {
			*rt = it.Val
		}
		if fieldErr != nil {
			continue
		}
		if ferr := member(key, it.Val); ferr != nil {
			fieldErr = fmt.Errorf("mcp: %s %q: %w", what, key, ferr)
		}
	}
	return fieldErr, it.Err
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

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
