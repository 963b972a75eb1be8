package otel

import (
	"context"
	"encoding/json"
	"slices"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
)

// ClientMiddleware traces and measures what a client does; put it in
// client.Options.Middleware.
//
//   - A logical call (CallTool, GetPrompt, ReadResource) is an INTERNAL
//     span "{mcp.method.name} {target}" that lasts the whole call, every
//     round and every answer included; it says how many rounds the call
//     took (mcp.call.rounds), which the mcp.client.call.rounds histogram
//     also records.
//   - Each request the client sends is a CLIENT span, a child of its
//     call's span when it is a round (with mcp.call.round), whose trace
//     context goes to the server in params._meta; its duration is the
//     mcp.client.operation.duration metric. A result that asks for input
//     names the kinds asked.
//   - Each input request the client answers is a SERVER span, a child of
//     its call's span under 2026-07-28, or of the server's request span
//     on a legacy session (from the request's _meta): its length is the
//     time the answer took, a person's for an elicitation
//     (mcp.input_request.waits_on), and its outcome (accept, decline,
//     cancel, answered, error) is an attribute and, with its kind, a
//     count (mcp.client.input_request.count) and a duration
//     (mcp.client.input_request.duration).
//
// What the server chooses is bounded before it reaches a series or a span
// name: tool and prompt names are recorded as themselves only when
// Options.ClientNames allows them (by default the first
// DefaultMaxClientNames of each method), else as OtherName, and the span
// is then named after the method alone; resource URIs are in the metrics
// only with Options.ResourceURIs, likewise bounded; and a JSON-RPC error
// code outside the ranges JSON-RPC reserves is recorded as OtherName. The
// spans keep every name, URI and code as attributes.
func (t *Telemetry) ClientMiddleware(next client.Handler) client.Handler {
	if t.off() {
		return next
	}
	return func(ctx context.Context, req *client.Request) (any, error) {
		if s := req.Session; s != nil {
			t.recordSession(s, s.Done(), func(ctx context.Context, d float64) {
				t.clientSession.Record(ctx, d, t.clientSession.AttrProtocolVersion(string(s.ProtocolVersion())))
			})
		}
		switch req.Kind {
		case client.KindCall:
			return t.clientCall(ctx, req, next)
		case client.KindInput:
			return t.clientInput(ctx, req, next)
		}
		return t.clientRequest(ctx, req, next)
	}
}

// callState is what the spans of one call's rounds tell the call's span.
type callState struct{ rounds atomic.Int64 }

type callKey struct{}

func (t *Telemetry) clientCall(ctx context.Context, req *client.Request, next client.Handler) (any, error) {
	target := ""
	attrs := []attribute.KeyValue{semconv.McpMethodNameKey.String(req.Method)}
	switch req.Call.Method {
	case mcp.MethodCallTool:
		attrs = append(attrs, semconv.GenAIToolNameKey.String(req.Call.Name), semconv.GenAIOperationNameExecuteTool)
		target = req.Call.Name
	case mcp.MethodGetPrompt:
		attrs = append(attrs, semconv.GenAIPromptNameKey.String(req.Call.Name))
		target = req.Call.Name
	case mcp.MethodReadResource:
		attrs = append(attrs, semconv.McpResourceURI(req.Call.URI))
	}
	if target != "" && !t.names(req.Call.Method, target) {
		target = ""
	}
	st := new(callState)
	ctx = context.WithValue(ctx, callKey{}, st)
	var span trace.Span
	if t.tracing {
		ctx, span = t.tracer.Start(ctx, spanName(req.Method, target), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	}
	res, err := next(ctx, req)
	rounds := st.rounds.Load()
	if rounds > 0 {
		t.clientRounds.Record(ctx, rounds, metricAttrs(semconv.McpMethodNameKey.String(req.Method)))
	}
	if span != nil {
		span.SetAttributes(AttrRounds.Int64(rounds))
		var errType, code string
		if err != nil {
			errType, code = clientError(err)
		} else if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
			errType = "tool_error"
		}
		endSpan(span, err, errType, code)
	}
	return res, err
}

// resultSummary is what a span says of a raw result.
type resultSummary struct {
	ResultType    mcp.ResultType `json:"resultType"`
	IsError       bool           `json:"isError"`
	InputRequests map[string]struct {
		Method string `json:"method"`
	} `json:"inputRequests"`
}

