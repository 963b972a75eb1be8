package otel_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	parleyotel "github.com/parley-mcp/parley/otel"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// registry is an mcpserver with one tool, one prompt, one static resource
// and one resource template, instrumented with tel.
func registry(t testing.TB, tel *telemetry) *mcpserver.Server {
	t.Helper()
	s, err := mcpserver.New(mcp.Implementation{Name: "registry", Version: "1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Use(tel.ServerMiddleware)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(mcpserver.AddTool(s, &mcp.Tool{Name: "weather"}, func(ctx context.Context, c *mcpserver.Call, a map[string]any) (string, error) {
		return "sunny", nil
	}))
	must(mcpserver.AddPrompt(s, &mcp.Prompt{Name: "review"}, func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "review"}}}}, nil
	}))
	must(s.AddResource(&mcp.Resource{URI: "notes:///index", Name: "index"}, func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: uri, Text: "index"}}}, nil
	}))
	type noteVars struct {
		Name string `json:"name"`
	}
	must(mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "notes:///n/{name}", Name: "note"},
		func(ctx context.Context, c *mcpserver.Call, v noteVars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: c.ResourceURI(), Text: v.Name}}}, nil
		}))
	return s
}

// connectTo connects a client with opts to an mcpserver in memory.
func connectTo(t testing.TB, s *mcpserver.Server, opts *client.Options) *client.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	sess, err := client.New(mcp.Implementation{Name: "otel-test-client", Version: "1"}, opts).Connect(ctx, s.InMemoryTransport())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

// points returns the data points of a float64 histogram, by their
// attributes.
func points(t testing.TB, agg metricdata.Aggregation) []map[string]string {
	t.Helper()
	h, ok := agg.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("not a float64 histogram: %T", agg)
	}
	out := make([]map[string]string, 0, len(h.DataPoints))
	for _, p := range h.DataPoints {
		m := map[string]string{}
		for _, kv := range p.Attributes.ToSlice() {
			m[string(kv.Key)] = kv.Value.String()
		}
		out = append(out, m)
	}
	return out
}

// madeUp is how many names the tests below make up: more than the metrics
// SDK's default cardinality limit (2,000 series per instrument), past
// which it sends every new series to its overflow bucket.
const madeUp = 2400

// longer bounds the loops of made-up names, a few thousand round trips
// (some seconds under -race on a busy machine).
const longer = 6 * failAfter

