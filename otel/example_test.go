package otel_test

import (
	"context"
	"fmt"
	"log"
	"slices"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	parleyotel "github.com/parley-mcp/parley/otel"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// One Telemetry instruments both sides: the server with Use, the client
// with Options.Middleware. A tool call is then the client's call span, its
// request's CLIENT span, and the server's SERVER span, in one trace.
func Example() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	tel, err := parleyotel.New(&parleyotel.Options{TracerProvider: tp})
	if err != nil {
		log.Fatal(err)
	}

	srv := server.New(mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	srv.Use(tel.ServerMiddleware)
	srv.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if p.Name != "get_weather" {
			return nil, wire.InvalidParams("unknown tool %q", p.Name)
		}
		// The name is one this server serves: its telemetry may record
		// it (mcpserver sets Route itself).
		req.Route = p.Name
		return mcp.TextResult("sunny"), nil
	})
	clientEnd, serverEnd := transport.NewMemoryPipe()
	go srv.ServeConn(context.Background(), serverEnd)

	c := client.New(mcp.Implementation{Name: "host", Version: "1.0.0"}, &client.Options{
		Middleware: []client.Middleware{tel.ClientMiddleware},
	})
	sess, err := c.Connect(context.Background(), transport.NewMemoryTransport(clientEnd))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	if _, err := sess.CallTool(context.Background(), "get_weather", map[string]string{"city": "Oslo"}); err != nil {
		log.Fatal(err)
	}

	var lines []string
	for _, s := range spans.Ended() {
		lines = append(lines, fmt.Sprintf("%s [%s]", s.Name(), s.SpanKind()))
	}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// server/discover [client]
	// server/discover [server]
	// tools/call get_weather [client]
	// tools/call get_weather [internal]
	// tools/call get_weather [server]
}
