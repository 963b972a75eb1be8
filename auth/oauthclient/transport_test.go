package oauthclient

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/parley-mcp/parley/internal/testwait"
)

// post sends body to u through tr and returns the status and body. It
// waits testwait.FailAfter at most, and fails the test when that runs out:
// a transport that loops (re-authorizing forever past its step-up limit)
// fails in seconds, not at go test's timeout.
func post(t *testing.T, tr *Transport, u, body string) (int, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := tr.Client().Do(req)
	if ctx.Err() != nil {
		t.Fatalf("waited %v for the answer to a POST through the transport (err %v)", testwait.FailAfter, err)
	}
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

func newTransport(t *testing.T, cfg Config) *Transport {
	t.Helper()
	if cfg.Authorizer == nil {
		cfg.Authorizer = &HeadlessAuthorizer{}
	}
	tr, err := New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func mustOK(t *testing.T, tr *Transport, u, body string) {
	t.Helper()
	status, got, err := post(t, tr, u, body)
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	if status != 200 || got != body {
		t.Fatalf("request: status %d body %q, want 200 %q", status, got, body)
	}
}

func TestFullFlow(t *testing.T) {
	as := newFakeAS(t, func(as *fakeAS) { as.authMethods = []string{AuthMethodBasic, AuthMethodNone} })
	rs := newFakeRS(t, as, func(rs *fakeRS) { rs.challengeScope = "mcp:basic" })
	tr := newTransport(t, Config{})
	// The body must survive the retry after authorization.
	mustOK(t, tr, rs.url(), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)

	auth, token, reg := as.counts()
	if auth != 1 || token != 1 || reg != 1 {
		t.Fatalf("authorization, token and registration requests: %d %d %d, want 1 each", auth, token, reg)
	}
	q := as.authReqs[0]
	for k, want := range map[string]string{
		"response_type":         "code",
		"client_id":             "client-tok-1",
		"redirect_uri":          "http://127.0.0.1/callback",
		"code_challenge_method": "S256",
		"resource":              rs.url(),
		"scope":                 "mcp:basic",
	} {
		if got := q.Get(k); got != want {
			t.Errorf("authorization request %s = %q, want %q", k, got, want)
		}
	}
	if len(q.Get("state")) < 20 {
		t.Errorf("state %q is too short to be unguessable", q.Get("state"))
	}
	f := as.tokenReqs[0]
	if f.Get("resource") != rs.url() || f.Get("client_id") != "client-tok-1" || f.Get("redirect_uri") != "http://127.0.0.1/callback" {
		t.Errorf("token request %v lacks resource, client_id or redirect_uri", f)
	}
	reg0 := as.regReqs[0]
	if reg0["application_type"] != "native" || reg0["token_endpoint_auth_method"] != "none" {
		t.Errorf("registration %v: want application_type native, token_endpoint_auth_method none", reg0)
	}
	if gt, _ := reg0["grant_types"].([]any); !slices.Contains(gt, any("refresh_token")) {
		t.Errorf("registration grant_types %v lacks refresh_token", reg0["grant_types"])
	}

	// The next request carries the token from the start.
	mustOK(t, tr, rs.url(), "second")
	h := rs.authHeaders()
	if want := []string{"", "Bearer tok-1", "Bearer tok-1"}; !slices.Equal(h, want) {
		t.Errorf("Authorization headers %q, want %q", h, want)
	}
	if auth, _, _ := as.counts(); auth != 1 {
		t.Errorf("%d authorizations, want 1", auth)
	}
}

func TestPKCEVerifierMatchesChallenge(t *testing.T) {
	// The fake server checks BASE64URL(SHA256(verifier)) == challenge on
	// its own; here the verifier's form is checked too (RFC 7636 4.1).
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, as, nil)
	mustOK(t, newTransport(t, Config{}), rs.url(), "x")
	v := as.tokenReqs[0].Get("code_verifier")
	if len(v) < 43 || len(v) > 128 {
		t.Fatalf("code_verifier length %d, want 43..128", len(v))
	}
	if _, err := base64.RawURLEncoding.DecodeString(v); err != nil {
		t.Errorf("code_verifier %q is not base64url: %v", v, err)
	}
	if as.authReqs[0].Get("code_challenge") != oauth2.S256ChallengeFromVerifier(v) {
		t.Errorf("challenge is not S256 of the verifier")
	}
}

func TestIssuerMismatchInMetadata(t *testing.T) {
	as := newFakeAS(t, func(as *fakeAS) { as.issuerOverride = "https://attacker.example" })
	rs := newFakeRS(t, as, nil)
	_, _, err := post(t, newTransport(t, Config{}), rs.url(), "x")
	var ie *IssuerMismatchError
	if !errors.As(err, &ie) || !errors.Is(err, ErrIssuerMismatch) {
		t.Fatalf("err = %v, want an IssuerMismatchError", err)
	}
	if ie.Expected != as.issuer() || ie.Got != "https://attacker.example" {
		t.Errorf("error %+v", ie)
	}
	if auth, token, reg := as.counts(); auth+token+reg != 0 {
		t.Errorf("the client used the endpoints of mismatched metadata: %d %d %d requests", auth, token, reg)
	}
}

func TestResourceMismatch(t *testing.T) {
	as := newFakeAS(t, nil)
	for _, res := range []string{"https://evil.example/mcp", "", "RS/other"} {
		rs := newFakeRS(t, as, func(rs *fakeRS) { rs.resourceOverride = res })
		if res == "RS/other" {
			rs.resourceOverride = rs.srv.URL + "/other"
		}
		if res == "" {
			rs.resourceOverride = rs.srv.URL + "/mcpx" // a sibling, not an ancestor
		}
		_, _, err := post(t, newTransport(t, Config{}), rs.url(), "x")
		var re *ResourceMismatchError
		if !errors.As(err, &re) || !errors.Is(err, ErrResourceMismatch) {
			t.Fatalf("resource %q: err = %v, want a ResourceMismatchError", rs.resourceOverride, err)
		}
	}
	if as.metaHits != nil {
		t.Errorf("the client went on to the authorization server: %v", as.metaHits)
	}
}

func TestIssParameter(t *testing.T) {
	for _, tc := range []struct {
		name       string
		advertised bool
		mode       string
		missing    bool // want an IssuerMismatchError with Missing
		mismatch   bool // want an IssuerMismatchError
	}{
		{"supported", true, "correct", false, false},
		{"not advertised, absent", false, "omit", false, false},
		{"not advertised, correct", false, "correct", false, false},
		{"supported but missing", true, "omit", true, true},
		{"wrong issuer", true, "wrong", false, true},
		{"unexpected wrong issuer", false, "wrong", false, true},
		{"normalized (trailing slash)", true, "normalized", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := newFakeAS(t, func(as *fakeAS) { as.issSupported, as.issMode = tc.advertised, tc.mode })
			rs := newFakeRS(t, as, nil)
			_, _, err := post(t, newTransport(t, Config{}), rs.url(), "x")
			_, tokens, _ := as.counts()
			if !tc.mismatch {
				if err != nil || tokens != 1 {
					t.Fatalf("err = %v, %d token requests; want success", err, tokens)
				}
				return
			}
			var ie *IssuerMismatchError
			if !errors.As(err, &ie) || ie.Missing != tc.missing {
				t.Fatalf("err = %v, want an IssuerMismatchError (missing %v)", err, tc.missing)
			}
			if tokens != 0 {
				t.Errorf("the code was redeemed (%d token requests) despite the iss check", tokens)
			}
		})
	}
}

