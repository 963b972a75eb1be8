package interop

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

// TestTypeScriptV1ClientAgainstParley: the TypeScript SDK v1 client
// (@modelcontextprotocol/sdk 1.x, what most desktop hosts embed; it speaks
// the 2025 generation only) runs every flow a host uses against the
// fixture (fixture_test.go), over stdio (the test binary as its server),
// Streamable HTTP, and `parley bridge` (the test binary as the bridge, to
// the same HTTP server, which it reaches in 2026-07-28). client-v1.mjs
// prints what the SDK handed it; each flow is a subtest here.
func TestTypeScriptV1ClientAgainstParley(t *testing.T) {
	needNode(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Each run has a fixture of its own: a flow that fails halfway (the
	// tool list toggled once) must not fail the next run's.
	httpURL := func(t *testing.T) string {
		f, err := newFixture()
		if err != nil {
			t.Fatal(err)
		}
		return serveFixtureHTTP(t, f)
	}
	for _, tc := range []struct {
		name string
		args func(t *testing.T) []string
		env  func(t *testing.T) []string
	}{
		{"stdio", func(*testing.T) []string { return []string{"stdio", self} }, func(*testing.T) []string { return []string{serveEnv + "=fixture"} }},
		{"http", func(t *testing.T) []string { return []string{"http", httpURL(t)} }, func(*testing.T) []string { return nil }},
		{"bridge", func(*testing.T) []string { return []string{"stdio", self} }, func(t *testing.T) []string {
			return []string{serveEnv + "=bridge", bridgeURLEnv + "=" + httpURL(t)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := nodeCommand(t, "client-v1.mjs", tc.args(t)...)
			cmd.Env = append(os.Environ(), tc.env(t)...)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("client-v1.mjs %s: %v", tc.name, err)
			}
			checkV1Report(t, out, tc.name == "http")
		})
	}
}

// v1Call is client-v1.mjs's report of one tools/call.
type v1Call struct {
	Error             string          `json:"error"`
	Text              string          `json:"text"`
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Progress          v1Progress      `json:"progress"`
}

// v1Progress is the progress of one call: what the SDK delivered to the
// call's onprogress, what arrived on the wire (with the synchronous turn
// it was dispatched in) and the turn of the call's response.
type v1Progress struct {
	Delivered []float64 `json:"delivered"`
	Wire      []struct {
		Progress float64 `json:"progress"`
		Turn     int     `json:"turn"`
	} `json:"wire"`
	ResultTurn int `json:"resultTurn"`
}

// checkProgress checks that Parley sent want, in order, and that the SDK
// delivered each one, except one the v1 client is known to drop: a
// notification dispatched in the same turn as the response (one read
// carried both), which it looks up after it has forgotten the request
// (modelcontextprotocol/typescript-sdk#2580; README.md).
func checkProgress(t *testing.T, p v1Progress, want []float64) {
	t.Helper()
	var wire []float64
	for _, w := range p.Wire {
		wire = append(wire, w.Progress)
	}
	if !slices.Equal(wire, want) {
		t.Errorf("progress on the wire = %v, want %v", wire, want)
	}
	delivered := p.Delivered
	for _, w := range p.Wire {
		if len(delivered) > 0 && delivered[0] == w.Progress {
			delivered = delivered[1:]
			continue
		}
		if w.Turn != p.ResultTurn {
			t.Errorf("progress %v (read in turn %d) was not delivered, though its response came in a later read (turn %d)", w.Progress, w.Turn, p.ResultTurn)
		} else {
			t.Logf("progress %v arrived in the same read as the response and was dropped (the v1 client's known bug)", w.Progress)
		}
	}
	if len(delivered) > 0 {
		t.Errorf("the SDK delivered progress %v that the wire did not carry, or out of order (delivered %v, wire %v)", delivered, p.Delivered, wire)
	}
}

// checkV1Report checks client-v1.mjs's report, flow by flow. overHTTP: the
// client reached Parley over Streamable HTTP in a 2025-11-25 session,
// where the reconnect tool's stream is resumed.
func checkV1Report(t *testing.T, out []byte, overHTTP bool) {
	t.Helper()
	var report map[string]json.RawMessage
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("client-v1.mjs printed %q: %v", out, err)
	}
	// flow decodes the report of a flow into v, failing t if the flow
	// threw.
	flow := func(t *testing.T, name string, v any) bool {
		t.Helper()
		raw, ok := report[name]
		if !ok {
			t.Fatalf("the report has no %q", name)
		}
		var failed struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(raw, &failed) == nil && failed.Error != "" {
			t.Fatalf("%s threw: %s", name, failed.Error)
		}
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatalf("%s: %s: %v", name, raw, err)
		}
		return true
	}
	call := func(t *testing.T, name string) v1Call {
		t.Helper()
		var c v1Call
		flow(t, name, &c)
		return c
	}
	wantText := func(t *testing.T, c v1Call, want string) {
		t.Helper()
		if c.Text != want || c.IsError {
			t.Errorf("the tool answered %q (isError %v), want %q", c.Text, c.IsError, want)
		}
	}

	t.Run("initialize", func(t *testing.T) {
		var got struct {
			ProtocolVersion string             `json:"protocolVersion"`
			ServerInfo      mcp.Implementation `json:"serverInfo"`
			Capabilities    struct {
				Tools, Prompts, Logging, Completions *struct{}
				Resources                            *struct {
					Subscribe bool `json:"subscribe"`
				}
			} `json:"capabilities"`
			Instructions string `json:"instructions"`
		}
		flow(t, "initialize", &got)
		if got.ProtocolVersion != string(mcp.Version20251125) {
			t.Errorf("protocolVersion %q, want %q", got.ProtocolVersion, mcp.Version20251125)
		}
		if got.ServerInfo.Name != "parley-fixture" || got.ServerInfo.Version != "1.0.0" {
			t.Errorf("serverInfo %+v", got.ServerInfo)
		}
		c := got.Capabilities
		if c.Tools == nil || c.Prompts == nil || c.Logging == nil || c.Completions == nil || c.Resources == nil || !c.Resources.Subscribe {
			t.Errorf("capabilities %s", report["initialize"])
		}
		if !strings.HasPrefix(got.Instructions, "Parley's interop fixture") {
			t.Errorf("instructions %q", got.Instructions)
		}
	})
	t.Run("ping", func(t *testing.T) {
		flow(t, "ping", &struct{}{})
	})
	t.Run("lists", func(t *testing.T) {
		for _, l := range []struct {
			name string
			want []string
		}{
			{"tools", fixtureTools},
			{"prompts", []string{"greeting"}},
			{"resources", []string{"readme", "counter"}},
			{"templates", []string{"item"}},
		} {
			var got struct {
				Names []string `json:"names"`
				Pages int      `json:"pages"`
			}
			flow(t, l.name, &got)
			if !slices.Equal(got.Names, l.want) {
				t.Errorf("%s: %v, want %v", l.name, got.Names, l.want)
			}
			if pages := (len(l.want) + fixturePageSize - 1) / fixturePageSize; got.Pages != pages {
				t.Errorf("%s came in %d pages, want %d", l.name, got.Pages, pages)
			}
		}
	})
	t.Run("tools/call", func(t *testing.T) {
		wantText(t, call(t, "greet"), "Hello, Ada!")
		if c := call(t, "fail"); !c.IsError || !strings.Contains(c.Text, "failed on purpose") {
			t.Errorf("fail answered %q (isError %v), want an isError result", c.Text, c.IsError)
		}
	})
	t.Run("structured", func(t *testing.T) {
		// The SDK checked structuredContent against the tool's
		// outputSchema (from tools/list); it throws when they disagree.
		c := call(t, "weather")
		want := Forecast{City: "Paris", Celsius: 21.5, Conditions: "sunny", Humidity: 40, Description: "Sunny in Paris"}
		var got Forecast
		if err := json.Unmarshal(c.StructuredContent, &got); err != nil || got != want || c.IsError {
			t.Errorf("structuredContent %s (isError %v), want %+v", c.StructuredContent, c.IsError, want)
		}
		var fromText Forecast
		if err := json.Unmarshal([]byte(c.Text), &fromText); err != nil || fromText != want {
			t.Errorf("the text block %q does not hold the structured content", c.Text)
		}
		var tools struct {
			WeatherOutputSchema struct {
				Properties map[string]any `json:"properties"`
			} `json:"weatherOutputSchema"`
		}
		flow(t, "tools", &tools)
		if _, ok := tools.WeatherOutputSchema.Properties["celsius"]; !ok {
			t.Errorf("weather's outputSchema has no celsius: %s", report["tools"])
		}
	})
	t.Run("elicitation", func(t *testing.T) {
		for _, e := range []struct{ flow, want string }{{"elicitAccept", "accept:Ada"}, {"elicitDecline", "decline:"}} {
			var got struct {
				v1Call
				Asked []string `json:"asked"`
			}
			flow(t, e.flow, &got)
			wantText(t, got.v1Call, e.want)
			if !slices.Equal(got.Asked, []string{"What is your name?"}) {
				t.Errorf("%s: the client was asked %q", e.flow, got.Asked)
			}
		}
	})
	t.Run("elicitation/defaults", func(t *testing.T) {
		var got struct {
			v1Call
			RequestedSchema mcp.ElicitRequestedSchema `json:"requestedSchema"`
		}
		flow(t, "elicitDefaults", &got)
		defaults := got.RequestedSchema.Defaults()
		want := map[string]any{"language": "french", "units": "metric", "count": 3.0, "beta": true}
		if !reflect.DeepEqual(defaults, want) {
			t.Errorf("the form's defaults %v, want %v", defaults, want)
		}
		wantText(t, got.v1Call, `accept:{"language":"french","units":"metric","count":3,"beta":true}`)
	})
	t.Run("sampling", func(t *testing.T) {
		var got struct {
			v1Call
			Requests []struct {
				MaxTokens int    `json:"maxTokens"`
				Text      string `json:"text"`
			} `json:"requests"`
		}
		flow(t, "sample", &got)
		wantText(t, got.v1Call, "ts-v1-model:echo Say hi")
		if len(got.Requests) != 1 || got.Requests[0].MaxTokens != 50 || got.Requests[0].Text != "Say hi" {
			t.Errorf("the client was asked to sample %+v", got.Requests)
		}
	})
	t.Run("roots", func(t *testing.T) {
		wantText(t, call(t, "roots"), "file:///work/one,file:///work/two")
	})
	t.Run("progress", func(t *testing.T) {
		c := call(t, "progress")
		wantText(t, c, "done")
		checkProgress(t, c.Progress, []float64{1, 2, 3})
	})
	t.Run("logging", func(t *testing.T) {
		type entry struct {
			Level  string         `json:"level"`
			Logger string         `json:"logger"`
			Data   map[string]any `json:"data"`
		}
		var got struct {
			Text      string   `json:"text"`
			AtWarning []entry  `json:"atWarning"`
			AtDebug   []string `json:"atDebug"`
		}
		flow(t, "logging", &got)
		want := []entry{{"warning", "fixture", map[string]any{"level": "warning"}}, {"error", "fixture", map[string]any{"level": "error"}}}
		if got.Text != "logged" || !reflect.DeepEqual(got.AtWarning, want) {
			t.Errorf("at level warning the client got %+v (%q), want %+v", got.AtWarning, got.Text, want)
		}
		if want := []string{"debug", "info", "warning", "error"}; !slices.Equal(got.AtDebug, want) {
			t.Errorf("at level debug the client got %v, want %v", got.AtDebug, want)
		}
	})
	t.Run("cancellation", func(t *testing.T) {
		var got struct {
			AbortError string `json:"abortError"`
			Text       string `json:"text"`
		}
		flow(t, "cancel", &got)
		if got.AbortError == "" {
			t.Error("the cancelled call did not fail")
		}
		if got.Text != "cancelled" {
			t.Errorf("the server says its wait is %q, want cancelled", got.Text)
		}
	})
	t.Run("completions", func(t *testing.T) {
		var got struct {
			Prompt   []string `json:"prompt"`
			Template []string `json:"template"`
		}
		flow(t, "complete", &got)
		if !slices.Equal(got.Prompt, []string{"french"}) || !slices.Equal(got.Template, []string{"apple", "apricot"}) {
			t.Errorf("completions %+v", got)
		}
	})
	t.Run("prompts/get", func(t *testing.T) {
		var got struct {
			Text      string `json:"text"`
			Defaulted string `json:"defaulted"`
		}
		flow(t, "prompt", &got)
		if got.Text != "Greet Ada in french." || got.Defaulted != "Greet Ada in english." {
			t.Errorf("prompts %+v", got)
		}
	})
	t.Run("resources/read", func(t *testing.T) {
		var got struct {
			Readme string `json:"readme"`
			Item   string `json:"item"`
		}
		flow(t, "read", &got)
		if got.Readme != "Read me." || got.Item != "item 42" {
			t.Errorf("read %+v", got)
		}
	})
	t.Run("subscriptions", func(t *testing.T) {
		var got struct {
			Updates []string `json:"updates"`
		}
		flow(t, "subscribe", &got)
		if !slices.Equal(got.Updates, []string{"fixture://counter"}) {
			t.Errorf("resource updates %v", got.Updates)
		}
		var lists struct {
			Changes int      `json:"changes"`
			Added   []string `json:"added"`
			Removed []string `json:"removed"`
		}
		flow(t, "listChanged", &lists)
		if lists.Changes != 2 || !slices.Contains(lists.Added, "extra") || slices.Contains(lists.Removed, "extra") {
			t.Errorf("list changes %+v", lists)
		}
	})
	t.Run("resumption", func(t *testing.T) {
		var got struct {
			v1Call
			Resumptions int `json:"resumptions"`
		}
		flow(t, "reconnect", &got)
		// Only a 2025-11-25 session over HTTP can close the stream and be
		// resumed; elsewhere the tool just answers.
		wantText(t, got.v1Call, map[bool]string{true: "closed:true", false: "closed:false"}[overHTTP])
		if overHTTP && got.Resumptions == 0 {
			t.Error("the client got the answer without resuming the stream (no GET with Last-Event-ID)")
		}
		checkProgress(t, got.Progress, []float64{1, 2})
	})
}
