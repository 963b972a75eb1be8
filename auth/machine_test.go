package auth_test

// The flows with no person present, end to end over HTTP: a Parley server
// behind the resource-server middleware (JWT verifier, DPoP verifier), the
// Parley OAuth client with each grant, with and without DPoP, in both
// protocol generations, and the test authorization server (and a second one
// as the enterprise identity provider) granting them.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/auth/authtest"
	"github.com/parley-mcp/parley/auth/dpopverify"
	"github.com/parley-mcp/parley/auth/dpopverify/redisstore"
	"github.com/parley-mcp/parley/auth/jwtverify"
	"github.com/parley-mcp/parley/auth/oauthclient"
	"github.com/parley-mcp/parley/auth/resourceserver"
	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/redistest"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

type noArgs struct{}

// machineServer starts an MCP server whose tool "whoami" says who called
// and whether the token was DPoP-bound, behind the middleware taking both
// schemes; replay is its DPoP replay store (nil: its own, in memory). It
// returns the MCP endpoint's URL.
func machineServer(t *testing.T, as *authtest.Server, replay dpopverify.ReplayStore) string {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	s, err := mcpserver.New(mcp.Implementation{Name: "ops", Version: "1.0.0"}, &mcpserver.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	err = mcpserver.AddTool(s, &mcp.Tool{Name: "whoami"}, func(ctx context.Context, c *mcpserver.Call, _ noArgs) (string, error) {
		info := auth.InfoFrom(ctx)
		return fmt.Sprintf("%s bound=%v", info.Subject, info.KeyThumbprint != ""), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	resource := "http://" + srv.Listener.Addr().String() + "/mcp"
	v, err := jwtverify.New(&jwtverify.Options{Issuer: as.Issuer(), Audience: resource})
	if err != nil {
		t.Fatal(err)
	}
	dv, err := dpopverify.New(&dpopverify.Options{Replay: replay})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := resourceserver.New(&resourceserver.Options{
		Metadata: resourceserver.Metadata{Resource: resource, AuthorizationServers: []string{as.Issuer()}},
		Verifier: v,
		DPoP:     dv,
		Logger:   quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h := s.HTTPHandler(&streamhttp.HandlerOptions{Logger: quiet})
	rs.Mount(mux, h)
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h.Shutdown(ctx)
		srv.Close()
	})
	return resource
}

// schemeRecorder notes the Authorization scheme of every request to the MCP
// endpoint.
type schemeRecorder struct {
	mu      sync.Mutex
	schemes map[string]int
}

func (r *schemeRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.URL.Path, "/mcp") {
		scheme, _, _ := strings.Cut(req.Header.Get("Authorization"), " ")
		r.mu.Lock()
		r.schemes[req.Method+" "+scheme]++
		r.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(req)
}

// whoami connects to resource through oc, in generation version, calls
// whoami and closes.
func whoami(t *testing.T, resource string, oc *oauthclient.Transport, version mcp.ProtocolVersion) string {
	t.Helper()
	c := client.New(mcp.Implementation{Name: "agent", Version: "1.0.0"}, &client.Options{ProtocolVersion: version, Logger: slog.New(slog.DiscardHandler)})
	sess, err := c.Connect(context.Background(), streamhttp.NewClientTransport(resource, &streamhttp.ClientOptions{HTTPClient: oc.Client(), Logger: slog.New(slog.DiscardHandler)}))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer sess.Close()
	res, err := sess.CallTool(context.Background(), "whoami", map[string]any{})
	if err != nil {
		t.Fatalf("whoami: %v", err)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// Each grant, with bearer and with DPoP-bound tokens, in both protocol
// generations (a legacy session sends GET and DELETE as well as POST: each
// with a proof of its own method).
func TestMachineFlowsEndToEnd(t *testing.T) {
	as := authtest.NewServer(&authtest.Options{Algorithm: "ES256"})
	t.Cleanup(as.Close)
	resource := machineServer(t, as, nil)

	secret := as.RegisterClient(authtest.Client{ID: "nightly-report"})
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	as.RegisterClient(authtest.Client{ID: "signer", AuthMethod: authtest.AuthPrivateKeyJWT, PublicKey: key.Public()})

	platform, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	as.TrustIssuer("https://cluster.example", platform.Public())
	tokenFile := filepath.Join(t.TempDir(), "token")
	s, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: platform}, nil)
	wl, _ := jwt.Signed(s).Claims(map[string]any{"iss": "https://cluster.example", "sub": "system:serviceaccount:ops:agent", "aud": as.Issuer(), "exp": time.Now().Add(time.Hour).Unix()}).Serialize()
	os.WriteFile(tokenFile, []byte(wl), 0o600)

	idp := authtest.NewServer(&authtest.Options{Algorithm: "ES256"})
	t.Cleanup(idp.Close)
	as.TrustIssuer(idp.Issuer(), idp.PublicKey())
	host := as.RegisterClient(authtest.Client{ID: "desktop-host"})
	idp.RegisterClient(authtest.Client{ID: "desktop-sso", AuthMethod: authtest.AuthNone})
	idp.SetJAGClient(as.Issuer(), host.ID)

	flows := map[string]struct {
		grant oauthclient.Grant
		pre   *oauthclient.ClientInfo
		who   string
	}{
		"client credentials, secret":          {oauthclient.ClientCredentials{}, &oauthclient.ClientInfo{ClientID: secret.ID, ClientSecret: secret.Secret}, "nightly-report"},
		"client credentials, private_key_jwt": {oauthclient.ClientCredentials{}, &oauthclient.ClientInfo{ClientID: "signer", Key: key}, "signer"},
		"workload identity":                   {&oauthclient.WorkloadIdentity{TokenFile: tokenFile}, nil, "system:serviceaccount:ops:agent"},
		"enterprise-managed": {&oauthclient.EnterpriseManaged{
			IdentityToken:    func(context.Context) (string, error) { return idp.IssueIDToken("ada@corp.example", "desktop-sso"), nil },
			IdPTokenEndpoint: idp.TokenEndpoint(),
			IdPClient:        &oauthclient.ClientInfo{ClientID: "desktop-sso"},
		}, &oauthclient.ClientInfo{ClientID: host.ID, ClientSecret: host.Secret}, "ada@corp.example"},
	}
	for name, f := range flows {
		for _, dpop := range []bool{false, true} {
			for _, version := range []mcp.ProtocolVersion{"", "2025-11-25"} {
				t.Run(fmt.Sprintf("%s, dpop %v, %q", name, dpop, version), func(t *testing.T) {
					rec := &schemeRecorder{schemes: map[string]int{}}
					cfg := &oauthclient.Config{Grant: f.grant, Base: rec}
					if f.pre != nil {
						pre := *f.pre
						cfg.PreRegistered = func(string) *oauthclient.ClientInfo { return &pre }
					}
					if dpop {
						cfg.DPoP = &oauthclient.DPoP{Required: true}
					}
					oc, err := oauthclient.New(cfg)
					if err != nil {
						t.Fatal(err)
					}
					if got, want := whoami(t, resource, oc, version), fmt.Sprintf("%s bound=%v", f.who, dpop); got != want {
						t.Errorf("whoami = %q, want %q", got, want)
					}
					want := "Bearer"
					if dpop {
						want = "DPoP"
					}
					authorized := 0
					for k, n := range rec.schemes {
						switch _, scheme, _ := strings.Cut(k, " "); scheme {
						case "": // the first request, before there is a token
						case want:
							authorized += n
						default:
							t.Errorf("requests %v: a %s request with dpop %v", rec.schemes, scheme, dpop)
						}
					}
					if authorized == 0 {
						t.Errorf("requests %v: none authorized", rec.schemes)
					}
				})
			}
		}
	}
}

// proofCatcher keeps the DPoP header and Authorization of the last MCP
// request.
type proofCatcher struct {
	mu           sync.Mutex
	authz, proof string
	body         string
}

func (p *proofCatcher) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.URL.Path, "/mcp") && req.Header.Get("DPoP") != "" {
		b, _ := io.ReadAll(req.Body)
		req.Body.Close()
		p.mu.Lock()
		p.authz, p.proof, p.body = req.Header.Get("Authorization"), req.Header.Get("DPoP"), string(b)
		p.mu.Unlock()
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(strings.NewReader(string(b)))
	}
	return http.DefaultTransport.RoundTrip(req)
}

// A fleet: two instances of one MCP server share a Redis replay store, so
// a proof (and its token) taken from a request to one is refused by the
// other, and by the first again.
func TestDPoPFleetRefusesReplay(t *testing.T) {
	rds := redistest.Start(t)
	as := authtest.NewServer(nil)
	t.Cleanup(as.Close)
	store := redisstore.New(rds.Client(t), nil)
	first := machineServer(t, as, store)
	c := as.RegisterClient(authtest.Client{ID: "agent"})
	catch := &proofCatcher{}
	oc, err := oauthclient.New(&oauthclient.Config{
		Grant: oauthclient.ClientCredentials{},
		PreRegistered: func(string) *oauthclient.ClientInfo {
			return &oauthclient.ClientInfo{ClientID: c.ID, ClientSecret: c.Secret}
		},
		DPoP: &oauthclient.DPoP{},
		Base: catch,
	})
	if err != nil {
		t.Fatal(err)
	}
	whoami(t, first, oc, "")
	catch.mu.Lock()
	authz, proof, body := catch.authz, catch.proof, catch.body
	catch.mu.Unlock()

	// The second instance serves the same resource (the proof's htu); a
	// shared store is all it needs to know the proof.
	second := machineServerAt(t, as, store, first)
	for _, target := range []string{second, first} {
		req, _ := http.NewRequest(http.MethodPost, target, strings.NewReader(body))
		req.Header.Set("Authorization", authz)
		req.Header.Set("DPoP", proof)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(strings.Join(resp.Header.Values("WWW-Authenticate"), ";"), `DPoP error="invalid_dpop_proof"`) {
			t.Errorf("the replayed proof at %s: %d %q", target, resp.StatusCode, resp.Header.Values("WWW-Authenticate"))
		}
	}
}

// machineServerAt starts another instance for the resource of an existing
// one: a proxy in front of the new listener that presents requests as the
// resource's own URL, as a load balancer does.
func machineServerAt(t *testing.T, as *authtest.Server, replay dpopverify.ReplayStore, resource string) string {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	v, _ := jwtverify.New(&jwtverify.Options{Issuer: as.Issuer(), Audience: resource})
	dv, _ := dpopverify.New(&dpopverify.Options{Replay: replay})
	rs, err := resourceserver.New(&resourceserver.Options{
		Metadata: resourceserver.Metadata{Resource: resource, AuthorizationServers: []string{as.Issuer()}},
		Verifier: v, DPoP: dv, Logger: quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rs.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	})))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}
