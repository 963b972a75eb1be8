// Command otlp traces a three-round tool call between a Parley client and
// two instances of a server that share a key ring, and exports the spans.
//
//	go run ./examples/otlp                          # prints the span tree
//	go run ./examples/otlp -exporter stdout         # the spans as JSON
//	go run ./examples/otlp -exporter otlp -endpoint localhost:4318
//
// With -exporter otlp the spans go over OTLP/HTTP to -endpoint, or to
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) when
// the flag is empty: point it at your collector (Jaeger, Tempo, an
// OpenTelemetry Collector) and find the trace "tools/call provision".
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	parleyotel "github.com/parley-mcp/parley/otel"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

func main() {
	exporter := flag.String("exporter", "tree", "where the spans go: tree (printed as a tree), stdout (JSON), otlp")
	endpoint := flag.String("endpoint", "", "the OTLP/HTTP endpoint (host:port) for -exporter otlp; default: $OTEL_EXPORTER_OTLP_ENDPOINT")
	flag.Parse()
	if err := run(*exporter, *endpoint); err != nil {
		log.Fatal(err)
	}
}

func run(exporter, endpoint string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("parley-otel-example")))}
	var tree *tracetest.SpanRecorder
	switch exporter {
	case "tree":
		tree = tracetest.NewSpanRecorder()
		opts = append(opts, sdktrace.WithSpanProcessor(tree))
	case "stdout":
		exp, err := stdouttrace.New(stdouttrace.WithWriter(os.Stdout))
		if err != nil {
			return err
		}
		opts = append(opts, sdktrace.WithSyncer(exp))
	case "otlp":
		var o []otlptracehttp.Option
		if endpoint != "" {
			o = append(o, otlptracehttp.WithEndpoint(endpoint), otlptracehttp.WithInsecure())
		}
		exp, err := otlptracehttp.New(ctx, o...)
		if err != nil {
			return err
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	default:
		return fmt.Errorf("unknown -exporter %q", exporter)
	}
	tp := sdktrace.NewTracerProvider(opts...)
	defer tp.Shutdown(context.Background())
	tel, err := parleyotel.New(&parleyotel.Options{TracerProvider: tp, NetworkTransport: "pipe"})
	if err != nil {
		return err
	}

	// Two instances of one service share a key ring: either serves any
	// round of a call.
	keys := [][]byte{[]byte("example-only-key-0123456789abcdef0123456789")}
	fleet := []*server.Server{newServer(tel, keys), newServer(tel, keys)}
	conn := balance(fleet)
	defer conn.Close()

	c := client.New(mcp.Implementation{Name: "example-client", Version: "1.0.0"}, &client.Options{
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			time.Sleep(20 * time.Millisecond) // the person, thinking
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "eu-west-1", "ok": true}}, nil
		},
		Middleware: []client.Middleware{tel.ClientMiddleware},
	})
	sess, err := c.Connect(ctx, transport.NewMemoryTransport(conn.client))
	if err != nil {
		return err
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, "provision", map[string]any{"size": "small"})
	if err != nil {
		return err
	}
	fmt.Println("result:", res.Content[0].(*mcp.TextContent).Text)
	if err := tp.ForceFlush(ctx); err != nil {
		return err
	}
	if tree != nil {
		printTree(tree.Ended())
	}
	return nil
}

// newServer is one instance: "provision" asks for a region, then for a
// confirmation, then provisions.
func newServer(tel *parleyotel.Telemetry, keys [][]byte) *server.Server {
	s := server.New(mcp.Implementation{Name: "provisioner", Version: "1.0.0"}, nil)
	s.Use(tel.ServerMiddleware)
	requeststate.MustProtect(s, &requeststate.Policy{Keys: keys, Rejected: tel.StateRejected})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if p.Name != "provision" {
			return nil, wire.InvalidParams("unknown tool %q", p.Name)
		}
		req.Route = p.Name // a name this server serves: the telemetry records it
		switch p.RequestState {
		case "":
			return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"region": mcp.NewElicitFormRequest("Which region?",
				mcp.ElicitRequestedSchema{Properties: map[string]mcp.PrimitiveSchemaDefinition{"region": &mcp.StringSchema{}}})}, RequestState: "region"}, nil
		case "region":
			return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"confirm": mcp.NewElicitFormRequest("Provision it?",
				mcp.ElicitRequestedSchema{Properties: map[string]mcp.PrimitiveSchemaDefinition{"ok": &mcp.BooleanSchema{}}})}, RequestState: "confirm"}, nil
		}
		return mcp.TextResult("provisioned"), nil
	})
	return s
}

// balancer hands each tools/call to the next instance in turn, as a load
// balancer in front of a fleet would.
type balancer struct {
	client transport.Conn
	conn   *jsonrpc.Conn
}

func (b *balancer) Close() { b.conn.Close() }

func balance(fleet []*server.Server) *balancer {
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
	return &balancer{client: clientEnd, conn: conn}
}

// printTree prints the spans of the call's trace as a tree, with their
// links and the attributes that tell the rounds apart.
func printTree(spans []sdktrace.ReadOnlySpan) {
	children := map[string][]sdktrace.ReadOnlySpan{}
	ids := map[string]bool{}
	for _, s := range spans {
		ids[s.SpanContext().SpanID().String()] = true
	}
	var roots []sdktrace.ReadOnlySpan
	for _, s := range spans {
		p := s.Parent().SpanID().String()
		if !s.Parent().IsValid() || !ids[p] {
			roots = append(roots, s)
			continue
		}
		children[p] = append(children[p], s)
	}
	byStart := func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) }
	names := map[string]string{}
	for _, s := range spans {
		names[s.SpanContext().SpanID().String()] = s.Name()
	}
	var walk func(s sdktrace.ReadOnlySpan, depth int)
	walk = func(s sdktrace.ReadOnlySpan, depth int) {
		var notes []string
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case "mcp.call.round", "mcp.call.rounds", "mcp.input_request.kinds", "mcp.input_request.outcome", "mcp.input_request.waits_on":
				notes = append(notes, fmt.Sprintf("%s=%s", kv.Key, kv.Value.String()))
			}
		}
		for _, l := range s.Links() {
			notes = append(notes, "link→"+l.SpanContext.SpanID().String())
		}
		fmt.Printf("%s%s [%s] %s %s\n", strings.Repeat("  ", depth), s.Name(), strings.ToLower(s.SpanKind().String()), s.SpanContext().SpanID(), strings.Join(notes, " "))
		kids := children[s.SpanContext().SpanID().String()]
		slices.SortFunc(kids, byStart)
		for _, k := range kids {
			walk(k, depth+1)
		}
	}
	slices.SortFunc(roots, byStart)
	for _, r := range roots {
		walk(r, 0)
	}
}
