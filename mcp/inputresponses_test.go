package mcp_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/mcp"
)

func TestInputResponses(t *testing.T) {
	var in mcp.InputResponses
	if err := json.Unmarshal([]byte(`{
		"name": {"action":"accept","content":{"name":"octocat","age":30,"ok":true,"tags":["a","b"]}},
		"no": {"action":"decline"},
		"llm": {"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m","stopReason":"endTurn"},
		"roots": {"roots":[{"uri":"file:///home/u/p","name":"p"}]},
		"badAction": {"action":"maybe"},
		"badContent": {"action":"accept","content":{"x":{"nested":true}}},
		"badList": {"action":"accept","content":{"x":[1,2]}},
		"noRole": {"content":{"type":"text","text":"x"},"model":"m"},
		"noContent": {"role":"assistant","model":"m"},
		"noRoots": {"rooots":[]},
		"rootNoURI": {"roots":[{"name":"x"}]}
	}`), &in); err != nil {
		t.Fatal(err)
	}
	// Decoding refuses an answer that is not an object; one built in Go
	// still meets the accessors' own check.
	var bad mcp.InputResponses
	if err := json.Unmarshal([]byte(`{"ok":{},"number":42}`), &bad); err == nil {
		t.Errorf("an answer that is not an object decoded: %v", bad)
	}
	in["number"] = json.RawMessage(`42`)
	spectest.Validate(t, modern, "InputResponses", encode(t, mcp.InputResponses{"name": in["name"], "llm": in["llm"], "roots": in["roots"]}))

	e, err := in.Elicit("name")
	if err != nil || !e.Accepted() || e.Content["name"] != "octocat" {
		t.Fatalf("Elicit(name) = %+v, %v", e, err)
	}
	var form struct {
		Name string   `json:"name"`
		Age  int      `json:"age"`
		Tags []string `json:"tags"`
	}
	if err := e.DecodeContent(&form); err != nil || form.Age != 30 || len(form.Tags) != 2 {
		t.Errorf("DecodeContent: %+v %v", form, err)
	}
	if d, err := in.Elicit("no"); err != nil || d.Accepted() || d.Action != mcp.ActionDecline {
		t.Errorf("Elicit(no) = %+v, %v", d, err)
	}
	s, err := in.Sample("llm")
	if err != nil || s.Text() != "Paris" || s.StopReason != mcp.StopReasonEndTurn {
		t.Errorf("Sample(llm) = %+v, %v", s, err)
	}
	r, err := in.Roots("roots")
	if err != nil || len(r.Roots) != 1 || r.Roots[0].URI != "file:///home/u/p" {
		t.Errorf("Roots(roots) = %+v, %v", r, err)
	}

	shape := []struct {
		key string
		get func(string) error
	}{
		{"number", func(k string) error { _, err := in.Elicit(k); return err }},
		{"badAction", func(k string) error { _, err := in.Elicit(k); return err }},
		{"badContent", func(k string) error { _, err := in.Elicit(k); return err }},
		{"badList", func(k string) error { _, err := in.Elicit(k); return err }},
		{"llm", func(k string) error { _, err := in.Elicit(k); return err }}, // a sampling answer is no elicitation
		{"noRole", func(k string) error { _, err := in.Sample(k); return err }},
		{"noContent", func(k string) error { _, err := in.Sample(k); return err }},
		{"name", func(k string) error { _, err := in.Sample(k); return err }},
		{"noRoots", func(k string) error { _, err := in.Roots(k); return err }},
		{"rootNoURI", func(k string) error { _, err := in.Roots(k); return err }},
		{"number", func(k string) error { _, err := in.Roots(k); return err }},
	}
	for _, c := range shape {
		err := c.get(c.key)
		var ie *mcp.InputResponseError
		if !errors.Is(err, mcp.ErrInputResponseShape) || !errors.As(err, &ie) || ie.Key != c.key {
			t.Errorf("%s: error %v, want a shape error for the key", c.key, err)
		}
	}
	for _, get := range []func() error{
		func() error { _, err := in.Elicit("absent"); return err },
		func() error { _, err := in.Sample("absent"); return err },
		func() error { _, err := in.Roots("absent"); return err },
		func() error { _, err := mcp.InputResponses(nil).Elicit("absent"); return err },
	} {
		err := get()
		var ie *mcp.InputResponseError
		if !errors.Is(err, mcp.ErrInputResponseMissing) || errors.Is(err, mcp.ErrInputResponseShape) || !errors.As(err, &ie) || ie.Key != "absent" {
			t.Errorf("missing answer: %v", err)
		}
	}
	if !in.Has("name") || in.Has("absent") {
		t.Error("Has")
	}
}

func TestInputResponsesSet(t *testing.T) {
	var out mcp.InputResponses
	answers := map[string]mcp.InputResponse{
		"e": &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "eu-west-1"}},
		"s": &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: mcp.SamplingContent{mcp.NewTextContent("4")}, Model: "m"},
		"r": &mcp.ListRootsResult{},
	}
	for k, v := range answers {
		if err := out.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	p := &mcp.CallToolRequestParams{Name: "provision", InputResponses: out, RequestState: "state-1"}
	p.Meta = modernMeta()
	validateRequest(t, mcp.MethodCallTool, p)
	var back mcp.CallToolRequestParams
	if err := json.Unmarshal(encode(t, p), &back); err != nil {
		t.Fatal(err)
	}
	if e, err := back.InputResponses.Elicit("e"); err != nil || e.Content["region"] != "eu-west-1" {
		t.Errorf("Elicit after Set: %+v %v", e, err)
	}
	if _, err := back.InputResponses.Sample("s"); err != nil {
		t.Error(err)
	}
	if r, err := back.InputResponses.Roots("r"); err != nil || r.Roots == nil {
		t.Errorf("Roots after Set: %+v %v", r, err)
	}
	if back.RequestState != "state-1" {
		t.Errorf("requestState %q", back.RequestState)
	}
	var carriers = []mcp.InputResponseParams{&back, &mcp.GetPromptRequestParams{}, &mcp.ReadResourceRequestParams{}, &mcp.InputResponseRequestParams{}}
	for _, c := range carriers {
		resp, state := c.Continuation()
		*state = "next"
		if err := resp.Set("k", &mcp.ElicitResult{Action: mcp.ActionCancel}); err != nil {
			t.Fatal(err)
		}
		c.RequestMeta().ProtocolVersion = modern
		c.RequestMeta().ClientCapabilities = &mcp.ClientCapabilities{}
	}
	gp := carriers[1].(*mcp.GetPromptRequestParams)
	gp.Name = "p"
	validateRequest(t, mcp.MethodGetPrompt, gp)
	rr := carriers[2].(*mcp.ReadResourceRequestParams)
	rr.URI = "file:///x"
	validateRequest(t, mcp.MethodReadResource, rr)
	if back.RequestState != "next" {
		t.Error("Continuation does not point into the params")
	}
}
