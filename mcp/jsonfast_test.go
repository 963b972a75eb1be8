package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/internal/jsontext"
	"github.com/parley-mcp/parley/jsonrpc"
)

// This file checks the hand-written encoders and decoders of the hot path
// against the generic encoding/json path they replace, which it keeps as
// reference implementations.

// refDecodeCallToolResult is how CallToolResult was decoded before it had
// a one-pass decoder: encoding/json, through alias types.
func refDecodeCallToolResult(data []byte, r *CallToolResult) error {
	type plain CallToolResult
	*r = CallToolResult{}
	w := struct {
		*plain
		Content           refContentList  `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	r.Content = w.Content
	if len(w.StructuredContent) > 0 && !isNullJSON(w.StructuredContent) {
		r.StructuredContent = w.StructuredContent
	}
	return nil
}

type refContentList []ContentBlock

func (l *refContentList) UnmarshalJSON(data []byte) error {
	if isNullJSON(data) {
		*l = nil
		return nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return err
	}
	out := make([]ContentBlock, len(raws))
	for i, raw := range raws {
		c, err := refDecodeContentBlock(raw)
		if err != nil {
			return fmt.Errorf("content[%d]: %w", i, err)
		}
		out[i] = c
	}
	*l = out
	return nil
}

// refDecodeContentBlock is DecodeContentBlock as it was: text blocks
// through encoding/json (the other types still take that path).
func refDecodeContentBlock(data []byte) (ContentBlock, error) {
	typ, _, err := peekString(data, "type")
	if err != nil {
		return nil, err
	}
	if typ != "text" {
		return DecodeContentBlock(data)
	}
	type plain TextContent
	c := new(TextContent)
	if err := unmarshalTagged(data, "text", (*plain)(c), ErrUnknownContentType); err != nil {
		return nil, err
	}
	return c, nil
}

// refDecodeCallToolOutcome is DecodeCallToolOutcome as it was: a scan for
// resultType, then the generic decoder (a task through encoding/json).
func refDecodeCallToolOutcome(raw []byte) (CallToolOutcome, error) {
	rt, err := ParseResultType(raw)
	if err != nil && rt == ResultTypeTask {
		t := new(CreateTaskResult)
		if err := json.Unmarshal(raw, t); err != nil {
			return nil, err
		}
		if t.TaskID == "" || t.Status == "" {
			return nil, err
		}
		return t, nil
	}
	if err != nil {
		return nil, err
	}
	if rt == ResultTypeInputRequired {
		ir, err := decodeInputRequired(raw)
		if err != nil {
			return nil, err
		}
		return ir, nil
	}
	r := new(CallToolResult)
	if err := refDecodeCallToolResult(raw, r); err != nil {
		return nil, err
	}
	return r, nil
}

// refMarshal is the encoding the hot-path types had before their
// hand-written encoders: encoding/json through alias types (members of
// other hand-written types use their own encoders, checked separately).
func refMarshal(v any) ([]byte, error) {
	switch v := v.(type) {
	case *CallToolResult:
		if v == nil {
			break
		}
		type plain CallToolResult
		r := *v
		r.Content = nonNilContent(r.Content)
		return json.Marshal(plain(r))
	case *TextContent:
		if v == nil {
			break
		}
		type plain TextContent
		b, err := json.Marshal(plain(*v))
		return prependMember(typeText, b, err)
	case *ResultMetaObject:
		if v == nil {
			break
		}
		return json.Marshal(verbatim{v.marshalVerbatim})
	case *RequestMetaObject:
		if v == nil {
			break
		}
		return json.Marshal(verbatim{v.marshalVerbatim})
	case *Implementation:
		type plain Implementation
		return json.Marshal((*plain)(v))
	case *ClientCapabilities:
		type plain ClientCapabilities
		return json.Marshal((*plain)(v))
	case *CallToolRequestParams:
		if v == nil {
			break
		}
		// An empty requestState is written when forced: encoding/json
		// says "present and empty" with a *string.
		type plain CallToolRequestParams
		var state *string
		if v.RequestState != "" || v.ForceRequestState {
			state = &v.RequestState
		}
		return json.Marshal(struct {
			*plain
			RequestState *string `json:"requestState,omitempty"`
		}{(*plain)(v), state})
	case *GetPromptRequestParams:
		if v == nil {
			break
		}
		type plain GetPromptRequestParams
		var state *string
		if v.RequestState != "" || v.ForceRequestState {
			state = &v.RequestState
		}
		return json.Marshal(struct {
			*plain
			RequestState *string `json:"requestState,omitempty"`
		}{(*plain)(v), state})
	case *ReadResourceRequestParams:
		if v == nil {
			break
		}
		type plain ReadResourceRequestParams
		var state *string
		if v.RequestState != "" || v.ForceRequestState {
			state = &v.RequestState
		}
		return json.Marshal(struct {
			*plain
			RequestState *string `json:"requestState,omitempty"`
		}{(*plain)(v), state})
	}
	return json.Marshal(v)
}

// verbatim lets encoding/json compact (or reject) what a reference encoder
// wrote, as it did when that encoder was the type's MarshalJSON.
type verbatim struct{ f func() ([]byte, error) }

func (v verbatim) MarshalJSON() ([]byte, error) { return v.f() }

type failingMarshaler struct{}

func (failingMarshaler) MarshalJSON() ([]byte, error) { return nil, errors.New("boom") }

// tricky holds strings that exercise every escaping rule of encoding/json.
const tricky = "a<b>&c\u2028d\u2029e\x01\x1f\x7f\xff\xc3\"\\/\n\r\t\b\féü😀"

// encodeCases are values of the hot-path types, valid or not.
func encodeCases() []any {
	info := &Implementation{Name: tricky, Version: "1", Title: "t", Description: "d", WebsiteURL: "https://x/?a=1&b=2",
		Icons: []Icon{{Src: "data:x<", Sizes: []string{"48x48"}}}}
	var rawID jsonrpc.ID
	if err := rawID.UnmarshalJSON([]byte(`"<raw>&\u2028"`)); err != nil {
		panic(err)
	}
	meta := &ResultMetaObject{ServerInfo: info, SubscriptionID: rawID, Extra: MetaExtra{
		"z": json.RawMessage(" { \"a\" : [1, 2, \"x y<\"] }\n"), "a&": json.RawMessage("\"\u2028\""), "n": nil,
		MetaKeyServerInfo: json.RawMessage("1")}}
	many := MetaExtra{}
	for i := range 12 {
		many[fmt.Sprintf("k%02d", 11-i)] = json.RawMessage(fmt.Sprint(i))
	}
	caps := []*ClientCapabilities{
		{},
		{Roots: &RootsCapability{}, Sampling: &SamplingCapability{}, Elicitation: &ElicitationCapability{}},
		{Roots: &RootsCapability{ListChanged: true}, Sampling: &SamplingCapability{Context: &struct{}{}, Tools: &struct{}{}},
			Elicitation:  &ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}},
			Experimental: map[string]json.RawMessage{"b": json.RawMessage(" {} "), "a<": nil},
			Extensions:   map[string]json.RawMessage{"io.x/ui": json.RawMessage(`{"k":"v&"}`)}},
		{Sampling: &SamplingCapability{Tools: &struct{}{}}, Elicitation: &ElicitationCapability{URL: &struct{}{}}, Experimental: map[string]json.RawMessage{}},
		{Extensions: map[string]json.RawMessage{"x": json.RawMessage("{bad")}},
		{Extensions: map[string]json.RawMessage{"x": {}}},
		nil,
	}
	reqMetas := []*RequestMetaObject{
		{},
		{ProtocolVersion: Version20260728, ClientCapabilities: caps[0], ClientInfo: &Implementation{Name: "c", Version: "1"}},
		{ProtocolVersion: Version20260728, ClientCapabilities: caps[2], ClientInfo: info, LogLevel: "info", ProgressToken: jsonrpc.Int64ID(7),
			Traceparent: "00-x", Tracestate: "a=b&c", Baggage: tricky, Extra: MetaExtra{"k": json.RawMessage("[ 1 ]"), MetaKeyLogLevel: json.RawMessage(`"x"`)}},
		{ProgressToken: rawID, Extra: many},
		{Extra: MetaExtra{"bad": json.RawMessage("nope")}},
		{ClientCapabilities: caps[4]},
		nil,
	}
	texts := []*TextContent{
		{}, {Text: tricky},
		{Text: "x", Annotations: &Annotations{Audience: []Role{RoleUser}, Priority: new(float64)}, Meta: MetaObject{"k": "<v>", "n": 1.5}},
		{Text: "x", Meta: MetaObject{}},
		{Text: "x", Meta: MetaObject{"f": func() {}}},
		nil,
	}
	params := []*CallToolRequestParams{
		{},
		{Name: tricky, Arguments: json.RawMessage(" {\n \"a\" : \"<x>\" }\n"), RequestState: tricky,
			InputResponses: InputResponses{"k": json.RawMessage(`{"action":"accept"}`), "a": nil}},
		{Name: "x", Arguments: json.RawMessage{}},
		{Name: "x", Arguments: json.RawMessage("{bad")},
		{Name: "x", InputResponses: InputResponses{"k": json.RawMessage("{")}},
		{Name: "x", InputResponses: InputResponses{}},
		{Name: "x", ForceRequestState: true},
		{Name: "x", RequestState: tricky, ForceRequestState: true},
		{Name: "x", Arguments: json.RawMessage("{bad"), ForceRequestState: true},
		nil,
	}
	prompts := []*GetPromptRequestParams{
		{},
		{Meta: &RequestMetaObject{ProtocolVersion: Version20260728, ClientCapabilities: caps[2]}, Name: tricky,
			Arguments:      map[string]string{tricky: tricky, "b": "", "a": "<&>", "ÿ": " "},
			InputResponses: InputResponses{"k": json.RawMessage(` {"action" : "accept"} `)}, RequestState: tricky},
		{Name: "p", Arguments: map[string]string{}, ForceRequestState: true},
		{Name: "p", InputResponses: InputResponses{"k": json.RawMessage("{")}},
		{Meta: &RequestMetaObject{ClientCapabilities: caps[4]}, Name: "bad meta"},
		nil,
	}
	reads := []*ReadResourceRequestParams{
		{},
		{Meta: &RequestMetaObject{ProtocolVersion: Version20260728}, URI: "file:///" + tricky, InputResponses: InputResponses{"a": nil}, RequestState: "s"},
		{URI: "u", ForceRequestState: true},
		{URI: "u", RequestState: "s", ForceRequestState: true},
		{URI: "u", InputResponses: InputResponses{"k": json.RawMessage("{")}, ForceRequestState: true},
		nil,
	}
	results := []*CallToolResult{
		{},
		TextResult("ok"),
		ErrorResult(tricky),
		{Result: Result{Meta: meta, ResultType: ResultTypeComplete}, Content: []ContentBlock{texts[1], texts[2], nil, (*TextContent)(nil),
			NewImageContent([]byte{1, 2}, "image/png"), &ResourceLink{URI: "u", Name: "n"},
			NewEmbeddedResource(&TextResourceContents{URI: "u", Text: "t"})},
			StructuredContent: json.RawMessage(" {\"a\" : \"<&>\"} "), IsError: true},
		{Result: Result{Meta: &ResultMetaObject{}, ResultType: "weird<"}, Content: []ContentBlock{}},
		{StructuredContent: map[string]any{"b": 1, "a": []int{1}}},
		{StructuredContent: struct{ X string }{"<"}},
		{StructuredContent: "str<"},
		{StructuredContent: json.RawMessage(nil)},
		{StructuredContent: json.RawMessage{}},
		{StructuredContent: json.RawMessage("{bad")},
		{StructuredContent: func() {}},
		{StructuredContent: failingMarshaler{}},
		{StructuredContent: (*CallToolResult)(nil)},
		{StructuredContent: TextResult("nested")},
		{Content: []ContentBlock{&EmbeddedResource{}}},
		{Content: []ContentBlock{texts[4]}},
		{Result: Result{Meta: &ResultMetaObject{Extra: MetaExtra{"x": json.RawMessage("{")}}}},
		nil,
	}
	var out []any
	for _, c := range caps {
		out = append(out, c)
	}
	for _, m := range reqMetas {
		out = append(out, m, &CallToolRequestParams{Meta: m, Name: "n"})
	}
	out = append(out, info, &Implementation{}, (*Implementation)(nil), meta, &ResultMetaObject{}, (*ResultMetaObject)(nil),
		&ResultMetaObject{SubscriptionID: rawID, Extra: many}, &ResultMetaObject{Extra: MetaExtra{"x": json.RawMessage("{")}})
	for _, p := range params {
		out = append(out, p)
	}
	for _, p := range prompts {
		out = append(out, p)
	}
	for _, p := range reads {
		out = append(out, p)
	}
	for _, c := range texts {
		out = append(out, c)
	}
	for _, r := range results {
		out = append(out, r)
	}
	return append(out, json.RawMessage(" [1, \"<\"]\n"), json.RawMessage(nil), json.RawMessage("x"), "s<", nil, 42)
}

// TestAppendJSON checks that json.Marshal (through the types' MarshalJSON)
// and AppendJSON write what the generic encoding wrote, and fail where it
// failed.
func TestAppendJSON(t *testing.T) {
	for i, v := range encodeCases() {
		want, wantErr := refMarshal(v)
		got, err := json.Marshal(v)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Errorf("case %d (%T): json.Marshal = %s, %v; reference %s, %v", i, v, got, err, want, wantErr)
		}
		prefix := []byte("prefix:")
		app, appErr := AppendJSON(prefix[:len(prefix):len(prefix)], v)
		switch {
		case wantErr != nil:
			if appErr == nil || appErr.Error() != err.Error() || string(app) != "prefix:" {
				t.Errorf("case %d (%T): AppendJSON = %q, %v; json.Marshal failed with %v", i, v, app, appErr, err)
			}
		case appErr != nil || string(app) != "prefix:"+string(want):
			t.Errorf("case %d (%T): AppendJSON = %s, %v; want prefix:%s", i, v, app, appErr, want)
		}
		// Marshal is json.Marshal, bytes and errors.
		m, mErr := Marshal(v)
		if (mErr != nil) != (err != nil) || (mErr != nil && mErr.Error() != err.Error()) || !bytes.Equal(m, got) {
			t.Errorf("case %d (%T): Marshal = %s, %v; json.Marshal %s, %v", i, v, m, mErr, got, err)
		}
		// The value receivers must agree with the pointers.
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() {
			b, err := json.Marshal(rv.Elem().Interface())
			if (err != nil) != (wantErr != nil) || !bytes.Equal(b, want) {
				t.Errorf("case %d (%T value): json.Marshal = %s, %v; want %s", i, v, b, err, want)
			}
		}
	}
}

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", tricky, "\xed\xa0\x80", "\u2027\u2028\u202a", strings.Repeat("é<", 100), "\x00"} {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", tricky, "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	})
}

// FuzzAppendCompactJSON checks that raw JSON is checked, compacted and
// escaped exactly as encoding/json does with a json.RawMessage.
func FuzzAppendCompactJSON(f *testing.F) {
	for _, s := range []string{`{}`, ` [1, "a b", {"c" : "<&>\u2028"}] `, "\"\u2028\u2029\"", `{"a":1,}`, ``, ` `, `"\"`, `1 2`, "[\"\xff\"]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, wantErr := json.Marshal(json.RawMessage(s))
		got, err := appendCompactJSON([]byte("x"), []byte(s))
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: appendCompactJSON error %v, encoding/json %v", s, err, wantErr)
		}
		if err == nil && string(got) != "x"+string(want) {
			t.Fatalf("%q: appendCompactJSON = %s, want x%s", s, got, want)
		}
	})
}

