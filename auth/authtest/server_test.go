package authtest_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-mcp/parley/auth/authtest"
	"github.com/parley-mcp/parley/auth/jwtverify"
	"github.com/parley-mcp/parley/auth/resourceserver"
)

const (
	resource = "https://mcp.example.com/mcp"
	verifier = "a-code-verifier-of-at-least-forty-three-characters-0123456789"
)

func challengeOf(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// noFollow is an HTTP client that returns redirects instead of following
// them.
var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// authorize runs the authorization endpoint and returns the query of the
// redirect it answers with.
func authorize(t *testing.T, as *authtest.Server, params url.Values) url.Values {
	t.Helper()
	resp, err := noFollow.Get(as.AuthorizationEndpoint() + "?" + params.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize: %d", resp.StatusCode)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return loc.Query()
}

// token posts to the token endpoint and returns the status and the JSON
// body.
func token(t *testing.T, as *authtest.Server, form url.Values, basic ...string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, as.TokenEndpoint(), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if len(basic) == 2 {
		req.SetBasicAuth(url.QueryEscape(basic[0]), url.QueryEscape(basic[1]))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("token response %s: %v", b, err)
	}
	if resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("token response without Cache-Control: no-store")
	}
	return resp.StatusCode, body
}

func register(t *testing.T, as *authtest.Server, metadata string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(as.RegistrationEndpoint(), "application/json", strings.NewReader(metadata))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

// A public client registers itself, runs the authorization code grant
// with PKCE and a resource indicator, and refreshes; a resource server
// verifies the tokens.
func TestAuthorizationCodeFlow(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	as := authtest.NewServer(&authtest.Options{Subject: "ada", ScopesSupported: []string{"db", "admin"}, Now: clock})
	defer as.Close()

	status, reg := register(t, as, `{"redirect_uris":["http://127.0.0.1/callback"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],"client_name":"test"}`)
	if status != http.StatusCreated || reg["client_id"] == "" || reg["client_secret"] != nil || reg["token_endpoint_auth_method"] != "none" {
		t.Fatalf("registration: %d %v", status, reg)
	}
	clientID := reg["client_id"].(string)

	// Any port of a loopback redirect URI (RFC 8252 §7.3).
	redirect := "http://127.0.0.1:49152/callback"
	q := authorize(t, as, url.Values{
		"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect},
		"state": {"xyz"}, "code_challenge": {challengeOf(verifier)}, "code_challenge_method": {"S256"},
		"scope": {"db"}, "resource": {resource},
	})
	if q.Get("state") != "xyz" || q.Get("iss") != as.Issuer() || q.Get("code") == "" {
		t.Fatalf("redirect query %v", q)
	}
	exchange := url.Values{
		"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "redirect_uri": {redirect},
		"client_id": {clientID}, "code_verifier": {verifier}, "resource": {resource},
	}
	status, tok := token(t, as, exchange)
	if status != 200 || tok["token_type"] != "Bearer" || tok["scope"] != "db" || tok["refresh_token"] == nil || tok["expires_in"] != float64(3600) {
		t.Fatalf("token: %d %v", status, tok)
	}

	v, err := jwtverify.New(&jwtverify.Options{Issuer: as.Issuer(), Audience: resource, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	info, err := v.Verify(context.Background(), tok["access_token"].(string))
	if err != nil || info.Subject != "ada" || info.ClientID != clientID || !slices.Equal(info.Scopes, []string{"db"}) {
		t.Fatalf("verified %+v %v", info, err)
	}

	// The code is single-use.
	if status, body := token(t, as, exchange); status != 400 || body["error"] != "invalid_grant" {
		t.Errorf("second exchange: %d %v", status, body)
	}

	// Refresh, with a narrower scope: a new access token and a new
	// refresh token; the old refresh token is spent.
	refresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {clientID}}
	now.Add(int64(2 * time.Hour))
	status, again := token(t, as, refresh)
	if status != 200 || again["refresh_token"] == tok["refresh_token"] {
		t.Fatalf("refresh: %d %v", status, again)
	}
	if info, err := v.Verify(context.Background(), again["access_token"].(string)); err != nil || info.Subject != "ada" {
		t.Errorf("refreshed token: %+v %v", info, err)
	}
	if status, body := token(t, as, refresh); status != 400 || body["error"] != "invalid_grant" {
		t.Errorf("spent refresh token: %d %v", status, body)
	}
	wider := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {again["refresh_token"].(string)}, "client_id": {clientID}, "scope": {"db admin"}}
	if status, body := token(t, as, wider); status != 400 || body["error"] != "invalid_scope" {
		t.Errorf("widening refresh: %d %v", status, body)
	}
}

func TestAuthorizationCodeRefusals(t *testing.T) {
	var now atomic.Int64
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	as := authtest.NewServer(&authtest.Options{ScopesSupported: []string{"db"}, Now: clock})
	defer as.Close()
	pub := as.RegisterClient(authtest.Client{AuthMethod: authtest.AuthNone, RedirectURIs: []string{"https://app.example/cb"}})
	base := func() url.Values {
		return url.Values{"response_type": {"code"}, "client_id": {pub.ID}, "redirect_uri": {"https://app.example/cb"}, "state": {"s"},
			"code_challenge": {challengeOf(verifier)}, "code_challenge_method": {"S256"}, "resource": {resource}}
	}
	// Errors redirected to the client.
	for name, tc := range map[string]struct {
		mod  func(url.Values)
		want string
	}{
		"no PKCE":        {func(v url.Values) { v.Del("code_challenge") }, "invalid_request"},
		"plain PKCE":     {func(v url.Values) { v.Set("code_challenge_method", "plain") }, "invalid_request"},
		"token response": {func(v url.Values) { v.Set("response_type", "token") }, "unsupported_response_type"},
		"unknown scope":  {func(v url.Values) { v.Set("scope", "db root") }, "invalid_scope"},
		"bad resource":   {func(v url.Values) { v.Set("resource", "https://x.example/#frag") }, "invalid_target"},
		"relative":       {func(v url.Values) { v.Set("resource", "/mcp") }, "invalid_target"},
	} {
		p := base()
		tc.mod(p)
		if q := authorize(t, as, p); q.Get("error") != tc.want || q.Get("state") != "s" || q.Get("iss") != as.Issuer() || q.Get("code") != "" {
			t.Errorf("%s: %v", name, q)
		}
	}
	// Errors shown, not redirected: the redirect URI cannot be trusted.
	for name, mod := range map[string]func(url.Values){
		"unknown client":     func(v url.Values) { v.Set("client_id", "nobody") },
		"unregistered uri":   func(v url.Values) { v.Set("redirect_uri", "https://evil.example/cb") },
		"uri path differs":   func(v url.Values) { v.Set("redirect_uri", "https://app.example/cb2") },
		"https port differs": func(v url.Values) { v.Set("redirect_uri", "https://app.example:8443/cb") },
	} {
		p := base()
		mod(p)
		resp, err := noFollow.Get(as.AuthorizationEndpoint() + "?" + p.Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 || resp.Header.Get("Location") != "" {
			t.Errorf("%s: %d %s", name, resp.StatusCode, resp.Header.Get("Location"))
		}
	}

	// The user says no.
	as.SetSubject("")
	if q := authorize(t, as, base()); q.Get("error") != "access_denied" || q.Get("state") != "s" || q.Get("code") != "" {
		t.Errorf("denied: %v", q)
	}
	as.SetSubject("ada")

	code := func() string { return authorize(t, as, base()).Get("code") }
	exchange := func(c string) url.Values {
		return url.Values{"grant_type": {"authorization_code"}, "code": {c}, "redirect_uri": {"https://app.example/cb"}, "client_id": {pub.ID}, "code_verifier": {verifier}}
	}
	for name, tc := range map[string]struct {
		mod  func(url.Values)
		want string
	}{
		"wrong verifier":    {func(v url.Values) { v.Set("code_verifier", strings.Repeat("x", 43)) }, "invalid_grant"},
		"short verifier":    {func(v url.Values) { v.Set("code_verifier", "abc") }, "invalid_grant"},
		"no verifier":       {func(v url.Values) { v.Del("code_verifier") }, "invalid_grant"},
		"other redirect":    {func(v url.Values) { v.Set("redirect_uri", "https://app.example/other") }, "invalid_grant"},
		"other resource":    {func(v url.Values) { v.Set("resource", "https://other.example/mcp") }, "invalid_target"},
		"other client":      {func(v url.Values) { v.Set("client_id", "nobody") }, "invalid_client"},
		"unknown grant":     {func(v url.Values) { v.Set("grant_type", "password") }, "unsupported_grant_type"},
		"secret for public": {func(v url.Values) { v.Set("client_secret", "x") }, "invalid_client"},
	} {
		f := exchange(code())
		tc.mod(f)
		if status, body := token(t, as, f); body["error"] != tc.want || status < 400 {
			t.Errorf("%s: %d %v", name, status, body)
		}
	}
	// Codes expire after a minute.
	c := code()
	now.Add(int64(time.Minute))
	if _, body := token(t, as, exchange(c)); body["error"] != "invalid_grant" {
		t.Errorf("expired code: %v", body)
	}
	// Without a resource in the token request, the authorized one is the
	// audience.
	now.Add(-int64(time.Minute))
	_, tok := token(t, as, exchange(code()))
	v, _ := jwtverify.New(&jwtverify.Options{Issuer: as.Issuer(), Audience: resource, Now: clock})
	if _, err := v.Verify(context.Background(), tok["access_token"].(string)); err != nil {
		t.Errorf("audience from the authorization request: %v", err)
	}
}

// Confidential clients authenticate by the method they registered, and
// only by it.
func TestClientAuthentication(t *testing.T) {
	as := authtest.NewServer(nil)
	defer as.Close()
	for _, method := range []string{authtest.AuthSecretBasic, authtest.AuthSecretPost} {
		t.Run(method, func(t *testing.T) {
			status, reg := register(t, as, `{"redirect_uris":["https://app.example/cb"],"token_endpoint_auth_method":"`+method+`"}`)
			if status != 201 || reg["client_secret"] == nil || reg["client_secret_expires_at"] != float64(0) {
				t.Fatalf("%d %v", status, reg)
			}
			id, secret := reg["client_id"].(string), reg["client_secret"].(string)
			q := authorize(t, as, url.Values{"response_type": {"code"}, "client_id": {id}, "code_challenge": {challengeOf(verifier)}, "code_challenge_method": {"S256"}})
			form := url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "code_verifier": {verifier}}
			var creds []string
			wrong := url.Values{"client_id": {id}, "client_secret": {secret}}
			if method == authtest.AuthSecretBasic {
				creds = []string{id, secret}
			} else {
				form.Set("client_id", id)
				form.Set("client_secret", secret)
				wrong, creds = nil, nil
			}
			// The other method, or a wrong secret, is refused first (and
			// burns nothing: the code is checked after the client).
			bad := url.Values{"grant_type": {"authorization_code"}, "code": {"x"}, "code_verifier": {verifier}}
			if method == authtest.AuthSecretBasic {
				for k, v := range wrong {
					bad[k] = v
				}
				if status, body := token(t, as, bad); status != 401 || body["error"] != "invalid_client" {
					t.Errorf("post for a basic client: %d %v", status, body)
				}
				if status, body := token(t, as, bad, id, secret+"x"); body["error"] == nil || status < 400 {
					t.Errorf("wrong secret: %d %v", status, body)
				}
			} else {
				if status, body := token(t, as, bad, id, secret); status != 401 || body["error"] != "invalid_client" {
					t.Errorf("basic for a post client: %d %v", status, body)
				}
			}
			if status, body := token(t, as, form, creds...); status != 200 || body["access_token"] == nil {
				t.Errorf("exchange: %d %v", status, body)
			}
		})
	}
}

func TestRegistrationRefusals(t *testing.T) {
	as := authtest.NewServer(nil)
	defer as.Close()
	for body, want := range map[string]string{
		`{}`:                              "invalid_redirect_uri",
		`{"redirect_uris":["/relative"]}`: "invalid_redirect_uri",
		`{"redirect_uris":["https://a.example/cb#f"]}`:                                              "invalid_redirect_uri",
		`{"redirect_uris":["https://a.example/cb"],"token_endpoint_auth_method":"private_key_jwt"}`: "invalid_client_metadata",
		`{"redirect_uris":["https://a.example/cb"],"grant_types":["password"]}`:                     "invalid_client_metadata",
		`not json`: "invalid_client_metadata",
	} {
		if status, got := register(t, as, body); status != 400 || got["error"] != want {
			t.Errorf("%s: %d %v", body, status, got)
		}
	}
}

// Issue, SetClock and Revoke as a resource server sees them through
// introspection.
func TestIssueAndIntrospect(t *testing.T) {
	as := authtest.NewServer(nil)
	defer as.Close()
	start := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	as.SetClock(func() time.Time { return start })
	rs := as.RegisterClient(authtest.Client{})
	in, err := resourceserver.NewIntrospector(&resourceserver.IntrospectionOptions{
		Endpoint: as.IntrospectionEndpoint(), ClientID: rs.ID, ClientSecret: rs.Secret, Audience: resource,
		Now: func() time.Time { return start },
	})
	if err != nil {
		t.Fatal(err)
	}
	tok := as.Issue(authtest.Grant{Subject: "ada", ClientID: "app", Resource: resource, Scopes: []string{"db"}, TTL: time.Minute})
	if info, err := in.Verify(context.Background(), tok); err != nil || info.Subject != "ada" || !info.Expiry.Equal(start.Add(time.Minute)) {
		t.Fatalf("%+v %v", info, err)
	}
	// The AS's clock passes exp: inactive.
	as.SetClock(func() time.Time { return start.Add(time.Minute) })
	if _, err := in.Verify(context.Background(), tok); !errors.Is(err, resourceserver.ErrInvalidToken) {
		t.Errorf("after exp: %v", err)
	}
	// A public client may not introspect.
	pub := as.RegisterClient(authtest.Client{AuthMethod: authtest.AuthNone})
	resp, err := http.PostForm(as.IntrospectionEndpoint(), url.Values{"token": {tok}, "client_id": {pub.ID}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("public client introspected: %d", resp.StatusCode)
	}
}
