package oauthclient

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/oauth2"

	"github.com/parley-mcp/parley/auth/authtest"
)

// preRegistered returns a Config.PreRegistered that gives c for every
// issuer.
func preRegistered(c ClientInfo) func(string) *ClientInfo {
	return func(string) *ClientInfo { return &c }
}

// The client credentials grant with a secret, by each method the server may
// take it with: the request carries grant_type, resource and the client's
// authentication, and nothing of the authorization code flow.
func TestClientCredentialsWithSecret(t *testing.T) {
	for _, method := range []string{authtest.AuthSecretBasic, authtest.AuthSecretPost} {
		t.Run(method, func(t *testing.T) {
			w := newGrantWorld(t, nil)
			c := w.as.RegisterClient(authtest.Client{ID: "agent/1", AuthMethod: method})
			rec := &tokenRecorder{}
			tr := grantTransport(t, Config{
				Grant:         ClientCredentials{},
				PreRegistered: preRegistered(ClientInfo{ClientID: c.ID, ClientSecret: c.Secret, TokenEndpointAuthMethod: method}),
				HTTPClient:    &http.Client{Transport: rec},
			})
			mustOK(t, tr, w.url(), "ping")
			mustOK(t, tr, w.url(), "pong")
			forms, heads := rec.requests()
			if len(forms) != 1 {
				t.Fatalf("%d token requests, want 1 (the token is kept)", len(forms))
			}
			f := url.Values(forms[0])
			if f.Get("grant_type") != "client_credentials" || f.Get("resource") != w.url() || f.Has("code") || f.Has("redirect_uri") || f.Has("scope") {
				t.Errorf("token request %v", f)
			}
			basic := heads[0].Get("Authorization")
			switch method {
			case authtest.AuthSecretBasic:
				want := "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(c.ID)+":"+url.QueryEscape(c.Secret)))
				if basic != want || f.Has("client_secret") {
					t.Errorf("Authorization %q, body secret %v; want Basic only", basic, f.Has("client_secret"))
				}
			case authtest.AuthSecretPost:
				if basic != "" || f.Get("client_id") != c.ID || f.Get("client_secret") != c.Secret {
					t.Errorf("Authorization %q, body %v; want the secret in the body", basic, f)
				}
			}
			if got := w.schemes(); !slices.Equal(got, []string{"", "Bearer", "Bearer"}) {
				t.Errorf("the MCP server saw %q", got)
			}
			if w.bodies[0] != c.ID+":ping" {
				t.Errorf("the token speaks for %q, want the client itself", w.bodies[0])
			}
		})
	}
}

// The client credentials grant with private_key_jwt (RFC 7523 section 2.2):
// a signed assertion whose iss and sub are the client and whose aud is the
// authorization server's issuer, no secret, no client_id, and the key never
// leaves the process.
func TestClientCredentialsPrivateKeyJWT(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	for name, tc := range map[string]struct {
		key crypto.Signer
		alg string
	}{
		"ES256":                               {ec, "ES256"},
		"RSA (PS256, which the server lists)": {rk, "PS256"},
	} {
		t.Run(name, func(t *testing.T) {
			w := newGrantWorld(t, nil)
			c := w.as.RegisterClient(authtest.Client{ID: "agent", AuthMethod: authtest.AuthPrivateKeyJWT, PublicKey: tc.key.Public()})
			rec := &tokenRecorder{}
			store := NewMemoryStore()
			tr := grantTransport(t, Config{
				Grant:         ClientCredentials{},
				PreRegistered: preRegistered(ClientInfo{ClientID: c.ID, Key: tc.key, KeyID: "k1"}),
				HTTPClient:    &http.Client{Transport: rec},
				Store:         store,
			})
			mustOK(t, tr, w.url(), "x")
			forms, heads := rec.requests()
			f := url.Values(forms[0])
			if f.Get("client_assertion_type") != ClientAssertionType || f.Has("client_id") || f.Has("client_secret") || heads[0].Get("Authorization") != "" {
				t.Fatalf("token request %v, Authorization %q", f, heads[0].Get("Authorization"))
			}
			tok, err := jwt.ParseSigned(f.Get("client_assertion"), []jose.SignatureAlgorithm{jose.SignatureAlgorithm(tc.alg)})
			if err != nil {
				t.Fatalf("assertion: %v", err)
			}
			var cl jwt.Claims
			if err := tok.Claims(tc.key.Public(), &cl); err != nil {
				t.Fatal(err)
			}
			if cl.Issuer != c.ID || cl.Subject != c.ID || !slices.Equal([]string(cl.Audience), []string{w.as.Issuer()}) || cl.ID == "" || cl.Expiry == nil {
				t.Errorf("assertion claims %+v", cl)
			}
			if tok.Headers[0].KeyID != "k1" {
				t.Errorf("assertion kid %q", tok.Headers[0].KeyID)
			}
			// A Store that marshals never sees the key.
			if b, _ := json.Marshal(ClientInfo{ClientID: c.ID, Key: tc.key, KeyID: "k1", SigningAlgorithm: tc.alg}); string(b) != `{"client_id":"agent"}` {
				t.Errorf("a ClientInfo with a key marshals to %s", b)
			}
			if creds, _ := store.Load(context.Background(), w.as.Issuer()); creds == nil || creds.Tokens[w.url()] == nil {
				t.Error("the token was not stored")
			}
		})
	}
}

