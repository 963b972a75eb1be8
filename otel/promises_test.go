package otel_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	parleyotel "github.com/parley-mcp/parley/otel"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/tasks"
)

// TestSpanNamesCarryNoResourceURI: reading a static resource and one a
// template serves makes spans named "resources/read" on both sides, the
// URI an attribute only (the conventions' name target is a tool or prompt
// name, and a URI would make a span name per resource).
func TestSpanNamesCarryNoResourceURI(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	tel := newTelemetry(t)
	sess := connectTo(t, registry(t, tel), &client.Options{Middleware: []client.Middleware{tel.ClientMiddleware}})
	for _, uri := range []string{"notes:///index", "notes:///n/shopping"} {
		if _, err := sess.ReadResource(ctx, uri); err != nil {
			t.Fatal(err)
		}
	}
	reads := 0
	for _, s := range tel.spans.Ended() {
		if strings.Contains(s.Name(), "notes:") {
			t.Errorf("a %s span is named %q", s.SpanKind(), s.Name())
		}
		if attr(s, "mcp.resource.uri") != "" {
			reads++
			if s.Name() != "resources/read" {
				t.Errorf("a %s span of a read is named %q", s.SpanKind(), s.Name())
			}
		}
	}
	if reads != 6 { // per read: the client's call and request, the server's
		t.Errorf("%d spans carry the URI as an attribute, want 6", reads)
	}
}

// TestToolErrorMarksSpans: a tool result with isError marks the server's
// span, the client's request span and its call span as errors of type
// tool_error, and the operation metrics of both sides say so.
func TestToolErrorMarksSpans(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	tel := newTelemetry(t)
	s := server.New(mcp.Implementation{Name: "failing", Version: "1"}, nil)
	s.Use(tel.ServerMiddleware)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		req.Route = p.Name
		return mcp.ErrorResult("the disk is full"), nil
	})
	sess := connect(t, serve(t, s), &client.Options{Middleware: []client.Middleware{tel.ClientMiddleware}})
	res, err := sess.CallTool(ctx, "store", nil)
	if err != nil || !res.IsError {
		t.Fatalf("CallTool: %v, %v; want a tool error", res, err)
	}
	for _, kind := range []trace.SpanKind{trace.SpanKindInternal, trace.SpanKindClient, trace.SpanKindServer} {
		spans := find(tel, "tools/call store", kind)
		if len(spans) != 1 {
			t.Fatalf("%d %s spans, want 1", len(spans), kind)
		}
		if sp := spans[0]; sp.Status().Code != codes.Error || attr(sp, "error.type") != "tool_error" {
			t.Errorf("the %s span: status %v, error.type %q; want Error, tool_error", kind, sp.Status(), attr(sp, "error.type"))
		}
	}
	m := tel.metrics(t)
	for _, name := range []string{"mcp.server.operation.duration", "mcp.client.operation.duration"} {
		if n := floatHistCount(t, m[name], map[string]string{"mcp.method.name": "tools/call", "error.type": "tool_error"}); n != 1 {
			t.Errorf("%s: %d tool errors recorded, want 1", name, n)
		}
	}
}

// TestPlainErrorType: a handler's plain Go error (no JSON-RPC code) is the
// -32603 the server answers it with, on the server's span (status Error,
// error.type and rpc.response.status_code) and metric; and on the client a
// plain Go error (here a middleware's, inner to the telemetry's) is an
// error of type _OTHER, the conventions' fallback.
func TestPlainErrorType(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	tel := newTelemetry(t)
	s := server.New(mcp.Implementation{Name: "failing", Version: "1"}, nil)
	s.Use(tel.ServerMiddleware)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		req.Route = p.Name
		return nil, errors.New("the database is down")
	})
	refuse := func(next client.Handler) client.Handler {
		return func(ctx context.Context, req *client.Request) (any, error) {
			if req.Method == mcp.MethodCallTool && req.Kind == client.KindRequest {
				if p, ok := req.Params.(*mcp.CallToolRequestParams); ok && p.Name == "refused" {
					return nil, errors.New("refused by policy")
				}
			}
			return next(ctx, req)
		}
	}
	sess := connect(t, serve(t, s), &client.Options{Middleware: []client.Middleware{tel.ClientMiddleware, refuse}})
	_, err := sess.CallTool(ctx, "query", nil)
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInternalError {
		t.Fatalf("CallTool: %v, want -32603", err)
	}
	served := find(tel, "tools/call query", trace.SpanKindServer)
	if len(served) != 1 {
		t.Fatalf("%d server spans, want 1", len(served))
	}
	if sp := served[0]; sp.Status().Code != codes.Error || attr(sp, "error.type") != "-32603" || attr(sp, "rpc.response.status_code") != "-32603" {
		t.Errorf("the server's span: status %v, attributes %v", sp.Status(), sp.Attributes())
	}
	if n := floatHistCount(t, tel.metrics(t)["mcp.server.operation.duration"], map[string]string{"error.type": "-32603", "rpc.response.status_code": "-32603"}); n != 1 {
		t.Errorf("the server's metric: %d plain errors recorded as -32603, want 1", n)
	}

	if _, err := sess.CallTool(ctx, "refused", nil); err == nil || err.Error() != "refused by policy" {
		t.Fatalf("CallTool: %v, want the middleware's error", err)
	}
	for _, kind := range []trace.SpanKind{trace.SpanKindClient, trace.SpanKindInternal} {
		spans := find(tel, "tools/call refused", kind)
		if len(spans) != 1 {
			t.Fatalf("%d %s spans, want 1", len(spans), kind)
		}
		if sp := spans[0]; sp.Status().Code != codes.Error || attr(sp, "error.type") != "_OTHER" || sp.Status().Description != "refused by policy" {
			t.Errorf("the client's %s span: status %v, error.type %q", kind, sp.Status(), attr(sp, "error.type"))
		}
	}
	if n := floatHistCount(t, tel.metrics(t)["mcp.client.operation.duration"], map[string]string{"gen_ai.tool.name": "refused", "error.type": "_OTHER"}); n != 1 {
		t.Errorf("the client's metric: %d plain errors recorded as _OTHER, want 1", n)
	}
}

