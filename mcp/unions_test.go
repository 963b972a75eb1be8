package mcp_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
)

func TestContentBlocks(t *testing.T) {
	blocks := []struct {
		def, typ string
		block    mcp.ContentBlock
	}{
		{"TextContent", "text", mcp.NewTextContent("hello")},
		{"ImageContent", "image", mcp.NewImageContent([]byte{0x89, 'P', 'N', 'G'}, "image/png")},
		{"AudioContent", "audio", &mcp.AudioContent{Data: []byte("RIFF"), MIMEType: "audio/wav",
			Annotations: &mcp.Annotations{Audience: []mcp.Role{mcp.RoleUser}, Priority: ptr(0.5)}}},
		{"ResourceLink", "resource_link", &mcp.ResourceLink{URI: "file:///a.txt", Name: "a.txt", Size: 12}},
		{"EmbeddedResource", "resource", mcp.NewEmbeddedResource(&mcp.TextResourceContents{URI: "file:///a.txt", Text: "A"})},
		{"EmbeddedResource", "resource", mcp.NewEmbeddedResource(&mcp.BlobResourceContents{URI: "file:///b.bin", Blob: []byte{1, 2, 3}})},
	}
	var all []mcp.ContentBlock
	for _, c := range blocks {
		b := encode(t, c.block)
		spectest.Validate(t, modern, c.def, b)
		spectest.Validate(t, modern, "ContentBlock", b)
		if !strings.HasPrefix(string(b), `{"type":"`+c.typ+`"`) {
			t.Errorf("%T encodes as %s, want its type first", c.block, b)
		}
		got, err := mcp.DecodeContentBlock(b)
		if err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		if !reflect.DeepEqual(got, c.block) {
			t.Errorf("decode %s = %#v, want %#v", b, got, c.block)
		}
		all = append(all, c.block)
	}
	res := &mcp.CallToolResult{Content: all}
	res.ResultType = mcp.ResultTypeComplete
	validateResult(t, mcp.MethodCallTool, res)
	var back mcp.CallToolResult
	if err := json.Unmarshal(encode(t, res), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Content, all) {
		t.Errorf("content round trip: got %#v", back.Content)
	}
}

func TestContentBlockErrors(t *testing.T) {
	for _, in := range []string{`{"type":"video","data":""}`, `{"text":"no type"}`, `{"type":"tool_use","id":"1","name":"n","input":{}}`} {
		if _, err := mcp.DecodeContentBlock([]byte(in)); !errors.Is(err, mcp.ErrUnknownContentType) {
			t.Errorf("DecodeContentBlock(%s) = %v, want ErrUnknownContentType", in, err)
		}
	}
	var tc mcp.TextContent
	if err := json.Unmarshal([]byte(`{"type":"image","text":"x"}`), &tc); !errors.Is(err, mcp.ErrUnknownContentType) {
		t.Errorf("TextContent with type image: %v", err)
	}
	for _, in := range []string{`[]`, `"text"`, `{"type":"text",}`, `{"type":"text","text":1}`} {
		if _, err := mcp.DecodeContentBlock([]byte(in)); err == nil {
			t.Errorf("DecodeContentBlock(%s) succeeded", in)
		}
	}
	if _, err := json.Marshal(&mcp.EmbeddedResource{}); err == nil {
		t.Error("EmbeddedResource without contents encoded")
	}
}

func TestResourceContents(t *testing.T) {
	cases := []struct {
		in   string
		want mcp.ResourceContents
	}{
		{`{"uri":"file:///t","text":"hi","mimeType":"text/plain"}`, &mcp.TextResourceContents{URI: "file:///t", Text: "hi", MIMEType: "text/plain"}},
		{`{"uri":"file:///t","text":""}`, &mcp.TextResourceContents{URI: "file:///t"}},
		{`{"uri":"file:///b","blob":"AQID"}`, &mcp.BlobResourceContents{URI: "file:///b", Blob: []byte{1, 2, 3}}},
	}
	for _, c := range cases {
		got, err := mcp.DecodeResourceContents([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %#v", c.in, got)
		}
		if got.ResourceURI() == "" {
			t.Errorf("%s: no URI", c.in)
		}
	}
	if _, err := mcp.DecodeResourceContents([]byte(`{"uri":"file:///x"}`)); !errors.Is(err, mcp.ErrUnknownResourceContents) {
		t.Errorf("contents without text or blob: %v", err)
	}
	res := &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{cases[0].want, cases[2].want}}
	res.ResultType, res.TTLMs, res.CacheScope = mcp.ResultTypeComplete, 1000, mcp.CacheScopePrivate
	validateResult(t, mcp.MethodReadResource, res)
	out, err := mcp.DecodeReadResourceOutcome(encode(t, res))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, res) {
		t.Errorf("read result round trip: %#v", out)
	}
}

