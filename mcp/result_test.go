package mcp_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

func TestParseResultType(t *testing.T) {
	cases := []struct {
		in      string
		want    mcp.ResultType
		unknown bool
		bad     bool
	}{
		{`{}`, mcp.ResultTypeComplete, false, false},
		{`{"content":[]}`, mcp.ResultTypeComplete, false, false},
		{`{"resultType":null}`, mcp.ResultTypeComplete, false, false},
		{`{"resultType":"complete"}`, mcp.ResultTypeComplete, false, false},
		{` { "resultType" : "input_required" } `, mcp.ResultTypeInputRequired, false, false},
		{`{"resultType":"task","taskId":"t"}`, "task", true, false},
		{`{"resultType":7}`, "", true, false},
		{`{"resultType":"complete"`, "", false, true},
		{`[]`, "", false, true},
	}
	for _, c := range cases {
		got, err := mcp.ParseResultType(json.RawMessage(c.in))
		if got != c.want {
			t.Errorf("ParseResultType(%s) = %q, want %q", c.in, got, c.want)
		}
		var ue *mcp.UnknownResultTypeError
		switch {
		case c.unknown:
			if !errors.Is(err, mcp.ErrUnknownResultType) || !errors.As(err, &ue) {
				t.Errorf("ParseResultType(%s) error = %v, want an UnknownResultTypeError", c.in, err)
			}
		case c.bad:
			if err == nil || errors.Is(err, mcp.ErrUnknownResultType) {
				t.Errorf("ParseResultType(%s) error = %v, want a syntax error", c.in, err)
			}
		default:
			if err != nil {
				t.Errorf("ParseResultType(%s) error = %v", c.in, err)
			}
		}
	}
	_, err := mcp.ParseResultType(json.RawMessage(`{"resultType":"task"}`))
	var ue *mcp.UnknownResultTypeError
	if !errors.As(err, &ue) || ue.Value != "task" || !strings.Contains(err.Error(), "task") {
		t.Errorf("unknown result type error: %v", err)
	}
}

func TestDecodeOutcomes(t *testing.T) {
	complete := []string{
		`{"content":[{"type":"text","text":"legacy"}]}`,
		`{"resultType":"complete","content":[],"isError":true}`,
	}
	for _, in := range complete {
		out, err := mcp.DecodeCallToolOutcome(json.RawMessage(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if _, ok := out.(*mcp.CallToolResult); !ok {
			t.Errorf("%s decodes as %T", in, out)
		}
	}
	ir := `{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}},"requestState":"s1","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}`
	out, err := mcp.DecodeCallToolOutcome(json.RawMessage(ir))
	if err != nil {
		t.Fatal(err)
	}
	got, ok := out.(*mcp.InputRequiredResult)
	if !ok || got.RequestState != "s1" || got.InputRequests["r"].Method() != mcp.MethodListRoots || got.ServerInfo().Name != "s" {
		t.Fatalf("input_required decodes as %#v", out)
	}
	if p, err := mcp.DecodeGetPromptOutcome(json.RawMessage(ir)); err != nil {
		t.Error(err)
	} else if _, ok := p.(*mcp.InputRequiredResult); !ok {
		t.Errorf("prompt outcome %T", p)
	}
	if r, err := mcp.DecodeReadResourceOutcome(json.RawMessage(`{"resultType":"complete","contents":[],"ttlMs":5,"cacheScope":"public"}`)); err != nil {
		t.Error(err)
	} else if rr, ok := r.(*mcp.ReadResourceResult); !ok || rr.TTLMs != 5 {
		t.Errorf("resource outcome %#v", r)
	}
	if p, err := mcp.DecodeGetPromptOutcome(json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"x"}}]}`)); err != nil {
		t.Error(err)
	} else if gp, ok := p.(*mcp.GetPromptResult); !ok || gp.Messages[0].Content.(*mcp.TextContent).Text != "x" {
		t.Errorf("prompt outcome %#v", p)
	}

	if _, err := mcp.DecodeCallToolOutcome(json.RawMessage(`{"resultType":"magic","content":[]}`)); !errors.Is(err, mcp.ErrUnknownResultType) {
		t.Errorf("unknown resultType: %v", err)
	}
	if _, err := mcp.DecodeCallToolOutcome(json.RawMessage(`{"resultType":"input_required"}`)); !errors.Is(err, mcp.ErrInvalidInputRequiredResult) {
		t.Errorf("empty input_required: %v", err)
	}
	if _, err := mcp.DecodeCallToolOutcome(json.RawMessage(`{"resultType":"input_required","inputRequests":{"x":{"method":"ping"}}}`)); !errors.Is(err, mcp.ErrUnknownInputRequest) {
		t.Errorf("input_required with an unknown request: %v", err)
	}
}

func TestDecodeResult(t *testing.T) {
	r, err := mcp.DecodeResult(mcp.MethodDiscover, json.RawMessage(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":1,"cacheScope":"public"}`))
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := r.(*mcp.DiscoverResult); !ok || d.Capabilities.Tools == nil || d.SupportedVersions[0] != modern {
		t.Errorf("discover: %#v", r)
	}
	if _, err := mcp.DecodeResult(mcp.MethodListTools, json.RawMessage(`{"resultType":"input_required","requestState":"s"}`)); !errors.Is(err, mcp.ErrInputRequiredNotAllowed) {
		t.Errorf("input_required on tools/list: %v", err)
	}
	if _, err := mcp.DecodeResult(mcp.MethodListTools, json.RawMessage(`{"resultType":"weird","tools":[]}`)); !errors.Is(err, mcp.ErrUnknownResultType) {
		t.Errorf("unknown resultType on tools/list: %v", err)
	}
	for method, want := range map[string]any{
		mcp.MethodCallTool:              &mcp.CallToolResult{},
		mcp.MethodListPrompts:           &mcp.ListPromptsResult{},
		mcp.MethodListResources:         &mcp.ListResourcesResult{},
		mcp.MethodListResourceTemplates: &mcp.ListResourceTemplatesResult{},
		mcp.MethodComplete:              &mcp.CompleteResult{},
		mcp.MethodSubscriptionsListen:   &mcp.SubscriptionsListenResult{},
		"x/unknown":                     &mcp.Result{},
	} {
		r, err := mcp.DecodeResult(method, json.RawMessage(`{}`))
		if err != nil || reflect.TypeOf(r) != reflect.TypeOf(want) {
			t.Errorf("DecodeResult(%s) = %T, %v", method, r, err)
		}
	}
}

