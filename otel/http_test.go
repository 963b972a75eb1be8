package otel_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// TestHTTPHeaderContext: over Streamable HTTP the server takes the trace
// context of the HTTP headers (through HTTPHandler) as its span's parent
// when _meta carries none, and links it when _meta carries one, which
// then is the parent.
func TestHTTPHeaderContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	tel := newTelemetry(t)
	s := server.New(mcp.Implementation{Name: "http", Version: "1"}, nil)
	s.Use(tel.ServerMiddleware)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		req.Route = p.Name
		return mcp.TextResult("ok"), nil
	})
	hs := httptest.NewServer(tel.HTTPHandler(streamhttp.NewHandler(s, nil)))
	defer hs.Close()
	const headerParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	header := http.Header{"Traceparent": {headerParent}}

	for _, withMeta := range []bool{false, true} {
		var opts client.Options
		if withMeta {
			opts.Middleware = []client.Middleware{tel.ClientMiddleware}
		}
		sess, err := client.New(mcp.Implementation{Name: "c", Version: "1"}, &opts).Connect(ctx, streamhttp.NewClientTransport(hs.URL, &streamhttp.ClientOptions{Header: header}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sess.CallTool(ctx, "x", nil); err != nil {
			t.Fatal(err)
		}
		sess.Close()
	}
	served := find(tel, "tools/call x", trace.SpanKindServer)
	if len(served) != 2 {
		t.Fatalf("%d server spans, want 2", len(served))
	}
	fromHeader, fromMeta := served[0], served[1]
	if got := fromHeader.Parent().SpanID().String(); got != "b7ad6b7169203331" || len(fromHeader.Links()) != 0 {
		t.Errorf("without _meta the parent is %s (links %v), want the header's b7ad6b7169203331", got, fromHeader.Links())
	}
	rounds := find(tel, "tools/call x", trace.SpanKindClient)
	if len(rounds) != 1 {
		t.Fatalf("%d client spans, want 1", len(rounds))
	}
	if fromMeta.Parent().SpanID() != rounds[0].SpanContext().SpanID() {
		t.Errorf("with _meta the parent is %s, want the client's span %s", fromMeta.Parent().SpanID(), rounds[0].SpanContext().SpanID())
	}
	if l := fromMeta.Links(); len(l) != 1 || l[0].SpanContext.SpanID().String() != "b7ad6b7169203331" {
		t.Errorf("with _meta the header's context is not linked: %v", l)
	}
}
