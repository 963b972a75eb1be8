package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/parley-mcp/parley/internal/jsontext"
)

// The struct-tag dialect of inferred schemas is jsonschema-go's, with
// Parley's mcp tag for constraints:
//
//   - `json:"name"` names the property (case-sensitively: arguments must
//     spell it exactly); `json:"-"` leaves the field out;
//   - a field without `omitempty` (or `omitzero`) is required;
//   - `jsonschema:"text"` is the property's description;
//   - `mcp:"..."` constrains it: enum, minimum, maximum, minLength,
//     maxLength, pattern, default, format, title (see tags.go);
//   - the schema of a struct allows no other properties.
//
// Anything richer goes into a schema written by hand: set
// Tool.InputSchema and it is used instead of the inferred one.

// inputSchema is a tool's argument schema: as advertised, and resolved
// for validation.
type inputSchema struct {
	raw      json.RawMessage
	resolved *validator
	// defaults are the members that take a value when absent (mcp
	// default=), with the field each sets; only for inferred schemas.
	defaults []argDefault
}

// argDefault is the default of one top-level member of a struct In.
type argDefault struct {
	name  string
	index []int // of the field, for reflect.Value.FieldByIndex
	value json.RawMessage
}

// schemaFor infers the schema of t, which must be a struct or a pointer to
// one (an object is the only thing arguments and structured content may
// be), with the constraints of its fields' mcp tags. input says t is a
// tool's arguments, whose members may take defaults.
func schemaFor(t reflect.Type, input bool) (*jsonschema.Schema, error) {
	st := t
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if st.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%s is not a struct", t)
	}
	s, err := jsonschema.ForType(st, nil)
	if err != nil {
		return nil, err
	}
	if err := applyTags(st, s, input); err != nil {
		return nil, err
	}
	return s, nil
}

// defaultsOf lists the defaults of the top-level properties of s, the
// schema inferred from the struct (or pointer to struct) t.
func defaultsOf(t reflect.Type, s *jsonschema.Schema) []argDefault {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []argDefault
	for _, f := range reflect.VisibleFields(t) {
		name, ok := jsonFieldName(f)
		if !ok {
			continue
		}
		if ps := s.Properties[name]; ps != nil && ps.Default != nil {
			// The last field of a name wins, as in the schema.
			out = slices.DeleteFunc(out, func(d argDefault) bool { return d.name == name })
			out = append(out, argDefault{name: name, index: f.Index, value: ps.Default})
		}
	}
	return out
}

// applyDefaults sets, in v (a struct or a pointer to one, just decoded
// from raw), the fields of the members raw does not have to their
// defaults.
func applyDefaults(defaults []argDefault, raw []byte, v reflect.Value) error {
	present := make(map[string]bool, len(defaults))
	jsontext.Members(raw, func(key, _ []byte) {
		for _, d := range defaults {
			if d.name == string(key) {
				present[d.name] = true
			}
		}
	})
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	for _, d := range defaults {
		if present[d.name] {
			continue
		}
		f, err := v.FieldByIndexErr(d.index)
		if err != nil {
			// Through a nil embedded pointer: leave it.
			continue
		}
		if err := jsonv2.Unmarshal(d.value, f.Addr().Interface()); err != nil {
			return fmt.Errorf("default of %q: %v", d.name, cleanDecodeError(err))
		}
	}
	return nil
}

// newInputSchema makes the schema of a tool's arguments of type in:
// the hand-written one when given, else one inferred from in. A map or
// json.RawMessage argument type with no hand-written schema takes any
// object.
func newInputSchema(given json.RawMessage, in reflect.Type) (*inputSchema, error) {
	var s *jsonschema.Schema
	var defaults []argDefault
	switch {
	case len(given) > 0:
		s = new(jsonschema.Schema)
		if err := json.Unmarshal(given, s); err != nil {
			return nil, fmt.Errorf("inputSchema is not a JSON Schema: %v", err)
		}
		if s.Type != "object" {
			return nil, errors.New(`inputSchema must have "type": "object"`)
		}
	case isFreeForm(in):
		s = &jsonschema.Schema{Type: "object"}
	default:
		var err error
		if s, err = schemaFor(in, true); err != nil {
			return nil, fmt.Errorf("cannot infer an input schema: %w", err)
		}
		defaults = defaultsOf(in, s)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("inputSchema cannot be resolved: %w", err)
	}
	raw := given
	if len(raw) == 0 {
		if raw, err = json.Marshal(s); err != nil {
			return nil, err
		}
	}
	return &inputSchema{raw: raw, resolved: newValidator(r), defaults: defaults}, nil
}

