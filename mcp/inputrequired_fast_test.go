package mcp

import (
	"encoding/json"
	"reflect"
	"testing"
)

// These tests hold the one-pass coders of inputrequired_fast.go to the
// generic encoding/json path they stand in for: where the fast decoder
// decodes, it must decode what the generic one does; where it declines, the
// generic one decides; and the encoders must write the same bytes.

const formElicitation = `{"method":"elicitation/create","params":{"message":"Which region?","requestedSchema":{"type":"object","properties":{"region":{"type":"string","title":"Region","minLength":2,"format":"uri","default":"eu-west-1"}},"required":["region"]}}}`

// inputRequiredTaken are results the fast decoder must decode itself: the
// shapes of every common round.
var inputRequiredTaken = []string{
	`{"resultType":"input_required","inputRequests":{"region":` + formElicitation + `},"requestState":"s1"}`,
	`{"_meta":{"serverInfo":{"name":"s","version":"1"}},"resultType":"input_required","requestState":"only"}`,
	`{"requestState":"x","inputRequests":{"a":` + formElicitation + `,"b":{"params":{"mode":"form","message":"m","requestedSchema":{"properties":{}}},"method":"elicitation/create"}}}`,
	`{"resultType":"input_required","inputRequests":{"mixed":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}},"e":` + formElicitation + `}}`,
	`{"resultType":"input_required","inputRequests":{"n":{"method":"elicitation/create","params":{"message":"Pick","requestedSchema":{"type":"object","properties":{"n":{"type":"number","minimum":1},"ok":{"type":"boolean"},"c":{"type":"string","enum":["a","b"]}}}}}}}`,
	`{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}},"unknown":[1,2,{"x":null}]}`,
	`{"resultType":"input_required","inputRequests":{"e":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"properties":{"q":{"type":"string","TITLE":"folded"}}}}}}}`,
	`{"resultType":"input_required","inputRequests":{"e":{"method":"elicitation/create","params":{"message":"\u00e9t\u00e9 <b>","requestedSchema":{"type":"object","properties":{"q":{"type":"string","description":"say \"hi\""}},"required":[]}}}}}`,
	// An empty requestState is a state: alone, it makes a valid result.
	`{"resultType":"input_required","requestState":""}`,
	`{"resultType":"input_required","inputRequests":{"region":` + formElicitation + `},"requestState":""}`,
	`{"resultType":"input_required","requestState":"","requestState":null}`,
	`{"resultType":"input_required","requestState":"x","requestState":""}`,
	`{"resultType":"input_required","requestState":"","requestState":"x"}`,
}

// inputRequiredDeclined are results the fast decoder must leave to the
// generic one, valid or not.
var inputRequiredDeclined = []string{
	`{"ResultType":"input_required","requestState":"folded key"}`,
	`{"resultType":"input_required","RequestState":""}`,
	`{"resultType":"input_required","requestState":null}`,
	`{"resultType":"input_required","inputRequests":{"e":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"q":{"type":"string","minLength":1.5}}}}}}}`,
	`{"resultType":"input_required","inputRequests":{}}`,
	`{"resultType":"input_required","inputRequests":{"e":{"method":"elicitation/create"}}}`,
	`{"resultType":"input_required","inputRequests":{"e":{"method":"unknown/kind","params":{}}}}`,
	`{"resultType":"input_required","requestState":7}`,
	`{"resultType":"input_required","requestState":"s",}`,
}

// inputRequestDeclined are requests the fast decoder of one request must
// leave to the generic one; a result holding them is still decoded in one
// pass, with the generic decoder for that request.
var inputRequestDeclined = []string{
	`{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"q":{"type":"string"}}},"_meta":{"k":1}}}`,
	`{"method":"elicitation/create","method":"elicitation/create","params":{"message":"m","requestedSchema":{"properties":{}}}}`,
	`{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"https://example.com"}}`,
	`{"method":"elicitation/create","params":{"Message":"folded","requestedSchema":{"properties":{}}}}`,
	`{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`,
}

