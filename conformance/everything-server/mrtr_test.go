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

func fixtureForTest(t *testing.T) *fixture {
	t.Helper()
	f, err := newFixture()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// call sends one request to the fixture with the given client capabilities
// and returns the result as a generic map, or the error. It goes through
// the low-level server under mcpserver, so the requestState seal applies.
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
	res, err := f.srv.LowLevel().Handle(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: method, Params: raw}, nil)
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

// cannedAnswer answers one input request as the conformance harness does:
// elicitations with form, sampling with a text, roots/list with one root.
func cannedAnswer(t *testing.T, r any, form map[string]any) any {
	t.Helper()
	switch m := r.(map[string]any)["method"]; m {
	case mcp.MethodElicit:
		return accept(form)
	case mcp.MethodCreateMessage:
		return map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Paris"}, "model": "test-model", "stopReason": "endTurn"}
	case mcp.MethodListRoots:
		return map[string]any{"roots": []any{map[string]any{"uri": "file:///test/root", "name": "Test Root"}}}
	default:
		t.Fatalf("unknown input request method %v", m)
		return nil
	}
}

// drive runs a request to completion: it answers every round's
// inputRequests with cannedAnswer (the form of an elicitation is forms[key])
// and echoes requestState, and returns the final result and how many
// rounds asked.
func drive(t *testing.T, f *fixture, method string, params map[string]any, forms map[string]map[string]any) (map[string]any, int) {
	t.Helper()
	for rounds := 0; rounds < 5; rounds++ {
		p := map[string]any{}
		for k, v := range params {
			p[k] = v
		}
		res, e := call(t, f, allCaps, method, p)
		if e != nil {
			t.Fatalf("%s round %d: %v", method, rounds+1, e)
		}
		if res["resultType"] != "input_required" {
			return res, rounds
		}
		responses := map[string]any{}
		for key, r := range res["inputRequests"].(map[string]any) {
			responses[key] = cannedAnswer(t, r, forms[key])
		}
		params["inputResponses"] = responses
		if s, ok := res["requestState"]; ok {
			params["requestState"] = s
		} else {
			delete(params, "requestState")
		}
	}
	t.Fatalf("%s: still input_required after 5 rounds", method)
	return nil, 0
}

func text(t *testing.T, res map[string]any) string {
	t.Helper()
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("no content in %v", res)
	}
	s, _ := content[0].(map[string]any)["text"].(string)
	return s
}

func TestMultiRound(t *testing.T) {
	f := fixtureForTest(t)
	const name = "test_input_required_result_multi_round"
	r1, e := call(t, f, allCaps, "tools/call", toolParams(name, nil))
	if e != nil || r1["resultType"] != "input_required" || r1["requestState"] == nil {
		t.Fatalf("round 1: %v %v", r1, e)
	}
	if _, ok := r1["inputRequests"].(map[string]any)["step1"]; !ok {
		t.Fatalf("round 1 does not ask step1: %v", r1)
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
	if got := text(t, r3); got != "Hello Alice, your favorite color is blue." {
		t.Errorf("round 3 text = %q", got)
	}
}

func TestTamperedState(t *testing.T) {
	f := fixtureForTest(t)
	const name = "test_input_required_result_tampered_state"
	r1, e := call(t, f, allCaps, "tools/call", toolParams(name, nil))
	if e != nil {
		t.Fatal(e)
	}
	state := r1["requestState"].(string)
	if !strings.HasPrefix(state, "rs1.") || strings.Contains(state, "confirm") {
		t.Fatalf("requestState is not sealed: %q", state)
	}
	answers := map[string]any{"confirm": accept(map[string]any{"ok": true})}
	forged, _ := json.Marshal(map[string]any{"v": 1, "o": map[string]any{}})
	for _, bad := range []string{state + "-TAMPERED", "x" + state, strings.Replace(state, ".", "", 1), string(forged)} {
		_, e := call(t, f, allCaps, "tools/call", toolParams(name, map[string]any{"inputResponses": answers, "requestState": bad}))
		if e == nil || e.Code != jsonrpc.CodeInvalidParams || e.Message != "Invalid or expired requestState" || e.Data != nil {
			t.Errorf("state %q: got %v, want the seal's -32602", bad, e)
		}
	}
	// A state sealed for another tool is refused too.
	other, _ := call(t, f, allCaps, "tools/call", toolParams("test_input_required_result_request_state", nil))
	if _, e := call(t, f, allCaps, "tools/call", toolParams(name, map[string]any{"inputResponses": answers, "requestState": other["requestState"]})); e == nil {
		t.Error("a state of another tool was accepted")
	}
	r2, e := call(t, f, allCaps, "tools/call", toolParams(name, map[string]any{"inputResponses": answers, "requestState": state}))
	if e != nil || r2["resultType"] != "complete" {
		t.Fatalf("untampered retry: %v %v", r2, e)
	}
	if got := text(t, r2); got != "requestState verified; confirmation true" {
		t.Errorf("text = %q", got)
	}
}

// TestElicitationInputs covers the hand-built elicitation tool, which the
// missing-input-response, validate-input and ignore-extra-params scenarios
// call without requestState.
func TestElicitationInputs(t *testing.T) {
	f := fixtureForTest(t)
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
		if c.want == "input_required" && res["requestState"] != nil {
			t.Errorf("%s: the elicitation tool sent a requestState", c.desc)
		}
	}
}

