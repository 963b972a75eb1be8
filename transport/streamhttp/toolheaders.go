package streamhttp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/parley-mcp/parley/internal/jsontext"
)

// This file holds the x-mcp-header annotations of a tool's inputSchema: how
// they are found and checked, and how the argument each one designates is
// read from a call's arguments. Client and server share it, so they agree on
// which tools are valid and on what a header must say.

// paramHeader is one x-mcp-header annotation of a tool.
type paramHeader struct {
	// path is the chain of properties keys from the schema root to the
	// annotated property.
	path []string
	// name is the annotation, the part after "Mcp-Param-".
	name string
	// key is the canonical header key, "Mcp-Param-" + name canonicalized.
	key string
	// kind is the annotated property's type: "string", "integer" or
	// "boolean".
	kind string
}

// annotationKey is the schema extension keyword.
const annotationKey = "x-mcp-header"

// parseParamHeaders returns the x-mcp-header annotations of an inputSchema,
// or an error saying why the annotations (and so the tool) are invalid:
//
//   - an annotation must be a non-empty string made of RFC 9110 token
//     characters (which excludes spaces, colons, control characters and
//     non-ASCII);
//   - annotations must be unique, compared case-insensitively;
//   - the annotated property must have type string, integer or boolean
//     (optionally together with "null");
//   - the annotated property must be reachable from the root through
//     "properties" keys only: never through items, $ref, $defs, allOf,
//     anyOf, oneOf, not, if/then/else or any other keyword.
//
// A schema without annotations yields nil.
func parseParamHeaders(schema json.RawMessage) ([]paramHeader, error) {
	// Almost every schema has no annotation: skip decoding it. A key can
	// only hide the keyword behind a \u escape.
	if !bytes.Contains(schema, []byte(annotationKey)) && !bytes.Contains(schema, []byte(`\u`)) {
		return nil, nil
	}
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("inputSchema is not JSON: %v", err)
	}
	w := &schemaWalker{seen: map[string]string{}}
	w.walk(root, true, nil)
	if w.err != nil {
		return nil, w.err
	}
	return w.found, nil
}

type schemaWalker struct {
	found []paramHeader
	seen  map[string]string // lower-cased annotation -> the property path holding it
	err   error
}

// Keywords whose value is instance data, not schemas: an "x-mcp-header"
// inside them is not an annotation.
var dataKeywords = map[string]bool{
	"const": true, "enum": true, "default": true, "examples": true, "example": true,
}

// Keywords whose value maps names to schemas.
var schemaMapKeywords = map[string]bool{
	"$defs": true, "definitions": true, "patternProperties": true, "dependentSchemas": true,
}

// walk visits the schema node v. reachable says whether v is reached from
// the root through properties keys only; path is that chain.
func (w *schemaWalker) walk(v any, reachable bool, path []string) {
	if w.err != nil {
		return
	}
	node, ok := v.(map[string]any)
	if !ok {
		return // a boolean schema, or something that is not a schema
	}
	if ann, ok := node[annotationKey]; ok {
		w.annotation(node, ann, reachable, path)
	}
	for key, sub := range node {
		switch {
		case key == annotationKey || dataKeywords[key]:
		case key == "properties":
			props, _ := sub.(map[string]any)
			for name, ps := range props {
				w.walk(ps, reachable, append(path[:len(path):len(path)], name))
			}
		case schemaMapKeywords[key]:
			m, _ := sub.(map[string]any)
			for _, s := range m {
				w.walk(s, false, path)
			}
		default:
			switch s := sub.(type) {
			case map[string]any:
				w.walk(s, false, path)
			case []any:
				for _, e := range s {
					w.walk(e, false, path)
				}
			}
		}
	}
}

