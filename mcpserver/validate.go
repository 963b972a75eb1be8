package mcpserver

import (
	"bytes"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/parley-mcp/parley/internal/jsontext"
)

// validator checks decoded JSON against a resolved schema.
//
// jsonschema-go's Validate allocates two dozen times even for a schema of
// one string property (reflection, annotation maps, wrapped errors built
// as it unwinds). Most schemas this package checks are much simpler than
// what it handles: those inferred from structs (arguments, elicitation
// forms) say only "an object with these properties of these primitive
// types, these of them required, and no others". For such a schema the
// validator compiles a quick check that decides acceptance with no
// allocation.
//
// The quick check only ever accepts: when it does not, the full validator
// runs and its verdict and error text are the answer. So the quick check
// changes nothing as long as everything it accepts, the full validator
// accepts too, which holds because it only compiles schemas whose every
// keyword it evaluates exactly as jsonschema-go v0.4's validate does (see
// quickSchema).
type validator struct {
	full  *jsonschema.Resolved
	quick *quickSchema // nil: always the full validator
}

func newValidator(r *jsonschema.Resolved) *validator {
	return &validator{full: r, quick: compileQuick(r.Schema())}
}

// Validate returns nil when instance matches the schema, or the full
// validator's error.
func (v *validator) Validate(instance any) error {
	if v.quick != nil && v.quick.accepts(instance) {
		return nil
	}
	return v.full.Validate(instance)
}

// jsonTypes is a set of JSON Schema type names.
type jsonTypes uint8

const (
	typeNull jsonTypes = 1 << iota
	typeBoolean
	typeString
	typeInteger
	typeNumber
	typeArray
	typeObject
)

var typeNames = map[string]jsonTypes{
	"null": typeNull, "boolean": typeBoolean, "string": typeString, "integer": typeInteger,
	"number": typeNumber, "array": typeArray, "object": typeObject,
}

// quickSchema is a schema of the form
//
//	{"type": "object", "properties": {NAME: {"type": T or [T...], C...}...},
//	 "required": [...], "additionalProperties": false}
//
// where "type" at the root may be absent, "additionalProperties" may be
// absent or true, a property's "type" may be absent, a property may carry
// the constraints C that the mcp tag infers (enum of strings, numbers,
// booleans and null; minimum, maximum; minLength, maxLength, pattern), and
// any schema may carry annotations that validation ignores (title,
// description, $comment, default, examples, deprecated, readOnly,
// writeOnly, format, and the property order). Validation of such a schema
// against a map[string]any, in jsonschema-go v0.4.3, checks exactly: each
// property present in the instance has one of its types ("integer" being
// a number without a fractional part, and "number" including integers),
// equals one of its enum values (numbers by value), lies within its
// bounds if it is a number, and has a length (in code points) within its
// bounds and matches its pattern (a Go regular expression, unanchored) if
// it is a string; with additionalProperties false, no other member is
// present; each required member is present. accepts checks the same, for
// the value types JSON decoding produces, and declines everything else.
type quickSchema struct {
	props    map[string]quickProp
	required []string
	closed   bool // additionalProperties: false
}

type quickProp struct {
	types jsonTypes // 0: any value
	// enum, when not nil: the values allowed.
	enum *quickEnum
	// Numbers: the bounds, when set.
	min, max *float64
	// Strings: the length bounds (-1: none) and the pattern (nil: none).
	minLen, maxLen int
	pattern        *regexp.Regexp
}

// quickEnum is an enum of JSON scalars, split by type.
type quickEnum struct {
	strings map[string]bool
	numbers []float64
	bools   [2]bool // false, true
	null    bool
}

// annotationFields are the fields of jsonschema.Schema that Validate never
// reads.
var annotationFields = map[string]bool{
	"Title": true, "Description": true, "Comment": true, "Default": true, "Examples": true,
	"Deprecated": true, "ReadOnly": true, "WriteOnly": true, "PropertyOrder": true, "Format": true,
}

// onlyFields reports whether s sets no field of jsonschema.Schema other
// than annotations and those in allowed.
func onlyFields(s *jsonschema.Schema, allowed ...string) bool {
	v := reflect.ValueOf(s).Elem()
	t := v.Type()
outer:
	for i := range t.NumField() {
		f := t.Field(i)
		if annotationFields[f.Name] || v.Field(i).IsZero() {
			continue
		}
		for _, a := range allowed {
			if f.Name == a {
				continue outer
			}
		}
		return false
	}
	return true
}

