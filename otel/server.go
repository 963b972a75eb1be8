package otel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// roundAnnotation is the state annotation that carries the first round's
// span context and the round count from round to round, sealed.
const roundAnnotation = "otel.round"

// ServerMiddleware traces and measures every request a server serves: a
// SERVER span named "{mcp.method.name} {target}" whose parent is the trace
// context in params._meta (or, without one, the context HTTPHandler took
// from the HTTP headers, which is then linked instead), and the
// mcp.server.operation.duration metric. Install it with server.Server.Use.
//
// Names come from what the server registered, never from the request
// alone: the target of a span's name and the tool or prompt name of the
// metrics is server.Request.Route, which mcpserver sets to the name of
// the tool or prompt it found (a handler of package server sets it
// itself); a request that matched nothing is recorded as OtherName and
// its span named after the method only. A resources/read is recorded by
// the template it matched (mcp.resource.template), and by its URI only
// with Options.ResourceURIs; no span name carries a URI. The span keeps
// the name and URI the client sent as attributes.
//
// A round of a multi-round-trip call links to the span of the call's first
// round and says its round number (mcp.call.round): the first round's
// span context and the count ride sealed in the requestState, so this
// needs a StateSealer (requeststate.Protect); without one every round
// looks like a first. A result that asks for input names the kinds asked
// (mcp.input_request.kinds). On a legacy session with a back-channel,
// each request the handler sends the client (Request.Ask) is a CLIENT
// span under the request's span, with the trace context in its _meta.
func (t *Telemetry) ServerMiddleware(next server.Handler) server.Handler {
	if t.off() {
		return next
	}
	return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
		start := t.now()
		if ss := req.Session(); ss != nil {
			version := string(ss.ProtocolVersion())
			t.recordSession(ss, ss.Done(), func(ctx context.Context, d float64) {
				t.serverSession.Record(ctx, d, t.serverSession.AttrProtocolVersion(version))
			})
		}
		attrs := make([]attribute.KeyValue, 0, 8)
		attrs = append(attrs, semconv.McpMethodNameKey.String(req.Method))
		if v := req.ProtocolVersion(); v != "" {
			attrs = append(attrs, semconv.McpProtocolVersion(string(v)))
		}
		if t.transport != "" {
			attrs = append(attrs, semconv.NetworkTransportKey.String(t.transport))
		}
		round, first := 1, trace.SpanContext{}
		if v, ok := req.StateAnnotation(roundAnnotation); ok {
			if n, sc, ok := parseRound(v); ok {
				round, first = n+1, sc
			}
		}
		carrier := carrierMethod(req.Method)
		var span trace.Span
		if t.tracing {
			var links []trace.Link
			parent := ctx
			if req.Meta != nil && req.Meta.Traceparent != "" {
				meta := t.prop.Extract(ctx, metaCarrier{req.Meta})
				if sc := trace.SpanContextFromContext(meta); sc.IsValid() {
					if ambient := trace.SpanContextFromContext(ctx); ambient.IsValid() && !ambient.Equal(sc) {
						links = append(links, trace.Link{SpanContext: ambient, Attributes: []attribute.KeyValue{linkKind.String("transport")}})
					}
					parent = meta
				}
			}
			if first.IsValid() {
				links = append(links, trace.Link{SpanContext: first, Attributes: []attribute.KeyValue{linkKind.String("first_round")}})
			}
			spanAttrs := spanNameAttrs(attrs, req.Params) // a copy: attrs goes on to the metric
			if req.ID.IsValid() {
				spanAttrs = append(spanAttrs, semconv.JSONRPCRequestID(req.ID.String()))
			}
			if carrier {
				spanAttrs = append(spanAttrs, AttrRound.Int(round))
			}
			// Named after the method until the handler has said what
			// registered thing served the request (Request.Route): a
			// name the client made up never names a span.
			ctx, span = t.tracer.Start(parent, req.Method, trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(spanAttrs...), trace.WithLinks(links...))
			if req.HasBackChannel() {
				req.WrapBackChannel(t.backChannel)
			}
		}
		res, err := next(ctx, req)
		var errType string
		switch r := res.(type) {
		case *mcp.InputRequiredResult:
			if err != nil {
				break
			}
			kinds := inputKinds(r.InputRequests)
			for _, q := range r.InputRequests {
				if q != nil {
					t.serverInputs.Add(ctx, 1, metricAttrs(semconv.McpMethodNameKey.String(q.Method())))
				}
			}
			if span != nil {
				span.SetAttributes(AttrResultType.String(string(mcp.ResultTypeInputRequired)), AttrInputRequestKinds.StringSlice(kinds))
				if !first.IsValid() {
					first = span.SpanContext()
				}
			}
			// Sealed only when the result carries state and the server
			// has a sealer; a refusal (over the bounds) cannot happen for
			// this short value, and would only cost the link.
			_ = req.AnnotateState(roundAnnotation, formatRound(round, first))
		case *mcp.CallToolResult:
			if err == nil && r != nil && r.IsError {
				errType = "tool_error"
			}
		}
		if carrier && err == nil {
			if _, asked := res.(*mcp.InputRequiredResult); !asked {
				t.serverRounds.Record(ctx, int64(round), metricAttrs(semconv.McpMethodNameKey.String(req.Method)))
			}
		}
		route := req.Route
		attrs = t.serverMetricNames(attrs, req.Params, route)
		var code string
		if err != nil {
			errType, code = serverError(err)
			attrs = append(attrs, semconv.RPCResponseStatusCode(code))
		}
		if errType != "" {
			attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
		}
		if span != nil {
			if name, uri := requestTarget(req.Params); route != "" && name != "" {
				span.SetName(spanName(req.Method, route))
			} else if route != "" && uri != "" {
				span.SetAttributes(AttrResourceTemplate.String(route))
			}
			endSpan(span, err, errType, code)
		}
		t.serverOp.Record(ctx, t.since(start), mcpconv.MethodNameAttr(req.Method), attrs...)
		return res, err
	}
}