func TestInputRequiredResult(t *testing.T) {
	r := &mcp.InputRequiredResult{
		InputRequests: mcp.InputRequests{"github_login": mcp.NewElicitFormRequest("GitHub username?",
			mcp.ElicitRequestedSchema{Properties: map[string]mcp.PrimitiveSchemaDefinition{"name": &mcp.StringSchema{}}, Required: []string{"name"}})},
		RequestState: "opaque",
	}
	r.ResultType = mcp.ResultTypeComplete // overridden on the wire
	b := string(encode(t, r))
	if !strings.Contains(b, `"resultType":"input_required"`) || strings.Contains(b, "content") {
		t.Errorf("InputRequiredResult encodes as %s", b)
	}
	if r.ResultType != mcp.ResultTypeComplete {
		t.Error("MarshalJSON modified its receiver")
	}
	for _, m := range []string{mcp.MethodCallTool, mcp.MethodGetPrompt, mcp.MethodReadResource} {
		validateResult(t, m, r)
	}
	validateResult(t, mcp.MethodCallTool, &mcp.InputRequiredResult{RequestState: "only-state"})
	if err := (&mcp.InputRequiredResult{}).Validate(); !errors.Is(err, mcp.ErrInvalidInputRequiredResult) {
		t.Errorf("empty Validate: %v", err)
	}
	if err := (&mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"x": nil}}).Validate(); !errors.Is(err, mcp.ErrInvalidInputRequiredResult) {
		t.Errorf("nil request Validate: %v", err)
	}
	if err := r.Validate(); err != nil {
		t.Error(err)
	}
	var _ mcp.CallToolOutcome = r
	var _ mcp.GetPromptOutcome = r
	var _ mcp.ReadResourceOutcome = r
}