func (w *schemaWalker) annotation(node map[string]any, ann any, reachable bool, path []string) {
	where := "the schema root"
	if len(path) > 0 {
		where = "property " + strings.Join(path, ".")
	}
	name, ok := ann.(string)
	switch {
	case !ok:
		w.err = fmt.Errorf("x-mcp-header of %s is not a string", where)
		return
	case name == "":
		w.err = fmt.Errorf("x-mcp-header of %s is empty", where)
		return
	case !isToken(name):
		w.err = fmt.Errorf("x-mcp-header %q of %s is not an HTTP token (RFC 9110: no spaces, colons, control or non-ASCII characters)", name, where)
		return
	case !reachable || len(path) == 0:
		w.err = fmt.Errorf("x-mcp-header %q is on %s, which is not reachable from the root through properties only", name, where)
		return
	}
	kind, ok := primitiveType(node["type"])
	if !ok {
		w.err = fmt.Errorf("x-mcp-header %q is on %s, whose type is not string, integer or boolean", name, where)
		return
	}
	lower := strings.ToLower(name)
	if other, dup := w.seen[lower]; dup {
		w.err = fmt.Errorf("x-mcp-header %q of %s duplicates the one of property %s (names are case-insensitive)", name, where, other)
		return
	}
	w.seen[lower] = strings.Join(path, ".")
	w.found = append(w.found, paramHeader{
		path: path,
		name: name,
		key:  http.CanonicalHeaderKey(HeaderParamPrefix + name),
		kind: kind,
	})
}

// primitiveType returns the one of string, integer and boolean a schema's
// type allows, optionally with null; ok is false for any other type.
func primitiveType(t any) (kind string, ok bool) {
	switch t := t.(type) {
	case string:
		return t, t == "string" || t == "integer" || t == "boolean"
	case []any:
		n := 0
		for _, e := range t {
			switch e {
			case "string", "integer", "boolean":
				kind = e.(string)
				n++
			case "null":
			default:
				return "", false
			}
		}
		return kind, n == 1
	}
	return "", false
}

// isToken reports whether s is an RFC 9110 token: 1*tchar.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// argumentAt returns the raw JSON value at path inside the arguments
// object, or nil when the value is absent or null (both mean "no header").
// variant is the name of a member on the way that differs from the path's
// key only in case (under the simple case folding Go's encoding/json
// matches names with), found when the key itself is absent: a decoder that
// folds case would read that member as the annotated property.
//
// The arguments must be valid JSON whose names are unambiguous
// (jsontext.CheckUnambiguous); the walk is linear in their length.
func argumentAt(args json.RawMessage, path []string) (value json.RawMessage, variant string) {
	cur := []byte(args)
	for _, key := range path {
		if len(cur) == 0 || jsontext.FirstByte(cur) != '{' {
			return nil, ""
		}
		var next []byte
		jsontext.Members(cur, func(k, v []byte) {
			switch {
			case string(k) == key:
				next = v
			case variant == "" && bytes.EqualFold(k, []byte(key)):
				variant = string(k)
			}
		})
		if next == nil {
			return nil, variant
		}
		cur = next
	}
	if len(cur) == 0 || string(bytes.TrimSpace(cur)) == "null" {
		return nil, ""
	}
	return cur, ""
}

// headerText returns what the header for an argument value says, before
// encoding: a string as it is, an integer in decimal, a boolean as true or
// false. Other numbers (which an annotated property must not hold) are
// written as they appear in the JSON. ok is false for values that cannot
// be mirrored (objects and arrays).
func headerText(v json.RawMessage) (text string, ok bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "", false
	}
	switch c := v[0]; {
	case c == '"':
		return jsontext.Unquote(v)
	case c == 't' || c == 'f':
		return string(v), string(v) == "true" || string(v) == "false"
	case c == '-' || ('0' <= c && c <= '9'):
		if n, verdict := parseSafeInteger(v); verdict == safeInteger {
			return strconv.FormatInt(n, 10), true
		}
		return string(v), true
	}
	return "", false
}

// jsonKind names the JSON type of a raw value, for error messages.
func jsonKind(v []byte) string {
	switch jsontext.FirstByte(v) {
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 'n':
		return "null"
	}
	return "a number"
}

// argumentProblem says why the argument value v cannot stand for an
// annotated property of type kind, or returns "" when it can: its JSON
// type must be the schema's, and an integer must be one, within the range
// the specification allows annotated integers (±(2^53−1)).
func argumentProblem(kind string, v json.RawMessage) string {
	got := jsonKind(v)
	switch {
	case kind == "string" && got != "a string",
		kind == "boolean" && got != "a boolean",
		kind == "integer" && got != "a number":
		return fmt.Sprintf("is %s, but its schema type is %s", got, kind)
	case kind != "integer":
		return ""
	}
	switch _, verdict := parseSafeInteger(bytes.TrimSpace(v)); verdict {
	case notInteger:
		return "is a number with a fractional part, but its schema type is integer"
	case outOfRange:
		return "is an integer outside ±(2^53−1), the range of an x-mcp-header integer"
	case notNumber:
		return "is not a JSON number"
	}
	return ""
}