// linkKind says what a link points to: the first round of the call, or
// the transport's (HTTP) context.
const linkKind = attribute.Key("mcp.link.kind")

// backChannel traces one server-to-client request of a legacy session:
// a CLIENT span under the request's span, its context in the params'
// _meta.
func (t *Telemetry) backChannel(next server.CallFunc) server.CallFunc {
	return func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		ctx, span := t.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(semconv.McpMethodNameKey.String(method)))
		set := propagation.MapCarrier{}
		t.prop.Inject(ctx, set)
		res, err := next(ctx, method, injectRaw(params, set))
		var errType, code string
		if err != nil {
			errType, code = clientError(err)
		}
		endSpan(span, err, errType, code)
		return res, err
	}
}

// StateRejected counts a refused requestState by its reason; pass it as
// requeststate.Policy.Rejected (the refusal happens before any middleware
// runs, so no middleware sees it). The reason is folded into a few
// low-cardinality values: expired, tampered, wrong_principal,
// wrong_request, wrong_audience, replayed, error.
func (t *Telemetry) StateRejected(ctx context.Context, req *server.Request, reason string, err error) {
	if t.off() {
		return
	}
	r := rejectionReason(reason)
	t.rejections.Add(ctx, 1, metricAttrs(semconv.McpMethodNameKey.String(req.Method), AttrRejectionReason.String(r)))
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("requestState refused", trace.WithAttributes(AttrRejectionReason.String(r)))
	}
}

// rejectionReason folds requeststate's log reasons into the metric's
// values.
func rejectionReason(reason string) string {
	switch {
	case reason == "expired", reason == "issued in the future":
		return "expired"
	case strings.HasPrefix(reason, "replayed"), strings.HasPrefix(reason, "no single-use id"):
		return "replayed"
	case strings.HasPrefix(reason, "principal"):
		return "wrong_principal"
	case strings.HasPrefix(reason, "bound to another request"), strings.HasPrefix(reason, "arguments"):
		return "wrong_request"
	case reason == "audience mismatch":
		return "wrong_audience"
	case strings.Contains(reason, "failed") && !strings.HasPrefix(reason, "authentication"), reason == "codec error":
		return "error"
	}
	return "tampered" // malformed, unknown key, authentication failed, bad envelope or version
}