// TestDeclaredQuestions runs every tool and prompt that declares its
// questions to completion, as the conformance harness does.
func TestDeclaredQuestions(t *testing.T) {
	f := fixtureForTest(t)
	forms := map[string]map[string]any{
		"user_name":    {"name": "Alice"},
		"confirm":      {"ok": true},
		"step1":        {"name": "Alice"},
		"step2":        {"color": "blue"},
		"user_context": {"context": "tests"},
		"user_info":    {"username": "alice", "email": "alice@example.com"},
		"defaults":     {"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true},
	}
	cases := []struct {
		tool   string
		args   map[string]any
		rounds int
		want   string
	}{
		{"test_input_required_result_sampling", nil, 1, "The model answered: Paris"},
		{"test_input_required_result_list_roots", nil, 1, "Client roots: file:///test/root"},
		{"test_input_required_result_request_state", nil, 1, "state-ok: requestState verified, confirmation true"},
		{"test_input_required_result_multiple_inputs", nil, 1, "name=Alice; greeting=Paris; roots=file:///test/root"},
		{"test_input_required_result_multi_round", nil, 2, "Hello Alice, your favorite color is blue."},
		{"test_input_required_result_tampered_state", nil, 1, "requestState verified; confirmation true"},
		{"test_sampling", map[string]any{"prompt": "Capital of France?"}, 1, "LLM response: Paris"},
		{"test_elicitation", map[string]any{"message": "Who are you?"}, 1,
			`Elicitation completed: action=accept, content={"username":"alice","email":"alice@example.com"}`},
		{"test_elicitation_sep1034_defaults", nil, 1,
			`Elicitation completed: action=accept, content={"name":"John Doe","age":30,"score":95.5,"status":"active","verified":true}`},
	}
	for _, c := range cases {
		args := c.args
		if args == nil {
			args = map[string]any{}
		}
		res, rounds := drive(t, f, "tools/call", map[string]any{"name": c.tool, "arguments": args}, forms)
		if rounds != c.rounds {
			t.Errorf("%s: %d rounds asked, want %d", c.tool, rounds, c.rounds)
		}
		if got := text(t, res); got != c.want || res["isError"] == true {
			t.Errorf("%s: %q (isError %v), want %q", c.tool, got, res["isError"], c.want)
		}
	}

	res, rounds := drive(t, f, "prompts/get", map[string]any{"name": "test_input_required_result_prompt"}, forms)
	msgs, _ := res["messages"].([]any)
	if rounds != 1 || len(msgs) != 1 || !strings.Contains(mustJSON(t, msgs[0]), "Answer with this context in mind: tests") {
		t.Errorf("prompt: %d rounds, %v", rounds, res)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDeclaredQuestionsPinAnswers: a declared question counts an answer
// only when the sealed state of the round it echoes asked it. That is why
// the elicitation tool, which must take a cold answer, is hand-built.
func TestDeclaredQuestionsPinAnswers(t *testing.T) {
	f := fixtureForTest(t)
	res, e := call(t, f, allCaps, "tools/call", toolParams("test_input_required_result_request_state", map[string]any{
		"inputResponses": map[string]any{"confirm": accept(map[string]any{"ok": true})},
	}))
	if e != nil || res["resultType"] != "input_required" || res["requestState"] == nil {
		t.Errorf("cold answer to a declared question: %v %v, want it asked again", res, e)
	}
	// An answer that does not fit the form ends the call with a tool error
	// naming the question.
	r1, _ := call(t, f, allCaps, "tools/call", toolParams("test_input_required_result_multi_round", nil))
	res, e = call(t, f, allCaps, "tools/call", toolParams("test_input_required_result_multi_round", map[string]any{
		"inputResponses": map[string]any{"step1": accept(map[string]any{"name": 7})},
		"requestState":   r1["requestState"],
	}))
	if e != nil || res["isError"] != true || !strings.Contains(text(t, res), `"step1"`) {
		t.Errorf("misfit answer: %v %v", res, e)
	}
}

func TestCapabilities(t *testing.T) {
	f := fixtureForTest(t)
	res, e := call(t, f, `{"sampling":{}}`, "tools/call", toolParams("test_input_required_result_capabilities", nil))
	if e != nil || res["resultType"] != "input_required" || res["requestState"] == nil {
		t.Fatalf("%v %v", res, e)
	}
	for key, r := range res["inputRequests"].(map[string]any) {
		if m := r.(map[string]any)["method"]; m != mcp.MethodCreateMessage {
			t.Errorf("asked %s by %s without the capability", key, m)
		}
	}
	final, rounds := drive(t, f, "tools/call", toolParams("test_input_required_result_capabilities", nil),
		map[string]map[string]any{"user_name": {"name": "Alice"}})
	if got := text(t, final); rounds != 1 || got != "Received: capital_question=Paris; client_roots=file:///test/root; user_name=Alice" {
		t.Errorf("capabilities: %d rounds, %q", rounds, got)
	}
	none, e := call(t, f, `{}`, "tools/call", toolParams("test_input_required_result_capabilities", nil))
	if e != nil || none["resultType"] != "complete" {
		t.Errorf("no capabilities: %v %v", none, e)
	}
	// A fixture that needs a capability the request lacks says so, whether
	// it builds its questions by hand or declares them.
	for tool, want := range map[string]string{
		"test_input_required_result_elicitation": `"elicitation":{}`,
		"test_input_required_result_sampling":    `"sampling":{}`,
		"test_input_required_result_list_roots":  `"roots":{}`,
	} {
		_, e = call(t, f, `{}`, "tools/call", toolParams(tool, nil))
		if e == nil || e.Code != mcp.CodeMissingRequiredClientCapability || !strings.Contains(string(e.Data), want) {
			t.Errorf("%s without the capability: %v", tool, e)
		}
	}
	_, e = call(t, f, `{}`, "tools/call", toolParams("test_missing_capability", nil))
	if e == nil || e.Code != mcp.CodeMissingRequiredClientCapability || string(e.Data) != `{"requiredCapabilities":{"sampling":{}}}` {
		t.Errorf("test_missing_capability: %v", e)
	}
}

func TestPromptInputRequired(t *testing.T) {
	f := fixtureForTest(t)
	p := map[string]any{"name": "test_input_required_result_prompt"}
	r1, e := call(t, f, allCaps, "prompts/get", p)
	if e != nil || r1["resultType"] != "input_required" || r1["requestState"] == nil {
		t.Fatalf("round 1: %v %v", r1, e)
	}
	if _, ok := r1["inputRequests"].(map[string]any)["user_context"]; !ok {
		t.Fatalf("round 1 does not ask user_context: %v", r1)
	}
	p = map[string]any{
		"name":           "test_input_required_result_prompt",
		"inputResponses": map[string]any{"user_context": accept(map[string]any{"context": "tests"})},
		"requestState":   r1["requestState"],
	}
	r2, e := call(t, f, allCaps, "prompts/get", p)
	if e != nil || r2["resultType"] != "complete" || len(r2["messages"].([]any)) == 0 {
		t.Fatalf("round 2: %v %v", r2, e)
	}
}

// TestListsAndTriggers checks what the list scenarios see: the trigger
// tools add and remove their entries at the end of the lists.
func TestListsAndTriggers(t *testing.T) {
	f := fixtureForTest(t)
	names := func(method, field string) []string {
		res, e := call(t, f, allCaps, method, map[string]any{})
		if e != nil {
			t.Fatalf("%s: %v", method, e)
		}
		if res["nextCursor"] != nil {
			t.Errorf("%s is paginated: %v", method, res["nextCursor"])
		}
		var out []string
		for _, x := range res[field].([]any) {
			out = append(out, x.(map[string]any)["name"].(string))
		}
		return out
	}
	tools := names("tools/list", "tools")
	if len(tools) != 35 || tools[0] != "test_simple_text" || tools[27] != "test_input_required_result_capabilities" || tools[len(tools)-1] != "test_tool_with_task" {
		t.Errorf("tools/list: %d tools: %v", len(tools), tools)
	}
	for _, tr := range []struct{ trigger, list, field, dynamic string }{
		{"test_trigger_tool_change", "tools/list", "tools", dynamicToolName},
		{"test_trigger_prompt_change", "prompts/list", "prompts", dynamicPromptName},
	} {
		before := len(names(tr.list, tr.field))
		res, _ := call(t, f, allCaps, "tools/call", toolParams(tr.trigger, nil))
		if got := text(t, res); got != "Added "+tr.dynamic+"; list_changed sent" {
			t.Errorf("%s: %q", tr.trigger, got)
		}
		after := names(tr.list, tr.field)
		if len(after) != before+1 || after[len(after)-1] != tr.dynamic {
			t.Errorf("%s after adding: %v", tr.list, after)
		}
		res, _ = call(t, f, allCaps, "tools/call", toolParams(tr.trigger, nil))
		if got := text(t, res); got != "Removed "+tr.dynamic+"; list_changed sent" {
			t.Errorf("%s: %q", tr.trigger, got)
		}
		if n := len(names(tr.list, tr.field)); n != before {
			t.Errorf("%s after removing: %d entries, want %d", tr.list, n, before)
		}
	}
}