func TestSamplingContent(t *testing.T) {
	one := mcp.SamplingContent{mcp.NewTextContent("hi")}
	if got := string(encode(t, one)); got != `{"type":"text","text":"hi"}` {
		t.Errorf("one block encodes as %s, want a bare object", got)
	}
	two := mcp.SamplingContent{
		&mcp.ToolUseContent{ID: "c1", Name: "get_weather", Input: map[string]any{"city": "Paris"}},
		&mcp.ToolResultContent{ToolUseID: "c0", Content: []mcp.ContentBlock{mcp.NewTextContent("18°C")}, IsError: true},
	}
	if got := string(encode(t, two)); !strings.HasPrefix(got, `[{"type":"tool_use"`) {
		t.Errorf("two blocks encode as %s, want an array", got)
	}
	if got := string(encode(t, mcp.SamplingContent(nil))); got != `[]` {
		t.Errorf("no blocks encode as %s", got)
	}
	for _, c := range []mcp.SamplingContent{one, two} {
		var back mcp.SamplingContent
		if err := json.Unmarshal(encode(t, c), &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, c) {
			t.Errorf("round trip %s: %#v", encode(t, c), back)
		}
	}
	var back mcp.SamplingContent
	if err := json.Unmarshal([]byte(`[{"type":"text","text":"a"}]`), &back); err != nil || len(back) != 1 {
		t.Errorf("one-element array: %v %v", back, err)
	}
	if err := json.Unmarshal([]byte(`"text"`), &back); err == nil {
		t.Error("string content accepted")
	}
	if err := json.Unmarshal([]byte(`{"type":"resource_link","uri":"x","name":"x"}`), &back); !errors.Is(err, mcp.ErrUnknownContentType) {
		t.Errorf("resource link in sampling content: %v", err)
	}

	res := &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: two, Model: "m", StopReason: mcp.StopReasonToolUse}
	spectest.Validate(t, modern, "CreateMessageResult", encode(t, res))
	req := mcp.NewCreateMessageRequest(mcp.CreateMessageRequestParams{
		Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: one}},
		MaxTokens: 100,
		Tools:     []mcp.Tool{{Name: "get_weather"}},
	})
	spectest.Validate(t, modern, "CreateMessageRequest", encode(t, req))
	if (&mcp.CreateMessageResult{Content: mcp.SamplingContent{mcp.NewTextContent("a"), mcp.NewTextContent("b")}}).Text() != "ab" {
		t.Error("Text does not join the text blocks")
	}
}