// A server that advertises neither an authorization endpoint nor PKCE is
// fine for a grant: neither is used.
func TestGrantNeedsNoAuthorizationEndpoint(t *testing.T) {
	as := newFakeAS(t, func(as *fakeAS) { as.noPKCE = true; as.noAuthEndpoint = true })
	rs := newFakeRS(t, as, nil)
	tr := grantTransport(t, Config{Grant: ClientCredentials{}, PreRegistered: preRegistered(ClientInfo{ClientID: "a", ClientSecret: "s"})})
	mustOK(t, tr, rs.url(), "x")
	if n, _, _ := as.counts(); n != 0 {
		t.Errorf("%d authorization requests", n)
	}
}

// The grant needs a pre-registered client with a credential; without, the
// request fails before anything is sent to the token endpoint.
func TestClientCredentialsNeedsRegisteredClient(t *testing.T) {
	for name, pre := range map[string]func(string) *ClientInfo{
		"none":      nil,
		"no secret": preRegistered(ClientInfo{ClientID: "a"}),
	} {
		t.Run(name, func(t *testing.T) {
			as := newFakeAS(t, nil)
			rs := newFakeRS(t, as, nil)
			_, _, err := post(t, grantTransport(t, Config{Grant: ClientCredentials{}, PreRegistered: pre}), rs.url(), "x")
			var re *RegistrationError
			if !errors.As(err, &re) || !errors.Is(err, ErrRegistrationFailed) {
				t.Fatalf("err = %v, want a *RegistrationError", err)
			}
			if _, tok, reg := as.counts(); tok != 0 || reg != 0 {
				t.Errorf("%d token requests, %d registrations", tok, reg)
			}
		})
	}
}

// A refused grant is not retried, and no consent screen follows it: its
// error ends the request.
func TestGrantRefusalEndsTheRequest(t *testing.T) {
	w := newGrantWorld(t, nil)
	rec := &tokenRecorder{}
	tr := grantTransport(t, Config{
		Grant:         ClientCredentials{},
		PreRegistered: preRegistered(ClientInfo{ClientID: "nobody", ClientSecret: "wrong"}),
		HTTPClient:    &http.Client{Transport: rec},
	})
	_, _, err := post(t, tr, w.url(), "x")
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_client" {
		t.Fatalf("err = %v, want the token endpoint's invalid_client", err)
	}
	if forms, _ := rec.requests(); len(forms) != 1 {
		t.Errorf("%d token requests, want 1", len(forms))
	}
	if _, err := New(&Config{Grant: ClientCredentials{}, Authorizer: &HeadlessAuthorizer{}}); err == nil {
		t.Error("New took both a Grant and an Authorizer")
	}
}

// A grant's token is replaced before it expires, without a 401 first, and
// offline_access is not asked for: a grant is presented again.
func TestGrantRenewsExpiredToken(t *testing.T) {
	clk := &clock{t: time.Now()}
	as := newFakeAS(t, func(as *fakeAS) { as.expiresIn = 3600; as.scopesSupported = []string{"db", offlineAccess} })
	rs := newFakeRS(t, as, func(rs *fakeRS) { rs.prmScopes = []string{"db"} })
	tr := grantTransport(t, Config{Grant: ClientCredentials{}, PreRegistered: preRegistered(ClientInfo{ClientID: "a", ClientSecret: "s"}), Now: clk.now})
	mustOK(t, tr, rs.url(), "x")
	clk.add(2 * time.Hour)
	mustOK(t, tr, rs.url(), "y")
	if got := rs.authHeaders(); len(got) != 3 || got[0] != "" || got[1] != "Bearer tok-1" || got[2] != "Bearer tok-2" {
		t.Errorf("the MCP server saw %q; want one 401, then the first token, then the second", got)
	}
	for _, f := range as.tokenReqs {
		if f.Get("grant_type") != "client_credentials" || f.Get("scope") != "db" {
			t.Errorf("token request %v; want client_credentials with scope db alone", f)
		}
	}
}

