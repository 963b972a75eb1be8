package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// askingServer answers every carrier with whatever ask returns on the first
// round, and completes once the retry carries an answer under "q".
func askingServer(ask func() *mcp.InputRequiredResult) *server.Server {
	s := server.New(mcp.Implementation{Name: "asking", Version: "1"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if p.InputResponses.Has("q") {
			ans, err := p.InputResponses.Elicit("q")
			if err != nil {
				return nil, wire.InvalidParams("Invalid params: %v", err)
			}
			return mcp.TextResult("answer: " + string(ans.Action) + " state: " + p.RequestState), nil
		}
		return ask(), nil
	})
	s.HandleGetPrompt(func(ctx context.Context, req *server.Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
		return ask(), nil
	})
	s.HandleReadResource(func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		return ask(), nil
	})
	return s
}

func elicitForm() *mcp.InputRequiredResult {
	return &mcp.InputRequiredResult{
		InputRequests: mcp.InputRequests{"q": mcp.NewElicitFormRequest("Which region?", mcp.ElicitRequestedSchema{
			Properties: map[string]mcp.PrimitiveSchemaDefinition{"region": &mcp.StringSchema{}},
		})},
		RequestState: "round-1",
	}
}

func metaWith(caps string) *mcp.RequestMetaObject {
	m := meta()
	var c mcp.ClientCapabilities
	if err := json.Unmarshal([]byte(caps), &c); err != nil {
		panic(err)
	}
	m.ClientCapabilities = &c
	return m
}

func TestInputRequiredOnEveryCarrier(t *testing.T) {
	rc := dial(t, askingServer(elicitForm))
	calls := []struct {
		method string
		params any
	}{
		{mcp.MethodCallTool, &mcp.CallToolRequestParams{Meta: metaWith(`{"elicitation":{}}`), Name: "provision"}},
		{mcp.MethodGetPrompt, &mcp.GetPromptRequestParams{Meta: metaWith(`{"elicitation":{}}`), Name: "p"}},
		{mcp.MethodReadResource, &mcp.ReadResourceRequestParams{Meta: metaWith(`{"elicitation":{}}`), URI: "file:///x"}},
	}
	for _, c := range calls {
		res, err := rc.call(t, c.method, c.params)
		if err != nil {
			t.Fatalf("%s: %v", c.method, err)
		}
		spectest.Validate(t, mcp.LatestVersion, "InputRequiredResult", res)
		var probe map[string]json.RawMessage
		json.Unmarshal(res, &probe)
		if string(probe["resultType"]) != `"input_required"` || probe["_meta"] == nil || probe["requestState"] == nil {
			t.Errorf("%s: %s", c.method, res)
		}
		for _, field := range []string{"content", "messages", "contents", "ttlMs", "cacheScope"} {
			if _, ok := probe[field]; ok {
				t.Errorf("%s: input_required result carries %q: %s", c.method, field, res)
			}
		}
	}
}

func TestInputRequiredCapabilityGate(t *testing.T) {
	cases := []struct {
		name, caps, want string
		ask              func() *mcp.InputRequiredResult
	}{
		{"form elicitation without elicitation", `{}`, `{"elicitation":{}}`, elicitForm},
		{"url elicitation with form only", `{"elicitation":{}}`, `{"elicitation":{"url":{}}}`, func() *mcp.InputRequiredResult {
			return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"q": mcp.NewElicitURLRequest("Sign in", "https://example.com/login")}}
		}},
		{"sampling without sampling", `{"elicitation":{}}`, `{"sampling":{}}`, func() *mcp.InputRequiredResult {
			return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"q": mcp.NewCreateMessageRequest(mcp.CreateMessageRequestParams{
				Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.SamplingContent{&mcp.TextContent{Text: "hi"}}}}, MaxTokens: 10})}}
		}},
		{"sampling tools without sampling.tools", `{"sampling":{}}`, `{"sampling":{"tools":{}}}`, func() *mcp.InputRequiredResult {
			return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"q": mcp.NewCreateMessageRequest(mcp.CreateMessageRequestParams{
				Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.SamplingContent{&mcp.TextContent{Text: "hi"}}}},
				MaxTokens: 10,
				Tools:     []mcp.Tool{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}},
			})}}
		}},
		{"roots without roots", `{"sampling":{}}`, `{"roots":{}}`, func() *mcp.InputRequiredResult {
			return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"q": mcp.NewListRootsRequest()}}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := dial(t, askingServer(c.ask))
			_, err := rc.call(t, mcp.MethodCallTool, &mcp.CallToolRequestParams{Meta: metaWith(c.caps), Name: "x"})
			data, ok := mcp.AsMissingRequiredClientCapability(err)
			if !ok {
				t.Fatalf("got %v, want -32021", err)
			}
			got, _ := json.Marshal(data.RequiredCapabilities)
			if string(got) != c.want {
				t.Errorf("requiredCapabilities = %s, want %s", got, c.want)
			}
		})
	}
}