// FuzzMarshalRawMessage checks that Marshal of a json.RawMessage (the
// pre-encoded arguments SetArguments takes) gives json.Marshal's bytes and
// errors.
func FuzzMarshalRawMessage(f *testing.F) {
	for _, s := range []string{`{}`, ` {"a" : [1, "<&>\u2028"]} `, `{"a":1,}`, ``, `null`, `"\"`, `1 2`, "[\"\xff\"]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, wantErr := json.Marshal(json.RawMessage(s))
		got, err := Marshal(json.RawMessage(s))
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
			t.Fatalf("%q: Marshal = %s, %v; json.Marshal %s, %v", s, got, err, want, wantErr)
		}
	})
}

// callToolResultSeeds are inputs for the decoder comparisons: valid and
// invalid results, with every member in its odd forms.
var callToolResultSeeds = []string{
	`{}`, `null`, `[]`, `1`, `"x"`, ``, `{`, `{"content":[]}`, `{"content":null}`, `{"content":{}}`, `{"content":[null]}`,
	`{"content":[{"type":"text","text":"hi"}]}`,
	`{"resultType":"complete","content":[{"type":"text","text":"hi","annotations":{"priority":0.5},"_meta":{"a":1}}],` +
		`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}`,
	`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"image","data":"AQI=","mimeType":"image/png"},{"type":"resource_link","uri":"u","name":"n"}]}`,
	`{"content":[{"type":"video"}]}`, `{"content":[{"text":"no type"}]}`, `{"content":[{"type":1}]}`, `{"content":[{"type":"text","text":1}]}`,
	`{"content":[{"type":"text","text":null}]}`, `{"content":[{"type":"text","text":"x","type":"image"}]}`, `{"content":[{"type":"text","TEXT":"upper"}]}`,
	`{"content":[{"Type":"text","text":"x"}]}`, `{"content":[{"type":"te\u0078t","text":"esc\u00e9\n"}]}`, "{\"content\":[{\"type\":\"text\",\"text\":\"bad\xffutf8\"}]}",
	`{"content":[{"type":"text","text":"x","annotations":null}]}`, `{"content":[{"type":"text","text":"x","annotations":5}]}`,
	`{"content":[{"type":"text","text":"x","annotations":{"priority":1},"annotations":{"lastModified":"t"}}]}`,
	`{"content":[{"type":"text","text":"x","_meta":{"a":1},"_meta":{"b":2}}]}`, `{"content":[{"type":"text","text":"x","_meta":{"a":1},"_meta":null}]}`,
	`{"isError":true}`, `{"isError":null}`, `{"isError":"yes"}`, `{"isError":true,"isError":null}`, `{"ISERROR":true}`,
	`{"resultType":"input_required","requestState":"s"}`, `{"resultType":"input_required"}`, `{"resultType":"input_required","content":5,"requestState":"s"}`,
	`{"resultType":"task"}`, `{"resultType":7}`, `{"resultType":null}`, `{"resultType":"complete","resultType":null}`, `{"ResultType":"task"}`,
	`{"resultType":"compl\u0065te"}`, `{"resultType":"complete","content":5}`, `{"resultType":"task","content":5}`,
	`{"structuredContent":{"a" : 1 }}`, `{"structuredContent":{"a":1},"structuredContent":null}`, `{"StructuredContent":[1]}`,
	`{"_meta":null}`, `{"_meta":5}`, `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"a","version":"1"}},"_meta":null}`, `{"_META":{"x":1}}`,
	`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"a","version":"1"},"io.modelcontextprotocol/serverInfo":null}}`,
	`{"_meta":{"io.modelcontextprotocol/subscriptionId":"s-1","k":[1, 2]}}`, `{"_meta":{"io.modelcontextprotocol/subscriptionId":true}}`,
	`{"content":[],"extra":{"deep":[[[]]]},"\u0063ontent":[{"type":"text","text":"via escape"}]}`, `{"content":[] , }`, `{"content":[1,]}`, `{"content":[]} x`,
	`{"content":[{"type":"text","text":"x"}],"content":[{"type":"text","text":"y"}]}`, `{"ſtructuredContent":1}`, `{"K":1}`,
	`{"content":[{"type":"resource","resource":{"uri":"u","text":"t"}}]}`, `{"content":[{"type":"resource"}]}`,
}

