package mcp_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
)

// modernHeader is a result header with everything of 2026-07-28 set, and a
// _meta key of the application's.
func modernHeader() mcp.Result {
	return mcp.Result{
		Meta: &mcp.ResultMetaObject{
			ServerInfo:     &mcp.Implementation{Name: "s", Version: "1"},
			SubscriptionID: jsonrpc.Int64ID(7),
			Extra: mcp.MetaExtra{
				"com.example/trace":        json.RawMessage(`"t-1"`),
				mcp.MetaKeyClientInfo:      json.RawMessage(`{"name":"c","version":"1"}`),
				mcp.MetaKeyProtocolVersion: json.RawMessage(`"2026-07-28"`),
			},
		},
		ResultType: mcp.ResultTypeComplete,
	}
}

// modernCacheable is a cacheable header with everything of 2026-07-28 set.
func modernCacheable() mcp.CacheableResult {
	return mcp.CacheableResult{Result: modernHeader(), TTLMs: 60000, CacheScope: mcp.CacheScopePublic}
}

// TestLegacyResultCarriesNothingModern: every result type, with every
// member of 2026-07-28 set, encodes without them, and what is left
// conforms to 2025-11-25 and names only members it defines.
func TestLegacyResultCarriesNothingModern(t *testing.T) {
	cases := []struct {
		method string
		res    mcp.AnyResult
		want   string
	}{
		{mcp.MethodListTools, &mcp.ListToolsResult{CacheableResult: modernCacheable(), Tools: []mcp.Tool{{Name: "t"}}, NextCursor: "c"},
			`{"_meta":{"com.example/trace":"t-1"},"tools":[{"name":"t","inputSchema":{"type":"object"}}],"nextCursor":"c"}`},
		{mcp.MethodListPrompts, &mcp.ListPromptsResult{CacheableResult: modernCacheable()},
			`{"_meta":{"com.example/trace":"t-1"},"prompts":[]}`},
		{mcp.MethodListResources, &mcp.ListResourcesResult{CacheableResult: modernCacheable()},
			`{"_meta":{"com.example/trace":"t-1"},"resources":[]}`},
		{mcp.MethodListResourceTemplates, &mcp.ListResourceTemplatesResult{CacheableResult: modernCacheable()},
			`{"_meta":{"com.example/trace":"t-1"},"resourceTemplates":[]}`},
		{mcp.MethodReadResource, &mcp.ReadResourceResult{CacheableResult: modernCacheable(), Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: "file:///a", Text: "a"}}},
			`{"_meta":{"com.example/trace":"t-1"},"contents":[{"uri":"file:///a","text":"a"}]}`},
		{mcp.MethodCallTool, &mcp.CallToolResult{Result: modernHeader(), Content: []mcp.ContentBlock{&mcp.TextContent{Text: "hi"}}},
			`{"_meta":{"com.example/trace":"t-1"},"content":[{"type":"text","text":"hi"}]}`},
		{mcp.MethodGetPrompt, &mcp.GetPromptResult{Result: modernHeader()},
			`{"_meta":{"com.example/trace":"t-1"},"messages":[]}`},
		{mcp.MethodComplete, &mcp.CompleteResult{Result: modernHeader(), Completion: mcp.Completion{Values: []string{"a"}}},
			`{"_meta":{"com.example/trace":"t-1"},"completion":{"values":["a"]}}`},
		{mcp.MethodPing, &mcp.EmptyResult{ResultType: mcp.ResultTypeComplete, Meta: &mcp.ResultMetaObject{ServerInfo: &mcp.Implementation{Name: "s", Version: "1"}}},
			`{}`},
	}
	for _, c := range cases {
		legacy := mcp.LegacyResult(c.res)
		got, err := mcp.Marshal(legacy)
		if err != nil {
			t.Errorf("%s: %v", c.method, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("%s: legacy result\n%s\nwant\n%s", c.method, got, c.want)
		}
		// The three ways to encode agree.
		if viaJSON, err := json.Marshal(legacy); err != nil || string(viaJSON) != string(got) {
			t.Errorf("%s: json.Marshal = %s, %v; Marshal = %s", c.method, viaJSON, err, got)
		}
		if appended, err := mcp.AppendJSON([]byte("x"), legacy); err != nil || string(appended) != "x"+string(got) {
			t.Errorf("%s: AppendJSON = %s, %v", c.method, appended, err)
		}
		if legacy.ResultHeader() != c.res.ResultHeader() {
			t.Errorf("%s: ResultHeader is not the wrapped result's", c.method)
		}
		msg, _ := json.Marshal(JSONRPCResultResponse{ID: jsonrpc.Int64ID(1), Result: got})
		spectest.ValidateMessageStrict(t, mcp.Version20251125, msg, c.method)
	}
}

