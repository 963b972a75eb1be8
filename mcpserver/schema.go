package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/parley-mcp/parley/internal/jsontext"
)

// The struct-tag dialect of inferred schemas is jsonschema-go's:
//
//   - `json:"name"` names the property (case-sensitively: arguments must
//     spell it exactly); `json:"-"` leaves the field out;
//   - a field without `omitempty` (or `omitzero`) is required;
//   - `jsonschema:"text"` is the property's description;
//   - the schema of a struct allows no other properties.
//
// Anything richer (ranges, patterns, enums) goes into a schema written by
// hand: set Tool.InputSchema and it is used instead of the inferred one.

// inputSchema is a tool's argument schema: as advertised, and resolved
// for validation.
type inputSchema struct {
	raw      json.RawMessage
	resolved *validator
}

// schemaFor infers the schema of t, which must be a struct or a pointer to
// one (an object is the only thing arguments and structured content may
// be).
func schemaFor(t reflect.Type) (*jsonschema.Schema, error) {
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
	return s, nil
}

// newInputSchema makes the schema of a tool's arguments of type in:
// the hand-written one when given, else one inferred from in. A map or
// json.RawMessage argument type with no hand-written schema takes any
// object.
func newInputSchema(given json.RawMessage, in reflect.Type) (*inputSchema, error) {
	var s *jsonschema.Schema
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
		if s, err = schemaFor(in); err != nil {
			return nil, fmt.Errorf("cannot infer an input schema: %w", err)
		}
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
	return &inputSchema{raw: raw, resolved: newValidator(r)}, nil
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
			return v, nil
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
	return v, nil
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
// schema's root, which says nothing to a client.
func trimValidation(err error) string {
	return strings.TrimPrefix(err.Error(), "validating root: ")
}
