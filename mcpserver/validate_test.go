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

// constrainedArgs has fields with mcp tags, whose constraints the quick
// check evaluates itself.
type constrainedArgs struct {
	Units string  `json:"units" mcp:"enum=celsius,enum=fahrenheit"`
	Days  int     `json:"days,omitempty" mcp:"minimum=1,maximum=14,default=3"`
	City  string  `json:"city,omitempty" mcp:"minLength=2,maxLength=5,pattern='^[a-zé]+$'"`
	Ratio float64 `json:"ratio,omitempty" mcp:"enum=0.5,enum=1"`
	On    *bool   `json:"on,omitempty" mcp:"enum=true"`
	Mail  string  `json:"mail,omitempty" mcp:"format=email,title=E-mail"`
	Tiny  int8    `json:"tiny,omitempty" mcp:"minimum=-3"`
	Code  string  `json:"code,omitempty" mcp:"minLength=2"`
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
	withMinLength, err := resolveForm(mcp.ElicitRequestedSchema{Properties: map[string]mcp.PrimitiveSchemaDefinition{
		"region": &mcp.StringSchema{MinLength: new(int)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	constrained, err := newInputSchema(nil, reflect.TypeFor[constrainedArgs]())
	if err != nil {
		t.Fatal(err)
	}
	titled, err := resolveForm(mcp.ElicitRequestedSchema{Properties: map[string]mcp.PrimitiveSchemaDefinition{
		"units": &mcp.TitledSingleSelectEnumSchema{OneOf: []mcp.EnumOption{{Const: "celsius", Title: "C"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}

	validators := map[string]*validator{
		"inferred arguments":    argSchema.resolved,
		"rich arguments":        richSchema.resolved,
		"inferred form":         formV,
		"form with a minLength": withMinLength,
		"tagged arguments":      constrained.resolved,
		"titled enum form":      titled,
	}
	compiled := map[string]bool{
		"inferred arguments": true, "rich arguments": false, "inferred form": true, "form with a minLength": true,
		"tagged arguments": true, "titled enum form": false,
	}
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
		"minLength":                   {`{"type":"object","properties":{"a":{"type":"string","minLength":2}}}`, true},
		"string constraints":          {`{"type":"object","properties":{"s":{"type":"string","minLength":2,"maxLength":4,"pattern":"^[a-z]+$"}}}`, true},
		"unanchored pattern":          {`{"type":"object","properties":{"s":{"pattern":"b"}}}`, true},
		"number bounds":               {`{"type":"object","properties":{"n":{"type":"number","minimum":-1.5,"maximum":10},"i":{"type":"integer","minimum":0,"maximum":3}}}`, true},
		"untyped bounds":              {`{"type":"object","properties":{"u":{"minimum":2,"minLength":2,"maxLength":2}}}`, true},
		"enum mixed":                  {`{"type":"object","properties":{"e":{"enum":["a",1,true,null]}}}`, true},
		"nullable enum":               {`{"type":"object","properties":{"e":{"type":["null","string"],"enum":["x",null]}}}`, true},
		"enum of an object":           {`{"type":"object","properties":{"e":{"enum":[{"a":1}]}}}`, false},
		"format":                      {`{"type":"object","properties":{"f":{"type":"string","format":"email"}}}`, true},
		"const":                       {`{"type":"object","properties":{"e":{"const":"a"}}}`, false},
		"exclusiveMinimum":            {`{"type":"object","properties":{"n":{"exclusiveMinimum":1}}}`, false},
		"multipleOf":                  {`{"type":"object","properties":{"n":{"multipleOf":2}}}`, false},
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
		"enum":                        {`{"type":"object","properties":{"a":{"enum":[1,2]}}}`, true},
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
		`{"s":"ab"}`, `{"s":"a"}`, `{"s":"abcde"}`, `{"s":"AB"}`, `{"s":"a\u00e9"}`, `{"s":"\u00e9\u00e9"}`, `{"s":"abc","n":1}`,
		`{"s":null}`, `{"s":2}`, `{"n":-1.5}`, `{"n":-2}`, `{"n":10}`, `{"n":10.0001}`, `{"n":"1"}`, `{"n":[]}`, `{"i":3}`,
		`{"i":4}`, `{"i":-0}`, `{"i":-1}`, `{"i":2.5}`, `{"e":"a"}`, `{"e":"b"}`, `{"e":1}`, `{"e":1.0}`, `{"e":2}`, `{"e":true}`,
		`{"e":false}`, `{"e":null}`, `{"e":"x"}`, `{"e":{}}`, `{"e":[]}`, `{"f":"not an email"}`, `{"u":1}`, `{"u":3}`, `{"u":"x"}`,
		`{"u":"xy"}`, `{"u":"xyz"}`, `{"u":[1]}`, `{"u":{}}`, `{"s":"abc"}`, `{"s":"xbx"}`,
		`{"units":"celsius"}`, `{"units":"kelvin"}`, `{"units":"Celsius"}`, `{"units":"celsius","days":1}`, `{"units":"celsius","days":0}`,
		`{"units":"celsius","days":14}`, `{"units":"celsius","days":15}`, `{"units":"celsius","days":3.5}`, `{"units":"celsius","city":"é"}`,
		`{"units":"celsius","city":"éé"}`, `{"units":"celsius","city":"abcdef"}`, `{"units":"celsius","city":"ab1"}`,
		`{"units":"celsius","ratio":0.5}`, `{"units":"celsius","ratio":1}`, `{"units":"celsius","ratio":2}`, `{"units":"celsius","on":true}`,
		`{"units":"celsius","on":false}`, `{"units":"celsius","on":null}`, `{"units":"celsius","mail":"x"}`, `{"units":"celsius","tiny":-3}`,
		`{"units":"celsius","tiny":-4}`, `{"units":"celsius","tiny":127}`, `{"units":"celsius","tiny":128}`,
		`{"units":null}`, `{"units":1}`,
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

// The quick check judges the mcp tag's constraints from the text, and
// declines a string with escapes (it would have to decode it).
func TestAcceptsJSONConstraints(t *testing.T) {
	s, err := newInputSchema(nil, reflect.TypeFor[constrainedArgs]())
	if err != nil {
		t.Fatal(err)
	}
	v := s.resolved
	for _, c := range []struct {
		text string
		fast bool
	}{
		{`{"units":"celsius"}`, true}, {`{"units":"fahrenheit","days":14,"city":"éa","ratio":0.5,"on":true,"mail":"m"}`, true},
		{`{"units":"celsius","on":null,"ratio":1.0,"tiny":-3}`, true}, {`{"units":"kelvin"}`, false}, {`{"units":"celsius","days":0}`, false},
		{`{"units":"celsius","days":15}`, false}, {`{"units":"celsius","city":"a"}`, false}, {`{"units":"celsius","city":"abcdef"}`, false},
		{`{"units":"celsius","city":"ab1"}`, false}, {`{"units":"celsius","ratio":0.25}`, false}, {`{"units":"celsius","on":false}`, false},
		{`{"units":"celsius","tiny":-4}`, false}, {`{"units":"cels\u0069us"}`, false}, {`{"units":"celsius","city":"\u00e9a"}`, false},
		// Lengths count code points, not bytes, and never the escapes.
		{`{"units":"celsius","city":"é"}`, false}, {`{"units":"celsius","code":"é"}`, false}, {`{"units":"celsius","code":"\u00e9"}`, false},
		{`{"units":"celsius","code":"éé"}`, true},
	} {
		accepted := checkAcceptsJSON[constrainedArgs](t, v, []byte(c.text))
		if accepted != c.fast {
			t.Errorf("acceptsJSON(%s) = %v, want %v", c.text, accepted, c.fast)
		}
		// Whatever the quick check says, the verdict is jsonschema-go's.
		var instance any
		if err := jsonv2.Unmarshal([]byte(c.text), &instance); err != nil {
			t.Fatal(err)
		}
		if (v.Validate(instance) == nil) != (v.full.Validate(instance) == nil) {
			t.Errorf("Validate(%s) disagrees with jsonschema-go", c.text)
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
	constrained, err := newInputSchema(nil, reflect.TypeFor[constrainedArgs]())
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"units":"celsius","days":3,"city":"ab","ratio":1,"on":true,"tiny":-3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAcceptsJSON[quickArgs](t, argSchema.resolved, data)
		checkAcceptsJSON[constrainedArgs](t, constrained.resolved, data)
	})
}