func TestFastDecodeInputRequired(t *testing.T) {
	taken := append([]string{}, inputRequiredTaken...)
	for _, s := range inputRequestDeclined {
		if r, ok := fastDecodeInputRequest([]byte(s), nil); ok {
			t.Errorf("%s: the fast decoder decoded %#v; it should have declined", s, r)
		}
		taken = append(taken, `{"resultType":"input_required","inputRequests":{"k":`+s+`}}`)
	}
	for _, s := range taken {
		got, ok := fastDecodeInputRequired([]byte(s))
		if !ok {
			t.Errorf("%s: the fast decoder declined", s)
			continue
		}
		want, err := decodeInputRequiredGeneric([]byte(s))
		if err != nil {
			t.Errorf("%s: the fast decoder decoded what the generic one refuses: %v", s, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\nfast    %#v\ngeneric %#v", s, got, want)
		}
	}
	for _, s := range inputRequiredDeclined {
		if got, ok := fastDecodeInputRequired([]byte(s)); ok {
			t.Errorf("%s: the fast decoder decoded %#v; it should have declined", s, got)
		}
	}
}

// FuzzInputRequiredDecode: wherever the fast decoder decodes, the generic
// decoder decodes the same value.
func FuzzInputRequiredDecode(f *testing.F) {
	for _, s := range append(append([]string{}, inputRequiredTaken...), inputRequiredDeclined...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := fastDecodeInputRequired([]byte(s))
		if !ok {
			return
		}
		want, err := decodeInputRequiredGeneric([]byte(s))
		if err != nil {
			t.Fatalf("%q: fast decoder accepts, generic refuses: %v", s, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\nfast    %#v\ngeneric %#v", s, got, want)
		}
	})
}

func TestInputRequiredResultEncoding(t *testing.T) {
	n := 3
	cases := []InputRequiredResult{
		{RequestState: "only"},
		{ForceRequestState: true},
		{RequestState: "s", ForceRequestState: true},
		{InputRequests: InputRequests{"c": &ListRootsRequest{}}, ForceRequestState: true},
		{Result: Result{Meta: &ResultMetaObject{ServerInfo: &Implementation{Name: "s", Version: "1"}}},
			InputRequests: InputRequests{"region": NewElicitFormRequest("Which <region>?", ElicitRequestedSchema{
				Schema: "https://json-schema.org/draft/2020-12/schema",
				Properties: map[string]PrimitiveSchemaDefinition{
					"region": &StringSchema{Title: "Region", Description: "d\u2028", MinLength: &n, MaxLength: &n, Format: FormatEmail, Default: "x&y"},
					"count":  &NumberSchema{Type: TypeInteger},
					"ok":     &BooleanSchema{Title: "OK?", Description: "<yes>", Default: new(bool)},
					"plain":  &BooleanSchema{},
					"nil":    nil,
				},
				Required: []string{"region"},
			})},
			RequestState: "s\x01"},
		{InputRequests: InputRequests{
			"a": &ElicitRequest{Params: &ElicitRequestFormParams{Mode: ElicitModeForm, Message: "m"}},
			"b": NewElicitURLRequest("open", "https://example.com/?a=1&b=2"),
			"c": &ListRootsRequest{},
			"d": nil,
			"e": (*ElicitRequest)(nil),
			"f": &ElicitRequest{Params: &ElicitRequestFormParams{Message: "m", Meta: MetaObject{"k": 1}}},
		}},
	}
	for i, r := range cases {
		got, err := r.MarshalJSON()
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		want, err := r.marshalGeneric()
		if err != nil {
			t.Fatalf("case %d: generic: %v", i, err)
		}
		if string(got) != string(want) {
			t.Errorf("case %d:\nfast    %s\ngeneric %s", i, got, want)
		}
	}
	// AppendJSON writes an elicitation exactly as json.Marshal does.
	for k, r := range cases[1].InputRequests {
		got, err := AppendJSON(nil, r)
		want, wantErr := json.Marshal(r)
		if err != nil || wantErr != nil || string(got) != string(want) {
			t.Errorf("AppendJSON(%s) = %s, %v; json.Marshal %s, %v", k, got, err, want, wantErr)
		}
	}
	// A request that cannot be encoded fails as it did before.
	bad := InputRequiredResult{InputRequests: InputRequests{"x": &ElicitRequest{}}}
	_, err := bad.MarshalJSON()
	_, wantErr := bad.marshalGeneric()
	if err == nil || err.Error() != wantErr.Error() {
		t.Errorf("encoding an ElicitRequest without params: %v, want %v", err, wantErr)
	}
}

var elicitResultTaken = []string{
	`{"action":"accept","content":{"region":"eu-west-1","n":30,"f":-1.5e3,"ok":true,"no":false,"z":null,"tags":["a","b"],"e":[]}}`,
	`{"action":"decline"}`,
	`{"content":null,"action":"cancel","other":{"x":[1]}}`,
	`{"action":"accept","content":{"s":"caf\u00e9"}}`,
}

var elicitResultDeclined = []string{
	`{"Action":"accept"}`,
	`{"action":"accept","content":{"a":1},"content":{"b":2}}`,
	`{"action":"accept","content":{"o":{"nested":true}}}`,
	`{"action":"accept","content":{"l":[1,2]}}`,
	`{"action":"accept","_meta":{"k":"v"}}`,
	`{"action":"accept","content":[]}`,
	`{"action":1}`,
	`{"action":"accept","content":{"big":1e999}}`,
}

func TestFastDecodeElicitResult(t *testing.T) {
	for _, s := range elicitResultTaken {
		got, ok := fastDecodeElicitResult([]byte(s))
		if !ok {
			t.Errorf("%s: the fast decoder declined", s)
			continue
		}
		var want ElicitResult
		if err := json.Unmarshal([]byte(s), (*elicitResultPlain)(&want)); err != nil {
			t.Errorf("%s: generic refuses: %v", s, err)
			continue
		}
		if !reflect.DeepEqual(got, &want) {
			t.Errorf("%s:\nfast    %#v\ngeneric %#v", s, got, &want)
		}
	}
	for _, s := range elicitResultDeclined {
		if got, ok := fastDecodeElicitResult([]byte(s)); ok {
			t.Errorf("%s: the fast decoder decoded %#v; it should have declined", s, got)
		}
	}
}

type elicitResultPlain ElicitResult

// FuzzElicitResultDecode: wherever the fast decoder decodes an answer, the
// generic decoder decodes the same value, and both encoders agree on it.
func FuzzElicitResultDecode(f *testing.F) {
	for _, s := range append(append([]string{}, elicitResultTaken...), elicitResultDeclined...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := fastDecodeElicitResult([]byte(s))
		if !ok {
			return
		}
		var want ElicitResult
		if err := json.Unmarshal([]byte(s), (*elicitResultPlain)(&want)); err != nil {
			t.Fatalf("%q: fast decoder accepts, generic refuses: %v", s, err)
		}
		if !reflect.DeepEqual(got, &want) {
			t.Fatalf("%q:\nfast    %#v\ngeneric %#v", s, got, &want)
		}
		enc, err := got.MarshalJSON()
		wantEnc, wantErr := got.marshalGeneric()
		if (err != nil) != (wantErr != nil) || string(enc) != string(wantEnc) {
			t.Fatalf("%q: encodes as %s (%v), generic %s (%v)", s, enc, err, wantEnc, wantErr)
		}
	})
}