func (t *Telemetry) clientRequest(ctx context.Context, req *client.Request, next client.Handler) (any, error) {
	start := t.now()
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, semconv.McpMethodNameKey.String(req.Method))
	if s := req.Session; s != nil {
		if v := s.ProtocolVersion(); v != "" {
			attrs = append(attrs, semconv.McpProtocolVersion(string(v)))
		}
	}
	if t.transport != "" {
		attrs = append(attrs, semconv.NetworkTransportKey.String(t.transport))
	}
	target, _ := requestTarget(req.Params) // a tool or prompt name, or ""
	if target != "" && !t.names(req.Method, target) {
		target = "" // the span is named after the method, the metric says _OTHER
	}
	if req.Call != nil {
		if st, ok := ctx.Value(callKey{}).(*callState); ok {
			for {
				n := st.rounds.Load()
				if int64(req.Round) <= n || st.rounds.CompareAndSwap(n, int64(req.Round)) {
					break
				}
			}
		}
	}
	var span trace.Span
	if t.tracing {
		spanAttrs := spanNameAttrs(attrs, req.Params) // a copy: attrs goes on to the metric
		if req.Call != nil {
			spanAttrs = append(spanAttrs, AttrRound.Int(req.Round))
		}
		if req.Session != nil {
			if id := req.Session.TransportSessionID(); id != "" {
				spanAttrs = append(spanAttrs, semconv.McpSessionID(id))
			}
		}
		if id := req.ID(); id.IsValid() {
			spanAttrs = append(spanAttrs, semconv.JSONRPCRequestID(id.String()))
		}
		spanAttrs = recoveryAttrs(spanAttrs, req)
		ctx, span = t.tracer.Start(ctx, spanName(req.Method, target), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(spanAttrs...))
		if m := req.Meta(); m != nil {
			t.prop.Inject(ctx, metaCarrier{m})
		}
	}
	res, err := next(ctx, req)
	var errType, code string
	if err != nil {
		errType, code = clientError(err)
	} else if raw, ok := res.(json.RawMessage); ok && carrierMethod(req.Method) {
		var sum resultSummary
		if json.Unmarshal(raw, &sum) == nil {
			if sum.IsError {
				errType = "tool_error"
			}
			if span != nil && sum.ResultType != "" {
				span.SetAttributes(AttrResultType.String(string(sum.ResultType)))
			}
			if span != nil && sum.ResultType == mcp.ResultTypeInputRequired {
				kinds := make([]string, 0, len(sum.InputRequests))
				for _, q := range sum.InputRequests {
					kinds = append(kinds, q.Method)
				}
				span.SetAttributes(AttrInputRequestKinds.StringSlice(sortedUnique(kinds)))
			}
		}
	}
	attrs = t.clientMetricNames(attrs, req.Method, req.Params, target)
	if errType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(peerCode(errType)))
	}
	if code != "" {
		attrs = append(attrs, semconv.RPCResponseStatusCode(peerCode(code)))
	}
	if span != nil {
		endSpan(span, err, errType, code)
	}
	t.clientOp.Record(ctx, t.since(start), mcpconv.MethodNameAttr(req.Method), attrs...)
	return res, err
}

func (t *Telemetry) clientInput(ctx context.Context, req *client.Request, next client.Handler) (any, error) {
	start := t.now()
	waitsOn := "host"
	var meta mcp.MetaObject
	switch q := req.Params.(type) {
	case *mcp.ElicitRequest:
		waitsOn = "person"
		switch p := q.Params.(type) {
		case *mcp.ElicitRequestFormParams:
			meta = p.Meta
		case *mcp.ElicitRequestURLParams:
			meta = p.Meta
		}
	case *mcp.CreateMessageRequest:
		waitsOn = "model"
		meta = q.Params.Meta
	case *mcp.ListRootsRequest:
		if q.Params != nil {
			meta = q.Params.Meta
		}
	}
	var span trace.Span
	if t.tracing {
		parent := ctx
		if req.Call == nil && meta != nil {
			// A legacy server's request names no call; its _meta has the
			// context of the server's span that asked.
			if pctx := t.prop.Extract(ctx, mapCarrier(meta)); trace.SpanContextFromContext(pctx).IsValid() {
				parent = pctx
			}
		}
		attrs := []attribute.KeyValue{semconv.McpMethodNameKey.String(req.Method), AttrWaitsOn.String(waitsOn)}
		if req.Call != nil {
			attrs = append(attrs, AttrRound.Int(req.Round))
		}
		if req.Key != "" {
			attrs = append(attrs, AttrInputRequestKey.String(req.Key))
		}
		ctx, span = t.tracer.Start(parent, req.Method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	}
	res, err := next(ctx, req)
	outcome := "answered"
	var errType, code string
	switch r := res.(type) {
	case *mcp.ElicitResult:
		outcome = string(r.Action)
	}
	if err != nil {
		outcome = "error"
		errType, code = clientError(err)
	}
	kv := []attribute.KeyValue{semconv.McpMethodNameKey.String(req.Method), AttrInputRequestOutcome.String(outcome)}
	t.clientInputs.Add(ctx, 1, metricAttrs(kv...))
	t.clientInputDur.Record(ctx, t.since(start), metricAttrs(kv...))
	if span != nil {
		span.SetAttributes(AttrInputRequestOutcome.String(outcome))
		endSpan(span, err, errType, code)
	}
	return res, err
}

// sortedUnique sorts kinds and drops repeats.
func sortedUnique(kinds []string) []string {
	slices.Sort(kinds)
	return slices.Compact(kinds)
}