// TestServerMetricsRecordRegisteredNames: a client that calls thousands of
// tools and prompts that do not exist and reads thousands of URIs (made up
// ones that a template matches, and ones nothing matches) makes no series
// per name on the server: an unregistered name is recorded as _OTHER, a
// resource by its template, never by its URI; and a registered tool,
// prompt, resource and template are still recorded as themselves. No span
// is named after a made-up name or a URI.
func TestServerMetricsRecordRegisteredNames(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), longer)
	defer cancel()
	tel := newTelemetry(t)
	sess := connectTo(t, registry(t, tel), nil)
	for i := range madeUp / 4 {
		if _, err := sess.CallTool(ctx, fmt.Sprintf("tool-%d", i), nil); err == nil {
			t.Fatal("a made-up tool was served")
		}
		if _, err := sess.GetPrompt(ctx, fmt.Sprintf("prompt-%d", i), nil); err == nil {
			t.Fatal("a made-up prompt was served")
		}
		if _, err := sess.ReadResource(ctx, fmt.Sprintf("notes:///n/%d", i)); err != nil {
			t.Fatal(err)
		}
		if _, err := sess.ReadResource(ctx, fmt.Sprintf("other:///%d", i)); err == nil {
			t.Fatal("a made-up resource was served")
		}
	}
	if _, err := sess.CallTool(ctx, "weather", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.GetPrompt(ctx, "review", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.ReadResource(ctx, "notes:///index"); err != nil {
		t.Fatal(err)
	}

	m := tel.metrics(t)
	series := points(t, m["mcp.server.operation.duration"])
	if len(series) > 20 {
		t.Errorf("%d series of mcp.server.operation.duration after %d made-up names, want a handful", len(series), madeUp)
	}
	for _, p := range series {
		if v, ok := p["gen_ai.tool.name"]; ok && v != "weather" && v != parleyotel.OtherName {
			t.Errorf("a series records tool %q", v)
		}
		if v, ok := p["gen_ai.prompt.name"]; ok && v != "review" && v != parleyotel.OtherName {
			t.Errorf("a series records prompt %q", v)
		}
		if v, ok := p["mcp.resource.template"]; ok && v != "notes:///index" && v != "notes:///n/{name}" && v != parleyotel.OtherName {
			t.Errorf("a series records resource template %q", v)
		}
		if v, ok := p["mcp.resource.uri"]; ok {
			t.Errorf("a series records the URI %q without the deployment's opt-in", v)
		}
	}
	op := m["mcp.server.operation.duration"]
	for _, c := range []struct {
		want  map[string]string
		count uint64
	}{
		{map[string]string{"gen_ai.tool.name": "weather"}, 1},
		{map[string]string{"gen_ai.tool.name": parleyotel.OtherName, "error.type": "-32602"}, madeUp / 4},
		{map[string]string{"gen_ai.prompt.name": "review"}, 1},
		{map[string]string{"gen_ai.prompt.name": parleyotel.OtherName}, madeUp / 4},
		{map[string]string{"mcp.resource.template": "notes:///index"}, 1},
		{map[string]string{"mcp.resource.template": "notes:///n/{name}"}, madeUp / 4},
		{map[string]string{"mcp.resource.template": parleyotel.OtherName}, madeUp / 4},
	} {
		if n := floatHistCount(t, op, c.want); n != c.count {
			t.Errorf("%v: %d requests recorded, want %d", c.want, n, c.count)
		}
	}

	for _, s := range tel.spans.Ended() {
		if s.SpanKind() != trace.SpanKindServer {
			continue
		}
		switch name := s.Name(); {
		case strings.Contains(name, "tool-"), strings.Contains(name, "prompt-"), strings.Contains(name, ":///"):
			t.Fatalf("a server span is named %q", name)
		}
	}
	if n := len(find(tel, "tools/call weather", trace.SpanKindServer)); n != 1 {
		t.Errorf("%d server spans named after the registered tool, want 1", n)
	}
	if n := len(find(tel, "prompts/get review", trace.SpanKindServer)); n != 1 {
		t.Errorf("%d server spans named after the registered prompt, want 1", n)
	}
	unknown := find(tel, "tools/call", trace.SpanKindServer, withAttr("gen_ai.tool.name", "tool-7"))
	if len(unknown) != 1 || attr(unknown[0], "error.type") != "-32602" {
		t.Errorf("the span of a made-up tool: %d spans named after the method with the name as an attribute, want 1", len(unknown))
	}
	read := find(tel, "resources/read", trace.SpanKindServer, withAttr("mcp.resource.uri", "notes:///n/7"))
	if len(read) != 1 || attr(read[0], "mcp.resource.template") != "notes:///n/{name}" {
		t.Errorf("the span of a read a template matched: %d, want 1 with the URI and the template as attributes", len(read))
	}
}

// TestResourceURIsOptIn: with Options.ResourceURIs the server's metrics
// record the concrete URI of a read a registered template or resource
// served, beside the template, and still none for a URI nothing matched.
func TestResourceURIsOptIn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	tel := newTelemetryWith(t, &parleyotel.Options{ResourceURIs: true})
	sess := connectTo(t, registry(t, tel), nil)
	if _, err := sess.ReadResource(ctx, "notes:///n/shopping"); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.ReadResource(ctx, "other:///made-up"); err == nil {
		t.Fatal("a made-up resource was served")
	}
	op := tel.metrics(t)["mcp.server.operation.duration"]
	if n := floatHistCount(t, op, map[string]string{"mcp.resource.uri": "notes:///n/shopping", "mcp.resource.template": "notes:///n/{name}"}); n != 1 {
		t.Errorf("the read a template served: %d recorded with its URI, want 1", n)
	}
	for _, p := range points(t, op) {
		if p["mcp.resource.uri"] == "other:///made-up" {
			t.Errorf("a URI nothing matched is recorded: %v", p)
		}
	}
}

// hostile serves any tool, prompt and resource it is asked for, failing
// every other call with an error code of its own choosing: a server that
// tries to multiply a client's series.
func hostile(t testing.TB) transport.Conn {
	s := server.New(mcp.Implementation{Name: "hostile", Version: "1"}, nil)
	var calls atomic.Int64
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if n := calls.Add(1); n%2 == 0 {
			return nil, wire.NewError(1000+n, "no", nil)
		}
		return mcp.TextResult("ok"), nil
	})
	s.HandleReadResource(func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: p.URI, Text: "x"}}}, nil
	})
	return serve(t, s)
}