// Workload identity federation: the platform's token, read from its file at
// each token request, is the assertion of the JWT bearer grant; when the
// platform rotates the file, the next token request presents the new one.
func TestWorkloadIdentityFromFile(t *testing.T) {
	w := newGrantWorld(t, nil)
	platform, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	const platformIssuer = "https://k8s.example/cluster"
	w.as.TrustIssuer(platformIssuer, platform.Public())
	mint := func(sub string, ttl time.Duration) string {
		return signJWT(t, platform, "JWT", map[string]any{"iss": platformIssuer, "sub": sub, "aud": w.as.Issuer(), "exp": time.Now().Add(ttl).Unix()})
	}
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(mint("system:serviceaccount:ns:agent", time.Hour)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := &tokenRecorder{}
	clk := &clock{t: time.Now()}
	tr := grantTransport(t, Config{Grant: &WorkloadIdentity{TokenFile: file}, HTTPClient: &http.Client{Transport: rec}, Now: clk.now})
	mustOK(t, tr, w.url(), "a")
	rotated := mint("system:serviceaccount:ns:agent-2", time.Hour)
	if err := os.WriteFile(file, []byte(rotated), 0o600); err != nil {
		t.Fatal(err)
	}
	clk.add(2 * time.Hour) // the access token (an hour) has expired
	mustOK(t, tr, w.url(), "b")
	forms, heads := rec.requests()
	if len(forms) != 2 {
		t.Fatalf("%d token requests, want 2", len(forms))
	}
	for i, f := range forms {
		f := url.Values(f)
		if f.Get("grant_type") != GrantJWTBearer || f.Get("resource") != w.url() || f.Has("client_id") || heads[i].Get("Authorization") != "" {
			t.Errorf("token request %d: %v, Authorization %q", i, f, heads[i].Get("Authorization"))
		}
	}
	if url.Values(forms[1]).Get("assertion") != rotated {
		t.Error("the second token request did not present the rotated token")
	}
	if !strings.HasSuffix(w.bodies[1], "agent-2:b") {
		t.Errorf("bodies %q", w.bodies)
	}
}

// A workload token the authorization server refuses (expired) fails the
// request with the server's error, once: no retry, no other grant.
func TestWorkloadIdentityRefused(t *testing.T) {
	w := newGrantWorld(t, nil)
	platform, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	w.as.TrustIssuer("https://platform.example", platform.Public())
	expired := signJWT(t, platform, "JWT", map[string]any{"iss": "https://platform.example", "sub": "w", "aud": w.as.Issuer(), "exp": time.Now().Add(-time.Minute).Unix()})
	rec := &tokenRecorder{}
	calls := 0
	tr := grantTransport(t, Config{
		Grant:      &WorkloadIdentity{Token: func(context.Context) (string, error) { calls++; return expired, nil }},
		HTTPClient: &http.Client{Transport: rec},
	})
	_, _, err := post(t, tr, w.url(), "x")
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Fatalf("err = %v, want invalid_grant", err)
	}
	if forms, _ := rec.requests(); len(forms) != 1 || calls != 1 {
		t.Errorf("%d token requests, %d token reads; want 1 and 1", len(forms), calls)
	}
	if _, err := (&WorkloadIdentity{}).TokenParams(context.Background(), &GrantRequest{}); err == nil {
		t.Error("a WorkloadIdentity without a source gave parameters")
	}
	big := filepath.Join(t.TempDir(), "big")
	os.WriteFile(big, make([]byte, maxPlatformToken+1), 0o600)
	if _, err := (&WorkloadIdentity{TokenFile: big}).TokenParams(context.Background(), &GrantRequest{}); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("an oversized token file: %v", err)
	}
}

// enterpriseWorld is a company's identity provider and an MCP server whose
// authorization server trusts it.
type enterpriseWorld struct {
	*grantWorld
	idp    *authtest.Server
	client authtest.Client // at the MCP server's authorization server
	hostID string          // the host's client at the identity provider
}

