package mcpserver

import (
	"encoding/json"
	"reflect"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/parley-mcp/parley/mcp"
)

// The quick check may only ever accept what jsonschema-go accepts; these
// tests hold it to that on every schema shape it compiles, and check that
// it compiles the shapes this package infers (or the fast path would
// silently never run) and nothing richer.

type quickArgs struct {
	Name    string  `json:"name"`
	Count   int     `json:"count,omitempty"`
	Ratio   float64 `json:"ratio,omitempty"`
	On      bool    `json:"on,omitempty"`
	Ptr     *string `json:"ptr,omitempty"`
	Any     any     `json:"any,omitempty"`
	Skipped string  `json:"-"`
}

// richArgs has fields whose schemas say more than a type: the full
// validator checks them.
type richArgs struct {
	Name  string         `json:"name"`
	Tags  []string       `json:"tags,omitempty"`
	Extra map[string]int `json:"extra,omitempty"`
}

type quickForm struct {
	Region string  `json:"region" jsonschema:"where"`
	Size   int     `json:"size"`
	Cost   float64 `json:"cost,omitempty"`
	Yes    bool    `json:"yes,omitempty"`
}

func mustSchema(t *testing.T, text string) *jsonschema.Schema {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func TestQuickSchemaAgreesWithJSONSchema(t *testing.T) {
	argSchema, err := newInputSchema(nil, reflect.TypeFor[quickArgs]())
	if err != nil {
		t.Fatal(err)
	}
	richSchema, err := newInputSchema(nil, reflect.TypeFor[richArgs]())
	if err != nil {
		t.Fatal(err)
	}
	form, err := formSchema(reflect.TypeFor[quickForm]())
	if err != nil {
		t.Fatal(err)
	}
	formV, err := resolveForm(form)
	if err != nil {
		t.Fatal(err)
	}
	withEnum, err := resolveForm(mcp.ElicitRequestedSchema{Properties: map[string]mcp.PrimitiveSchemaDefinition{
		"region": &mcp.StringSchema{MinLength: new(int)},
	}})
	if err != nil {
		t.Fatal(err)
	}

	validators := map[string]*validator{
		"inferred arguments":    argSchema.resolved,
		"rich arguments":        richSchema.resolved,
		"inferred form":         formV,
		"form with a minLength": withEnum,
	}
	compiled := map[string]bool{"inferred arguments": true, "rich arguments": false, "inferred form": true, "form with a minLength": false}
	handWritten := map[string]struct {
		text  string
		quick bool
	}{
		"free-form":                   {`{"type":"object"}`, true},
		"no root type":                {`{"properties":{"a":{"type":"string"}}}`, true},
		"additionalProperties true":   {`{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":true}`, true},
		"additionalProperties false":  {`{"type":"object","properties":{"a":{"type":"number"}},"required":["a"],"additionalProperties":false}`, true},
		"type lists":                  {`{"type":"object","properties":{"a":{"type":["null","integer"]},"b":{"type":["string","boolean"]}}}`, true},
		"object and array properties": {`{"type":"object","properties":{"o":{"type":"object"},"l":{"type":"array"},"x":{}},"additionalProperties":false}`, true},
		"annotations":                 {`{"type":"object","title":"t","description":"d","$comment":"c","properties":{"a":{"type":"string","title":"A","default":"x","examples":["y"],"deprecated":true}}}`, true},
		"additionalProperties schema": {`{"type":"object","additionalProperties":{"type":"string"}}`, false},
		"minLength":                   {`{"type":"object","properties":{"a":{"type":"string","minLength":2}}}`, false},
		"nested properties":           {`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}}}}}`, false},
		"$schema":                     {`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`, false},
		"draft-04 $schema":            {`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`, false},
		"$ref":                        {`{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s"}}}`, false},
		"root type string":            {`{"type":"string"}`, false},
		"unknown type name":           {`{"type":"object","properties":{"a":{"type":"text"}}}`, false},
		"patternProperties":           {`{"type":"object","patternProperties":{"^x":{"type":"string"}},"additionalProperties":false}`, false},
		"allOf":                       {`{"type":"object","allOf":[{"required":["a"]}]}`, false},
		"not":                         {`{"type":"object","not":{"required":["a"]}}`, false},
		"minProperties":               {`{"type":"object","minProperties":1}`, false},
		"enum":                        {`{"type":"object","properties":{"a":{"enum":[1,2]}}}`, false},
	}
	for name, h := range handWritten {
		r, err := mustSchema(t, h.text).Resolve(nil)
		if err != nil {
			// Unresolvable schemas never reach a validator.
			continue
		}
		validators[name] = newValidator(r)
		compiled[name] = h.quick
	}

	instances := []string{
		`{}`, `{"name":"x"}`, `{"name":1}`, `{"name":null}`, `{"name":"x","count":3}`, `{"name":"x","count":3.5}`,
		`{"name":"x","count":3.0}`, `{"name":"x","count":-0}`, `{"name":"x","count":1e300}`, `{"name":"x","ratio":2}`,
		`{"name":"x","ratio":"2"}`, `{"name":"x","on":true}`, `{"name":"x","on":"true"}`, `{"name":"x","ptr":null}`,
		`{"name":"x","ptr":"p"}`, `{"name":"x","tags":["a"]}`, `{"name":"x","tags":"a"}`, `{"name":"x","any":{"k":[1]}}`,
		`{"name":"x","Skipped":"s"}`, `{"name":"x","extra":{"a":1}}`, `{"name":"x","extra":[]}`, `{"Name":"x"}`,
		`{"name":"x","other":1}`, `{"region":"eu","size":1}`, `{"region":"eu","size":1.5}`, `{"region":"eu"}`,
		`{"region":"asia","size":2,"cost":0.5,"yes":false}`, `{"region":"eu","size":2,"nope":1}`, `{"region":null,"size":1}`,
		`{"a":"s"}`, `{"a":1}`, `{"a":1.25}`, `{"a":null}`, `{"a":true}`, `{"a":{}}`, `{"a":[]}`, `{"b":"s"}`, `{"b":false}`,
		`{"b":1}`, `{"o":{},"l":[],"x":null}`, `{"o":[],"l":{}}`, `{"x":1,"y":2}`, `{"xa":"s"}`, `{"a":"abc"}`, `{"a":"x"}`,
		`[]`, `"s"`, `1`, `null`,
	}
	for vname, v := range validators {
		if got := v.quick != nil; got != compiled[vname] {
			t.Errorf("%s: quick check compiled = %v, want %v", vname, got, compiled[vname])
		}
		for _, text := range instances {
			var instance any
			if err := jsonv2.Unmarshal([]byte(text), &instance); err != nil {
				t.Fatal(err)
			}
			full := v.full.Validate(instance)
			if v.quick != nil && v.quick.accepts(instance) && full != nil {
				t.Errorf("%s: the quick check accepts %s, which jsonschema-go refuses: %v", vname, text, full)
			}
			if _, isObject := instance.(map[string]any); isObject && v.quick != nil && !v.quick.accepts(instance) && full == nil {
				// Not wrong (the full validator then answers), but the
				// fast path should cover every valid instance of a
				// schema it compiles.
				t.Errorf("%s: the quick check declines %s, which jsonschema-go accepts", vname, text)
			}
			// (Error texts are not compared: jsonschema-go's depend on map
			// order when several things are wrong.)
			if err := v.Validate(instance); (err == nil) != (full == nil) {
				t.Errorf("%s: Validate(%s) = %v, jsonschema-go says %v", vname, text, err, full)
			}
		}
	}
}

// checkAcceptsJSON holds acceptsJSON to what decodeArguments needs of it:
// when it accepts a text that a strict decoder reads into T, decoding the
// text into any must succeed and the full validator must accept the result.
func checkAcceptsJSON[T any](t *testing.T, v *validator, text []byte) (accepted bool) {
	t.Helper()
	if v.quick == nil || !v.quick.acceptsJSON(text) {
		return false
	}
	var typed T
	if jsonv2.Unmarshal(text, &typed) != nil {
		return true // decodeArguments then takes the full path
	}
	var instance any
	if err := jsonv2.Unmarshal(text, &instance); err != nil {
		t.Fatalf("acceptsJSON accepts %q, which decodes into T but not into any: %v", text, err)
	}
	if err := v.full.Validate(instance); err != nil {
		t.Fatalf("acceptsJSON accepts %q, which jsonschema-go refuses: %v", text, err)
	}
	return true
}

func TestAcceptsJSONAgreesWithDecodingThenValidating(t *testing.T) {
	argSchema, err := newInputSchema(nil, reflect.TypeFor[quickArgs]())
	if err != nil {
		t.Fatal(err)
	}
	v := argSchema.resolved
	for _, c := range []struct {
		text string
		fast bool // the fast path should take it
	}{
		{`{"name":"x"}`, true}, {` { "name" : "x" , "count" : 3 } `, true}, {`{"name":"x","count":3.0}`, false},
		{`{"name":"x","count":-0}`, true}, {`{"name":"x","ratio":2}`, true}, {`{"name":"x","on":true,"ptr":null}`, true},
		{`{"name":"x","other":1}`, false}, {`{"n\u0061me":"x"}`, true}, {`{"name":"x","any":"s"}`, true},
		{`{}`, false}, {`{"name":1}`, false}, {`{"name":null}`, false}, {`{"name":"x","count":3.5}`, false},
		{`{"name":"x","count":1e400}`, false}, {`{"name":"x","other":1e400}`, false}, {`{"name":"x","any":{"k":[1]}}`, false},
		{`{"name":"x","any":[]}`, false}, {`{"Name":"x"}`, false}, {`[]`, false}, {`"s"`, false}, {`null`, false},
		{`{"name":"x"`, false}, {`{"name":"x",}`, false}, {"{\"name\":\"\xff\"}", false}, {`{"name":"\ud800"}`, false},
		{`{"name":"x","name":"y"}`, false}, {`{"name":"x","count":"3"}`, false}, {`{"name":"x","on":"true"}`, false},
	} {
		accepted := checkAcceptsJSON[quickArgs](t, v, []byte(c.text))
		var typed quickArgs
		fast := accepted && jsonv2.Unmarshal([]byte(c.text), &typed) == nil
		if fast != c.fast {
			t.Errorf("fast path for %s = %v, want %v", c.text, fast, c.fast)
		}
	}
	closed := newValidator(must(mustSchema(t, `{"type":"object","properties":{"a":{"type":"number"}},"required":["a"],"additionalProperties":false}`).Resolve(nil)))
	for text, want := range map[string]bool{`{"a":1}`: true, `{"a":1.5}`: true, `{"a":1,"b":2}`: false, `{}`: false, `{"a":"1"}`: false} {
		if got := checkAcceptsJSON[map[string]any](t, closed, []byte(text)); got != want {
			t.Errorf("closed schema: acceptsJSON(%s) = %v, want %v", text, got, want)
		}
	}
}

// On an open schema, a struct In skips the members it does not name, so a
// number only the map decoding would refuse must make acceptsJSON decline.
func TestAcceptsJSONOpenSchemaUnknownMembers(t *testing.T) {
	type in struct {
		A float64 `json:"a"`
	}
	open := newValidator(must(mustSchema(t, `{"type":"object","properties":{"a":{"type":"number"}}}`).Resolve(nil)))
	for text, want := range map[string]bool{`{"a":1,"zzz":2}`: true, `{"a":1,"zzz":1e400}`: false, `{"a":1,"zzz":[1e400]}`: false} {
		if got := checkAcceptsJSON[in](t, open, []byte(text)); got != want {
			t.Errorf("open schema: acceptsJSON(%s) = %v, want %v", text, got, want)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func FuzzAcceptsJSON(f *testing.F) {
	for _, s := range []string{`{"name":"x"}`, `{"name":"x","count":3,"ratio":1.5,"on":true,"ptr":null,"any":"a"}`, `{"name":"x","other":[1]}`, `{"name":1e400}`} {
		f.Add([]byte(s))
	}
	argSchema, err := newInputSchema(nil, reflect.TypeFor[quickArgs]())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAcceptsJSON[quickArgs](t, argSchema.resolved, data)
	})
}