// matchesArgument reports whether a decoded header value stands for the
// argument value v of an annotated property of type kind, v having passed
// argumentProblem: strings must be equal, integers numerically equal (so
// "42.0" and "4.2e1" match 42), booleans spelled true or false.
//
// The comparison is linear in the lengths of header and v and allocates
// nothing but the decoded string: integers are read by parseSafeInteger,
// never as arbitrary-precision numbers.
func matchesArgument(kind, header string, v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	switch kind {
	case "string":
		s, ok := jsontext.Unquote(v)
		return ok && s == header
	case "boolean":
		return (string(v) == "true" || string(v) == "false") && header == string(v)
	case "integer":
		a, va := parseSafeInteger(header)
		b, vb := parseSafeInteger(v)
		return va == safeInteger && vb == safeInteger && a == b
	}
	return false
}

// integerVerdict is what parseSafeInteger made of a number.
type integerVerdict int

const (
	safeInteger integerVerdict = iota // an integer within ±(2^53−1)
	notNumber                         // not a JSON number literal
	notInteger                        // a number with a fractional part
	outOfRange                        // an integer beyond ±(2^53−1)
)

// maxSafeInteger is 2^53−1, the bound the specification puts on the
// integers x-mcp-header mirrors (JavaScript's Number.MAX_SAFE_INTEGER).
const maxSafeInteger = 1<<53 - 1

// parseSafeInteger reads the JSON number literal s (RFC 8259 grammar; no
// surrounding space, no '+', no hexadecimal) and returns its value when it
// is an integer within ±(2^53−1): "42", "42.0", "4.2e1", "420e-1" and
// "-0" are all integers.
//
// It works on the decimal digits alone, in one pass and without
// allocating: the value is digits × 10^exp with the digits' leading and
// trailing zeros dropped (the latter moving into exp), which is an integer
// exactly when exp ≥ 0 and is out of range as soon as it has more than 16
// digits. The exponent is read with saturation, so "1e999999999999" costs
// its length and nothing more.
func parseSafeInteger[T ~string | ~[]byte](s T) (int64, integerVerdict) {
	i := 0
	neg := i < len(s) && s[i] == '-'
	if neg {
		i++
	}
	intStart := i
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	default:
		return 0, notNumber
	}
	intEnd := i
	fracStart, fracEnd := i, i
	if i < len(s) && s[i] == '.' {
		i++
		fracStart = i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		if i == fracStart {
			return 0, notNumber
		}
		fracEnd = i
	}
	const expCap = 1 << 40 // far beyond any length a digit string can have
	exp := int64(0)
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		expNeg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			expNeg = s[i] == '-'
			i++
		}
		expStart := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			if exp < expCap {
				exp = exp*10 + int64(s[i]-'0')
			}
			i++
		}
		if i == expStart {
			return 0, notNumber
		}
		if expNeg {
			exp = -exp
		}
	}
	if i != len(s) {
		return 0, notNumber
	}
	// The digits of integer and fraction, read as one digit string.
	nInt := intEnd - intStart
	total := nInt + (fracEnd - fracStart)
	digit := func(k int) byte {
		if k < nInt {
			return s[intStart+k]
		}
		return s[fracStart+k-nInt]
	}
	first, last := 0, total
	for first < total && digit(first) == '0' {
		first++
	}
	if first == total {
		return 0, safeInteger // zero, of either sign, whatever its exponent
	}
	for digit(last-1) == '0' {
		last--
	}
	// value = digits[first:last] × 10^e
	e := exp - int64(fracEnd-fracStart) + int64(total-last)
	switch {
	case e < 0:
		return 0, notInteger // the last digit is not 0, so a fraction remains
	case int64(last-first)+e > 16: // at least 10^16 > 2^53
		return 0, outOfRange
	}
	var n int64
	for k := first; k < last; k++ {
		n = n*10 + int64(digit(k)-'0')
	}
	for ; e > 0; e-- {
		n *= 10
	}
	if n > maxSafeInteger {
		return 0, outOfRange
	}
	if neg {
		n = -n
	}
	return n, safeInteger
}