// tamper is an Authorizer that changes the redirect's parameters.
type tamper struct {
	HeadlessAuthorizer
	edit func(url.Values)
}

func (a *tamper) Authorize(ctx context.Context, u string) (url.Values, error) {
	q, err := a.HeadlessAuthorizer.Authorize(ctx, u)
	if err == nil {
		a.edit(q)
	}
	return q, err
}

func TestStateMismatch(t *testing.T) {
	for name, edit := range map[string]func(url.Values){
		"changed": func(q url.Values) { q.Set("state", q.Get("state")+"x") },
		"missing": func(q url.Values) { q.Del("state") },
	} {
		t.Run(name, func(t *testing.T) {
			as := newFakeAS(t, nil)
			rs := newFakeRS(t, as, nil)
			_, _, err := post(t, newTransport(t, Config{Authorizer: &tamper{edit: edit}}), rs.url(), "x")
			if !errors.Is(err, ErrStateMismatch) {
				t.Fatalf("err = %v, want ErrStateMismatch", err)
			}
			if _, tokens, _ := as.counts(); tokens != 0 {
				t.Errorf("the code was redeemed despite the state mismatch")
			}
		})
	}
}

func TestAuthorizationErrorResponse(t *testing.T) {
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, as, nil)
	deny := &tamper{edit: func(q url.Values) { q.Del("code"); q.Set("error", "access_denied") }}
	_, _, err := post(t, newTransport(t, Config{Authorizer: deny}), rs.url(), "x")
	var ae *AuthorizationError
	if !errors.As(err, &ae) || ae.Code != "access_denied" {
		t.Fatalf("err = %v, want an AuthorizationError access_denied", err)
	}
}

