package mcp_test

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc"
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

// callToolResult is a typical tools/call result: one text block and the
// serverInfo the server stamps.
var callToolResult = []byte(`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"weather-server","version":"1.2.0"}},` +
	`"resultType":"complete","content":[{"type":"text","text":"Current weather in New York: 72°F, partly cloudy"}]}`)

var getPromptResult = []byte(`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"resultType":"complete",` +
	`"description":"A greeting","messages":[{"role":"user","content":{"type":"text","text":"Say hello to Ada"}}]}`)

var readResourceResult = []byte(`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"resultType":"complete",` +
	`"ttlMs":60000,"cacheScope":"public","contents":[{"uri":"file:///notes.txt","mimeType":"text/plain","text":"hello"}]}`)

func BenchmarkDecodeCallToolResult(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(callToolResult)))
	for b.Loop() {
		if _, err := mcp.DecodeCallToolOutcome(callToolResult); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendCallToolResult(b *testing.B) {
	r := mcp.TextResult("Current weather in New York: 72°F, partly cloudy")
	r.ResultType = mcp.ResultTypeComplete
	r.Meta = &mcp.ResultMetaObject{ServerInfo: &mcp.Implementation{Name: "s", Version: "1"}}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = mcp.AppendJSON(buf[:0], r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeCallToolRequestParams(b *testing.B) {
	var p mcp.CallToolRequestParams
	if err := p.UnmarshalJSON(callToolParams); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(&p); err != nil {
			b.Fatal(err)
		}
	}
}

type allocCase struct {
	name string
	max  float64
	f    func()
}

// checkAllocBudget fails for each case that allocates more than its budget.
func checkAllocBudget(t *testing.T, cases []allocCase) {
	t.Helper()
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race; make test checks them in a separate run without it")
	}
	if testing.Short() {
		t.Skip("allocation counts are checked in full runs")
	}
	for _, c := range cases {
		if n := testing.AllocsPerRun(200, c.f); n > c.max {
			t.Errorf("%s: %.1f allocations, budget %.0f", c.name, n, c.max)
		} else {
			t.Logf("%s: %.1f allocations (budget %.0f)", c.name, n, c.max)
		}
	}
}

// TestDecodeAllocBudget pins the allocation budget of the per-request and
// per-result decoders, so that a regression shows up as a failing test.
// elicitTwoFields is an elicitation/create request's params as a
// 2025-11-25 server sends them over its back-channel.
var elicitTwoFields = []byte(`{"message":"Which region?","requestedSchema":{"type":"object","properties":{"region":{"type":"string","description":"where"},"ok":{"type":"boolean"}},"required":["region"]}}`)

func TestDecodeAllocBudget(t *testing.T) {
	text := []byte(`{"type":"text","text":"hello"}`)
	impl := []byte(`{"name":"weather-server","version":"1.2.0"}`)
	id := []byte(`"tok-1"`)
	var m mcp.Implementation
	checkAllocBudget(t, []allocCase{
		// _meta with its capabilities and client info (1), the shared
		// copy of the strings (1), arguments (1), the progress token (1).
		{"CallToolRequestParams.UnmarshalJSON", 4, func() {
			var p mcp.CallToolRequestParams
			_ = p.UnmarshalJSON(callToolParams)
		}},
		{"json.Unmarshal CallToolRequestParams", 10, func() {
			var p mcp.CallToolRequestParams
			_ = json.Unmarshal(callToolParams, &p)
		}},
		{"UnmarshalParams CallToolRequestParams retry", 8, func() {
			var p mcp.CallToolRequestParams
			_ = mcp.UnmarshalParams(callToolParamsRetry, &p)
		}},
		{"DecodeRequestMeta", 4, func() { _, _ = mcp.DecodeRequestMeta(callToolParams) }},
		// The result with its _meta, serverInfo and text block (1), the
		// shared copy of the strings (1).
		{"DecodeCallToolOutcome", 2, func() { _, _ = mcp.DecodeCallToolOutcome(callToolResult) }},
		{"CallToolResult.UnmarshalJSON", 2, func() {
			var r mcp.CallToolResult
			_ = r.UnmarshalJSON(callToolResult)
		}},
		// As DecodeCallToolOutcome, with one message.
		{"DecodeGetPromptOutcome", 2, func() { _, _ = mcp.DecodeGetPromptOutcome(getPromptResult) }},
		// As DecodeCallToolOutcome, with one text contents.
		{"DecodeReadResourceOutcome", 2, func() { _, _ = mcp.DecodeReadResourceOutcome(readResourceResult) }},
		// The params, the shared copy of the strings, the map, its two
		// field schemas, the required list (6), the map's buckets (5).
		{"DecodeElicitRequestParams text and boolean", 11, func() { _, _ = mcp.DecodeElicitRequestParams(elicitTwoFields) }},
		{"DecodeContentBlock text", 2, func() { _, _ = mcp.DecodeContentBlock(text) }},
		// One copy of the strings (m is outside: icons make it escape).
		{"Implementation.UnmarshalJSON", 1, func() { _ = m.UnmarshalJSON(impl) }},
		{"jsonrpc.ID.UnmarshalJSON string", 1, func() {
			var v jsonrpc.ID
			_ = v.UnmarshalJSON(id)
		}},
	})
}

// TestEncodeAllocBudget pins the allocation budget of the per-request and
// per-result encoders. MarshalJSON costs one allocation (its result) and
// json.Marshal one more (its copy); AppendJSON into a buffer with room
// costs none.
func TestEncodeAllocBudget(t *testing.T) {
	r := mcp.TextResult("Current weather in New York: 72°F, partly cloudy")
	r.ResultType = mcp.ResultTypeComplete
	r.Meta = &mcp.ResultMetaObject{ServerInfo: &mcp.Implementation{Name: "s", Version: "1"}}
	var p mcp.CallToolRequestParams
	if err := p.UnmarshalJSON(callToolParams); err != nil {
		t.Fatal(err)
	}
	prompt := &mcp.GetPromptRequestParams{Meta: p.Meta, Name: "plan", Arguments: map[string]string{"goal": "ship", "when": "now"}, RequestState: "s"}
	read := &mcp.ReadResourceRequestParams{Meta: p.Meta, URI: "file:///notes.txt", ForceRequestState: true}
	buf := make([]byte, 0, 4096)
	caps := &mcp.ClientCapabilities{}
	checkAllocBudget(t, []allocCase{
		{"json.Marshal CallToolResult", 2, func() { _, _ = json.Marshal(r) }},
		{"AppendJSON CallToolResult", 0, func() { buf, _ = mcp.AppendJSON(buf[:0], r) }},
		{"json.Marshal CallToolRequestParams", 2, func() { _, _ = json.Marshal(&p) }},
		{"AppendJSON CallToolRequestParams", 0, func() { buf, _ = mcp.AppendJSON(buf[:0], &p) }},
		{"Marshal GetPromptRequestParams", 1, func() { _, _ = mcp.Marshal(prompt) }},
		{"AppendJSON GetPromptRequestParams", 0, func() { buf, _ = mcp.AppendJSON(buf[:0], prompt) }},
		{"Marshal ReadResourceRequestParams", 1, func() { _, _ = mcp.Marshal(read) }},
		{"AppendJSON ReadResourceRequestParams", 0, func() { buf, _ = mcp.AppendJSON(buf[:0], read) }},
		{"json.Marshal ClientCapabilities{}", 2, func() { _, _ = json.Marshal(caps) }},
		{"json.Marshal TextContent", 2, func() { _, _ = json.Marshal(r.Content[0]) }},
	})
}

// TestLargeMarshalAllocBudget: a large result is held once by its
// encoding (issue 35): Marshal hands over the buffer it encoded into when
// the buffer is too large for its pool, rather than a copy of it, and a
// long string is given its room at once rather than grown a quarter at a
// time around each escape. Bytes allocated per encoding, as a multiple of
// the text, for a text without escapes and for one with a line break every
// 64 bytes; both were over 2× before.
func TestLargeMarshalAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation figures are meaningless under -race; make test checks the budget in a separate run without it")
	}
	const size = 4 << 20
	plain := strings.Repeat("abcdefgh", size/8)
	lines := strings.Repeat(strings.Repeat("x", 63)+"\n", size/64)
	for _, c := range []struct {
		name string
		text string
	}{{"plain", plain}, {"a line break every 64 bytes", lines}} {
		r := mcp.TextResult(c.text)
		var out []byte
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		for range 3 {
			var err error
			if out, err = mcp.Marshal(r); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&b)
		x := float64(b.TotalAlloc-a.TotalAlloc) / 3 / float64(len(out))
		t.Logf("%s: Marshal of a %d-byte text allocates %.2f× its encoding", c.name, len(c.text), x)
		if x > 1.2 {
			t.Errorf("%s: Marshal of a %d-byte text allocates %.2f× its encoding, over 1.2×", c.name, len(c.text), x)
		}
	}
}