// isFreeForm reports whether t takes arguments as they come, without an
// inferred schema.
func isFreeForm(t reflect.Type) bool {
	return t == rawMessageType || (t.Kind() == reflect.Map && t.Key().Kind() == reflect.String) ||
		(t.Kind() == reflect.Interface && t.NumMethod() == 0)
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// argumentsError is arguments that do not fit the tool: the body does not
// run and the caller gets an isError result saying why.
type argumentsError struct{ msg string }

func (e *argumentsError) Error() string { return e.msg }

// ambiguousArgumentsError is arguments that decoders read differently (see
// jsontext.CheckUnambiguous): the request is refused with -32602, not
// answered with an isError result, since no reading of it is the client's.
type ambiguousArgumentsError struct{ err error }

func (e *ambiguousArgumentsError) Error() string { return "arguments are ambiguous: " + e.err.Error() }
func (e *ambiguousArgumentsError) Unwrap() error { return e.err }

// decodeArguments validates raw arguments against the schema and decodes
// them into a value of type T. Both steps read the arguments with the same
// strict rules: member names match exactly (never by case folding).
//
// Arguments that another decoder could read differently are refused
// first, with an *ambiguousArgumentsError: a member name given twice, two
// names equal under case folding ("amount" and "Amount"), invalid UTF-8 or
// an escaped lone surrogate. The body may hand its arguments on (a
// json.RawMessage or map In) to code that folds case or keeps the first of
// two names; and the sealed state's argument digest and the HTTP
// Mcp-Param-* check, which run before the body, refuse the same arguments.
// So the value the body receives is the value that was validated, and the
// value the digest and the header check saw, whoever decodes it.
func decodeArguments[T any](schema *inputSchema, raw json.RawMessage) (T, error) {
	var v T
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = json.RawMessage("{}")
	}
	if err := jsontext.CheckUnambiguous(raw); err != nil && json.Valid(raw) {
		return v, &ambiguousArgumentsError{err}
	}
	// The fast path: arguments the quick check accepts from their text are
	// decoded once, into T. A decoding error sends them down the full path,
	// which reports it as it always has.
	// (A json.RawMessage In is not decoded at all: it takes the full path.)
	_, rawIn := any(&v).(*json.RawMessage)
	if q := schema.resolved.quick; !rawIn && q != nil && q.acceptsJSON(raw) {
		if jsonv2.Unmarshal(raw, &v) == nil {
			err := withDefaults(schema, raw, &v)
			return v, err
		}
		v = *new(T)
	}
	var instance any
	if err := jsonv2.Unmarshal(raw, &instance); err != nil {
		return v, &argumentsError{"arguments are not a valid JSON object: " + cleanDecodeError(err)}
	}
	if _, ok := instance.(map[string]any); !ok {
		return v, &argumentsError{"arguments must be a JSON object"}
	}
	if err := schema.resolved.Validate(instance); err != nil {
		return v, &argumentsError{"invalid arguments: " + trimValidation(err)}
	}
	if p, ok := any(&v).(*json.RawMessage); ok {
		*p = raw
		return v, nil
	}
	if err := jsonv2.Unmarshal(raw, &v); err != nil {
		return v, &argumentsError{"invalid arguments: " + cleanDecodeError(err)}
	}
	err := withDefaults(schema, raw, &v)
	return v, err
}

// withDefaults gives *v, decoded from raw, the defaults of the members raw
// lacks. (v is the caller's, which decoding already moved to the heap.)
func withDefaults[T any](schema *inputSchema, raw []byte, v *T) error {
	if len(schema.defaults) == 0 {
		return nil
	}
	if err := applyDefaults(schema.defaults, raw, reflect.ValueOf(v).Elem()); err != nil {
		return &argumentsError{"invalid arguments: " + err.Error()}
	}
	return nil
}

// cleanDecodeError keeps a decode error short and free of Go package
// paths.
func cleanDecodeError(err error) string {
	msg := err.Error()
	for _, prefix := range []string{"json: ", "jsontext: "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	return msg
}

// trimValidation drops the part of a validation error that names the
// schema's root, which says nothing to a client, and writes the numbers of
// a bound's error as the schema and the arguments do.
func trimValidation(err error) string {
	msg := strings.TrimPrefix(err.Error(), "validating root: ")
	if m := boundError.FindStringSubmatchIndex(msg); m != nil {
		// jsonschema-go writes the value as a fraction ("0/1") and the
		// bound with %f ("1.000000").
		value, bound := msg[m[2]:m[3]], msg[m[4]:m[5]]
		if r, ok := new(big.Rat).SetString(value); ok {
			if f, _ := r.Float64(); !math.IsInf(f, 0) {
				value = strconv.FormatFloat(f, 'g', -1, 64)
			}
		}
		if f, err := strconv.ParseFloat(bound, 64); err == nil {
			bound = strconv.FormatFloat(f, 'g', -1, 64)
		}
		msg = msg[:m[2]] + value + msg[m[3]:m[4]] + bound
	}
	return msg
}

// boundError matches the end of jsonschema-go's error for a number out of
// its bounds: the value and the bound.
var boundError = regexp.MustCompile(`(?:minimum|maximum|exclusiveMinimum|exclusiveMaximum): (-?[0-9]+(?:/[0-9]+)?) is (?:less|greater) than (?:or equal to )?(-?[0-9.]+)$`)
