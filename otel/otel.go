// Package otel traces and measures Parley servers and clients with
// OpenTelemetry, following the semantic conventions for the Model Context
// Protocol (the mcpconv package of semconv v1.41.0, the newest that has
// them), and ties the rounds of one multi-round-trip call together.
//
// One [Telemetry] serves both sides:
//
//	t, _ := otel.New(&otel.Options{TracerProvider: tp, MeterProvider: mp})
//	srv.Use(t.ServerMiddleware)                                      // server
//	requeststate.Protect(srv, &requeststate.Policy{Keys: keys, Rejected: t.StateRejected})
//	http.Handle("/mcp", t.HTTPHandler(streamhttp.NewHandler(srv, nil))) // header context
//	c := client.New(info, &client.Options{Middleware: []client.Middleware{t.ClientMiddleware}})
//
// On the client, a logical call (CallTool, GetPrompt, ReadResource) is one
// span, "tools/call provision"; each round is a child CLIENT span of it,
// and each input request the client fulfilled between rounds is a child
// SERVER span ("elicitation/create"), whose length is the time the person
// took. Trace context travels in params._meta (traceparent, tracestate,
// baggage). On the server, each round's span is a child of the client's
// round span and links to the span of the call's first round, whose
// context the server seals into the requestState (server.Request.
// AnnotateState), so the link survives a different instance serving the
// next round and cannot be forged. A legacy server's requests on the
// back-channel are CLIENT spans under the server's span, and the client's
// answer is a SERVER span under them: all in the call's trace.
//
// See docs/guide/observability.md for the span tree and the metrics.
package otel