// TestStampResults shows a server stamping resultType and serverInfo on
// any result through AnyResult, and checks every result type validates.
func TestStampResults(t *testing.T) {
	info := &mcp.Implementation{Name: "parley-test", Version: "0.1.0"}
	stamp := func(r mcp.AnyResult) mcp.AnyResult {
		h := r.ResultHeader()
		if h.ResultType == "" {
			h.ResultType = mcp.ResultTypeComplete
		}
		h.ResultMeta().ServerInfo = info
		if c, ok := r.(mcp.Cacheable); ok && c.CacheHeader().CacheScope == "" {
			c.CacheHeader().CacheScope = mcp.CacheScopePrivate
		}
		return r
	}
	tool := mcp.Tool{Name: "echo", Description: "Echo.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: ptr(true)},
		OutputSchema: json.RawMessage(`{"type":"object"}`), Icons: []mcp.Icon{{Src: "https://example.com/i.png", Theme: mcp.IconThemeDark}}}
	cases := []struct {
		method string
		result mcp.AnyResult
	}{
		{mcp.MethodDiscover, &mcp.DiscoverResult{SupportedVersions: []mcp.ProtocolVersion{modern, mcp.Version20251125},
			Capabilities: mcp.ServerCapabilities{Tools: &mcp.ToolsCapability{ListChanged: true}, Logging: &struct{}{}}, Instructions: "Be nice."}},
		{mcp.MethodDiscover, &mcp.DiscoverResult{}},
		{mcp.MethodListTools, &mcp.ListToolsResult{Tools: []mcp.Tool{tool, {Name: "noargs"}}, NextCursor: "c2"}},
		{mcp.MethodListTools, &mcp.ListToolsResult{}},
		{mcp.MethodCallTool, mcp.TextResult("done")},
		{mcp.MethodCallTool, mcp.ErrorResult("bad input")},
		{mcp.MethodCallTool, &mcp.CallToolResult{StructuredContent: map[string]any{"t": 22.5}}},
		{mcp.MethodListPrompts, &mcp.ListPromptsResult{Prompts: []mcp.Prompt{{Name: "p", Arguments: []mcp.PromptArgument{{Name: "a", Required: true}}}}}},
		{mcp.MethodListPrompts, &mcp.ListPromptsResult{}},
		{mcp.MethodGetPrompt, &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent("hi")}}}},
		{mcp.MethodGetPrompt, &mcp.GetPromptResult{}},
		{mcp.MethodListResources, &mcp.ListResourcesResult{Resources: []mcp.Resource{{URI: "file:///r", Name: "r"}}}},
		{mcp.MethodListResources, &mcp.ListResourcesResult{}},
		{mcp.MethodListResourceTemplates, &mcp.ListResourceTemplatesResult{ResourceTemplates: []mcp.ResourceTemplate{{URITemplate: "file:///{p}", Name: "files"}}}},
		{mcp.MethodListResourceTemplates, &mcp.ListResourceTemplatesResult{}},
		{mcp.MethodReadResource, &mcp.ReadResourceResult{}},
		{mcp.MethodComplete, &mcp.CompleteResult{}},
		{mcp.MethodSubscriptionsListen, &mcp.SubscriptionsListenResult{}},
	}
	for _, c := range cases {
		r := stamp(c.result)
		if c.method == mcp.MethodSubscriptionsListen {
			r.ResultHeader().Meta.SubscriptionID = mcp.RequestID{}
			_ = json.Unmarshal([]byte(`"listen-1"`), &r.ResultHeader().Meta.SubscriptionID)
		}
		validateResult(t, c.method, r)
		if r.ResultHeader().ServerInfo() != info {
			t.Errorf("%T: serverInfo not stamped", r)
		}
		back, err := mcp.DecodeResult(c.method, encode(t, r))
		if err != nil {
			t.Errorf("%T: %v", r, err)
			continue
		}
		if d := jsonDiff(encode(t, r), encode(t, back)); d != "" {
			t.Errorf("%T round trip: %s", r, d)
		}
	}
	if (*mcp.Result)(nil).ServerInfo() != nil || (&mcp.Result{}).ServerInfo() != nil {
		t.Error("ServerInfo of an empty result")
	}
}

func TestCallToolResult(t *testing.T) {
	if got := string(encode(t, &mcp.CallToolResult{})); got != `{"content":[]}` {
		t.Errorf("zero result encodes as %s", got)
	}
	type weather struct {
		Temp float64 `json:"temp"`
	}
	r := &mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.NewTextContent("22")}, StructuredContent: weather{22.5}}
	var back mcp.CallToolResult
	if err := json.Unmarshal(encode(t, r), &back); err != nil {
		t.Fatal(err)
	}
	if _, ok := back.StructuredContent.(json.RawMessage); !ok {
		t.Errorf("decoded structured content is %T, want json.RawMessage", back.StructuredContent)
	}
	for _, src := range []*mcp.CallToolResult{r, &back} {
		var w weather
		if ok, err := src.DecodeStructuredContent(&w); !ok || err != nil || w.Temp != 22.5 {
			t.Errorf("DecodeStructuredContent: %v %v %v", w, ok, err)
		}
	}
	if ok, _ := (&mcp.CallToolResult{}).DecodeStructuredContent(new(any)); ok {
		t.Error("DecodeStructuredContent of nothing reports ok")
	}
	if err := json.Unmarshal([]byte(`{"content":[],"structuredContent":null}`), &back); err != nil || back.StructuredContent != nil {
		t.Errorf("null structured content: %v %v", back.StructuredContent, err)
	}
	if !mcp.ErrorResult("x").IsError || mcp.TextResult("x").IsError {
		t.Error("IsError of the constructors")
	}
}