// typesOf returns the types a schema of only Type/Types allows: ok false
// when they are not all JSON Schema type names.
func typesOf(s *jsonschema.Schema) (jsonTypes, bool) {
	if s.Type != "" {
		t, ok := typeNames[s.Type]
		return t, ok
	}
	if s.Types == nil {
		return 0, true
	}
	var ts jsonTypes
	for _, n := range s.Types {
		t, ok := typeNames[n]
		if !ok {
			return 0, false
		}
		ts |= t
	}
	return ts, ts != 0
}

// compileQuick returns the quick check of s, or nil when s is not of the
// form quickSchema describes.
func compileQuick(s *jsonschema.Schema) *quickSchema {
	if s == nil || !onlyFields(s, "Type", "Properties", "Required", "AdditionalProperties") {
		return nil
	}
	if s.Type != "" && s.Type != "object" {
		return nil
	}
	q := &quickSchema{props: make(map[string]quickProp, len(s.Properties)), required: s.Required}
	for name, ps := range s.Properties {
		if ps == nil || !onlyFields(ps, "Type", "Types", "Enum", "Minimum", "Maximum", "MinLength", "MaxLength", "Pattern") {
			return nil
		}
		ts, ok := typesOf(ps)
		if !ok {
			return nil
		}
		p := quickProp{types: ts, min: ps.Minimum, max: ps.Maximum, minLen: -1, maxLen: -1}
		if ps.MinLength != nil {
			p.minLen = *ps.MinLength
		}
		if ps.MaxLength != nil {
			p.maxLen = *ps.MaxLength
		}
		if ps.Pattern != "" {
			re, err := regexp.Compile(ps.Pattern)
			if err != nil {
				return nil
			}
			p.pattern = re
		}
		if ps.Enum != nil {
			if p.enum = compileEnum(ps.Enum); p.enum == nil {
				return nil
			}
		}
		q.props[name] = p
	}
	if ap := s.AdditionalProperties; ap != nil {
		switch {
		case onlyFields(ap): // true: any other member is fine
		case onlyFields(ap, "Not") && onlyFields(ap.Not) && reflect.ValueOf(*ap.Not).IsZero():
			// false, as jsonschema-go spells it: {"not": {}}
			q.closed = true
		default:
			return nil
		}
	}
	return q
}

// compileEnum splits an enum by type; nil when a value is not a JSON
// scalar as decoding produces it (a string, a float64, a bool or nil).
func compileEnum(values []any) *quickEnum {
	e := &quickEnum{strings: map[string]bool{}}
	for _, v := range values {
		switch x := v.(type) {
		case nil:
			e.null = true
		case string:
			e.strings[x] = true
		case float64:
			e.numbers = append(e.numbers, x)
		case bool:
			if x {
				e.bools[1] = true
			} else {
				e.bools[0] = true
			}
		default:
			return nil
		}
	}
	return e
}

// hasNumber reports whether f equals a number of the enum.
func (e *quickEnum) hasNumber(f float64) bool {
	for _, n := range e.numbers {
		if n == f {
			return true
		}
	}
	return false
}

// check reports whether v, a value as JSON decoding produces it, meets
// p's constraints other than its type.
func (p *quickProp) check(v any) bool {
	switch x := v.(type) {
	case string:
		return (p.enum == nil || p.enum.strings[x]) && p.stringOK(x)
	case float64:
		return (p.enum == nil || p.enum.hasNumber(x)) && p.numberOK(x)
	case bool:
		return p.enum == nil || (x && p.enum.bools[1]) || (!x && p.enum.bools[0])
	case nil:
		return p.enum == nil || p.enum.null
	case map[string]any, []any:
		// No scalar equals them; bounds and string rules do not apply.
		return p.enum == nil
	}
	// Other number types: decoding does not produce them.
	return false
}

// numberOK reports whether f is within p's bounds.
func (p *quickProp) numberOK(f float64) bool {
	return (p.min == nil || f >= *p.min) && (p.max == nil || f <= *p.max)
}

// stringOK reports whether s has a length within p's bounds and matches
// its pattern.
func (p *quickProp) stringOK(s string) bool {
	if p.minLen >= 0 || p.maxLen >= 0 {
		n := utf8.RuneCountInString(s)
		if n < p.minLen || (p.maxLen >= 0 && n > p.maxLen) {
			return false
		}
	}
	return p.pattern == nil || p.pattern.MatchString(s)
}

// stringBytesOK is stringOK of the string whose valid UTF-8 bytes are b,
// without making it a string.
func (p *quickProp) stringBytesOK(b []byte) bool {
	if p.minLen >= 0 || p.maxLen >= 0 {
		n := utf8.RuneCount(b)
		if n < p.minLen || (p.maxLen >= 0 && n > p.maxLen) {
			return false
		}
	}
	return p.pattern == nil || p.pattern.Match(b)
}