// carrierMethod reports whether method may take rounds.
func carrierMethod(method string) bool {
	return method == mcp.MethodCallTool || method == mcp.MethodGetPrompt || method == mcp.MethodReadResource
}

// spanName is "{mcp.method.name} {target}", or the method alone.
func spanName(method, target string) string {
	if target == "" {
		return method
	}
	return method + " " + target
}

// inputKinds returns the methods an input_required result asked, sorted
// and without repeats.
func inputKinds(qs mcp.InputRequests) []string {
	kinds := make([]string, 0, len(qs))
	for _, q := range qs {
		if q != nil {
			kinds = append(kinds, q.Method())
		}
	}
	slices.Sort(kinds)
	return slices.Compact(kinds)
}

// metricAttrs is metric.WithAttributes, spelt once.
func metricAttrs(kv ...attribute.KeyValue) metric.MeasurementOption {
	return metric.WithAttributes(kv...)
}

// serverError is the error.type and rpc.response.status_code of a
// handler's error: its JSON-RPC code, or -32603, which the server answers
// any other error with.
func serverError(err error) (errType, code string) {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		c := errorType(rpc.Code)
		return c, c
	}
	return "-32603", "-32603"
}

// clientError is the error.type and rpc.response.status_code of a failed
// request, as its sender sees it: the peer's JSON-RPC code, or what
// happened instead (timeout, cancelled, _OTHER) with no code.
func clientError(err error) (errType, code string) {
	var rpc *jsonrpc.Error
	switch {
	case errors.As(err, &rpc):
		c := errorType(rpc.Code)
		return c, c
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout", ""
	case errors.Is(err, context.Canceled):
		return "cancelled", ""
	}
	return string(mcpconv.ErrorTypeOther), ""
}

// endSpan sets the outcome on span and ends it: an error status (with the
// JSON-RPC message, as the conventions ask) whenever there is an
// error.type.
func endSpan(span trace.Span, err error, errType, code string) {
	if errType != "" {
		span.SetAttributes(semconv.ErrorTypeKey.String(errType))
		msg := errType
		if err != nil {
			var rpc *jsonrpc.Error
			if errors.As(err, &rpc) {
				msg = rpc.Message
			} else {
				msg = err.Error()
			}
		}
		span.SetStatus(codes.Error, msg)
	}
	if code != "" {
		span.SetAttributes(semconv.RPCResponseStatusCode(code))
	}
	span.End()
}

// formatRound writes the round annotation: the round number, then the
// first round's trace id, span id and flags, in hex.
func formatRound(round int, first trace.SpanContext) string {
	if !first.IsValid() {
		return strconv.Itoa(round)
	}
	return fmt.Sprintf("%d-%s-%s-%02x", round, first.TraceID(), first.SpanID(), byte(first.TraceFlags()))
}

// parseRound reads what formatRound wrote.
func parseRound(v string) (int, trace.SpanContext, bool) {
	parts := strings.Split(v, "-")
	n, err := strconv.Atoi(parts[0])
	if err != nil || n < 1 {
		return 0, trace.SpanContext{}, false
	}
	if len(parts) != 4 {
		return n, trace.SpanContext{}, len(parts) == 1
	}
	tid, err1 := trace.TraceIDFromHex(parts[1])
	sid, err2 := trace.SpanIDFromHex(parts[2])
	flags, err3 := strconv.ParseUint(parts[3], 16, 8)
	if err1 != nil || err2 != nil || err3 != nil {
		return n, trace.SpanContext{}, true
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.TraceFlags(flags), Remote: true})
	return n, sc, true
}