// FuzzCallToolResultDecode compares the one-pass decoders of tools/call
// results with the generic encoding/json path they replace: both must
// accept the same inputs, decode them to equal values (which re-encode
// equally), and classify resultType the same way.
func FuzzCallToolResultDecode(f *testing.F) {
	for _, s := range callToolResultSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		var got, want CallToolResult
		err := got.UnmarshalJSON(data)
		wantErr := refDecodeCallToolResult(data, &want)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: UnmarshalJSON error %v, generic path %v", s, err, wantErr)
		}
		if err == nil {
			checkSameResult(t, s, &got, &want)
		}

		out, err := DecodeCallToolOutcome(data)
		refOut, wantErr := refDecodeCallToolOutcome(data)
		if (err != nil) != (wantErr != nil) || errors.Is(err, ErrUnknownResultType) != errors.Is(wantErr, ErrUnknownResultType) {
			t.Fatalf("%q: DecodeCallToolOutcome error %v, generic path %v", s, err, wantErr)
		}
		if err != nil {
			if out != nil {
				t.Fatalf("%q: DecodeCallToolOutcome returned %#v with its error", s, out)
			}
			return
		}
		if reflect.TypeOf(out) != reflect.TypeOf(refOut) {
			t.Fatalf("%q: DecodeCallToolOutcome gives %T, generic path %T", s, out, refOut)
		}
		if r, ok := out.(*CallToolResult); ok {
			checkSameResult(t, s, r, refOut.(*CallToolResult))
		}
	})
}

