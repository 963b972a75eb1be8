package streamhttp_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"net/netip"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// A server behind an ordinary http.Server (here httptest's), and a client
// calling it over Streamable HTTP. The handler keeps no session: any
// instance behind a load balancer can serve any request.
func ExampleNewHandler() {
	s := server.New(mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return mcp.TextResult("Hello over HTTP!"), nil
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", streamhttp.NewHandler(s, nil))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ctx := context.Background()
	c := client.New(mcp.Implementation{Name: "example-client", Version: "1.0.0"}, nil)
	sess, err := c.Connect(ctx, streamhttp.NewClientTransport(srv.URL+"/mcp", nil))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, "greet", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: Hello over HTTP!
}

// A status other than 2xx reaches the caller as a *transport.HTTPStatusError
// beside the JSON-RPC error: here an endpoint behind an authorization layer
// that wants a token. Connect does not take the 401 for a server of the
// older generation; it fails, and the caller can tell why from the type.
func ExampleNewClientTransport_httpStatus() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()

	c := client.New(mcp.Implementation{Name: "example-client", Version: "1.0.0"}, nil)
	sess, err := c.Connect(context.Background(), streamhttp.NewClientTransport(srv.URL, nil))
	var status *transport.HTTPStatusError
	switch {
	case err == nil:
		sess.Close()
		fmt.Println("connected")
	case errors.As(err, &status) && status.StatusCode == http.StatusUnauthorized:
		fmt.Println("the server wants authorization:", status)
	default:
		fmt.Println("failed:", err)
	}
	// Output:
	// the server wants authorization: HTTP 401 Unauthorized
}

// Behind load balancers at 10.0.0.0/8 that append the client's address to
// X-Forwarded-For, the handler believes them, and only them: each client
// gets its own share of the limits per caller rather than the balancers'
// one. Sites given whole IPv6 /56s count as one caller each.
func ExampleCallerOptions() {
	s := server.New(mcp.Implementation{Name: "behind-a-balancer", Version: "1.0.0"}, nil)
	h := streamhttp.NewHandler(s, &streamhttp.HandlerOptions{
		Callers: &streamhttp.CallerOptions{
			TrustedProxies:  []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
			ForwardedHeader: "X-Forwarded-For",
			Prefixes:        auth.AddrPrefixes{IPv6: 56},
		},
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
}