func newEnterpriseWorld(t *testing.T) *enterpriseWorld {
	t.Helper()
	e := &enterpriseWorld{grantWorld: newGrantWorld(t, nil), idp: authtest.NewServer(&authtest.Options{Algorithm: "ES256"})}
	t.Cleanup(e.idp.Close)
	e.as.TrustIssuer(e.idp.Issuer(), e.idp.PublicKey())
	e.client = e.as.RegisterClient(authtest.Client{ID: "host-at-mcp"})
	e.hostID = e.idp.RegisterClient(authtest.Client{ID: "host-at-idp", AuthMethod: authtest.AuthNone}).ID
	e.idp.SetJAGClient(e.as.Issuer(), e.client.ID)
	return e
}

// Enterprise-managed authorization: token exchange at the identity
// provider (the user's ID token for an ID-JAG naming the MCP server's
// authorization server and the resource), then the JWT bearer grant there,
// authenticated as the client registered there. No one is asked anything.
func TestEnterpriseManaged(t *testing.T) {
	e := newEnterpriseWorld(t)
	rec := &tokenRecorder{}
	tr := grantTransport(t, Config{
		Grant: &EnterpriseManaged{
			IdentityToken:    func(context.Context) (string, error) { return e.idp.IssueIDToken("ada@corp", e.hostID), nil },
			IdPTokenEndpoint: e.idp.TokenEndpoint(),
			IdPClient:        &ClientInfo{ClientID: e.hostID},
		},
		PreRegistered: preRegistered(ClientInfo{ClientID: e.client.ID, ClientSecret: e.client.Secret}),
		HTTPClient:    &http.Client{Transport: rec},
	})
	mustOK(t, tr, e.url(), "q")
	forms, heads := rec.requests()
	if len(forms) != 2 {
		t.Fatalf("%d token requests, want the exchange and the grant", len(forms))
	}
	ex, grant := url.Values(forms[0]), url.Values(forms[1])
	if ex.Get("grant_type") != GrantTokenExchange || ex.Get("requested_token_type") != TokenTypeIDJAG ||
		ex.Get("subject_token_type") != TokenTypeIDToken || ex.Get("audience") != e.as.Issuer() ||
		ex.Get("resource") != e.url() || ex.Get("client_id") != e.hostID {
		t.Errorf("token exchange %v", ex)
	}
	if grant.Get("grant_type") != GrantJWTBearer || grant.Get("assertion") == "" || grant.Get("resource") != e.url() ||
		!strings.HasPrefix(heads[1].Get("Authorization"), "Basic ") {
		t.Errorf("JWT bearer grant %v, Authorization %q", grant, heads[1].Get("Authorization"))
	}
	if e.bodies[0] != "ada@corp:q" {
		t.Errorf("the token speaks for %q, want the user", e.bodies[0])
	}
}

// The host that brings its own ID-JAG (Exchange) is not asked for an ID
// token, and nothing is sent to an identity provider.
func TestEnterpriseManagedOwnExchange(t *testing.T) {
	e := newEnterpriseWorld(t)
	var asked *GrantRequest
	tr := grantTransport(t, Config{
		Grant: &EnterpriseManaged{Exchange: func(ctx context.Context, r *GrantRequest) (string, error) {
			asked = r
			return exchangeAt(t, e.idp, e.hostID, e.idp.IssueIDToken("bob", e.hostID), r.Server.Issuer, r.Resource), nil
		}},
		PreRegistered: preRegistered(ClientInfo{ClientID: e.client.ID, ClientSecret: e.client.Secret}),
	})
	mustOK(t, tr, e.url(), "q")
	if asked == nil || asked.Server.Issuer != e.as.Issuer() || asked.Resource != e.url() || asked.Client.ClientID != e.client.ID {
		t.Errorf("Exchange was asked %+v", asked)
	}
	if e.bodies[0] != "bob:q" {
		t.Errorf("bodies %q", e.bodies)
	}
}

