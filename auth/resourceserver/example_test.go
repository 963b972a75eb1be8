package resourceserver_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/auth/authtest"
	"github.com/parley-mcp/parley/auth/jwtverify"
	"github.com/parley-mcp/parley/auth/resourceserver"
	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// An MCP server that only serves callers with a token for it, from an
// authorization server (here an in-process test one) it trusts.
func ExampleResourceServer_Mount() {
	as := authtest.NewServer(nil)
	defer as.Close()

	// The MCP server; its tools see who is calling.
	s := mcpserver.MustNew(mcp.Implementation{Name: "notes", Version: "1.0.0"}, nil)
	err := mcpserver.AddTool(s, &mcp.Tool{Name: "whoami"}, func(ctx context.Context, call *mcpserver.Call, _ struct{}) (string, error) {
		who := call.Auth()
		return fmt.Sprintf("%s via %s, scopes %v", who.Subject, who.ClientID, who.Scopes), nil
	})
	if err != nil {
		log.Fatal(err)
	}

	// The resource is the URL of the MCP endpoint, known before the
	// server starts: tokens must be issued for it.
	srv := httptest.NewUnstartedServer(nil)
	defer srv.Close()
	base := "http://" + srv.Listener.Addr().String()
	resource := base + "/mcp"

	verifier, err := jwtverify.New(&jwtverify.Options{Issuer: as.Issuer(), Audience: resource})
	if err != nil {
		log.Fatal(err)
	}
	rs, err := resourceserver.New(&resourceserver.Options{
		Metadata: resourceserver.Metadata{
			Resource:             resource,
			AuthorizationServers: []string{as.Issuer()},
			ScopesSupported:      []string{"notes"},
		},
		Verifier: verifier,
		Scopes:   []string{"notes"},
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	rs.Mount(mux, s.HTTPHandler(nil))
	srv.Config.Handler = mux
	srv.Start()

	// Without a token: 401, and where to find out how to get one.
	resp, err := http.Post(resource, "application/json", strings.NewReader("{}"))
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, strings.ReplaceAll(resp.Header.Get("WWW-Authenticate"), base, "https://mcp.example.com"))

	// With one (a real client runs the OAuth flow; the test server can
	// also issue a token directly).
	token := as.Issue(authtest.Grant{Subject: "ada", ClientID: "notes-app", Resource: resource, Scopes: []string{"notes"}})
	c := client.New(mcp.Implementation{Name: "notes-app", Version: "1.0.0"}, nil)
	sess, err := c.Connect(context.Background(), streamhttp.NewClientTransport(resource, &streamhttp.ClientOptions{
		Header: http.Header{"Authorization": {"Bearer " + token}},
	}))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(context.Background(), "whoami", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// 401 Bearer scope="notes", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
	// ada via notes-app, scopes [notes]
}

// The well-known URL of a resource's metadata document.
func ExampleMetadataURL() {
	u, err := resourceserver.MetadataURL("https://mcp.example.com/tenants/acme/mcp")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(u)
	// Output: https://mcp.example.com/.well-known/oauth-protected-resource/tenants/acme/mcp
}

// A verifier of your own (for a token format Parley does not know) says
// why it refuses with the package's errors; the middleware turns them
// into the right status and challenge.
func ExampleVerifierFunc() {
	v := resourceserver.VerifierFunc(func(ctx context.Context, token string) (*auth.Info, error) {
		switch token {
		case "ada-token":
			return &auth.Info{ClientID: "notes-app", Issuer: "https://auth.example.com", Subject: "ada", Scopes: []string{"notes"}}, nil
		case "ada-read-only":
			return nil, &resourceserver.InsufficientScopeError{Scopes: []string{"notes", "notes:write"}}
		}
		return nil, fmt.Errorf("%w: unknown token", resourceserver.ErrInvalidToken)
	})
	rs, err := resourceserver.New(&resourceserver.Options{
		Metadata: resourceserver.Metadata{Resource: "https://mcp.example.com/mcp", AuthorizationServers: []string{"https://auth.example.com"}},
		Verifier: v,
	})
	if err != nil {
		log.Fatal(err)
	}
	h := rs.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello, ", auth.InfoFrom(r.Context()).Subject)
	}))
	for _, token := range []string{"ada-token", "ada-read-only", "forged"} {
		r := httptest.NewRequest(http.MethodPost, "https://mcp.example.com/mcp", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code == http.StatusOK {
			fmt.Println(w.Code, w.Body)
			continue
		}
		challenge, _, _ := strings.Cut(w.Header().Get("WWW-Authenticate"), ", resource_metadata")
		fmt.Println(w.Code, challenge)
	}
	// Output:
	// 200 hello, ada
	// 403 Bearer error="insufficient_scope", scope="notes notes:write"
	// 401 Bearer error="invalid_token"
}