func TestInvalidInputRequiredIsInternalError(t *testing.T) {
	rc := dial(t, askingServer(func() *mcp.InputRequiredResult { return &mcp.InputRequiredResult{} }))
	_, err := rc.call(t, mcp.MethodCallTool, &mcp.CallToolRequestParams{Meta: metaWith(`{"elicitation":{}}`), Name: "x"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError {
		t.Fatalf("empty InputRequiredResult: %v, want -32603", err)
	}
}

func TestRetryReadsInputResponses(t *testing.T) {
	rc := dial(t, askingServer(elicitForm))
	res, err := rc.call(t, mcp.MethodCallTool, json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}},"name":"x",`+
		`"inputResponses":{"q":{"action":"accept","content":{"region":"eu-west-1"}},"unknown_extra":{"x":1}},"requestState":"round-1"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res), "answer: accept state: round-1") {
		t.Fatalf("retry result %s", res)
	}
}

func TestMalformedInputResponses(t *testing.T) {
	rc := dial(t, askingServer(elicitForm))
	for _, ir := range []string{`5`, `"x"`, `[]`, `{"q":12345}`, `{"q":"accept"}`} {
		_, err := rc.call(t, mcp.MethodCallTool, json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}},"name":"x","inputResponses":`+ir+`}`))
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("inputResponses %s: %v, want -32602", ir, err)
		}
	}
}

// The SDK refuses an answer that is not an object before any handler runs,
// on all three carriers, even under a key the handler never reads.
func TestMalformedInputResponsesNeverReachHandlers(t *testing.T) {
	var ran atomic.Int32
	s := server.New(mcp.Implementation{Name: "ignoring", Version: "1"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		ran.Add(1)
		return mcp.TextResult("ran"), nil
	})
	s.HandleGetPrompt(func(ctx context.Context, req *server.Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
		ran.Add(1)
		return &mcp.GetPromptResult{}, nil
	})
	s.HandleReadResource(func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		ran.Add(1)
		return &mcp.ReadResourceResult{}, nil
	})
	rc := dial(t, s)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, call := range []struct{ method, target string }{
		{mcp.MethodCallTool, `"name":"x"`},
		{mcp.MethodGetPrompt, `"name":"x"`},
		{mcp.MethodReadResource, `"uri":"file:///x"`},
	} {
		for _, ir := range []string{`{"unread":5}`, `{"ok":{},"unread":null}`, `{"unread":["a"]}`, `7`} {
			_, err := rc.call(t, call.method, json.RawMessage(`{`+meta+`,`+call.target+`,"inputResponses":`+ir+`}`))
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("%s with inputResponses %s: %v, want -32602", call.method, ir, err)
			}
		}
		// Unknown keys with object answers are fine.
		if _, err := rc.call(t, call.method, json.RawMessage(`{`+meta+`,`+call.target+`,"inputResponses":{"unknown":{"x":1}}}`)); err != nil {
			t.Errorf("%s with an unknown answer: %v", call.method, err)
		}
	}
	if n := ran.Load(); n != 3 {
		t.Errorf("handlers ran %d times, want 3 (only the well-formed calls)", n)
	}
}

// A requestState that is not a string gets the fixed requestState error, as
// every unusable requestState does, with or without a boundary; null is
// absent.
func TestNonStringRequestState(t *testing.T) {
	var ran atomic.Int32
	s := server.New(mcp.Implementation{Name: "states", Version: "1"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		ran.Add(1)
		return mcp.TextResult("state=" + p.RequestState), nil
	})
	s.HandleGetPrompt(func(ctx context.Context, req *server.Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
		ran.Add(1)
		return &mcp.GetPromptResult{}, nil
	})
	s.HandleReadResource(func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		ran.Add(1)
		return &mcp.ReadResourceResult{}, nil
	})
	rc := dial(t, s)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, call := range []struct{ method, target string }{
		{mcp.MethodCallTool, `"name":"x"`},
		{mcp.MethodGetPrompt, `"name":"x"`},
		{mcp.MethodReadResource, `"uri":"file:///x"`},
	} {
		for _, st := range []string{`5`, `{"a":1}`, `["s"]`, `true`} {
			_, err := rc.call(t, call.method, json.RawMessage(`{`+meta+`,`+call.target+`,"requestState":`+st+`}`))
			if !mcp.IsInvalidRequestState(err) {
				t.Errorf("%s with requestState %s: %v, want the fixed requestState error", call.method, st, err)
			}
		}
		if _, err := rc.call(t, call.method, json.RawMessage(`{`+meta+`,`+call.target+`,"requestState":null}`)); err != nil {
			t.Errorf("%s with a null requestState: %v", call.method, err)
		}
	}
	// Other bad params keep their own message.
	_, err := rc.call(t, mcp.MethodCallTool, json.RawMessage(`{`+meta+`,"name":5,"requestState":"ok"}`))
	if err == nil || mcp.IsInvalidRequestState(err) {
		t.Errorf("a bad name with a string state: %v, want the ordinary invalid-params error", err)
	}
	if n := ran.Load(); n != 3 {
		t.Errorf("handlers ran %d times, want 3 (the null states)", n)
	}
}

// "requestState":"" is a state: without a boundary the low-level server
// hands it to the handler as present (and null, or no member, as none), on
// every carrier; a handler may return an empty state, alone, and it goes
// out as "requestState":"".
func TestEmptyRequestStateIsPresent(t *testing.T) {
	report := func(p mcp.RequestStateParams) string {
		s, ok := p.LookupRequestState()
		return fmt.Sprintf("state=%q present=%v", s, ok)
	}
	s := server.New(mcp.Implementation{Name: "states", Version: "1"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if p.Name == "wait" {
			return &mcp.InputRequiredResult{ForceRequestState: true}, nil
		}
		return mcp.TextResult(report(p)), nil
	})
	s.HandleGetPrompt(func(ctx context.Context, req *server.Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
		return &mcp.GetPromptResult{Description: report(p)}, nil
	})
	s.HandleReadResource(func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: p.URI, Text: report(p)}}}, nil
	})
	rc := dial(t, s)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, call := range []struct{ method, target string }{
		{mcp.MethodCallTool, `"name":"x"`},
		{mcp.MethodGetPrompt, `"name":"x"`},
		{mcp.MethodReadResource, `"uri":"file:///x"`},
	} {
		for _, c := range []struct{ member, want string }{
			{`,"requestState":""`, `state=\"\" present=true`},
			{``, `state=\"\" present=false`},
			{`,"requestState":null`, `state=\"\" present=false`},
			{`,"requestState":"s"`, `state=\"s\" present=true`},
		} {
			res, err := rc.call(t, call.method, json.RawMessage(`{`+meta+`,`+call.target+c.member+`}`))
			if err != nil || !strings.Contains(string(res), c.want) {
				t.Errorf("%s with params member %q: %s, %v; want %s", call.method, c.member, res, err, c.want)
			}
		}
	}
	res, err := rc.call(t, mcp.MethodCallTool, json.RawMessage(`{`+meta+`,"name":"wait"}`))
	if err != nil || !strings.HasSuffix(string(res), `,"resultType":"input_required","requestState":""}`) {
		t.Errorf("a handler's empty state alone: %s, %v", res, err)
	}
}
