package otel_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	parleyotel "github.com/parley-mcp/parley/otel"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// telemetry is a Telemetry that records into memory.
type telemetry struct {
	*parleyotel.Telemetry
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
}

func newTelemetry(t testing.TB) *telemetry {
	t.Helper()
	return newTelemetryWith(t, nil)
}

// newTelemetryWith is newTelemetry with the rest of opts.
func newTelemetryWith(t testing.TB, opts *parleyotel.Options) *telemetry {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	reader := sdkmetric.NewManualReader()
	var o parleyotel.Options
	if opts != nil {
		o = *opts
	}
	o.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	o.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	o.NetworkTransport = "pipe"
	tel, err := parleyotel.New(&o)
	if err != nil {
		t.Fatal(err)
	}
	return &telemetry{tel, spans, reader}
}

// metrics collects the metrics recorded so far, by name.
func (tel *telemetry) metrics(t testing.TB) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// sumWhere adds up the counter's points whose attributes have every
// key=value of want.
func sumWhere(t testing.TB, agg metricdata.Aggregation, want map[string]string) int64 {
	t.Helper()
	sum, ok := agg.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("not an int64 sum: %T", agg)
	}
	var n int64
	for _, p := range sum.DataPoints {
		if matches(p.Attributes.ToSlice(), want) {
			n += p.Value
		}
	}
	return n
}

// histWhere returns the count and the sum of an int64 histogram's points
// that match want.
func histWhere(t testing.TB, agg metricdata.Aggregation, want map[string]string) (uint64, int64) {
	t.Helper()
	h, ok := agg.(metricdata.Histogram[int64])
	if !ok {
		t.Fatalf("not an int64 histogram: %T", agg)
	}
	var count uint64
	var sum int64
	for _, p := range h.DataPoints {
		if matches(p.Attributes.ToSlice(), want) {
			count += p.Count
			sum += p.Sum
		}
	}
	return count, sum
}

// floatHistCount returns the count of a float64 histogram's points that
// match want.
func floatHistCount(t testing.TB, agg metricdata.Aggregation, want map[string]string) uint64 {
	t.Helper()
	h, ok := agg.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("not a float64 histogram: %T", agg)
	}
	var count uint64
	for _, p := range h.DataPoints {
		if matches(p.Attributes.ToSlice(), want) {
			count += p.Count
		}
	}
	return count
}

func matches(kvs []attribute.KeyValue, want map[string]string) bool {
	got := map[string]string{}
	for _, kv := range kvs {
		got[string(kv.Key)] = kv.Value.String()
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// attr returns the value of key on span, as text, or "".
func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}

// find returns the ended spans named name, in the order they started,
// that satisfy every filter.
func find(tel *telemetry, name string, kind trace.SpanKind, filters ...func(sdktrace.ReadOnlySpan) bool) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
next:
	for _, s := range tel.spans.Ended() {
		if s.Name() != name || s.SpanKind() != kind {
			continue
		}
		for _, f := range filters {
			if !f(s) {
				continue next
			}
		}
		out = append(out, s)
	}
	sortByStart(out)
	return out
}

func withAttr(key, value string) func(sdktrace.ReadOnlySpan) bool {
	return func(s sdktrace.ReadOnlySpan) bool { return attr(s, key) == value }
}

// serve serves s over an in-memory pipe until the test ends, and returns
// the client end.
func serve(t testing.TB, s *server.Server) transport.Conn {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	clientEnd, serverEnd := transport.NewMemoryPipe()
	done := make(chan struct{})
	go func() { s.ServeConn(ctx, serverEnd); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return clientEnd
}

// serveRoundRobin serves a fleet over one in-memory pipe the way a load
// balancer would: every tools/call goes to the next server in turn, the
// rest to the first. The fleet speaks 2026-07-28 only (no back-channel).
func serveRoundRobin(t testing.TB, fleet ...*server.Server) transport.Conn {
	t.Helper()
	clientEnd, serverEnd := transport.NewMemoryPipe()
	var n atomic.Int64
	conn := jsonrpc.NewConn(serverEnd, &jsonrpc.ConnOptions{
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			s := fleet[0]
			if req.Method == mcp.MethodCallTool {
				s = fleet[int(n.Add(1)-1)%len(fleet)]
			}
			res, err := s.Handle(ctx, req, nil)
			if err != nil || res == nil {
				return res, err
			}
			raw, err := mcp.Marshal(res)
			return json.RawMessage(raw), err
		}),
	})
	t.Cleanup(func() { conn.Close() })
	return clientEnd
}

// connect connects a client with opts over conn.
func connect(t testing.TB, conn transport.Conn, opts *client.Options) *client.Session {
	t.Helper()
	c := client.New(mcp.Implementation{Name: "otel-test-client", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	sess, err := c.Connect(ctx, transport.NewMemoryTransport(conn))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

// failAfter bounds every wait of these tests.
const failAfter = 10 * time.Second

func sortByStart(spans []sdktrace.ReadOnlySpan) {
	slices.SortStableFunc(spans, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
}