// What the identity provider refuses, and an ID-JAG the authorization
// server refuses, end the request with the refusal; without a client
// registered at the authorization server, nothing is exchanged at all.
func TestEnterpriseManagedRefusals(t *testing.T) {
	e := newEnterpriseWorld(t)
	other := e.idp.RegisterClient(authtest.Client{ID: "someone-else", AuthMethod: authtest.AuthNone}).ID
	for name, tc := range map[string]struct {
		idToken string
		client  *ClientInfo
		want    string
	}{
		"ID token of another client": {e.idp.IssueIDToken("ada", other), &ClientInfo{ClientID: e.client.ID, ClientSecret: e.client.Secret}, "invalid_grant"},
		"ID-JAG for another client":  {e.idp.IssueIDToken("ada", e.hostID), &ClientInfo{ClientID: "host-2", ClientSecret: "s"}, "invalid_client"},
		"no client":                  {e.idp.IssueIDToken("ada", e.hostID), nil, "registration"},
	} {
		t.Run(name, func(t *testing.T) {
			if tc.client != nil && tc.client.ClientID == "host-2" {
				c := e.as.RegisterClient(authtest.Client{ID: "host-2", Secret: "s"})
				tc.client.ClientSecret = c.Secret
				tc.want = "invalid_grant" // the ID-JAG names host-at-mcp
			}
			rec := &tokenRecorder{}
			cfg := Config{
				Grant: &EnterpriseManaged{
					IdentityToken:    func(context.Context) (string, error) { return tc.idToken, nil },
					IdPTokenEndpoint: e.idp.TokenEndpoint(),
					IdPClient:        &ClientInfo{ClientID: e.hostID},
				},
				HTTPClient: &http.Client{Transport: rec},
			}
			if tc.client != nil {
				cfg.PreRegistered = preRegistered(*tc.client)
			}
			_, _, err := post(t, grantTransport(t, cfg), e.url(), "q")
			var re *oauth2.RetrieveError
			switch {
			case tc.want == "registration":
				if !errors.Is(err, ErrRegistrationFailed) {
					t.Fatalf("err = %v", err)
				}
				if forms, _ := rec.requests(); len(forms) != 0 {
					t.Errorf("%d token requests", len(forms))
				}
			case !errors.As(err, &re) || re.ErrorCode != tc.want:
				t.Fatalf("err = %v, want %s", err, tc.want)
			}
		})
	}
}

// exchangeAt runs a token exchange at idp by hand, for a host that does it
// itself.
func exchangeAt(t *testing.T, idp *authtest.Server, clientID, idToken, audience, resource string) string {
	t.Helper()
	g := &EnterpriseManaged{
		IdentityToken:    func(context.Context) (string, error) { return idToken, nil },
		IdPTokenEndpoint: idp.TokenEndpoint(),
		IdPClient:        &ClientInfo{ClientID: clientID},
	}
	jag, err := g.exchange(context.Background(), &GrantRequest{Server: &ServerMetadata{Issuer: audience}, Resource: resource})
	if err != nil {
		t.Fatal(err)
	}
	return jag
}

// signJWT signs claims with key, with typ.
func signJWT(t *testing.T, key crypto.Signer, typ string, claims map[string]any) string {
	t.Helper()
	alg, err := keyAlgorithm(key.Public(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, (&jose.SignerOptions{}).WithType(jose.ContentType(typ)))
	if err != nil {
		t.Fatal(err)
	}
	out, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The exchange's answer must be an ID-JAG, from an identity provider
// reached over https (or loopback): anything else ends the request before
// the authorization server is asked.
func TestEnterpriseManagedExchangeChecks(t *testing.T) {
	e := newEnterpriseWorld(t)
	wrongType := httptestServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"access_token": "x.y.z", "issued_token_type": "urn:ietf:params:oauth:token-type:access_token", "token_type": "Bearer"})
	})
	for name, tc := range map[string]struct {
		endpoint string
		want     func(error) bool
	}{
		"not an ID-JAG":  {wrongType.URL + "/token", func(err error) bool { return err != nil && strings.Contains(err.Error(), "not an ID-JAG") }},
		"plain HTTP":     {"http://idp.example/token", func(err error) bool { return errors.Is(err, ErrInsecureURL) }},
		"refused by idp": {e.idp.TokenEndpoint(), func(err error) bool { var re *oauth2.RetrieveError; return errors.As(err, &re) }},
	} {
		t.Run(name, func(t *testing.T) {
			rec := &tokenRecorder{}
			tr := grantTransport(t, Config{
				Grant: &EnterpriseManaged{
					IdentityToken:    func(context.Context) (string, error) { return "not-an-id-token", nil },
					IdPTokenEndpoint: tc.endpoint,
				},
				PreRegistered: preRegistered(ClientInfo{ClientID: e.client.ID, ClientSecret: e.client.Secret}),
				HTTPClient:    &http.Client{Transport: rec},
			})
			_, _, err := post(t, tr, e.url(), "q")
			if !tc.want(err) {
				t.Fatalf("err = %v", err)
			}
			for _, f := range func() []map[string][]string { f, _ := rec.requests(); return f }() {
				if url.Values(f).Get("grant_type") == GrantJWTBearer {
					t.Error("the authorization server was asked all the same")
				}
			}
		})
	}
}

func httptestServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}
