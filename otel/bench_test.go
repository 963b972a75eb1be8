package otel_test

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	parleyotel "github.com/parley-mcp/parley/otel"
	"github.com/parley-mcp/parley/server"
)

// benchServer is a trivial tool, so that a call measures the SDK and the
// instrumentation and nothing else.
func benchServer(mw server.Middleware) *server.Server {
	s := server.New(mcp.Implementation{Name: "bench", Version: "1"}, nil)
	if mw != nil {
		s.Use(mw)
	}
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		req.Route = p.Name // as mcpserver does: the metric records the name
		return mcp.TextResult("ok"), nil
	})
	return s
}

func benchCalls(b *testing.B, sess *client.Session) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sess.CallTool(ctx, "t", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallTool is one in-memory tools/call round trip, client and
// server both instrumented: bare, without a provider (the middleware is
// not there at all), and with the SDK's tracer and meter providers (every
// span sampled and recorded, no exporter): the cost a traced call pays.
func BenchmarkCallTool(b *testing.B) {
	b.Run("bare", func(b *testing.B) {
		benchCalls(b, connect(b, serve(b, benchServer(nil)), nil))
	})
	b.Run("no-provider", func(b *testing.B) {
		tel, err := parleyotel.New(nil)
		if err != nil {
			b.Fatal(err)
		}
		sess := connect(b, serve(b, benchServer(tel.ServerMiddleware)), &client.Options{Middleware: []client.Middleware{tel.ClientMiddleware}})
		benchCalls(b, sess)
	})
	b.Run("provider", func(b *testing.B) {
		// Every span sampled and recorded, then dropped: what the
		// instrumentation costs, without an exporter's.
		tp := sdktrace.NewTracerProvider()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		tel, err := parleyotel.New(&parleyotel.Options{TracerProvider: tp, MeterProvider: mp})
		if err != nil {
			b.Fatal(err)
		}
		sess := connect(b, serve(b, benchServer(tel.ServerMiddleware)), &client.Options{Middleware: []client.Middleware{tel.ClientMiddleware}})
		benchCalls(b, sess)
	})
}