// TestMeasuredWithoutTracing: with a meter provider and no tracer the
// task store is still wrapped and counts the statuses tasks enter, and the
// server's middleware still measures its requests.
func TestMeasuredWithoutTracing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	reader := sdkmetric.NewManualReader()
	measuring, err := parleyotel.New(&parleyotel.Options{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	if err != nil {
		t.Fatal(err)
	}
	tel := &telemetry{Telemetry: measuring, reader: reader}
	inner := tasks.NewMemoryStore(nil)
	if tel.TaskStore(inner) == tasks.Store(inner) {
		t.Fatal("without a tracer, TaskStore returned the store unwrapped")
	}
	s := server.New(mcp.Implementation{Name: "tasks", Version: "1"}, nil)
	s.Use(tel.ServerMiddleware)
	m, err := tasks.Enable(s, &tasks.Options{Store: tel.TaskStore(inner)})
	if err != nil {
		t.Fatal(err)
	}
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		req.Route = p.Name
		return m.Start(ctx, req, func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			return mcp.TextResult("done"), nil
		})
	})
	sess := connect(t, serve(t, s), &client.Options{
		Extensions: map[string]json.RawMessage{mcp.ExtensionTasks: nil},
		Loop:       &client.LoopOptions{MaxPollInterval: 1},
	})
	if _, err := sess.CallTool(ctx, "long", nil); err != nil {
		t.Fatal(err)
	}
	got := tel.metrics(t)
	if got["mcp.server.task.transitions"] == nil {
		t.Fatal("no task transitions recorded without a tracer")
	}
	for status, want := range map[string]int64{"working": 1, "completed": 1} {
		if n := sumWhere(t, got["mcp.server.task.transitions"], map[string]string{"mcp.task.status": status}); n != want {
			t.Errorf("%s entered %d times, want %d", status, n, want)
		}
	}
	if got["mcp.server.operation.duration"] == nil {
		t.Fatal("the server's requests are not measured without a tracer")
	}
	if n := floatHistCount(t, got["mcp.server.operation.duration"], map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "long"}); n != 1 {
		t.Errorf("%d tools/call measured, want 1", n)
	}
}

// TestTamperedStateCountsAsTampered: a requestState whose seal fails its
// check (one byte of the ciphertext flipped: "authentication failed") is
// counted as tampered, not as an error of the server's.
func TestTamperedStateCountsAsTampered(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	tel := newTelemetry(t)
	s := provisionServer(t, tel, nil)
	sess := connect(t, serve(t, s), accepting(tel))
	call, err := client.ToolCall("provision", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, p, err := sess.Begin(ctx, call)
	if err != nil || p == nil {
		t.Fatalf("Begin: %v, %v", p, err)
	}
	answers, err := sess.Fulfil(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	body, ok := strings.CutPrefix(p.RequestState, "rs1.")
	if !ok {
		t.Fatalf("a requestState not sealed by requeststate's AES-GCM: %.12q", p.RequestState)
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-1] ^= 1
	p.SetRequestState("rs1."+base64.RawURLEncoding.EncodeToString(raw), true)
	if _, _, err := sess.Continue(ctx, p, answers); err == nil {
		t.Fatal("a tampered requestState was accepted")
	}
	m := tel.metrics(t)["mcp.server.request_state.rejections"]
	if m == nil {
		t.Fatal("the refusal was not counted")
	}
	if n := sumWhere(t, m, map[string]string{"mcp.request_state.rejection.reason": "tampered"}); n != 1 {
		t.Errorf("rejections by reason tampered = %d, want 1", n)
	}
	if n := sumWhere(t, m, map[string]string{"mcp.request_state.rejection.reason": "error"}); n != 0 {
		t.Errorf("rejections by reason error = %d, want 0: a failed check is not a failure of the server's", n)
	}
}