import (
	"context"
	"net/http"
	"reflect"
	"strconv"
	"sync"
	"time"

	gotel "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/parley-mcp/parley/otel"

// Attribute keys Parley adds beside the conventions' own, in their style.
const (
	// AttrRound is the round of a multi-round-trip call a request is: 1
	// for the first request, 2 for the first retry with answers, ...
	AttrRound = attribute.Key("mcp.call.round")
	// AttrRounds is how many rounds a finished call took (on the call's
	// span).
	AttrRounds = attribute.Key("mcp.call.rounds")
	// AttrInputRequestKinds are the methods of the input requests an
	// input_required result asked, sorted, such as
	// ["elicitation/create"].
	AttrInputRequestKinds = attribute.Key("mcp.input_request.kinds")
	// AttrInputRequestKey is the key of one input request in its round.
	AttrInputRequestKey = attribute.Key("mcp.input_request.key")
	// AttrInputRequestOutcome is how the client answered one input
	// request: accept, decline or cancel (an elicitation's action),
	// answered (sampling and roots), or error.
	AttrInputRequestOutcome = attribute.Key("mcp.input_request.outcome")
	// AttrWaitsOn says who an input request waits on: person
	// (elicitation), model (sampling) or host (roots).
	AttrWaitsOn = attribute.Key("mcp.input_request.waits_on")
	// AttrResultType is the resultType of a result: complete or
	// input_required.
	AttrResultType = attribute.Key("mcp.result.type")
	// AttrRejectionReason is why a requestState was refused: expired,
	// tampered, wrong_principal, wrong_request, wrong_audience, replayed,
	// or error.
	AttrRejectionReason = attribute.Key("mcp.request_state.rejection.reason")
	// AttrResourceTemplate is, on the server, what a resources/read
	// matched: the URI template of a resource template, or the URI of a
	// resource registered as such (server.Request.Route). Metrics record
	// it instead of the concrete URI, which the client chooses.
	AttrResourceTemplate = attribute.Key("mcp.resource.template")
)

// OtherName is what the metrics record, in the place of a tool name, a
// prompt name, a resource template or URI, for one the server did not
// register (on the server) or ClientNames refused (on the client): one
// fixed value, the conventions' fallback, so that names a peer makes up
// cannot multiply the series.
const OtherName = "_OTHER"

// DefaultMaxClientNames is how many distinct names of each method (tools
// called, prompts got, and with ResourceURIs resources read) the client's
// metrics and span names record as themselves when Options.ClientNames is
// nil; later ones are OtherName.
const DefaultMaxClientNames = 100

// Metric names Parley adds beside the conventions' own, in their style.
const (
	// MetricClientCallRounds is a histogram of the rounds each finished
	// client call took.
	MetricClientCallRounds = "mcp.client.call.rounds"
	// MetricServerCallRounds is a histogram of the round at which the
	// server finished a call (1: it never asked).
	MetricServerCallRounds = "mcp.server.call.rounds"
	// MetricClientInputRequests counts the input requests the client
	// answered, by mcp.method.name and mcp.input_request.outcome.
	MetricClientInputRequests = "mcp.client.input_request.count"
	// MetricClientInputRequestDuration is how long the client took to
	// answer an input request (for an elicitation: the person's time).
	MetricClientInputRequestDuration = "mcp.client.input_request.duration"
	// MetricServerInputRequests counts the input requests the server
	// asked, by mcp.method.name.
	MetricServerInputRequests = "mcp.server.input_request.count"
	// MetricServerStateRejections counts refused requestStates, by
	// mcp.request_state.rejection.reason.
	MetricServerStateRejections = "mcp.server.request_state.rejections"
)

// Options configures a Telemetry. A nil *Options means defaults.
type Options struct {
	// TracerProvider makes the spans. Default: the global provider, if
	// one was installed (otel.SetTracerProvider) before New; with none,
	// nothing is traced.
	TracerProvider trace.TracerProvider
	// MeterProvider makes the metrics. Default: the global provider, if
	// one was installed before New; with none, nothing is measured.
	MeterProvider metric.MeterProvider
	// Propagator injects and extracts the trace context in params._meta
	// and HTTP headers. Default: the global propagator, or W3C trace
	// context and baggage when that is empty.
	Propagator propagation.TextMapPropagator
	// NetworkTransport is the network.transport attribute: "pipe" for
	// stdio, "tcp" for Streamable HTTP; "" leaves it out.
	NetworkTransport string
	// Now is the clock of the durations. Default: time.Now.
	Now func() time.Time

	// ResourceURIs puts the concrete URI of a resource request in the
	// metrics (mcp.resource.uri): on the server for a URI that matched
	// something registered (beside its mcp.resource.template), on the
	// client for a URI ClientNames allows. Default false: the server's
	// metrics record the template only and the client's no URI, since
	// every URI a template matches, or a server links to, would be a
	// series of its own. Spans carry the URI either way, as an attribute
	// (never in their name).
	ResourceURIs bool
	// ClientNames decides which names the client's metrics and span names
	// carry as themselves: tool names (method tools/call), prompt names
	// (prompts/get) and, with ResourceURIs, resource URIs
	// (resources/read, resources/subscribe, resources/unsubscribe). A
	// name it refuses is recorded as OtherName and left out of the span's
	// name (the span still has it as an attribute). The server chooses
	// these names (tools/list, resource links), so an untrusted server
	// could otherwise make a series per name it gets called. It is called
	// on the request's goroutine, possibly concurrently. Default: the
	// first DefaultMaxClientNames distinct names of each method, then
	// OtherName.
	ClientNames func(method, name string) bool
}

// Telemetry is the instrumentation of servers and clients. It is safe for
// concurrent use. With neither a tracer nor a meter provider its
// middleware is the next handler itself: it costs nothing.
type Telemetry struct {
	tracer    trace.Tracer
	tracing   bool
	measuring bool
	prop      propagation.TextMapPropagator
	transport string
	now       func() time.Time
	uris      bool                           // Options.ResourceURIs
	names     func(method, name string) bool // Options.ClientNames, or the default cap

	clientOp        mcpconv.ClientOperationDuration
	serverOp        mcpconv.ServerOperationDuration
	clientSession   mcpconv.ClientSessionDuration
	serverSession   mcpconv.ServerSessionDuration
	clientRounds    metric.Int64Histogram
	serverRounds    metric.Int64Histogram
	clientInputs    metric.Int64Counter
	clientInputDur  metric.Float64Histogram
	serverInputs    metric.Int64Counter
	rejections      metric.Int64Counter
	taskTransitions metric.Int64Counter

	sessions sync.Map // *client.Session or *server.Session -> struct{}: sessions being timed
}

// New returns the instrumentation opts describe. Its error is a metric
// instrument the meter refused.
func New(opts *Options) (*Telemetry, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	t := &Telemetry{transport: o.NetworkTransport, now: o.Now, prop: o.Propagator, uris: o.ResourceURIs, names: o.ClientNames}
	if t.now == nil {
		t.now = time.Now
	}
	if t.names == nil {
		t.names = newNameCap(DefaultMaxClientNames).admit
	}
	tp := o.TracerProvider
	if tp == nil {
		tp = gotel.GetTracerProvider()
		t.tracing = !isGlobalDefault(tp)
	} else {
		t.tracing = !isNoop(tp)
	}
	if !t.tracing {
		tp = tracenoop.NewTracerProvider()
	}
	t.tracer = tp.Tracer(ScopeName)
	mp := o.MeterProvider
	if mp == nil {
		mp = gotel.GetMeterProvider()
		t.measuring = !isGlobalDefault(mp)
	} else {
		t.measuring = !isNoop(mp)
	}
	if !t.measuring {
		mp = metricnoop.NewMeterProvider()
	}
	if t.prop == nil {
		t.prop = gotel.GetTextMapPropagator()
		if len(t.prop.Fields()) == 0 {
			t.prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
		}
	}
	if err := t.instruments(mp.Meter(ScopeName)); err != nil {
		return nil, err
	}
	return t, nil
}

// instruments makes the metric instruments.
func (t *Telemetry) instruments(m metric.Meter) error {
	var err error
	if t.clientOp, err = mcpconv.NewClientOperationDuration(m); err != nil {
		return err
	}
	if t.serverOp, err = mcpconv.NewServerOperationDuration(m); err != nil {
		return err
	}
	if t.clientSession, err = mcpconv.NewClientSessionDuration(m); err != nil {
		return err
	}
	if t.serverSession, err = mcpconv.NewServerSessionDuration(m); err != nil {
		return err
	}
	rounds := metric.WithExplicitBucketBoundaries(1, 2, 3, 4, 5, 7, 10, 15, 20)
	if t.clientRounds, err = m.Int64Histogram(MetricClientCallRounds, metric.WithUnit("{round}"), rounds,
		metric.WithDescription("The rounds (requests) one multi-round-trip call took, as the client saw it.")); err != nil {
		return err
	}
	if t.serverRounds, err = m.Int64Histogram(MetricServerCallRounds, metric.WithUnit("{round}"), rounds,
		metric.WithDescription("The round at which the server completed a call.")); err != nil {
		return err
	}
	if t.clientInputs, err = m.Int64Counter(MetricClientInputRequests, metric.WithUnit("{request}"),
		metric.WithDescription("Input requests the client answered, by kind and outcome.")); err != nil {
		return err
	}
	if t.clientInputDur, err = m.Float64Histogram(MetricClientInputRequestDuration, metric.WithUnit("s"),
		metric.WithDescription("The time the client took to answer an input request; for an elicitation, the person's.")); err != nil {
		return err
	}
	if t.serverInputs, err = m.Int64Counter(MetricServerInputRequests, metric.WithUnit("{request}"),
		metric.WithDescription("Input requests the server asked, by kind.")); err != nil {
		return err
	}
	if t.rejections, err = m.Int64Counter(MetricServerStateRejections, metric.WithUnit("{request}"),
		metric.WithDescription("Requests whose requestState the server refused, by reason.")); err != nil {
		return err
	}
	if t.taskTransitions, err = m.Int64Counter(MetricServerTaskTransitions, metric.WithUnit("{transition}"),
		metric.WithDescription("The statuses tasks entered, by status.")); err != nil {
		return err
	}
	return nil
}

// off reports whether there is nothing to record: the middleware is then
// the next handler itself.
func (t *Telemetry) off() bool { return !t.tracing && !t.measuring }

// isGlobalDefault reports whether p is OpenTelemetry's global provider
// before any was installed: a delegate in its internal package. Tracing
// through it would cost a context per request for spans nobody records.
func isGlobalDefault(p any) bool {
	ty := reflect.TypeOf(p)
	if ty.Kind() == reflect.Pointer {
		ty = ty.Elem()
	}
	return ty.PkgPath() == "go.opentelemetry.io/otel/internal/global"
}

// isNoop reports whether p is one of OpenTelemetry's no-op providers.
func isNoop(p any) bool {
	switch p.(type) {
	case tracenoop.TracerProvider, *tracenoop.TracerProvider, metricnoop.MeterProvider, *metricnoop.MeterProvider:
		return true
	}
	return false
}

// HTTPHandler wraps an MCP HTTP handler (such as streamhttp's) so that the
// trace context of the HTTP request's headers becomes the context the
// server middleware sees: its spans take it as their parent when the
// request's _meta carries none, and link it when it does (the
// conventions' "ambient context").
func (t *Telemetry) HTTPHandler(h http.Handler) http.Handler {
	if !t.tracing {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		if ctx != r.Context() {
			r = r.WithContext(ctx)
		}
		h.ServeHTTP(w, r)
	})
}

// errorType is the error.type of a JSON-RPC error code.
func errorType(code int64) string { return strconv.FormatInt(code, 10) }

// since is the time from start to now, in seconds.
func (t *Telemetry) since(start time.Time) float64 { return t.now().Sub(start).Seconds() }

// recordSession times a session from now until done closes, once per
// session.
func (t *Telemetry) recordSession(key any, done <-chan struct{}, record func(context.Context, float64)) {
	if !t.measuring || done == nil {
		return
	}
	if _, loaded := t.sessions.LoadOrStore(key, struct{}{}); loaded {
		return
	}
	start := t.now()
	go func() {
		<-done
		t.sessions.Delete(key)
		record(context.Background(), t.since(start))
	}()
}