func checkSameResult(t *testing.T, in string, got, want *CallToolResult) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: decoded %#v, generic path %#v", in, got, want)
	}
	gb, gerr := AppendJSON(nil, got)
	wb, werr := refMarshal(want)
	if (gerr != nil) != (werr != nil) || !bytes.Equal(gb, wb) {
		t.Fatalf("%q: re-encodes as %s (%v), generic path %s (%v)", in, gb, gerr, wb, werr)
	}
}

// TestDecodedStringsOwnTheirBytes checks that strings taken from an arena
// do not alias the input, which the caller may reuse.
func TestDecodedStringsOwnTheirBytes(t *testing.T) {
	in := `{"content":[{"type":"text","text":"hello"}],"resultType":"other","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"9"}}}`
	buf := []byte(in)
	var r CallToolResult
	if err := r.UnmarshalJSON(buf); err != nil {
		t.Fatal(err)
	}
	out, err := DecodeCallToolOutcome(buf)
	if err == nil || !errors.Is(err, ErrUnknownResultType) {
		t.Fatalf("DecodeCallToolOutcome: %v, %v", out, err)
	}
	buf2 := []byte(strings.Replace(in, `"other"`, `"complete"`, 1))
	out, err = DecodeCallToolOutcome(buf2)
	if err != nil {
		t.Fatal(err)
	}
	var p CallToolRequestParams
	pin := []byte(`{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"cli","version":"2"},"traceparent":"tp"},"name":"tool","requestState":"st"}`)
	if err := p.UnmarshalJSON(pin); err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{buf, buf2, pin} {
		for i := range b {
			b[i] = 'x'
		}
	}
	c := out.(*CallToolResult)
	if r.Content[0].(*TextContent).Text != "hello" || r.ResultType != "other" || r.ServerInfo().Name != "srv" ||
		c.Content[0].(*TextContent).Text != "hello" || c.ServerInfo().Version != "9" {
		t.Errorf("decoded result aliases its input: %+v %+v", r, c)
	}
	if p.Name != "tool" || p.RequestState != "st" || p.Meta.ClientInfo.Name != "cli" || p.Meta.Traceparent != "tp" {
		t.Errorf("decoded params alias their input: %+v %+v", p, p.Meta)
	}
}