func TestElicitResultEncoding(t *testing.T) {
	cases := []ElicitResult{
		{Action: ActionDecline},
		{Action: ActionAccept, Content: map[string]any{"s": "<&>", "n": 1.5, "i": 3, "b": true, "z": nil,
			"l": []any{"a"}, "ls": []string{"x", "y"}, "nl": []string(nil)}},
		{Action: ActionAccept, Meta: MetaObject{"k": "v"}},
	}
	for i, r := range cases {
		got, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := r.marshalGeneric()
		if string(got) != string(want) {
			t.Errorf("case %d:\nfast    %s\ngeneric %s", i, got, want)
		}
	}
	bad := ElicitResult{Action: ActionAccept, Content: map[string]any{"c": make(chan int)}}
	if _, err := bad.MarshalJSON(); err == nil {
		t.Error("encoding a channel succeeded")
	}
}

// BenchmarkDecodeInputRequired decodes the InputRequiredResult of a form
// elicitation round, in one pass and through encoding/json.
func BenchmarkDecodeInputRequired(b *testing.B) {
	raw := []byte(inputRequiredTaken[0])
	b.Run("one-pass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeInputRequired(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeInputRequiredGeneric(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkEncodeInputRequired encodes the InputRequiredResult of a form
// elicitation round, by hand and through encoding/json.
func BenchmarkEncodeInputRequired(b *testing.B) {
	r, err := decodeInputRequiredGeneric([]byte(inputRequiredTaken[0]))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.marshalGeneric(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// elicitParamsTaken are elicitation/create params (as a 2025-11-25 server
// sends them over its back-channel) that DecodeElicitRequestParams decodes
// in one pass; elicitParamsDeclined go through encoding/json.
var elicitParamsTaken = []string{
	`{"message":"Which region?","requestedSchema":{"type":"object","properties":{"region":{"type":"string","description":"where"}},"required":["region"]}}`,
	`{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean","title":"OK?","description":"d","default":true},"no":{"type":"boolean","default":false},"bare":{"type":"boolean","default":null}}}}`,
	`{"mode":null,"message":"m","requestedSchema":{"properties":{"n":{"type":"number"},"b":{"type":"boolean","extra":[1]}}}}`,
}

var elicitParamsDeclined = []string{
	`{"mode":"url","message":"m","url":"https://example.com","elicitationId":"e"}`,
	`{"message":"m","_meta":{"k":1},"requestedSchema":{"properties":{}}}`,
	`{"mode":"carrier-pigeon","message":"m"}`,
	`[]`,
}

// booleanFieldsDeclined are boolean fields the one-pass decoder leaves to
// the generic one (the form holding them is still decoded in one pass).
var booleanFieldsDeclined = []string{
	`{"type":"boolean","default":"yes"}`,
	`{"type":"boolean","Default":true}`,
	`{"type":"boolean","type":"boolean"}`,
	`{"type":"boolean","enum":[true]}`,
	`{"type":"boolean","default":1}`,
	`{"title":"no type"}`,
	`{"type":"string"}`,
}

func TestDecodeElicitRequestParamsFast(t *testing.T) {
	for _, s := range elicitParamsTaken {
		if _, ok := fastDecodeElicitForm([]byte(s), newArena([]byte(s))); !ok {
			t.Errorf("%s: declined, want decoded in one pass", s)
		}
		checkElicitParams(t, s)
	}
	for _, s := range elicitParamsDeclined {
		if s[0] == '{' {
			if p, ok := fastDecodeElicitForm([]byte(s), newArena([]byte(s))); ok {
				t.Errorf("%s: decoded in one pass as %#v, want declined", s, p)
			}
		}
		checkElicitParams(t, s)
	}
	for _, f := range booleanFieldsDeclined {
		if b, ok := fastDecodeBooleanSchema([]byte(f), nil); ok {
			t.Errorf("%s: decoded in one pass as %#v, want declined", f, b)
		}
		checkElicitParams(t, `{"message":"m","requestedSchema":{"properties":{"f":`+f+`}}}`)
	}
}

// checkElicitParams checks that DecodeElicitRequestParams and the generic
// decoder agree on s: the same value, or both an error.
func checkElicitParams(t *testing.T, s string) {
	t.Helper()
	got, gotErr := DecodeElicitRequestParams([]byte(s))
	want, wantErr := decodeElicitRequestParamsGeneric([]byte(s))
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("%s: error %v, generic %v", s, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\nfast    %#v\ngeneric %#v", s, got, want)
	}
}

func FuzzElicitRequestParamsDecode(f *testing.F) {
	for _, s := range append(append([]string{}, elicitParamsTaken...), elicitParamsDeclined...) {
		f.Add(s)
	}
	for _, s := range booleanFieldsDeclined {
		f.Add(`{"message":"m","requestedSchema":{"properties":{"f":` + s + `}}}`)
	}
	f.Fuzz(checkElicitParams)
}