func TestPrimitiveSchemaDefinition(t *testing.T) {
	cases := []struct {
		def, in string
		want    mcp.PrimitiveSchemaDefinition
	}{
		{"StringSchema", `{"type":"string","format":"email","minLength":0}`, &mcp.StringSchema{Format: mcp.FormatEmail, MinLength: ptr(0)}},
		{"NumberSchema", `{"type":"integer","minimum":0}`, &mcp.NumberSchema{Type: mcp.TypeInteger, Minimum: ptr(0.0)}},
		{"NumberSchema", `{"type":"number"}`, &mcp.NumberSchema{Type: mcp.TypeNumber}},
		{"BooleanSchema", `{"type":"boolean","default":false}`, &mcp.BooleanSchema{Default: ptr(false)}},
		{"UntitledSingleSelectEnumSchema", `{"type":"string","enum":["a","b"]}`, &mcp.UntitledSingleSelectEnumSchema{Enum: []string{"a", "b"}}},
		{"TitledSingleSelectEnumSchema", `{"type":"string","oneOf":[{"const":"a","title":"A"}]}`, &mcp.TitledSingleSelectEnumSchema{OneOf: []mcp.EnumOption{{Const: "a", Title: "A"}}}},
		{"UntitledMultiSelectEnumSchema", `{"type":"array","items":{"type":"string","enum":["x"]},"maxItems":1}`, &mcp.UntitledMultiSelectEnumSchema{Items: mcp.UntitledEnumItems{Enum: []string{"x"}}, MaxItems: ptr(1)}},
		{"TitledMultiSelectEnumSchema", `{"type":"array","items":{"anyOf":[{"const":"x","title":"X"}]}}`, &mcp.TitledMultiSelectEnumSchema{Items: mcp.TitledEnumItems{AnyOf: []mcp.EnumOption{{Const: "x", Title: "X"}}}}},
		{"LegacyTitledEnumSchema", `{"type":"string","enum":["a"],"enumNames":["A"]}`, &mcp.LegacyTitledEnumSchema{Enum: []string{"a"}, EnumNames: []string{"A"}}},
	}
	props := map[string]mcp.PrimitiveSchemaDefinition{}
	for i, c := range cases {
		got, err := mcp.DecodePrimitiveSchemaDefinition([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %#v, want %#v", c.in, got, c.want)
		}
		out := encode(t, got)
		spectest.Validate(t, modern, c.def, out)
		spectest.Validate(t, modern, "PrimitiveSchemaDefinition", out)
		if d := jsonDiff([]byte(c.in), out); d != "" {
			t.Errorf("%s re-encodes as %s: %s", c.in, out, d)
		}
		_, isEnum := got.(mcp.EnumSchema)
		if isEnum != strings.Contains(c.def, "Enum") {
			t.Errorf("%T: EnumSchema = %v", got, isEnum)
		}
		props[string(rune('a'+i))] = got
	}
	for _, in := range []string{`{"type":"object"}`, `{}`, `{"type":"string","minLength":"x"}`, `{"type":"number","type":"date"}`} {
		if _, err := mcp.DecodePrimitiveSchemaDefinition([]byte(in)); err == nil {
			t.Errorf("%s accepted", in)
		}
	}
	if got := string(encode(t, &mcp.NumberSchema{})); got != `{"type":"number"}` {
		t.Errorf("zero NumberSchema encodes as %s", got)
	}
	req := mcp.NewElicitFormRequest("Fill in", mcp.ElicitRequestedSchema{Properties: props, Required: []string{"a"}})
	b := encode(t, req)
	spectest.Validate(t, modern, "ElicitRequest", b)
	back, err := mcp.DecodeInputRequest(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, req) {
		t.Errorf("form request round trip: %s", encode(t, back))
	}
}

func TestElicitModes(t *testing.T) {
	for _, c := range []struct {
		in   string
		mode mcp.ElicitMode
	}{
		{`{"message":"m","requestedSchema":{"type":"object","properties":{}}}`, mcp.ElicitModeForm},
		{`{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{}}}`, mcp.ElicitModeForm},
		{`{"mode":"url","message":"m","url":"https://example.com/x"}`, mcp.ElicitModeURL},
	} {
		p, err := mcp.DecodeElicitRequestParams([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if p.ElicitationMode() != c.mode {
			t.Errorf("%s: mode %s", c.in, p.ElicitationMode())
		}
		if d := jsonDiff([]byte(c.in), encode(t, p)); d != "" {
			t.Errorf("%s: %s", c.in, d)
		}
	}
	if _, err := mcp.DecodeElicitRequestParams([]byte(`{"mode":"telepathy","message":"m"}`)); !errors.Is(err, mcp.ErrUnknownElicitMode) {
		t.Errorf("unknown mode: %v", err)
	}
	var fp mcp.ElicitRequestFormParams
	if err := json.Unmarshal([]byte(`{"mode":"url","message":"m","requestedSchema":{"type":"object","properties":{}}}`), &fp); !errors.Is(err, mcp.ErrUnknownElicitMode) {
		t.Errorf("form params with url mode: %v", err)
	}
	url := mcp.NewElicitURLRequest("Set your key", "https://example.com/key")
	b := encode(t, url)
	if !strings.Contains(string(b), `"mode":"url"`) {
		t.Errorf("URL request encodes without its mode: %s", b)
	}
	spectest.Validate(t, modern, "ElicitRequest", b)
	if url.Mode() != mcp.ElicitModeURL || url.Method() != mcp.MethodElicit {
		t.Error("URL request mode or method")
	}
	if _, err := json.Marshal(&mcp.ElicitRequest{}); err == nil {
		t.Error("elicitation without params encoded")
	}
	var er mcp.ElicitRequest
	if err := json.Unmarshal([]byte(`{"method":"elicitation/create"}`), &er); err == nil {
		t.Error("elicitation without params decoded")
	}
	var schema mcp.ElicitRequestedSchema
	if err := json.Unmarshal([]byte(`{"type":"array","properties":{}}`), &schema); !errors.Is(err, mcp.ErrUnknownSchemaType) {
		t.Errorf("requested schema of type array: %v", err)
	}
}

func TestInputRequests(t *testing.T) {
	reqs := mcp.InputRequests{
		"name":  mcp.NewElicitFormRequest("Name?", mcp.ElicitRequestedSchema{Properties: map[string]mcp.PrimitiveSchemaDefinition{"name": &mcp.StringSchema{}}}),
		"key":   mcp.NewElicitURLRequest("Key", "https://example.com/k"),
		"llm":   mcp.NewCreateMessageRequest(mcp.CreateMessageRequestParams{Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.SamplingContent{mcp.NewTextContent("hi")}}}, MaxTokens: 10}),
		"roots": mcp.NewListRootsRequest(),
	}
	b := encode(t, reqs)
	spectest.Validate(t, modern, "InputRequests", b)
	var back mcp.InputRequests
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, reqs) {
		t.Errorf("round trip: %s", encode(t, back))
	}
	if got := strings.Join(back.Keys(), ","); got != "key,llm,name,roots" {
		t.Errorf("Keys = %s", got)
	}
	for k, r := range back {
		if !strings.Contains(string(encode(t, r)), `"method":"`+r.Method()+`"`) {
			t.Errorf("%s: method %s not encoded", k, r.Method())
		}
	}
	for _, in := range []string{`{"method":"ping"}`, `{"params":{}}`, `{"method":"tools/call","params":{}}`} {
		if _, err := mcp.DecodeInputRequest([]byte(in)); !errors.Is(err, mcp.ErrUnknownInputRequest) {
			t.Errorf("DecodeInputRequest(%s) = %v", in, err)
		}
	}
	var lr mcp.ListRootsRequest
	if err := json.Unmarshal([]byte(`{"method":"sampling/createMessage"}`), &lr); !errors.Is(err, mcp.ErrUnknownInputRequest) {
		t.Errorf("roots request with another method: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"method":"roots/list","params":{"_meta":{"k":"v"}}}`), &lr); err != nil || lr.Params == nil || lr.Params.Meta["k"] != "v" {
		t.Errorf("roots request with params: %+v %v", lr, err)
	}
}

func TestCompleteReference(t *testing.T) {
	for _, c := range []struct {
		in   string
		want mcp.CompleteReference
	}{
		{`{"type":"ref/prompt","name":"p"}`, &mcp.PromptReference{Name: "p"}},
		{`{"type":"ref/resource","uri":"file:///{path}"}`, &mcp.ResourceTemplateReference{URI: "file:///{path}"}},
	} {
		got, err := mcp.DecodeCompleteReference([]byte(c.in))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %#v %v", c.in, got, err)
		}
		if d := jsonDiff([]byte(c.in), encode(t, got)); d != "" {
			t.Errorf("%s: %s", c.in, d)
		}
		p := &mcp.CompleteRequestParams{Ref: got, Argument: mcp.CompleteArgument{Name: "a", Value: "b"}}
		p.Meta = modernMeta()
		validateRequest(t, mcp.MethodComplete, p)
	}
	if _, err := mcp.DecodeCompleteReference([]byte(`{"type":"ref/tool"}`)); !errors.Is(err, mcp.ErrUnknownReference) {
		t.Errorf("unknown reference: %v", err)
	}
	res := &mcp.CompleteResult{Completion: mcp.Completion{Values: []string{"x"}, Total: 3, HasMore: true}}
	res.ResultType = mcp.ResultTypeComplete
	validateResult(t, mcp.MethodComplete, res)
	validateResult(t, mcp.MethodComplete, &mcp.CompleteResult{Result: mcp.Result{ResultType: mcp.ResultTypeComplete}})
}