func TestPKCEUnsupported(t *testing.T) {
	as := newFakeAS(t, func(as *fakeAS) { as.noPKCE = true })
	rs := newFakeRS(t, as, nil)
	_, _, err := post(t, newTransport(t, Config{}), rs.url(), "x")
	if !errors.Is(err, ErrPKCEUnsupported) {
		t.Fatalf("err = %v, want ErrPKCEUnsupported", err)
	}
}

func TestNoAuthorizer(t *testing.T) {
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, as, nil)
	tr, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := post(t, tr, rs.url(), "x"); !errors.Is(err, ErrNoAuthorizer) {
		t.Fatalf("err = %v, want ErrNoAuthorizer", err)
	}
}

func TestStepUp(t *testing.T) {
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, as, func(rs *fakeRS) {
		rs.challengeScope = "mcp:basic"
		rs.prmScopes = []string{"mcp:profile"}
		rs.required = func(body string) []string {
			if body == "call" {
				return []string{"mcp:write"}
			}
			return []string{"mcp:basic"}
		}
	})
	tr := newTransport(t, Config{})
	mustOK(t, tr, rs.url(), "list")
	mustOK(t, tr, rs.url(), "call")
	if len(as.authReqs) != 2 {
		t.Fatalf("%d authorizations, want 2", len(as.authReqs))
	}
	if got := as.authReqs[1].Get("scope"); got != "mcp:basic mcp:write" {
		t.Errorf("step-up scope %q, want the union %q", got, "mcp:basic mcp:write")
	}
	// Both kinds of request work with the stepped-up token.
	mustOK(t, tr, rs.url(), "list")
	mustOK(t, tr, rs.url(), "call")
	if len(as.authReqs) != 2 {
		t.Errorf("%d authorizations after the step-up, want 2", len(as.authReqs))
	}
}

func TestStepUpLimit(t *testing.T) {
	for _, max := range []int{0, 1, 3, -1} {
		as := newFakeAS(t, nil)
		rs := newFakeRS(t, as, func(rs *fakeRS) { rs.alwaysForbid, rs.challengeScope = true, "mcp:admin" })
		tr := newTransport(t, Config{MaxStepUps: max})
		status, _, err := post(t, tr, rs.url(), "x")
		want := max
		if max == 0 {
			want = 2
		}
		if max < 0 {
			if err != nil || status != 403 {
				t.Errorf("MaxStepUps %d: status %d, err %v; want the 403 returned as is", max, status, err)
			}
			want = 0
		} else {
			var se *StepUpLimitError
			if !errors.As(err, &se) || !errors.Is(err, ErrStepUpLimit) || se.Limit != want {
				t.Fatalf("MaxStepUps %d: err = %v, want a StepUpLimitError with limit %d", max, err, want)
			}
		}
		if auth, _, _ := as.counts(); auth != 1+want {
			t.Errorf("MaxStepUps %d: %d authorizations, want %d", max, auth, 1+want)
		}
		// A later request does not start the loop again.
		post(t, tr, rs.url(), "y")
		if auth, _, _ := as.counts(); auth != 1+want {
			t.Errorf("MaxStepUps %d: a second request authorized again (%d in all)", max, auth)
		}
	}
}

