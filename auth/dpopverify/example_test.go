package dpopverify_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/auth/authtest"
	"github.com/parley-mcp/parley/auth/dpopverify"
	"github.com/parley-mcp/parley/auth/jwtverify"
	"github.com/parley-mcp/parley/auth/oauthclient"
	"github.com/parley-mcp/parley/auth/resourceserver"
	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// An MCP server that takes DPoP-bound tokens, and an agent (the client
// credentials grant, no person) that gets one and proves its key on every
// request. A copy of the agent's token is useless without the key.
func Example() {
	as := authtest.NewServer(nil)
	defer as.Close()
	agent := as.RegisterClient(authtest.Client{ID: "nightly-report"})

	s := mcpserver.MustNew(mcp.Implementation{Name: "reports", Version: "1.0.0"}, nil)
	err := mcpserver.AddTool(s, &mcp.Tool{Name: "whoami"}, func(ctx context.Context, _ *mcpserver.Call, _ struct{}) (string, error) {
		info := auth.InfoFrom(ctx)
		return fmt.Sprintf("%s, key-bound: %v", info.Subject, info.KeyThumbprint != ""), nil
	})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	defer srv.Close()
	resource := "http://" + srv.Listener.Addr().String() + "/mcp"
	tokens, err := jwtverify.New(&jwtverify.Options{Issuer: as.Issuer(), Audience: resource})
	if err != nil {
		log.Fatal(err)
	}
	proofs, err := dpopverify.New(nil) // in memory: one instance
	if err != nil {
		log.Fatal(err)
	}
	rs, err := resourceserver.New(&resourceserver.Options{
		Metadata: resourceserver.Metadata{Resource: resource, AuthorizationServers: []string{as.Issuer()}},
		Verifier: tokens,
		DPoP:     proofs,
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	rs.Mount(mux, s.HTTPHandler(nil))
	srv.Config.Handler = mux
	srv.Start()

	// The server offers both schemes.
	resp, err := http.Post(resource, "application/json", strings.NewReader("{}"))
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	for _, ch := range resp.Header.Values("WWW-Authenticate") {
		scheme, params, _ := strings.Cut(ch, " ")
		if scheme == "DPoP" {
			scheme += " " + strings.SplitN(params, ",", 2)[0] // the algorithms it takes
		}
		fmt.Println(scheme)
	}

	oc, err := oauthclient.New(&oauthclient.Config{
		Grant: oauthclient.ClientCredentials{},
		PreRegistered: func(string) *oauthclient.ClientInfo {
			return &oauthclient.ClientInfo{ClientID: agent.ID, ClientSecret: agent.Secret}
		},
		DPoP: &oauthclient.DPoP{Required: true}, // a key of its own, made now
	})
	if err != nil {
		log.Fatal(err)
	}
	c := client.New(mcp.Implementation{Name: "nightly-report", Version: "1.0.0"}, nil)
	sess, err := c.Connect(context.Background(), streamhttp.NewClientTransport(resource, &streamhttp.ClientOptions{HTTPClient: oc.Client()}))
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
	// Bearer
	// DPoP algs="ES256 ES384 ES512 PS256 PS384 PS512 RS256 RS384 RS512 EdDSA"
	// nightly-report, key-bound: true
}
