package mcpserver

import (
	"fmt"
	"reflect"
	"strings"
)

// Prompt arguments and template variables are strings by name. A
// registration takes them either as a map[string]string or as a struct of
// string fields, each named by its json tag (or its Go name) and described
// by its jsonschema tag; a field without omitempty is required.

// stringField is one string field of an arguments struct.
type stringField struct {
	name        string
	index       int
	required    bool
	description string
}

// stringArgs describes how a registration's string arguments decode.
type stringArgs struct {
	typ    reflect.Type // map[string]string, or a struct
	fields []stringField
}

var stringMapType = reflect.TypeFor[map[string]string]()

// newStringArgs checks t: a map[string]string, or a struct whose exported
// fields are all strings.
func newStringArgs(t reflect.Type) (*stringArgs, error) {
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
		a.fields = append(a.fields, stringField{
			name:        name,
			index:       i,
			required:    !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero"),
			description: f.Tag.Get("jsonschema"),
		})
	}
	return a, nil
}

// decode builds the arguments value from the strings given; an absent
// argument is "". Whether a required one is present is the registration's
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
		v.Field(f.index).SetString(given[f.name])
	}
	return v
}