func TestSelectScopes(t *testing.T) {
	prm := &ResourceMetadata{ScopesSupported: []string{"a", "b"}}
	offline := &ServerMetadata{ScopesSupported: []string{"a", "offline_access"}}
	plain := &ServerMetadata{ScopesSupported: []string{"a"}}
	for _, tc := range []struct {
		name      string
		challenge string
		prm       *ResourceMetadata
		prev      []string
		asm       *ServerMetadata
		want      []string
	}{
		{"challenge first", "x y", prm, nil, plain, []string{"x", "y"}},
		{"scopes_supported next", "", prm, nil, plain, []string{"a", "b"}},
		{"else omitted", "", &ResourceMetadata{}, nil, plain, nil},
		{"union with previous", "w", prm, []string{"x"}, plain, []string{"x", "w"}},
		{"no duplicates", "x", prm, []string{"x"}, plain, []string{"x"}},
		{"offline_access when supported", "x", prm, nil, offline, []string{"x", "offline_access"}},
		{"not alone", "", &ResourceMetadata{}, nil, offline, nil},
	} {
		if got := selectScopes(tc.challenge, tc.prm, tc.prev, tc.asm); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestTokenEndpointAuth(t *testing.T) {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("client-tok-1:s3cr%2Ft"))
	for _, tc := range []struct {
		method     string
		secret     string
		wantHeader string
		wantSecret string
	}{
		{AuthMethodBasic, "s3cr/t", basic, ""},
		{AuthMethodPost, "s3cr/t", "", "s3cr/t"},
		{AuthMethodNone, "", "", ""},
	} {
		t.Run(tc.method, func(t *testing.T) {
			as := newFakeAS(t, func(as *fakeAS) {
				as.authMethods = []string{tc.method}
				as.regAuthMethod, as.regSecret = tc.method, tc.secret
			})
			rs := newFakeRS(t, as, nil)
			mustOK(t, newTransport(t, Config{}), rs.url(), "x")
			if got := as.regReqs[0]["token_endpoint_auth_method"]; got != tc.method {
				t.Errorf("registration asked for %v, want %s", got, tc.method)
			}
			f := as.tokenReqs[0]
			if as.tokenAuth[0] != tc.wantHeader || f.Get("client_secret") != tc.wantSecret {
				t.Errorf("token request: Authorization %q, client_secret %q; want %q, %q", as.tokenAuth[0], f.Get("client_secret"), tc.wantHeader, tc.wantSecret)
			}
			if tc.method == AuthMethodBasic && f.Has("client_id") {
				t.Errorf("client_secret_basic also sent client_id in the body")
			}
			if tc.method != AuthMethodBasic && f.Get("client_id") != "client-tok-1" {
				t.Errorf("token request client_id %q", f.Get("client_id"))
			}
		})
	}
}

func TestPreRegisteredComesFirst(t *testing.T) {
	as := newFakeAS(t, func(as *fakeAS) { as.cimd = true; as.authMethods = []string{AuthMethodBasic} })
	rs := newFakeRS(t, as, nil)
	var asked []string
	tr := newTransport(t, Config{
		ClientIDMetadataURL: "https://client.example/meta.json",
		PreRegistered: func(issuer string) *ClientInfo {
			asked = append(asked, issuer)
			return &ClientInfo{ClientID: "pre", ClientSecret: "sec"}
		},
	})
	mustOK(t, tr, rs.url(), "x")
	if !slices.Equal(asked, []string{as.issuer()}) {
		t.Errorf("PreRegistered asked for %q, want the issuer", asked)
	}
	if _, _, reg := as.counts(); reg != 0 || as.authReqs[0].Get("client_id") != "pre" {
		t.Errorf("registrations %d, client_id %q; want the pre-registered client", reg, as.authReqs[0].Get("client_id"))
	}
	if want := "Basic " + base64.StdEncoding.EncodeToString([]byte("pre:sec")); as.tokenAuth[0] != want {
		t.Errorf("token request Authorization %q, want %q", as.tokenAuth[0], want)
	}
}

func TestClientIDMetadataDocument(t *testing.T) {
	for _, supported := range []bool{true, false} {
		as := newFakeAS(t, func(as *fakeAS) { as.cimd = supported })
		rs := newFakeRS(t, as, nil)
		mustOK(t, newTransport(t, Config{ClientIDMetadataURL: "https://client.example/meta.json"}), rs.url(), "x")
		_, _, reg := as.counts()
		id := as.authReqs[0].Get("client_id")
		if supported && (reg != 0 || id != "https://client.example/meta.json") {
			t.Errorf("CIMD supported: %d registrations, client_id %q", reg, id)
		}
		if !supported && (reg != 1 || id != "client-tok-1") {
			t.Errorf("CIMD not supported: %d registrations, client_id %q; want dynamic registration", reg, id)
		}
	}
	if _, err := New(&Config{ClientIDMetadataURL: "http://client.example/meta.json"}); err == nil {
		t.Error("New accepted a non-https client metadata URL")
	}
}

func TestRegistrationFailed(t *testing.T) {
	as := newFakeAS(t, func(as *fakeAS) { as.noRegistration = true })
	rs := newFakeRS(t, as, nil)
	_, _, err := post(t, newTransport(t, Config{}), rs.url(), "x")
	var re *RegistrationError
	if !errors.As(err, &re) || !errors.Is(err, ErrRegistrationFailed) || re.Issuer != as.issuer() {
		t.Fatalf("err = %v, want a RegistrationError for %s", err, as.issuer())
	}
}

func TestRegistrationRefused(t *testing.T) {
	as := newFakeAS(t, func(as *fakeAS) { as.regStatus = 400 })
	rs := newFakeRS(t, as, nil)
	_, _, err := post(t, newTransport(t, Config{}), rs.url(), "x")
	var re *RegistrationError
	var he *HTTPError
	if !errors.As(err, &re) || !errors.As(err, &he) || he.StatusCode != 400 {
		t.Fatalf("err = %v, want a RegistrationError with the 400", err)
	}
	if auth, _, _ := as.counts(); auth != 0 {
		t.Errorf("authorized without a client id")
	}
}

func TestBadTokenResponses(t *testing.T) {
	for body, want := range map[string]string{
		`{"token_type":"Bearer"}`:                  "no access_token",
		`{"access_token":"a","token_type":"DPoP"}`: "carried no DPoP proof",
		`{"access_token":"a","token_type":"MAC"}`:  "not supported",
		`not json`: "token response",
		`{"access_token":"a","expires_in":"1e400"}`:        "",
		`{"access_token":"a","expires_in":99999999999999}`: "",
	} {
		as := newFakeAS(t, func(as *fakeAS) { as.tokenBody = body })
		rs := newFakeRS(t, as, nil)
		_, _, err := post(t, newTransport(t, Config{}), rs.url(), "x")
		if want == "" {
			// The token is taken (and refused by this server, which
			// did not issue it): what matters is no panic, no error.
			if err != nil {
				t.Errorf("%s: %v", body, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", body, err, want)
		}
	}
}

func TestTokenEndpointError(t *testing.T) {
	as := newFakeAS(t, func(as *fakeAS) {
		as.tokenStatus, as.tokenBody = 400, `{"error":"invalid_grant","error_description":"code expired"}`
	})
	rs := newFakeRS(t, as, nil)
	_, _, err := post(t, newTransport(t, Config{}), rs.url(), "x")
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" || re.ErrorDescription != "code expired" {
		t.Fatalf("err = %v, want an oauth2.RetrieveError invalid_grant", err)
	}
}

func TestMigrationReRegistersAndStoreIsKeyedByIssuer(t *testing.T) {
	as1 := newFakeAS(t, func(as *fakeAS) { as.tokenPrefix = "one" })
	as2 := newFakeAS(t, func(as *fakeAS) { as.tokenPrefix = "two" })
	rs := newFakeRS(t, as1, nil)
	store := NewMemoryStore()
	tr := newTransport(t, Config{Store: store})
	mustOK(t, tr, rs.url(), "x")
	rs.setAS(as2) // the old token is no longer accepted: as2 did not issue it
	mustOK(t, tr, rs.url(), "y")

	if _, _, reg := as2.counts(); reg != 1 {
		t.Fatalf("%d registrations at the new authorization server, want 1", reg)
	}
	if id := as2.authReqs[0].Get("client_id"); id != "client-two-1" {
		t.Errorf("client_id at the new server %q: the old server's client id must not travel", id)
	}
	if got := store.Issuers(); !slices.Equal(got, []string{as1.issuer(), as2.issuer()}) && !slices.Equal(got, []string{as2.issuer(), as1.issuer()}) {
		t.Fatalf("store issuers %q", got)
	}
	c1, _ := store.Load(context.Background(), as1.issuer())
	c2, _ := store.Load(context.Background(), as2.issuer())
	if c1.Client.ClientID != "client-one-1" || c2.Client.ClientID != "client-two-1" {
		t.Errorf("clients %q and %q, want each server's own", c1.Client.ClientID, c2.Client.ClientID)
	}
	if c1.Tokens[rs.url()].AccessToken != "one-1" || c2.Tokens[rs.url()].AccessToken != "two-1" {
		t.Errorf("tokens are not kept by issuer: %v %v", c1.Tokens, c2.Tokens)
	}
}

func TestStoredRegistrationIsReused(t *testing.T) {
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, as, nil)
	store := NewMemoryStore()
	mustOK(t, newTransport(t, Config{Store: store}), rs.url(), "x")
	// A new transport (a restarted client) with the same store.
	mustOK(t, newTransport(t, Config{Store: store}), rs.url(), "y")
	if _, _, reg := as.counts(); reg != 1 {
		t.Errorf("%d registrations, want 1: the stored one is reused", reg)
	}
}

// TestStoredTokenIsReused: a restarted client whose Store persists (a
// command-line client run twice) sends its first request without a token,
// since it has not learnt the server's issuer yet; the 401 is answered
// with the stored token, not with a new login.
func TestStoredTokenIsReused(t *testing.T) {
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, as, nil)
	store := NewMemoryStore()
	mustOK(t, newTransport(t, Config{Store: store}), rs.url(), "x")
	mustOK(t, newTransport(t, Config{Store: store}), rs.url(), "y")
	if auth, token, _ := as.counts(); auth != 1 || token != 1 {
		t.Fatalf("%d authorizations, %d token requests; want 1 and 1: the stored token is reused", auth, token)
	}
	if h, want := rs.authHeaders(), []string{"", "Bearer tok-1", "", "Bearer tok-1"}; !slices.Equal(h, want) {
		t.Errorf("Authorization headers %q, want %q", h, want)
	}
}

