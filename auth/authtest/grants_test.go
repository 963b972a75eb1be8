package authtest_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/parley-mcp/parley/auth/authtest"
)

const jwtBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

func sign(t *testing.T, key crypto.Signer, alg jose.SignatureAlgorithm, opts *jose.SignerOptions, claims any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tokenWith posts form with extra headers and returns the status, body and
// response headers.
func tokenWith(t *testing.T, as *authtest.Server, form url.Values, h http.Header) (int, map[string]any, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, as.TokenEndpoint(), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var body map[string]any
	json.Unmarshal(b, &body)
	return resp.StatusCode, body, resp.Header
}

func claimsOf(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	json.Unmarshal(raw, &c)
	return c
}

// The client credentials grant, for confidential clients only, with a
// secret or with private_key_jwt; an assertion is taken once, for this
// server, while it lives.
func TestClientCredentialsGrant(t *testing.T) {
	as := authtest.NewServer(nil)
	defer as.Close()
	sec := as.RegisterClient(authtest.Client{ID: "agent"})
	status, body := token(t, as, url.Values{"grant_type": {"client_credentials"}, "resource": {resource}}, sec.ID, sec.Secret)
	if status != 200 || body["refresh_token"] != nil || claimsOf(t, body["access_token"].(string))["sub"] != "agent" {
		t.Fatalf("client credentials: %d %v", status, body)
	}
	pub := as.RegisterClient(authtest.Client{ID: "spa", AuthMethod: authtest.AuthNone})
	if status, body := token(t, as, url.Values{"grant_type": {"client_credentials"}, "client_id": {pub.ID}}); status != 401 || body["error"] != "invalid_client" {
		t.Errorf("a public client: %d %v", status, body)
	}

	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	as.RegisterClient(authtest.Client{ID: "kagent", AuthMethod: authtest.AuthPrivateKeyJWT, PublicKey: key.Public()})
	assertion := func(aud string, exp time.Duration, jti string) string {
		return sign(t, key, jose.ES256, nil, map[string]any{"iss": "kagent", "sub": "kagent", "aud": aud, "exp": time.Now().Add(exp).Unix(), "jti": jti})
	}
	form := func(a string) url.Values {
		return url.Values{"grant_type": {"client_credentials"}, "client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"}, "client_assertion": {a}}
	}
	good := assertion(as.Issuer(), time.Minute, "j1")
	if status, body := token(t, as, form(good)); status != 200 {
		t.Fatalf("private_key_jwt: %d %v", status, body)
	}
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for name, a := range map[string]string{
		"replayed":       good,
		"another server": assertion("https://elsewhere.example", time.Minute, "j2"),
		"expired":        assertion(as.Issuer(), -time.Minute, "j3"),
		"too long-lived": assertion(as.Issuer(), 2*time.Hour, "j4"),
		"no jti":         assertion(as.Issuer(), time.Minute, ""),
		"another key":    sign(t, other, jose.ES256, nil, map[string]any{"iss": "kagent", "sub": "kagent", "aud": as.Issuer(), "exp": time.Now().Add(time.Minute).Unix(), "jti": "j5"}),
	} {
		if status, body := token(t, as, form(a)); status != 401 || body["error"] != "invalid_client" {
			t.Errorf("%s: %d %v", name, status, body)
		}
	}
}