// constrained reports whether p checks more than the type.
func (p *quickProp) constrained() bool {
	return p.enum != nil || p.min != nil || p.max != nil || p.minLen >= 0 || p.maxLen >= 0 || p.pattern != nil
}

// accepts reports whether instance certainly matches the schema; false
// means "ask the full validator".
func (q *quickSchema) accepts(instance any) bool {
	m, ok := instance.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range m {
		p, ok := q.props[k]
		if !ok {
			if q.closed {
				return false
			}
			continue
		}
		if p.types != 0 && !p.types.allow(v) {
			return false
		}
		if p.constrained() && !p.check(v) {
			return false
		}
	}
	for _, r := range q.required {
		if _, ok := m[r]; !ok {
			return false
		}
	}
	return true
}

// allow reports whether v, a value as JSON decoding produces it, has one
// of the types in ts, judged as jsonschema-go's jsonType judges it.
func (ts jsonTypes) allow(v any) bool {
	var t jsonTypes
	switch x := v.(type) {
	case nil:
		t = typeNull
	case bool:
		t = typeBoolean
	case string:
		t = typeString
	case float64:
		if _, f := math.Modf(x); f == 0 {
			t = typeInteger
		} else {
			t = typeNumber
		}
	case int, int64, int32:
		t = typeInteger
	case []any:
		t = typeArray
	case map[string]any:
		t = typeObject
	default:
		return false
	}
	return ts&t != 0 || (t == typeInteger && ts&typeNumber != 0)
}

// acceptsJSON reports whether raw, decoded as JSON, would certainly be
// accepted by accepts, judging the text itself rather than its decoded
// form: decoding the arguments into a map[string]any only to check them
// was, with the typed decoding, a tenth of the CPU profile of a typed
// tools/call and six of its allocations (BENCHMARKS.md, "Profile-driven
// changes"). It declines (false: decode and ask accepts, or the full
// validator) whatever it does not judge exactly as decoding then accepts
// would: a text that is not an object, a member whose value is an object
// or an array, a number that does not fit a float64, more than 64 required
// names. raw is not trusted to be valid JSON: a caller acts on true only
// once a strict decoder has read raw whole without error.
func (q *quickSchema) acceptsJSON(raw []byte) bool {
	if jsontext.FirstByte(raw) != '{' || len(q.required) > 64 {
		return false
	}
	ok := true
	var present uint64 // bit i: q.required[i] was seen
	jsontext.Members(raw, func(key, value []byte) {
		if !ok {
			return
		}
		var t jsonTypes
		var f float64
		switch value[0] {
		case '"':
			t = typeString
		case 't', 'f':
			t = typeBoolean
		case 'n':
			t = typeNull
		case '{', '[':
			ok = false // nested values: decline rather than judge them
			return
		default:
			var err error
			f, err = strconv.ParseFloat(string(value), 64)
			if err != nil {
				ok = false
				return
			}
			if _, frac := math.Modf(f); frac == 0 {
				t = typeInteger
			} else {
				t = typeNumber
			}
		}
		for i, r := range q.required {
			if r == string(key) {
				present |= 1 << i
			}
		}
		p, known := q.props[string(key)]
		switch {
		case !known:
			ok = !q.closed
			return
		case p.types != 0:
			ok = p.types&t != 0 || (t == typeInteger && p.types&typeNumber != 0)
		}
		if ok && p.constrained() {
			ok = p.checkJSON(t, f, value)
		}
	})
	return ok && present == 1<<len(q.required)-1
}

// checkJSON is check for a member's value as JSON text, of type t (and,
// for a number, the value f). A string holding escapes is declined: it
// would have to be decoded to be judged.
func (p *quickProp) checkJSON(t jsonTypes, f float64, value []byte) bool {
	switch t {
	case typeString:
		if len(value) < 2 || value[len(value)-1] != '"' {
			return false // not a whole string literal: raw is not trusted to be JSON
		}
		inner := value[1 : len(value)-1]
		if bytes.IndexByte(inner, '\\') >= 0 || !utf8.Valid(inner) {
			return false
		}
		return (p.enum == nil || p.enum.strings[string(inner)]) && p.stringBytesOK(inner)
	case typeInteger, typeNumber:
		return (p.enum == nil || p.enum.hasNumber(f)) && p.numberOK(f)
	case typeBoolean:
		return p.enum == nil || p.enum.bools[btoi(value[0] == 't')]
	case typeNull:
		return p.enum == nil || p.enum.null
	}
	return false
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
