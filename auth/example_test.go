package auth_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// verify stands in for real token validation (a JWT library, an
// introspection endpoint).
func verify(token string) (*auth.Info, bool) {
	if token != "token-of-ada" {
		return nil, false
	}
	return &auth.Info{ClientID: "travel-app", Issuer: "https://as.example", Subject: "ada"}, true
}

// An HTTP middleware in front of the MCP endpoint validates the bearer token
// and stores what it proved with auth.WithInfo; handlers (and the
// requestState boundary, which binds state to this identity) read it with
// auth.InfoFrom.
func ExampleWithInfo() {
	s := server.New(mcp.Implementation{Name: "travel", Version: "1.0.0"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		who := auth.InfoFrom(ctx)
		return mcp.TextResult("booked for " + who.Subject + " via " + who.ClientID), nil
	})
	mcpHandler := streamhttp.NewHandler(s, nil)
	authenticated := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, ok := verify(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		if !ok {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r.WithContext(auth.WithInfo(r.Context(), info)))
	})
	srv := httptest.NewServer(authenticated)
	defer srv.Close()

	ctx := context.Background()
	c := client.New(mcp.Implementation{Name: "travel-client", Version: "1.0.0"}, nil)
	sess, err := c.Connect(ctx, streamhttp.NewClientTransport(srv.URL, &streamhttp.ClientOptions{
		Header: http.Header{"Authorization": {"Bearer token-of-ada"}},
	}))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, "book", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: booked for ada via travel-app
}

// CallerKey names who sends a request, for limits that give each caller
// its own share: the principal when the request is authenticated, else the
// client's address, which Streamable HTTP stores with WithRemoteAddr,
// grouped so that one host is one caller.
func ExampleCallerKey() {
	anon := auth.WithRemoteAddr(context.Background(), "192.0.2.7")
	fmt.Println(auth.CallerKey(anon))
	v6 := auth.WithRemoteAddr(context.Background(), "2001:db8:1:2::abcd")
	fmt.Println(auth.CallerKey(v6)) // a host's /64 is one caller
	ada := auth.WithInfo(anon, &auth.Info{ClientID: "travel-app", Issuer: "https://as.example", Subject: "ada"})
	fmt.Println(auth.CallerKey(ada) == auth.PrincipalKey(auth.InfoFrom(ada)))
	fmt.Printf("%q\n", auth.CallerKey(context.Background())) // stdio: unknown, not bounded per caller
	// Output:
	// addr:192.0.2.7
	// addr:2001:db8:1:2::/64
	// true
	// ""
}
