package mcp_test

import (
	"encoding/json"
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

// listToolsResult is a tools/list answer of five tools with schemas,
// titles and annotations: a result every client fetches, which went
// through encoding/json's reflection before mcpgen.
func listToolsResult() *mcp.ListToolsResult {
	r := &mcp.ListToolsResult{}
	readOnly := true
	for _, name := range []string{"get_weather", "search_docs", "create_issue", "list_files", "send_mail"} {
		r.Tools = append(r.Tools, mcp.Tool{
			Name:        name,
			Title:       "The " + name + " tool",
			Description: "Does " + name + " for the user, with care <and> escaping & such.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"City name"},"days":{"type":"integer","minimum":1}},"required":["city"]}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: &readOnly},
		})
	}
	return r
}

func BenchmarkEncodeListToolsResult(b *testing.B) {
	r := listToolsResult()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeDiscoverResult(b *testing.B) {
	r := &mcp.DiscoverResult{
		SupportedVersions: []mcp.ProtocolVersion{"2026-07-28", "2025-11-25"},
		Capabilities:      mcp.ServerCapabilities{Tools: &mcp.ToolsCapability{ListChanged: true}, Prompts: &mcp.PromptsCapability{}},
		Instructions:      "Use the weather tools for forecasts.",
	}
	r.TTLMs = 60000
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(r); err != nil {
			b.Fatal(err)
		}
	}
}
