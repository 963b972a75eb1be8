package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
)

// call sends one request to the fixture with the given client capabilities
// and returns the result as a generic map, or the error.
func call(t *testing.T, f *fixture, caps string, method string, params map[string]any) (map[string]any, *jsonrpc.Error) {
	t.Helper()
	params["_meta"] = map[string]any{
		mcp.MetaKeyProtocolVersion:    "2026-07-28",
		mcp.MetaKeyClientCapabilities: json.RawMessage(caps),
	}
	raw, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.srv.Handle(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: method, Params: raw}, nil)
	if err != nil {
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) {
			t.Fatalf("%s: error %v is not a JSON-RPC error", method, err)
		}
		return nil, rpcErr
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m, nil
}

const allCaps = `{"sampling":{},"elicitation":{},"roots":{}}`

func toolParams(name string, extra map[string]any) map[string]any {
	p := map[string]any{"name": name, "arguments": map[string]any{}}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

func accept(content map[string]any) map[string]any {
	return map[string]any{"action": "accept", "content": content}
}

func TestMultiRound(t *testing.T) {
	f := newFixture()
	const name = "test_input_required_result_multi_round"
	r1, e := call(t, f, allCaps, "tools/call", toolParams(name, nil))
	if e != nil || r1["resultType"] != "input_required" || r1["requestState"] == nil {
		t.Fatalf("round 1: %v %v", r1, e)
	}
	r2, e := call(t, f, allCaps, "tools/call", toolParams(name, map[string]any{
		"inputResponses": map[string]any{"step1": accept(map[string]any{"name": "Alice"})},
		"requestState":   r1["requestState"],
	}))
	if e != nil || r2["resultType"] != "input_required" || r2["requestState"] == r1["requestState"] {
		t.Fatalf("round 2: %v %v", r2, e)
	}
	if _, ok := r2["inputRequests"].(map[string]any)["step2"]; !ok {
		t.Fatalf("round 2 does not ask step2: %v", r2)
	}
	r3, e := call(t, f, allCaps, "tools/call", toolParams(name, map[string]any{
		"inputResponses": map[string]any{"step2": accept(map[string]any{"color": "blue"})},
		"requestState":   r2["requestState"],
	}))
	if e != nil || r3["resultType"] != "complete" {
		t.Fatalf("round 3: %v %v", r3, e)
	}
	if got := r3["content"].([]any)[0].(map[string]any)["text"]; got != "Hello Alice, your favorite color is blue." {
		t.Errorf("round 3 text = %q", got)
	}
}

func TestTamperedState(t *testing.T) {
	f := newFixture()
	const name = "test_input_required_result_tampered_state"
	r1, e := call(t, f, allCaps, "tools/call", toolParams(name, nil))
	if e != nil {
		t.Fatal(e)
	}
	state := r1["requestState"].(string)
	if !strings.HasPrefix(state, "rs1.") || strings.Contains(state, "flow") {
		t.Fatalf("requestState is not sealed by the boundary: %q", state)
	}
	answers := map[string]any{"confirm": accept(map[string]any{"ok": true})}
	forged, _ := json.Marshal(map[string]any{"flow": "tampered_state", "round": 1})
	for _, bad := range []string{state + "-TAMPERED", "x" + state, strings.Replace(state, ".", "", 1), string(forged)} {
		_, e := call(t, f, allCaps, "tools/call", toolParams(name, map[string]any{"inputResponses": answers, "requestState": bad}))
		if e == nil || e.Code != jsonrpc.CodeInvalidParams || e.Message != "Invalid or expired requestState" || e.Data != nil {
			t.Errorf("state %q: got %v, want the boundary's -32602", bad, e)
		}
	}
	// A state sealed for another flow is refused too.
	other, _ := call(t, f, allCaps, "tools/call", toolParams("test_input_required_result_request_state", nil))
	if _, e := call(t, f, allCaps, "tools/call", toolParams(name, map[string]any{"inputResponses": answers, "requestState": other["requestState"]})); e == nil {
		t.Error("a state of another flow was accepted")
	}
	r2, e := call(t, f, allCaps, "tools/call", toolParams(name, map[string]any{"inputResponses": answers, "requestState": state}))
	if e != nil || r2["resultType"] != "complete" {
		t.Errorf("untampered retry: %v %v", r2, e)
	}
}

func TestElicitationInputs(t *testing.T) {
	f := newFixture()
	const name = "test_input_required_result_elicitation"
	cases := []struct {
		desc      string
		responses any
		want      string // resultType, or "error"
	}{
		{"no answer", nil, "input_required"},
		{"wrong key", map[string]any{"wrong_key": accept(map[string]any{"name": "Alice"})}, "input_required"},
		{"malformed", map[string]any{"user_name": 12345}, "error"},
		{"accepted without the field", map[string]any{"user_name": accept(map[string]any{})}, "input_required"},
		{"extra keys", map[string]any{"user_name": accept(map[string]any{"name": "Alice"}), "other": accept(nil)}, "complete"},
		{"declined", map[string]any{"user_name": map[string]any{"action": "decline"}}, "complete"},
	}
	for _, c := range cases {
		extra := map[string]any{}
		if c.responses != nil {
			extra["inputResponses"] = c.responses
		}
		res, e := call(t, f, allCaps, "tools/call", toolParams(name, extra))
		got := "error"
		if e == nil {
			got, _ = res["resultType"].(string)
		}
		if got != c.want {
			t.Errorf("%s: got %s (%v %v), want %s", c.desc, got, res, e, c.want)
		}
	}
}

func TestCapabilities(t *testing.T) {
	f := newFixture()
	res, e := call(t, f, `{"sampling":{}}`, "tools/call", toolParams("test_input_required_result_capabilities", nil))
	if e != nil || res["resultType"] != "input_required" {
		t.Fatalf("%v %v", res, e)
	}
	for key, r := range res["inputRequests"].(map[string]any) {
		if m := r.(map[string]any)["method"]; m != mcp.MethodCreateMessage {
			t.Errorf("asked %s by %s without the capability", key, m)
		}
	}
	// A fixture that needs a capability the request lacks says so.
	_, e = call(t, f, `{}`, "tools/call", toolParams("test_input_required_result_elicitation", nil))
	if e == nil || e.Code != mcp.CodeMissingRequiredClientCapability || !strings.Contains(string(e.Data), `"elicitation":{}`) {
		t.Errorf("elicitation without the capability: %v", e)
	}
	_, e = call(t, f, `{}`, "tools/call", toolParams("test_missing_capability", nil))
	if e == nil || e.Code != mcp.CodeMissingRequiredClientCapability || string(e.Data) != `{"requiredCapabilities":{"sampling":{}}}` {
		t.Errorf("test_missing_capability: %v", e)
	}
}

func TestPromptInputRequired(t *testing.T) {
	f := newFixture()
	p := map[string]any{"name": "test_input_required_result_prompt"}
	r1, e := call(t, f, allCaps, "prompts/get", p)
	if e != nil || r1["resultType"] != "input_required" {
		t.Fatalf("round 1: %v %v", r1, e)
	}
	p = map[string]any{"name": "test_input_required_result_prompt", "inputResponses": map[string]any{"user_context": accept(map[string]any{"context": "tests"})}}
	r2, e := call(t, f, allCaps, "prompts/get", p)
	if e != nil || r2["resultType"] != "complete" || len(r2["messages"].([]any)) == 0 {
		t.Fatalf("round 2: %v %v", r2, e)
	}
}