// FuzzRequestIDDecode checks jsonrpc.ID's in-place validation against
// encoding/json, which it replaced.
func FuzzRequestIDDecode(f *testing.F) {
	for _, s := range []string{`"a"`, `1`, `-0.5e+3`, `null`, ` "x" `, `"\u00e9\n"`, `"\x"`, `01`, `1.`, `"a"b`, `true`, "\"\xff\"", `"\ud800"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var id jsonrpc.ID
		err := id.UnmarshalJSON([]byte(s))
		data := bytes.TrimSpace([]byte(s))
		var ok bool
		switch {
		case len(data) == 0:
		case string(data) == "null":
			ok = true
		case data[0] == '"':
			var str string
			ok = json.Unmarshal(data, &str) == nil
		case data[0] == '-' || (data[0] >= '0' && data[0] <= '9'):
			ok = json.Valid(data)
		}
		if ok != (err == nil) {
			t.Fatalf("%q: ID.UnmarshalJSON error %v, encoding/json accepts: %v", s, err, ok)
		}
		if ok && string(data) != "null" && id.Raw() != string(data) {
			t.Fatalf("%q: ID keeps %q", s, id.Raw())
		}
	})
}

// refDecodeGetPromptResult is how GetPromptResult was decoded before it had
// a one-pass decoder: encoding/json, with messages through
// refPromptMessage.
func refDecodeGetPromptResult(data []byte, r *GetPromptResult) error {
	type plain GetPromptResult
	*r = GetPromptResult{}
	w := struct {
		*plain
		Messages []refPromptMessage `json:"messages"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	if w.Messages != nil {
		r.Messages = make([]PromptMessage, len(w.Messages))
		for i, m := range w.Messages {
			r.Messages[i] = PromptMessage(m)
		}
	}
	return nil
}

// refPromptMessage decodes as PromptMessage did before it had a one-pass
// decoder.
type refPromptMessage PromptMessage

func (m *refPromptMessage) UnmarshalJSON(data []byte) error {
	type plain PromptMessage
	*m = refPromptMessage{}
	w := struct {
		*plain
		Content refContentBlockValue `json:"content"`
	}{plain: (*plain)(m)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	m.Content = w.Content.v
	return nil
}

type refContentBlockValue struct{ v ContentBlock }

func (c *refContentBlockValue) UnmarshalJSON(data []byte) error {
	if isNullJSON(data) {
		c.v = nil
		return nil
	}
	v, err := refDecodeContentBlock(data)
	c.v = v
	return err
}

// refDecodeReadResourceResult is how ReadResourceResult was decoded before
// it had a one-pass decoder.
func refDecodeReadResourceResult(data []byte, r *ReadResourceResult) error {
	type plain ReadResourceResult
	*r = ReadResourceResult{}
	w := struct {
		*plain
		Contents refResourceContentsList `json:"contents"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	r.Contents = w.Contents
	return nil
}

type refResourceContentsList []ResourceContents

func (l *refResourceContentsList) UnmarshalJSON(data []byte) error {
	if isNullJSON(data) {
		*l = nil
		return nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return err
	}
	out := make([]ResourceContents, len(raws))
	for i, raw := range raws {
		c, err := refDecodeResourceContents(raw)
		if err != nil {
			return fmt.Errorf("contents[%d]: %w", i, err)
		}
		out[i] = c
	}
	*l = out
	return nil
}

// resultSeedsCommon are header members in their odd forms, for every
// result decoder.
var resultSeedsCommon = []string{
	`{}`, `null`, `[]`, `1`, ``, `{`, `{"resultType":"input_required","requestState":"s"}`, `{"resultType":"input_required"}`,
	`{"resultType":"task"}`, `{"resultType":7}`, `{"resultType":null}`, `{"ResultType":"x"}`, `{"resultType":"complete","resultType":null}`,
	`{"_meta":null}`, `{"_meta":5}`, `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"a","version":"1"}},"_meta":null}`, `{"_META":{"x":1}}`,
	`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"a","version":"1"}},"x":[1,]}`,
}

func FuzzGetPromptResultDecode(f *testing.F) {
	for _, s := range append(resultSeedsCommon,
		`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`,
		`{"description":"d","messages":[{"role":"assistant","content":{"type":"image","data":"AQI=","mimeType":"image/png"}},null,{"role":"user","content":null}]}`,
		`{"messages":[{"role":5}]}`, `{"messages":[{"role":null,"Role":"user","CONTENT":{"type":"text","text":"x"}}]}`, `{"messages":{}}`, `{"messages":[5]}`,
		`{"messages":[{"content":{"type":"video"}}]}`, `{"messages":[{"content":{"type":"text","text":1}}]}`, `{"description":null}`, `{"description":1}`,
		`{"messages":[{"role":"user","content":{"type":"text","text":"a"}}],"messages":[]}`, `{"resultType":"complete","messages":5}`, `{"resultType":"task","messages":5}`,
	) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		var got, want GetPromptResult
		err := got.UnmarshalJSON(data)
		wantErr := refDecodeGetPromptResult(data, &want)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: UnmarshalJSON error %v, generic path %v", s, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: decoded %#v, generic path %#v", s, got, want)
		}
		out, err := DecodeGetPromptOutcome(data)
		rt, wantErr := ParseResultType(data)
		var refOut GetPromptOutcome
		if wantErr == nil {
			if rt == ResultTypeInputRequired {
				refOut, wantErr = decodeInputRequired(data)
			} else {
				refOut, wantErr = &want, refDecodeGetPromptResult(data, &want)
			}
		}
		if (err != nil) != (wantErr != nil) || errors.Is(err, ErrUnknownResultType) != errors.Is(wantErr, ErrUnknownResultType) {
			t.Fatalf("%q: DecodeGetPromptOutcome error %v, generic path %v", s, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(out, refOut) {
			t.Fatalf("%q: DecodeGetPromptOutcome gives %#v, generic path %#v", s, out, refOut)
		}
	})
}

func FuzzReadResourceResultDecode(f *testing.F) {
	for _, s := range append(resultSeedsCommon,
		`{"contents":[{"uri":"u","text":"t"}],"ttlMs":5,"cacheScope":"public"}`,
		`{"contents":[{"uri":"u","blob":"AQI="},{"uri":"v","text":"x","mimeType":"text/plain"}],"ttlMs":-0,"cacheScope":"private"}`,
		`{"ttlMs":1.5}`, `{"ttlMs":1e3}`, `{"ttlMs":9223372036854775808}`, `{"ttlMs":"5"}`, `{"ttlMs":null}`, `{"TTLMS":7}`, `{"cacheScope":"other"}`,
		`{"cacheScope":1}`, `{"contents":{}}`, `{"contents":[null]}`, `{"contents":[{"uri":"u"}]}`, `{"contents":null}`, `{"contents":[1,]}`,
		`{"resultType":"complete","contents":5}`, `{"resultType":"task","contents":5}`,
	) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		var got, want ReadResourceResult
		err := got.UnmarshalJSON(data)
		wantErr := refDecodeReadResourceResult(data, &want)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: UnmarshalJSON error %v, generic path %v", s, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: decoded %#v, generic path %#v", s, got, want)
		}
		out, err := DecodeReadResourceOutcome(data)
		rt, wantErr := ParseResultType(data)
		var refOut ReadResourceOutcome
		if wantErr == nil {
			if rt == ResultTypeInputRequired {
				refOut, wantErr = decodeInputRequired(data)
			} else {
				refOut, wantErr = &want, refDecodeReadResourceResult(data, &want)
			}
		}
		if (err != nil) != (wantErr != nil) || errors.Is(err, ErrUnknownResultType) != errors.Is(wantErr, ErrUnknownResultType) {
			t.Fatalf("%q: DecodeReadResourceOutcome error %v, generic path %v", s, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(out, refOut) {
			t.Fatalf("%q: DecodeReadResourceOutcome gives %#v, generic path %#v", s, out, refOut)
		}
	})
}

// refDecodeResourceContents is DecodeResourceContents as it was: the type
// chosen by the members present, then encoding/json.
func refDecodeResourceContents(data []byte) (ResourceContents, error) {
	var hasText, hasBlob bool
	it := jsontext.NewObjectIter(data)
	for it.Next() {
		switch string(it.Key) {
		case "text":
			hasText = true
		case "blob":
			hasBlob = true
		}
	}
	if it.Err != nil {
		return nil, it.Err
	}
	var c ResourceContents
	switch {
	case hasBlob:
		c = new(BlobResourceContents)
	case hasText:
		c = new(TextResourceContents)
	default:
		return nil, ErrUnknownResourceContents
	}
	if err := json.Unmarshal(data, c); err != nil {
		return nil, err
	}
	return c, nil
}

func FuzzResourceContentsDecode(f *testing.F) {
	for _, s := range []string{`{"uri":"u","text":"t"}`, `{"uri":"u","blob":"AQI="}`, `{"uri":"u"}`, `{"URI":"u","text":"t","MIMETYPE":"m","_meta":{"a":1}}`,
		`{"uri":null,"text":"t"}`, `{"uri":1,"text":"t"}`, `{"text":"a","text":null}`, `{"text":"t","_meta":[]}`, `{"text":"t","_meta":{"a":1},"_meta":{"b":2}}`,
		`null`, `[]`, `{"text":"t",}`, "{\"text\":\"\xff\"}", `{"text":"\u00e9\n"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := DecodeResourceContents([]byte(s))
		want, wantErr := refDecodeResourceContents([]byte(s))
		if (err != nil) != (wantErr != nil) || errors.Is(err, ErrUnknownResourceContents) != errors.Is(wantErr, ErrUnknownResourceContents) {
			t.Fatalf("%q: DecodeResourceContents error %v, generic path %v", s, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: decoded %#v, generic path %#v", s, got, want)
		}
	})
}
