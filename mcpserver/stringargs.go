package mcpserver

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Prompt arguments and template variables are strings by name. A
// registration takes them either as a map[string]string or as a struct of
// string fields, each named by its json tag (or its Go name), described by
// its jsonschema tag and constrained by its mcp tag (enum, default,
// minLength, maxLength, pattern, format, title; see tags.go); a field
// without omitempty is required.

// stringField is one string field of an arguments struct.
type stringField struct {
	name        string
	index       int
	required    bool
	description string
	title       string
	def         *string    // the value an absent argument takes
	check       *validator // the field's constraints; nil for none
	allow       allowSet   // template variables: what they may hold
}

// stringArgs describes how a registration's string arguments decode.
type stringArgs struct {
	typ    reflect.Type // map[string]string, or a struct
	fields []stringField
}

// argumentError is a string argument (or template variable) that breaks
// its field's rules.
type argumentError struct {
	name string
	err  error
}

func (e *argumentError) Error() string { return fmt.Sprintf("%q: %s", e.name, trimValidation(e.err)) }

var stringMapType = reflect.TypeFor[map[string]string]()

// newStringArgs checks t: a map[string]string, or a struct whose exported
// fields are all strings. variables says they are a resource template's,
// whose fields may say what they allow.
func newStringArgs(t reflect.Type, variables bool) (*stringArgs, error) {
	a := &stringArgs{typ: t}
	if t == stringMapType {
		return a, nil
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("arguments of type %s: want map[string]string or a struct of string fields", t)
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Tag.Get("json") == "-" { // "-," names a field "-", as in encoding/json
			continue
		}
		if f.Type.Kind() != reflect.String {
			return nil, fmt.Errorf("field %s of %s is a %s: prompt arguments and template variables are strings", f.Name, t, f.Type)
		}
		if name == "" {
			name = f.Name
		}
		sf := stringField{
			name:        name,
			index:       i,
			required:    !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero"),
			description: f.Tag.Get("jsonschema"),
		}
		if tag, ok := f.Tag.Lookup("mcp"); ok {
			if err := sf.setRules(tag, variables); err != nil {
				return nil, fieldTagError(t, f, err)
			}
		}
		a.fields = append(a.fields, sf)
	}
	return a, nil
}

// setRules reads a field's mcp tag: allow (for template variables only),
// and the constraints, compiled into a check of the field's schema.
func (f *stringField) setRules(tag string, variables bool) error {
	r, err := parseRules(tag)
	if err != nil {
		return err
	}
	if variables {
		f.allow, r.allow = r.allow, 0
	}
	ps := &jsonschema.Schema{Type: "string"}
	if err := applyRules(ps, r, ruleSite{top: true, required: f.required}); err != nil {
		return err
	}
	f.title, f.def = r.title, r.def
	if len(ps.Enum) > 0 || len(ps.OneOf) > 0 || ps.MinLength != nil || ps.MaxLength != nil || ps.Pattern != "" {
		resolved, err := ps.Resolve(nil)
		if err != nil {
			return err
		}
		f.check = newValidator(resolved)
	}
	return nil
}

// check refuses, with an *argumentError, a given argument that breaks its
// field's rules.
func (a *stringArgs) check(given map[string]string) error {
	for _, f := range a.fields {
		if f.check == nil {
			continue
		}
		v, ok := given[f.name]
		if !ok {
			continue
		}
		if err := f.check.Validate(v); err != nil {
			return &argumentError{f.name, err}
		}
	}
	return nil
}

// decode builds the arguments value from the strings given; an absent
// argument is its field's default, or "". Whether a required one is present is the registration's
// check, against the arguments it advertises.
func (a *stringArgs) decode(given map[string]string) reflect.Value {
	if a.typ == stringMapType {
		m := make(map[string]string, len(given))
		for k, s := range given {
			m[k] = s
		}
		return reflect.ValueOf(m)
	}
	v := reflect.New(a.typ).Elem()
	for _, f := range a.fields {
		s, ok := given[f.name]
		if !ok && f.def != nil {
			s = *f.def
		}
		v.Field(f.index).SetString(s)
	}
	return v
}
