package resourceserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/auth/authtest"
	"github.com/parley-mcp/parley/auth/jwtverify"
	"github.com/parley-mcp/parley/auth/resourceserver"
	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

type dbArgs struct {
	Name string `json:"name"`
}

type regionAnswer struct {
	Region string `json:"region"`
}

// protectedServer serves an mcpserver with a "provision" tool that elicits
// a region, behind a ResourceServer whose verifier the caller picks, and
// returns the resource identifier (the MCP endpoint's URL).
func protectedServer(t *testing.T, as *authtest.Server, verifier func(resource string) resourceserver.Verifier) string {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	s, err := mcpserver.New(mcp.Implementation{Name: "db", Version: "1.0.0"}, &mcpserver.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	region := mcpserver.Elicit[regionAnswer]("region", func(a dbArgs, _ *mcpserver.Call) string {
		return "Which region should " + a.Name + " live in?"
	})
	err = mcpserver.AddTool(s, &mcp.Tool{Name: "provision"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
		// Both the call and the context carry the caller.
		who, fromCtx := c.Auth(), auth.InfoFrom(ctx)
		if who == nil || fromCtx == nil || !who.SameCaller(fromCtx) {
			return "", fmt.Errorf("no caller: call %v, context %v", who, fromCtx)
		}
		return fmt.Sprintf("%s provisioned %s in %s (scopes %v)", who.Subject, a.Name, region.Get(c).Region, who.Scopes), nil
	}, region)
	if err != nil {
		t.Fatal(err)
	}

	srv := httptest.NewUnstartedServer(nil)
	resource := "http://" + srv.Listener.Addr().String() + "/mcp"
	rs, err := resourceserver.New(&resourceserver.Options{
		Metadata: resourceserver.Metadata{Resource: resource, AuthorizationServers: []string{as.Issuer()}, ScopesSupported: []string{"db"}},
		Verifier: verifier(resource),
		Scopes:   []string{"db"},
		Logger:   quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	rs.Mount(mux, s.HTTPHandler(&streamhttp.HandlerOptions{Logger: quiet}))
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	return resource
}

func sessionWith(t *testing.T, resource, token string) *client.Session {
	t.Helper()
	c := client.New(mcp.Implementation{Name: "app", Version: "1.0.0"}, &client.Options{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}},
		Logger:       slog.New(slog.DiscardHandler),
	})
	sess, err := c.Connect(context.Background(), streamhttp.NewClientTransport(resource, &streamhttp.ClientOptions{
		Header: http.Header{"Authorization": {"Bearer " + token}},
		Logger: slog.New(slog.DiscardHandler),
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

// A requestState minted for one user fails for another user of the same
// OAuth client, with the fixed requestState error, when identity comes
// from a verified token and nothing else (no user code binds it).
func TestEndToEndStateBoundToSubject(t *testing.T) {
	verifiers := map[string]func(*authtest.Server) func(string) resourceserver.Verifier{
		"jwt": func(as *authtest.Server) func(string) resourceserver.Verifier {
			return func(resource string) resourceserver.Verifier {
				v, err := jwtverify.New(&jwtverify.Options{Issuer: as.Issuer(), Audience: resource})
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
		},
		"introspection": func(as *authtest.Server) func(string) resourceserver.Verifier {
			return func(resource string) resourceserver.Verifier {
				creds := as.RegisterClient(authtest.Client{})
				in, err := resourceserver.NewIntrospector(&resourceserver.IntrospectionOptions{
					Endpoint: as.IntrospectionEndpoint(), ClientID: creds.ID, ClientSecret: creds.Secret, Audience: resource, Issuer: as.Issuer(),
				})
				if err != nil {
					t.Fatal(err)
				}
				return in
			}
		},
	}
	for name, mk := range verifiers {
		t.Run(name, func(t *testing.T) {
			as := authtest.NewServer(nil)
			defer as.Close()
			resource := protectedServer(t, as, mk(as))
			tokenOf := func(subject string, scopes ...string) string {
				return as.Issue(authtest.Grant{Subject: subject, ClientID: "shared-app", Resource: resource, Scopes: scopes})
			}
			ada := sessionWith(t, resource, tokenOf("ada", "db"))
			bob := sessionWith(t, resource, tokenOf("bob", "db"))
			ctx := context.Background()

			call, err := client.ToolCall("provision", map[string]any{"name": "orders"})
			if err != nil {
				t.Fatal(err)
			}
			_, pending, err := ada.Begin(ctx, call)
			if err != nil || pending == nil {
				t.Fatalf("first round: %v %v", pending, err)
			}
			var answers mcp.InputResponses
			if err := answers.Set("region", &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "eu"}}); err != nil {
				t.Fatal(err)
			}

			// Bob replays Ada's state: refused with the fixed error.
			_, _, err = bob.Continue(ctx, pending, answers)
			if !mcp.IsInvalidRequestState(err) {
				t.Fatalf("bob's replay: err = %v, want the invalid requestState error", err)
			}
			// Ada herself, even on another connection with a fresh token of
			// other scopes, finishes.
			ada2 := sessionWith(t, resource, tokenOf("ada", "db", "extra"))
			res, next, err := ada2.Continue(ctx, pending, answers)
			if err != nil || next != nil {
				t.Fatalf("ada's round: %v %v", next, err)
			}
			if got := res.(*mcp.CallToolResult).Content[0].(*mcp.TextContent).Text; got != "ada provisioned orders in eu (scopes [db extra])" {
				t.Errorf("result = %q", got)
			}

			// A token without the required scope, and one for another
			// resource, never reach the server.
			for token, want := range map[string]string{
				tokenOf("ada", "other"): `Bearer error="insufficient_scope", scope="db"`,
				as.Issue(authtest.Grant{Subject: "ada", ClientID: "shared-app", Resource: resource + "/elsewhere", Scopes: []string{"db"}}): `Bearer error="invalid_token", scope="db"`,
				"": `Bearer scope="db"`,
			} {
				req, _ := http.NewRequest(http.MethodPost, resource, strings.NewReader(`{}`))
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				got := resp.Header.Get("WWW-Authenticate")
				if !strings.HasPrefix(got, want+`, resource_metadata="`) {
					t.Errorf("challenge = %s, want it to start %s", got, want)
				}
			}
		})
	}
}

// The metadata a client finds from the challenge names the resource and
// the authorization server, whose metadata names the endpoints a client
// needs.
func TestEndToEndDiscovery(t *testing.T) {
	as := authtest.NewServer(nil)
	defer as.Close()
	resource := protectedServer(t, as, func(string) resourceserver.Verifier { return fakeVerifier() })
	resp, err := http.Post(resource, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	challenge := resp.Header.Get("WWW-Authenticate")
	_, mdURL, ok := strings.Cut(challenge, `resource_metadata="`)
	if resp.StatusCode != 401 || !ok {
		t.Fatalf("%d %s", resp.StatusCode, challenge)
	}
	mdURL = strings.TrimSuffix(mdURL, `"`)
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	getJSON(t, mdURL, &prm)
	if prm.Resource != resource || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != as.Issuer() {
		t.Fatalf("metadata %+v", prm)
	}
	var asm map[string]any
	getJSON(t, as.MetadataURL(), &asm)
	for _, k := range []string{"authorization_endpoint", "token_endpoint", "registration_endpoint", "jwks_uri", "introspection_endpoint"} {
		if s, _ := asm[k].(string); !strings.HasPrefix(s, as.Issuer()+"/") {
			t.Errorf("%s = %v", k, asm[k])
		}
	}
	if asm["issuer"] != as.Issuer() {
		t.Errorf("issuer = %v", asm["issuer"])
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v: %s", url, err, b)
	}
}
