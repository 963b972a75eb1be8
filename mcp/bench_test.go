package mcp_test

import (
	"encoding/json"
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

// callToolParams is a typical tools/call params object: full _meta with
// client info, a progress token and a trace parent, and two arguments.
var callToolParams = []byte(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{},"url":{}},"sampling":{}},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},` +
	`"io.modelcontextprotocol/logLevel":"info","progressToken":"tok-1",` +
	`"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},` +
	`"name":"get_weather","arguments":{"location":"New York","units":"metric"}}`)

// callToolParamsRetry is a second-round tools/call with inputResponses and
// requestState.
var callToolParamsRetry = []byte(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}},` +
	`"name":"get_weather","arguments":{"location":"New York"},` +
	`"inputResponses":{"github_login":{"action":"accept","content":{"name":"octocat"}}},` +
	`"requestState":"eyJsb2NhdGlvbiI6Ik5ldyBZb3JrIn0"}`)

func BenchmarkDecodeCallToolRequestParams(b *testing.B) {
	for _, c := range []struct {
		name string
		data []byte
	}{{"first", callToolParams}, {"retry", callToolParamsRetry}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				var p mcp.CallToolRequestParams
				if err := json.Unmarshal(c.data, &p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// Direct call, as a server that already holds the raw params may do:
	// no encoding/json reflection or validity pre-scan.
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(callToolParams)))
		for b.Loop() {
			var p mcp.CallToolRequestParams
			if err := mcp.UnmarshalParams(callToolParams, &p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkDecodeRequestMeta(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := mcp.DecodeRequestMeta(callToolParams); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeCallToolResult(b *testing.B) {
	r := mcp.TextResult("Current weather in New York: 72°F, partly cloudy")
	r.ResultType = mcp.ResultTypeComplete
	r.Meta = &mcp.ResultMetaObject{ServerInfo: &mcp.Implementation{Name: "s", Version: "1"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeCallToolOutcome(b *testing.B) {
	raw := []byte(`{"resultType":"complete","content":[{"type":"text","text":"hi"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := mcp.DecodeCallToolOutcome(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDecodeAllocations pins the allocation budget of the per-request
// decoders, so that a regression shows up as a failing test.
func TestDecodeAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts are checked in full runs")
	}
	budget := []struct {
		name string
		max  float64
		f    func()
	}{
		{"CallToolRequestParams.UnmarshalJSON", 10, func() {
			var p mcp.CallToolRequestParams
			_ = p.UnmarshalJSON(callToolParams)
		}},
		{"json.Unmarshal CallToolRequestParams", 16, func() {
			var p mcp.CallToolRequestParams
			_ = json.Unmarshal(callToolParams, &p)
		}},
		{"UnmarshalParams CallToolRequestParams retry", 12, func() {
			var p mcp.CallToolRequestParams
			_ = mcp.UnmarshalParams(callToolParamsRetry, &p)
		}},
		{"DecodeRequestMeta", 8, func() { _, _ = mcp.DecodeRequestMeta(callToolParams) }},
	}
	for _, c := range budget {
		if n := testing.AllocsPerRun(200, c.f); n > c.max {
			t.Errorf("%s: %.0f allocations, budget %.0f", c.name, n, c.max)
		} else {
			t.Logf("%s: %.0f allocations (budget %.0f)", c.name, n, c.max)
		}
	}
}