// TestStoredExpiredTokenIsRefreshed: the same, with a stored token that
// has expired since: it is refreshed, without a login.
func TestStoredExpiredTokenIsRefreshed(t *testing.T) {
	as := newFakeAS(t, func(as *fakeAS) { as.refreshTokens, as.expiresIn = true, 3600 })
	rs := newFakeRS(t, as, nil)
	store := NewMemoryStore()
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	mustOK(t, newTransport(t, Config{Store: store, Now: clk.now}), rs.url(), "x")
	clk.add(2 * time.Hour)
	mustOK(t, newTransport(t, Config{Store: store, Now: clk.now}), rs.url(), "y")
	if auth, token, _ := as.counts(); auth != 1 || token != 2 || as.tokenReqs[1].Get("grant_type") != "refresh_token" {
		t.Fatalf("%d authorizations, %d token requests; want 1 and 2 (a refresh)", auth, token)
	}
}

// clock is a settable clock for expiry tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestRefreshWhenExpired(t *testing.T) {
	as := newFakeAS(t, func(as *fakeAS) {
		as.refreshTokens, as.expiresIn = true, 3600
		as.scopesSupported = []string{"mcp", "offline_access"}
	})
	rs := newFakeRS(t, as, func(rs *fakeRS) { rs.challengeScope = "mcp" })
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	tr := newTransport(t, Config{Now: clk.now})
	mustOK(t, tr, rs.url(), "x")
	if got := as.authReqs[0].Get("scope"); got != "mcp offline_access" {
		t.Errorf("scope %q, want offline_access added", got)
	}
	clk.add(time.Hour)
	mustOK(t, tr, rs.url(), "y")
	if auth, token, _ := as.counts(); auth != 1 || token != 2 {
		t.Fatalf("%d authorizations, %d token requests; want 1 and 2 (a refresh)", auth, token)
	}
	f := as.tokenReqs[1]
	if f.Get("grant_type") != "refresh_token" || f.Get("refresh_token") != "rtok-1" || f.Get("resource") != rs.url() {
		t.Errorf("refresh request %v", f)
	}
	if h := rs.authHeaders(); h[len(h)-1] != "Bearer tok-2" {
		t.Errorf("the refreshed token was not sent: %q", h)
	}
}