// The JWT bearer grant takes assertions of trusted issuers only, for this
// server, unexpired; an ID-JAG only from the client it names and for the
// resource it names.
func TestJWTBearerGrant(t *testing.T) {
	as := authtest.NewServer(nil)
	defer as.Close()
	platform, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	as.TrustIssuer("https://platform.example", platform.Public())
	workload := func(iss, aud string, exp time.Duration) string {
		return sign(t, platform, jose.ES256, nil, map[string]any{"iss": iss, "sub": "wl", "aud": aud, "exp": time.Now().Add(exp).Unix()})
	}
	grant := func(a string) url.Values {
		return url.Values{"grant_type": {jwtBearer}, "assertion": {a}, "resource": {resource}}
	}
	status, body := token(t, as, grant(workload("https://platform.example", as.Issuer(), time.Hour)))
	if status != 200 || claimsOf(t, body["access_token"].(string))["sub"] != "wl" {
		t.Fatalf("a workload token: %d %v", status, body)
	}
	for name, a := range map[string]string{
		"untrusted issuer": workload("https://evil.example", as.Issuer(), time.Hour),
		"another audience": workload("https://platform.example", "https://elsewhere.example", time.Hour),
		"expired":          workload("https://platform.example", as.Issuer(), -time.Second),
		"not a JWT":        "garbage",
	} {
		if status, body := token(t, as, grant(a)); status != 400 || body["error"] != "invalid_grant" {
			t.Errorf("%s: %d %v", name, status, body)
		}
	}

	idp := authtest.NewServer(&authtest.Options{Algorithm: "ES256"})
	defer idp.Close()
	as.TrustIssuer(idp.Issuer(), idp.PublicKey())
	host := as.RegisterClient(authtest.Client{ID: "host"})
	other := as.RegisterClient(authtest.Client{ID: "other"})
	idp.RegisterClient(authtest.Client{ID: "sso", AuthMethod: authtest.AuthNone})
	idp.SetJAGClient(as.Issuer(), "host")
	exchange := func(idToken, res string) (int, map[string]any) {
		return token(t, idp, url.Values{
			"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "client_id": {"sso"},
			"requested_token_type": {"urn:ietf:params:oauth:token-type:id-jag"}, "audience": {as.Issuer()}, "resource": {res},
			"subject_token": {idToken}, "subject_token_type": {"urn:ietf:params:oauth:token-type:id_token"},
		})
	}
	status, body = exchange(idp.IssueIDToken("ada", "sso"), resource)
	if status != 200 || body["issued_token_type"] != "urn:ietf:params:oauth:token-type:id-jag" || body["token_type"] != "N_A" {
		t.Fatalf("token exchange: %d %v", status, body)
	}
	jag := body["access_token"].(string)
	if c := claimsOf(t, jag); c["client_id"] != "host" || c["resource"] != resource || c["aud"] != as.Issuer() || c["sub"] != "ada" {
		t.Errorf("ID-JAG claims %v", c)
	}
	if status, body := token(t, as, grant(jag), other.ID, other.Secret); status != 400 || body["error"] != "invalid_grant" {
		t.Errorf("an ID-JAG presented by another client: %d %v", status, body)
	}
	if status, body := token(t, as, url.Values{"grant_type": {jwtBearer}, "assertion": {jag}, "resource": {"https://other.example/mcp"}}, host.ID, host.Secret); status != 400 || body["error"] != "invalid_grant" {
		t.Errorf("an ID-JAG for another resource: %d %v", status, body)
	}
	if status, body := token(t, as, grant(jag), host.ID, host.Secret); status != 200 || claimsOf(t, body["access_token"].(string))["sub"] != "ada" {
		t.Errorf("the ID-JAG: %d %v", status, body)
	}
	idp.RegisterClient(authtest.Client{ID: "sso-2", AuthMethod: authtest.AuthNone})
	if status, body := exchange(idp.IssueIDToken("ada", "sso-2"), resource); status != 400 || body["error"] != "invalid_grant" {
		t.Errorf("an ID token of another client exchanged: %d %v", status, body)
	}
	if status, body := exchange("garbage", resource); status != 400 || body["error"] != "invalid_grant" {
		t.Errorf("a forged ID token exchanged: %d %v", status, body)
	}
}