// TestClientMetricsBoundServerNames: a client made to call thousands of
// tool names and read thousands of URIs a server chose, answered with
// thousands of error codes, records at most DefaultMaxClientNames names as
// themselves (the first ones, which stay recorded as themselves) and the
// rest as _OTHER, no URI (without the opt-in), and a code JSON-RPC does not
// reserve as _OTHER. Span names carry the admitted names only, and no
// URI.
func TestClientMetricsBoundServerNames(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), longer)
	defer cancel()
	tel := newTelemetry(t)
	sess := connect(t, hostile(t), &client.Options{Middleware: []client.Middleware{tel.ClientMiddleware}})
	for i := range madeUp / 2 {
		_, _ = sess.CallTool(ctx, fmt.Sprintf("tool-%d", i), nil) // every other one fails
		if _, err := sess.ReadResource(ctx, fmt.Sprintf("hostile:///%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sess.CallTool(ctx, "tool-0", nil); err != nil {
		t.Fatal(err)
	}

	m := tel.metrics(t)
	series := points(t, m["mcp.client.operation.duration"])
	names := map[string]bool{}
	for _, p := range series {
		if v, ok := p["gen_ai.tool.name"]; ok {
			names[v] = true
		}
		if v, ok := p["mcp.resource.uri"]; ok {
			t.Errorf("a series records the URI %q without the deployment's opt-in", v)
		}
		if v, ok := p["error.type"]; ok && v != parleyotel.OtherName {
			t.Errorf("a series records the server's error code %q", v)
		}
	}
	if len(names) != parleyotel.DefaultMaxClientNames+1 || !names[parleyotel.OtherName] {
		t.Errorf("%d tool names recorded after %d, want the first %d and _OTHER", len(names), madeUp/2, parleyotel.DefaultMaxClientNames)
	}
	if len(series) > 3*(parleyotel.DefaultMaxClientNames+1)+10 {
		t.Errorf("%d series of mcp.client.operation.duration", len(series))
	}
	op := m["mcp.client.operation.duration"]
	if n := floatHistCount(t, op, map[string]string{"gen_ai.tool.name": "tool-0"}); n != 2 {
		t.Errorf("the first tool called: %d calls recorded under its name, want 2", n)
	}
	if n := floatHistCount(t, op, map[string]string{"gen_ai.tool.name": parleyotel.OtherName}); n != madeUp/2-parleyotel.DefaultMaxClientNames {
		t.Errorf("%d calls recorded as _OTHER, want %d", n, madeUp/2-parleyotel.DefaultMaxClientNames)
	}

	for _, s := range tel.spans.Ended() {
		if strings.Contains(s.Name(), ":///") {
			t.Fatalf("a client span is named %q", s.Name())
		}
	}
	if n := len(find(tel, "tools/call tool-0", trace.SpanKindClient)); n != 2 {
		t.Errorf("%d spans named after the first tool, want 2", n)
	}
	late := fmt.Sprintf("tool-%d", madeUp/2-1)
	if n := len(find(tel, "tools/call", trace.SpanKindClient, withAttr("gen_ai.tool.name", late))); n != 1 {
		t.Errorf("a tool past the bound: %d spans named after the method with the name as an attribute, want 1", n)
	}
	if n := len(find(tel, "tools/call", trace.SpanKindInternal, withAttr("gen_ai.tool.name", late))); n != 1 {
		t.Errorf("a tool past the bound: %d call spans named after the method, want 1", n)
	}
	failed := find(tel, "tools/call tool-1", trace.SpanKindClient)
	if len(failed) != 1 || attr(failed[0], "error.type") != "1002" {
		t.Errorf("the span of a call the server failed keeps its code as an attribute: %v", failed)
	}
}

// TestClientNames: Options.ClientNames decides which names the client
// records as themselves, and with ResourceURIs which URIs.
func TestClientNames(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	tel := newTelemetryWith(t, &parleyotel.Options{ResourceURIs: true, ClientNames: func(method, name string) bool {
		return name == "tool-1" || name == "hostile:///1"
	}})
	sess := connect(t, hostile(t), &client.Options{Middleware: []client.Middleware{tel.ClientMiddleware}})
	for i := range 3 {
		_, _ = sess.CallTool(ctx, fmt.Sprintf("tool-%d", 2*i+1), nil) // the second fails
		if _, err := sess.ReadResource(ctx, fmt.Sprintf("hostile:///%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	op := tel.metrics(t)["mcp.client.operation.duration"]
	for want, n := range map[[2]string]uint64{
		{"gen_ai.tool.name", "tool-1"}:             1,
		{"gen_ai.tool.name", parleyotel.OtherName}: 2,
		{"mcp.resource.uri", "hostile:///1"}:       1,
		{"mcp.resource.uri", parleyotel.OtherName}: 2,
	} {
		if got := floatHistCount(t, op, map[string]string{want[0]: want[1]}); got != n {
			t.Errorf("%s=%s: %d recorded, want %d", want[0], want[1], got, n)
		}
	}
	if n := len(find(tel, "tools/call tool-3", trace.SpanKindClient)); n != 0 {
		t.Errorf("a span is named after a refused name")
	}
}
