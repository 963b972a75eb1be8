package mcp_test

import (
	"reflect"
	"testing"

	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/mcp"
)

func TestCapabilitiesEncoding(t *testing.T) {
	c := &mcp.ClientCapabilities{
		Roots:       &mcp.RootsCapability{},
		Sampling:    &mcp.SamplingCapability{Tools: &struct{}{}},
		Elicitation: &mcp.ElicitationCapability{Form: &struct{}{}},
	}
	if got := string(encode(t, c)); got != `{"roots":{},"sampling":{"tools":{}},"elicitation":{"form":{}}}` {
		t.Errorf("client capabilities encode as %s", got)
	}
	spectest.Validate(t, modern, "ClientCapabilities", encode(t, c))
	srv := mcp.ServerCapabilities{Completions: &struct{}{}, Prompts: &mcp.PromptsCapability{}, Resources: &mcp.ResourcesCapability{Subscribe: true}}
	if got := string(encode(t, srv)); got != `{"completions":{},"prompts":{},"resources":{"subscribe":true}}` {
		t.Errorf("server capabilities encode as %s", got)
	}
	spectest.Validate(t, modern, "ServerCapabilities", encode(t, srv))
}

func TestCapabilityGate(t *testing.T) {
	form := mcp.NewElicitFormRequest("q", mcp.ElicitRequestedSchema{})
	url := mcp.NewElicitURLRequest("q", "https://example.com")
	sample := mcp.NewCreateMessageRequest(mcp.CreateMessageRequestParams{MaxTokens: 1})
	sampleTools := mcp.NewCreateMessageRequest(mcp.CreateMessageRequestParams{MaxTokens: 1, ToolChoice: &mcp.ToolChoice{Mode: mcp.ToolChoiceAuto}})
	sampleCtx := mcp.NewCreateMessageRequest(mcp.CreateMessageRequestParams{MaxTokens: 1, IncludeContext: mcp.IncludeContextThisServer})
	roots := mcp.NewListRootsRequest()

	caps := map[string]*mcp.ClientCapabilities{
		"nil":      nil,
		"none":     {},
		"elicit{}": {Elicitation: &mcp.ElicitationCapability{}},
		"urlOnly":  {Elicitation: &mcp.ElicitationCapability{URL: &struct{}{}}},
		"both":     {Elicitation: &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}}},
		"sampling": {Sampling: &mcp.SamplingCapability{}},
		"tools":    {Sampling: &mcp.SamplingCapability{Tools: &struct{}{}}},
		"context":  {Sampling: &mcp.SamplingCapability{Context: &struct{}{}}},
		"roots":    {Roots: &mcp.RootsCapability{}},
	}
	want := map[string][]bool{ // form, url, sample, sampleTools, sampleCtx, roots
		"nil":      {false, false, false, false, false, false},
		"none":     {false, false, false, false, false, false},
		"elicit{}": {true, false, false, false, false, false},
		"urlOnly":  {false, true, false, false, false, false},
		"both":     {true, true, false, false, false, false},
		"sampling": {false, false, true, false, false, false},
		"tools":    {false, false, true, true, false, false},
		"context":  {false, false, true, false, true, false},
		"roots":    {false, false, false, false, false, true},
	}
	reqs := []mcp.InputRequest{form, url, sample, sampleTools, sampleCtx, roots}
	for name, c := range caps {
		for i, r := range reqs {
			if got := c.Allows(r); got != want[name][i] {
				t.Errorf("%s.Allows(request %d) = %v", name, i, got)
			}
		}
	}

	missing := []struct {
		caps *mcp.ClientCapabilities
		reqs mcp.InputRequests
		want string
	}{
		{caps["none"], mcp.InputRequests{"a": form}, `{"elicitation":{}}`},
		{caps["none"], mcp.InputRequests{"a": form, "b": url}, `{"elicitation":{"form":{},"url":{}}}`},
		{caps["elicit{}"], mcp.InputRequests{"a": form, "b": url}, `{"elicitation":{"url":{}}}`},
		{caps["urlOnly"], mcp.InputRequests{"a": form, "b": url}, `{"elicitation":{}}`},
		{caps["sampling"], mcp.InputRequests{"s": sampleTools, "r": roots}, `{"roots":{},"sampling":{"tools":{}}}`},
		{nil, mcp.InputRequests{"s": sample}, `{"sampling":{}}`},
		{caps["both"], mcp.InputRequests{"a": form, "b": url}, ``},
	}
	for _, m := range missing {
		got := m.caps.MissingFor(m.reqs)
		if m.want == "" {
			if got != nil {
				t.Errorf("MissingFor = %s, want nil", encode(t, got))
			}
			continue
		}
		if got == nil || string(encode(t, got)) != m.want {
			t.Errorf("MissingFor(%v) = %s, want %s", m.reqs.Keys(), encode(t, got), m.want)
			continue
		}
		validateError(t, mcp.NewMissingRequiredClientCapabilityError(got))
		for _, r := range m.reqs {
			if !m.caps.Allows(r) && !got.Allows(r) && !reflect.DeepEqual(mcp.RequiredCapabilities(r), &mcp.ClientCapabilities{}) {
				t.Errorf("the missing capabilities %s do not allow %s", encode(t, got), encode(t, r))
			}
		}
	}
}