// dpopProof makes a DPoP proof for the token endpoint of as.
func dpopProof(t *testing.T, key crypto.Signer, htu string, extra map[string]any) string {
	t.Helper()
	claims := map[string]any{"jti": rand.Text(), "htm": "POST", "htu": htu, "iat": time.Now().Unix()}
	for k, v := range extra {
		claims[k] = v
	}
	opts := (&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt")
	return sign(t, key, jose.ES256, opts, claims)
}

// DPoP at the token endpoint: a valid proof binds the token (cnf.jkt, the
// key's thumbprint; token_type DPoP; introspection says so), a public
// client's refresh token needs the same key, and proofs that are replayed,
// for another URL or without the server's nonce are refused.
func TestDPoPTokenRequests(t *testing.T) {
	as := authtest.NewServer(nil)
	defer as.Close()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tp, _ := (&jose.JSONWebKey{Key: key.Public()}).Thumbprint(crypto.SHA256)
	jkt := base64.RawURLEncoding.EncodeToString(tp)
	c := as.RegisterClient(authtest.Client{ID: "agent", AuthMethod: authtest.AuthSecretPost})
	cc := url.Values{"grant_type": {"client_credentials"}, "client_id": {c.ID}, "client_secret": {c.Secret}}
	proof := dpopProof(t, key, as.TokenEndpoint(), nil)
	status, body, _ := tokenWith(t, as, cc, http.Header{"Dpop": {proof}})
	if status != 200 || body["token_type"] != "DPoP" {
		t.Fatalf("%d %v", status, body)
	}
	if cnf, _ := claimsOf(t, body["access_token"].(string))["cnf"].(map[string]any); cnf["jkt"] != jkt {
		t.Errorf("cnf %v, want jkt %s", cnf, jkt)
	}
	for name, p := range map[string][]string{
		"replayed":        {proof},
		"another URL":     {dpopProof(t, key, as.Issuer()+"/other", nil)},
		"another method":  {dpopProof(t, key, as.TokenEndpoint(), map[string]any{"htm": "GET"})},
		"old":             {dpopProof(t, key, as.TokenEndpoint(), map[string]any{"iat": time.Now().Add(-6 * time.Minute).Unix()})},
		"two proofs":      {dpopProof(t, key, as.TokenEndpoint(), nil), dpopProof(t, key, as.TokenEndpoint(), nil)},
		"not a JWS":       {"x.y.z"},
		"symmetric (HS)":  {""},
		"wrong typ (JWT)": {sign(t, key, jose.ES256, (&jose.SignerOptions{EmbedJWK: true}).WithType("JWT"), map[string]any{"jti": "a", "htm": "POST", "htu": as.TokenEndpoint(), "iat": time.Now().Unix()})},
	} {
		if name == "symmetric (HS)" {
			s, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("0123456789abcdef0123456789abcdef")}, (&jose.SignerOptions{}).WithType("dpop+jwt"))
			p[0], _ = jwt.Signed(s).Claims(map[string]any{"jti": "a", "htm": "POST", "htu": as.TokenEndpoint(), "iat": time.Now().Unix()}).Serialize()
		}
		if status, body, _ := tokenWith(t, as, cc, http.Header{"Dpop": p}); status != 400 || body["error"] != "invalid_dpop_proof" {
			t.Errorf("%s: %d %v", name, status, body)
		}
	}

	// A public client's refresh token is bound to its key.
	pub := as.RegisterClient(authtest.Client{ID: "spa", AuthMethod: authtest.AuthNone, RedirectURIs: []string{"http://127.0.0.1/cb"}})
	q := authorize(t, as, url.Values{"response_type": {"code"}, "client_id": {pub.ID}, "redirect_uri": {"http://127.0.0.1/cb"},
		"state": {"s"}, "code_challenge": {challengeOf(verifier)}, "code_challenge_method": {"S256"}, "resource": {resource}})
	status, body, _ = tokenWith(t, as, url.Values{"grant_type": {"authorization_code"}, "client_id": {pub.ID}, "code": {q.Get("code")},
		"redirect_uri": {"http://127.0.0.1/cb"}, "code_verifier": {verifier}}, http.Header{"Dpop": {dpopProof(t, key, as.TokenEndpoint(), nil)}})
	if status != 200 || body["token_type"] != "DPoP" {
		t.Fatalf("code: %d %v", status, body)
	}
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	refresh := url.Values{"grant_type": {"refresh_token"}, "client_id": {pub.ID}, "refresh_token": {body["refresh_token"].(string)}}
	if status, body, _ := tokenWith(t, as, refresh, http.Header{"Dpop": {dpopProof(t, other, as.TokenEndpoint(), nil)}}); status != 400 || body["error"] != "invalid_grant" {
		t.Errorf("refresh with another key: %d %v", status, body)
	}

	// Introspection reports the binding.
	rsc := as.RegisterClient(authtest.Client{ID: "rs"})
	bound := as.Issue(authtest.Grant{Subject: "s", Resource: resource, KeyThumbprint: jkt})
	req, _ := http.NewRequest(http.MethodPost, as.IntrospectionEndpoint(), strings.NewReader(url.Values{"token": {bound}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(rsc.ID, rsc.Secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var ir map[string]any
	json.NewDecoder(resp.Body).Decode(&ir)
	resp.Body.Close()
	if ir["token_type"] != "DPoP" || ir["cnf"].(map[string]any)["jkt"] != jkt {
		t.Errorf("introspection %v", ir)
	}
}

// With RequireDPoPNonce, a proof without the current nonce is answered
// use_dpop_nonce with the nonce; with it, the token is issued.
func TestDPoPNonce(t *testing.T) {
	as := authtest.NewServer(&authtest.Options{RequireDPoPNonce: true})
	defer as.Close()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	c := as.RegisterClient(authtest.Client{ID: "agent", AuthMethod: authtest.AuthSecretPost})
	cc := url.Values{"grant_type": {"client_credentials"}, "client_id": {c.ID}, "client_secret": {c.Secret}}
	status, body, h := tokenWith(t, as, cc, http.Header{"Dpop": {dpopProof(t, key, as.TokenEndpoint(), nil)}})
	if status != 400 || body["error"] != "use_dpop_nonce" || h.Get("DPoP-Nonce") != as.DPoPNonce() {
		t.Fatalf("%d %v nonce %q", status, body, h.Get("DPoP-Nonce"))
	}
	nonce := h.Get("DPoP-Nonce")
	if status, body, _ := tokenWith(t, as, cc, http.Header{"Dpop": {dpopProof(t, key, as.TokenEndpoint(), map[string]any{"nonce": nonce})}}); status != 200 {
		t.Errorf("with the nonce: %d %v", status, body)
	}
	as.RotateDPoPNonce()
	if status, body, _ := tokenWith(t, as, cc, http.Header{"Dpop": {dpopProof(t, key, as.TokenEndpoint(), map[string]any{"nonce": nonce})}}); status != 400 || body["error"] != "use_dpop_nonce" {
		t.Errorf("a stale nonce: %d %v", status, body)
	}
}