// TestLegacyResultLeavesTheResultAlone: the result keeps its 2026-07-28
// members (a handler may return a shared value), and encodes them when it
// is encoded itself.
func TestLegacyResultLeavesTheResultAlone(t *testing.T) {
	res := &mcp.ListToolsResult{CacheableResult: modernCacheable()}
	if _, err := mcp.Marshal(mcp.LegacyResult(res)); err != nil {
		t.Fatal(err)
	}
	if res.TTLMs != 60000 || res.CacheScope != mcp.CacheScopePublic || res.ResultType != mcp.ResultTypeComplete ||
		res.Meta.ServerInfo == nil || !res.Meta.SubscriptionID.IsValid() || len(res.Meta.Extra) != 3 {
		t.Errorf("the result changed: %+v", res)
	}
	got, err := mcp.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"},"io.modelcontextprotocol/subscriptionId":7,"com.example/trace":"t-1","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"resultType":"complete","ttlMs":60000,"cacheScope":"public","tools":[]}`
	if string(got) != want {
		t.Errorf("the result itself encodes as\n%s\nwant\n%s", got, want)
	}
}

// TestLegacyResultEdges: a nil result, a typed nil, keys that need
// escaping, and a result that cannot be encoded.
func TestLegacyResultEdges(t *testing.T) {
	if mcp.LegacyResult(nil) != nil {
		t.Error("LegacyResult(nil) is not nil")
	}
	if got, err := mcp.Marshal(mcp.LegacyResult((*mcp.ListToolsResult)(nil))); err != nil || string(got) != "null" {
		t.Errorf("typed nil = %s, %v", got, err)
	}
	res := &mcp.CallToolResult{Result: mcp.Result{Meta: &mcp.ResultMetaObject{Extra: mcp.MetaExtra{"a<b": json.RawMessage(`1`)}}}}
	if got, err := mcp.Marshal(mcp.LegacyResult(res)); err != nil || string(got) != `{"_meta":{"a\u003cb":1},"content":[]}` {
		t.Errorf("escaped key = %s, %v", got, err)
	}
	bad := &mcp.CallToolResult{StructuredContent: make(chan int)}
	if _, err := mcp.Marshal(mcp.LegacyResult(bad)); err == nil {
		t.Error("a result that cannot be encoded encoded")
	}
	if _, err := json.Marshal(mcp.LegacyResult(bad)); err == nil {
		t.Error("json.Marshal encoded a result that cannot be encoded")
	}
}

// A proxy that forwards the results of a 2026-07-28 server to a legacy
// client sends them as a legacy server would.
func ExampleLegacyResult() {
	upstream := []byte(`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"upstream","version":"2"}},"resultType":"complete","ttlMs":60000,"cacheScope":"public","tools":[{"name":"search"}]}`)
	var res mcp.ListToolsResult
	if err := json.Unmarshal(upstream, &res); err != nil {
		fmt.Println("bad result:", err)
		return
	}
	out, err := mcp.Marshal(mcp.LegacyResult(&res))
	if err != nil {
		fmt.Println("cannot encode:", err)
		return
	}
	fmt.Println(string(out))
	// Output: {"tools":[{"name":"search","inputSchema":{"type":"object"}}]}
}