func TestMessageUnions(t *testing.T) {
	p := mcp.CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(`{"x":1}`)}
	p.Meta = modernMeta()
	call := &CallToolRequest{ID: jsonrpc.Int64ID(3), Method: mcp.MethodCallTool, Params: p}
	b := encode(t, call)
	spectest.ValidateMessage(t, modern, b, "")
	got, err := DecodeClientRequest(b)
	if err != nil {
		t.Fatal(err)
	}
	if gc, ok := got.(*CallToolRequest); !ok || gc.Params.Name != "echo" || gc.ID.Raw() != "3" {
		t.Errorf("DecodeClientRequest = %#v", got)
	}
	list := &ListToolsRequest{ID: jsonrpc.StringID("l"), Method: mcp.MethodListTools}
	list.Params.Meta = modernMeta()
	b = encode(t, list)
	spectest.ValidateMessage(t, modern, b, "")
	if got, err := DecodeClientRequest(b); err != nil {
		t.Error(err)
	} else if _, ok := got.(*ListToolsRequest); !ok {
		t.Errorf("DecodeClientRequest(tools/list) = %T", got)
	}
	if _, err := DecodeClientRequest([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)); !errors.Is(err, ErrUnknownMethod) {
		t.Errorf("initialize: %v", err)
	}
	if _, err := DecodeClientRequest([]byte(`{"jsonrpc":"1.0","id":1,"method":"tools/list","params":{}}`)); err == nil {
		t.Error("jsonrpc 1.0 accepted")
	}

	progress := &ProgressNotification{Method: mcp.NotificationProgress,
		Params: mcp.ProgressNotificationParams{ProgressToken: jsonrpc.Int64ID(5), Progress: 1, Total: 2, Message: "half"}}
	changed := &ToolListChangedNotification{Method: mcp.NotificationToolListChanged,
		Params: &mcp.NotificationParams{Meta: &mcp.NotificationMetaObject{SubscriptionID: jsonrpc.StringID("listen-1")}}}
	logmsg := &LoggingMessageNotification{Method: mcp.NotificationMessage,
		Params: mcp.LoggingMessageNotificationParams{Level: mcp.LevelWarning, Logger: "db", Data: map[string]any{"n": 1.0}}}
	ack := &SubscriptionsAcknowledgedNotification{Method: mcp.NotificationSubscriptionsAcknowledged,
		Params: mcp.SubscriptionsAcknowledgedNotificationParams{Notifications: mcp.SubscriptionFilter{ToolsListChanged: true}}}
	ack.Params.Meta = &mcp.NotificationMetaObject{SubscriptionID: jsonrpc.StringID("listen-1")}
	updated := &ResourceUpdatedNotification{Method: mcp.NotificationResourceUpdated, Params: mcp.ResourceUpdatedNotificationParams{URI: "file:///a"}}
	cancelled := &CancelledNotification{Method: mcp.NotificationCancelled, Params: mcp.CancelledNotificationParams{RequestID: jsonrpc.StringID("listen-1"), Reason: "done"}}
	for _, n := range []ServerNotification{progress, changed, logmsg, ack, updated, cancelled,
		&PromptListChangedNotification{Method: mcp.NotificationPromptListChanged},
		&ResourceListChangedNotification{Method: mcp.NotificationResourceListChanged}} {
		b := encode(t, n)
		spectest.ValidateMessage(t, modern, b, "")
		got, err := DecodeServerNotification(b)
		if err != nil {
			t.Errorf("%s: %v", b, err)
			continue
		}
		if !reflect.DeepEqual(got, n) {
			t.Errorf("round trip %s: %#v", b, got)
		}
	}
	if got, err := DecodeClientNotification(encode(t, cancelled)); err != nil || !reflect.DeepEqual(got, cancelled) {
		t.Errorf("DecodeClientNotification: %#v %v", got, err)
	}
	if _, err := DecodeClientNotification(encode(t, progress)); !errors.Is(err, ErrUnknownMethod) {
		t.Errorf("progress from a client: %v", err)
	}
	if _, err := DecodeServerNotification([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); !errors.Is(err, ErrUnknownMethod) {
		t.Errorf("initialized: %v", err)
	}

	var m JSONRPCMessage
	if err := json.Unmarshal(encode(t, progress), &m); err != nil || !m.IsNotification() || m.IsRequest() || m.IsResponse() {
		t.Errorf("JSONRPCMessage notification: %+v %v", m, err)
	}
	var r JSONRPCMessage
	if err := json.Unmarshal([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), &r); err != nil || !r.IsResponse() {
		t.Errorf("JSONRPCMessage response: %+v %v", r, err)
	}
}
