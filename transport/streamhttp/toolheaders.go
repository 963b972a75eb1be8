package streamhttp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
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
	if !primitiveType(node["type"]) {
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
	})
}

// primitiveType reports whether a schema's type allows exactly one of
// string, integer and boolean, optionally with null.
func primitiveType(t any) bool {
	switch t := t.(type) {
	case string:
		return t == "string" || t == "integer" || t == "boolean"
	case []any:
		n := 0
		for _, e := range t {
			switch e {
			case "string", "integer", "boolean":
				n++
			case "null":
			default:
				return false
			}
		}
		return n == 1
	}
	return false
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
func argumentAt(args json.RawMessage, path []string) json.RawMessage {
	cur := args
	for _, key := range path {
		if len(cur) == 0 || jsontext.FirstByte(cur) != '{' {
			return nil
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(cur, &obj) != nil {
			return nil
		}
		cur = obj[key]
	}
	if len(cur) == 0 || string(bytes.TrimSpace(cur)) == "null" {
		return nil
	}
	return cur
}

// headerText returns what the header for an argument value says, before
// encoding: a string as it is, an integer in decimal, a boolean as true or
// false. Other numbers are written as they appear in the JSON. ok is false
// for values that cannot be mirrored (objects and arrays).
func headerText(v json.RawMessage) (text string, ok bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "", false
	}
	switch c := v[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(v, &s) != nil {
			return "", false
		}
		return s, true
	case c == 't' || c == 'f':
		return string(v), string(v) == "true" || string(v) == "false"
	case c == '-' || ('0' <= c && c <= '9'):
		if isPlainInteger(v) {
			return string(v), true
		}
		r, ok := new(big.Rat).SetString(string(v))
		if ok && r.IsInt() {
			return r.Num().String(), true
		}
		return string(v), true
	}
	return "", false
}

func isPlainInteger(v []byte) bool {
	if len(v) > 0 && v[0] == '-' {
		v = v[1:]
	}
	if len(v) == 0 {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// matchesArgument reports whether a decoded header value stands for the
// argument value v: strings must be equal, numbers numerically equal (so
// "42.0" matches 42), booleans spelled true or false.
func matchesArgument(header string, v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return false
	}
	switch c := v[0]; {
	case c == '"':
		var s string
		return json.Unmarshal(v, &s) == nil && s == header
	case c == 't' || c == 'f':
		return header == string(v)
	case c == '-' || ('0' <= c && c <= '9'):
		if header == string(v) {
			return true
		}
		if !isJSONNumber(header) {
			return false
		}
		a, ok1 := new(big.Rat).SetString(header)
		b, ok2 := new(big.Rat).SetString(string(v))
		return ok1 && ok2 && a.Cmp(b) == 0
	}
	return false // objects and arrays cannot be mirrored in a header
}

// isJSONNumber reports whether s is a JSON number literal, so that forms
// big.Rat also accepts (fractions, hexadecimal) do not match.
func isJSONNumber(s string) bool {
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return false
	}
	var n json.Number
	return json.Unmarshal([]byte(s), &n) == nil
}