func TestRefreshOn401ThenFullAuthorization(t *testing.T) {
	as := newFakeAS(t, func(as *fakeAS) { as.refreshTokens = true })
	rs := newFakeRS(t, as, nil)
	tr := newTransport(t, Config{})
	mustOK(t, tr, rs.url(), "x")
	rs.mu.Lock()
	rs.revoked["tok-1"] = true
	rs.mu.Unlock()
	mustOK(t, tr, rs.url(), "y")
	if auth, token, _ := as.counts(); auth != 1 || token != 2 || as.tokenReqs[1].Get("grant_type") != "refresh_token" {
		t.Fatalf("%d authorizations, %d token requests: want the 401 answered with a refresh", auth, token)
	}
	// A refused refresh falls back to a new authorization.
	rs.mu.Lock()
	rs.revoked["tok-2"] = true
	rs.mu.Unlock()
	as.mu.Lock()
	as.refreshBad = true
	as.mu.Unlock()
	mustOK(t, tr, rs.url(), "z")
	if auth, _, _ := as.counts(); auth != 2 {
		t.Errorf("%d authorizations, want 2 after the refused refresh", auth)
	}
}

func TestConcurrentRequestsAuthorizeOnce(t *testing.T) {
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, as, nil)
	tr := newTransport(t, Config{})
	// Concurrent requests wait for one authorization: a deadline, so that
	// requests left waiting for ever fail the test in seconds. They report
	// on a channel rather than through t, since a stuck one may outlive
	// the test.
	const n = 8
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	results := make(chan error, n)
	for range n {
		go func() {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, rs.url(), strings.NewReader("x"))
			if err != nil {
				results <- err
				return
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := tr.Client().Do(req)
			if err != nil {
				results <- err
				return
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
			results <- err
		}()
	}
	for i := range n {
		select {
		case err := <-results:
			if err != nil {
				t.Errorf("request: %v", err)
			}
		case <-ctx.Done():
			t.Fatalf("%d of %d concurrent requests still waiting for their authorization after 10s", n-i, n)
		}
	}
	if auth, _, reg := as.counts(); auth != 1 || reg != 1 {
		t.Errorf("%d authorizations, %d registrations for concurrent requests; want 1", auth, reg)
	}
}
