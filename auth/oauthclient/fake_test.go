package oauthclient

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fakeAS is an authorization server for tests. Its fields configure it
// before the first request; its records say what the client sent.
type fakeAS struct {
	srv *httptest.Server

	prefix          string // path of the issuer, such as "/tenant1"
	metadataPath    string // default: the RFC 8414 path for the issuer
	issuerOverride  string // served as metadata issuer instead of the real one
	issSupported    bool
	issMode         string // "correct" (default), "omit", "wrong", "normalized"
	cimd            bool
	noRegistration  bool
	noPKCE          bool
	noAuthEndpoint  bool     // no authorization_endpoint in the metadata
	authMethods     []string // token_endpoint_auth_methods_supported
	regAuthMethod   string   // what registration answers with
	regSecret       string
	regStatus       int    // answer registrations with this status instead
	tokenBody       string // answer token requests with this body instead
	tokenStatus     int    // and this status (default 200)
	scopesSupported []string
	refreshTokens   bool // issue refresh tokens
	expiresIn       int
	tokenPrefix     string

	// For the plain-HTTP refusals: the server as it is named in URLs, and
	// where its metadata sends the client. A test routes these names to
	// srv (or a plain twin) with routedClient.
	tls              bool   // serve over TLS (httptest.NewTLSServer)
	origin           string // the issuer's scheme and host instead of srv.URL
	authEndpoint     string // authorization_endpoint instead of the issuer's /authorize
	tokenEndpoint    string // token_endpoint instead of the issuer's /token
	regEndpoint      string // registration_endpoint instead of the issuer's /register
	metadataRedirect string // redirect metadata requests that come over TLS here
	tokenRedirect    string // redirect (307) token requests that come over TLS here

	mu         sync.Mutex
	reqs       []string // "scheme METHOD path" of every request
	challenge  string   // PKCE challenge of the last authorization request
	authReqs   []url.Values
	tokenReqs  []url.Values
	tokenAuth  []string // Authorization header of each token request
	regReqs    []map[string]any
	metaHits   []string
	issued     map[string][]string // access token -> scopes
	refreshes  map[string][]string // refresh token -> scopes
	numTokens  int
	refreshBad bool // refuse refresh grants
}

func newFakeAS(t *testing.T, configure func(*fakeAS)) *fakeAS {
	t.Helper()
	as := &fakeAS{issued: map[string][]string{}, refreshes: map[string][]string{}, tokenPrefix: "tok", issSupported: true}
	if configure != nil {
		configure(as)
	}
	if as.tls {
		as.srv = httptest.NewTLSServer(http.HandlerFunc(as.serve))
	} else {
		as.srv = httptest.NewServer(http.HandlerFunc(as.serve))
	}
	t.Cleanup(as.srv.Close)
	return as
}

// plainTwin serves as over plain HTTP on a second listener, with the same
// state: the other end of a downgrade.
func (as *fakeAS) plainTwin(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(as.serve))
	t.Cleanup(srv.Close)
	return srv
}

func (as *fakeAS) issuer() string {
	if as.origin != "" {
		return as.origin + as.prefix
	}
	return as.srv.URL + as.prefix
}

// requests returns "scheme METHOD path" of every request as received.
func (as *fakeAS) requests() []string {
	as.mu.Lock()
	defer as.mu.Unlock()
	return slices.Clone(as.reqs)
}

// routedClient returns a client that connects to routes[host] for a URL
// with that host, whatever its port, and to the host itself otherwise. It
// trusts the routed TLS servers' certificate, which httptest issues for
// example.com (and loopback): a TLS route must be named example.com.
func routedClient(t *testing.T, routes map[string]*httptest.Server) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	for _, s := range routes {
		if c := s.Certificate(); c != nil {
			pool.AddCert(c)
		}
	}
	var d net.Dialer
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			if s, ok := routes[host]; ok {
				addr = s.Listener.Addr().String()
			}
			return d.DialContext(ctx, network, addr)
		},
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func (as *fakeAS) serve(w http.ResponseWriter, r *http.Request) {
	mdPath := as.metadataPath
	if mdPath == "" {
		mdPath = "/.well-known/oauth-authorization-server" + as.prefix
	}
	as.mu.Lock()
	defer as.mu.Unlock()
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	as.reqs = append(as.reqs, scheme+" "+r.Method+" "+r.URL.Path)
	switch {
	case r.Method == http.MethodGet && r.URL.Path == mdPath && r.TLS != nil && as.metadataRedirect != "":
		http.Redirect(w, r, as.metadataRedirect, http.StatusFound)
	case r.Method == http.MethodPost && r.URL.Path == as.prefix+"/token" && r.TLS != nil && as.tokenRedirect != "":
		http.Redirect(w, r, as.tokenRedirect, http.StatusTemporaryRedirect)
	case r.Method == http.MethodGet && r.URL.Path == mdPath:
		as.metaHits = append(as.metaHits, r.URL.Path)
		iss := as.issuer()
		if as.issuerOverride != "" {
			iss = as.issuerOverride
		}
		md := map[string]any{
			"issuer":                   iss,
			"authorization_endpoint":   cmp.Or(as.authEndpoint, as.issuer()+"/authorize"),
			"token_endpoint":           cmp.Or(as.tokenEndpoint, as.issuer()+"/token"),
			"response_types_supported": []string{"code"},
		}
		if !as.noPKCE {
			md["code_challenge_methods_supported"] = []string{"S256"}
		}
		if as.noAuthEndpoint {
			delete(md, "authorization_endpoint")
		}
		if !as.noRegistration {
			md["registration_endpoint"] = cmp.Or(as.regEndpoint, as.issuer()+"/register")
		}
		if as.issSupported {
			md["authorization_response_iss_parameter_supported"] = true
		}
		if as.cimd {
			md["client_id_metadata_document_supported"] = true
		}
		if as.authMethods != nil {
			md["token_endpoint_auth_methods_supported"] = as.authMethods
		}
		if as.scopesSupported != nil {
			md["scopes_supported"] = as.scopesSupported
		}
		writeJSON(w, 200, md)
	case r.Method == http.MethodGet && r.URL.Path == as.prefix+"/authorize":
		q := r.URL.Query()
		as.authReqs = append(as.authReqs, q)
		if q.Get("code_challenge_method") != "S256" {
			http.Error(w, "PKCE S256 required", 400)
			return
		}
		as.challenge = q.Get("code_challenge")
		red, err := url.Parse(q.Get("redirect_uri"))
		if err != nil {
			http.Error(w, "bad redirect_uri", 400)
			return
		}
		rq := red.Query()
		rq.Set("code", "code-"+q.Get("scope"))
		rq.Set("state", q.Get("state"))
		switch as.issMode {
		case "", "correct":
			rq.Set("iss", as.issuer())
		case "wrong":
			rq.Set("iss", "https://evil.example")
		case "normalized":
			rq.Set("iss", as.issuer()+"/")
		}
		red.RawQuery = rq.Encode()
		http.Redirect(w, r, red.String(), http.StatusFound)
	case r.Method == http.MethodPost && r.URL.Path == as.prefix+"/token":
		r.ParseForm()
		f := r.PostForm
		as.tokenReqs = append(as.tokenReqs, f)
		as.tokenAuth = append(as.tokenAuth, r.Header.Get("Authorization"))
		var scopes []string
		switch f.Get("grant_type") {
		case "authorization_code":
			// Independent S256 check: BASE64URL(SHA256(verifier)).
			sum := sha256.Sum256([]byte(f.Get("code_verifier")))
			if base64.RawURLEncoding.EncodeToString(sum[:]) != as.challenge || as.challenge == "" {
				writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "PKCE verifier mismatch"})
				return
			}
			scopes = strings.Fields(strings.TrimPrefix(f.Get("code"), "code-"))
		case "refresh_token":
			s, ok := as.refreshes[f.Get("refresh_token")]
			if !ok || as.refreshBad {
				writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
				return
			}
			scopes = s
		case GrantClientCredentials, GrantJWTBearer:
			scopes = strings.Fields(f.Get("scope"))
		default:
			writeJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
			return
		}
		if as.tokenBody != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(cmp.Or(as.tokenStatus, 200))
			w.Write([]byte(as.tokenBody))
			return
		}
		as.numTokens++
		at := fmt.Sprintf("%s-%d", as.tokenPrefix, as.numTokens)
		as.issued[at] = scopes
		resp := map[string]any{"access_token": at, "token_type": "Bearer"}
		if as.expiresIn > 0 {
			resp["expires_in"] = as.expiresIn
		}
		if as.refreshTokens {
			rt := "r" + at
			as.refreshes[rt] = scopes
			resp["refresh_token"] = rt
		}
		writeJSON(w, 200, resp)
	case r.Method == http.MethodPost && r.URL.Path == as.prefix+"/register" && !as.noRegistration:
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		as.regReqs = append(as.regReqs, body)
		if as.regStatus != 0 {
			writeJSON(w, as.regStatus, map[string]string{"error": "invalid_client_metadata"})
			return
		}
		resp := map[string]any{"client_id": fmt.Sprintf("client-%s-%d", as.tokenPrefix, len(as.regReqs))}
		if as.regSecret != "" {
			resp["client_secret"] = as.regSecret
		}
		if as.regAuthMethod != "" {
			resp["token_endpoint_auth_method"] = as.regAuthMethod
		}
		writeJSON(w, 201, resp)
	default:
		http.NotFound(w, r)
	}
}

func (as *fakeAS) tokenValid(tok string) ([]string, bool) {
	as.mu.Lock()
	defer as.mu.Unlock()
	s, ok := as.issued[tok]
	return s, ok
}

func (as *fakeAS) counts() (auth, token, reg int) {
	as.mu.Lock()
	defer as.mu.Unlock()
	return len(as.authReqs), len(as.tokenReqs), len(as.regReqs)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// fakeRS is an MCP server (a protected resource) for tests: POST /mcp
// answers 200 with the request body echoed, given a token of its current
// authorization server with the required scopes.
type fakeRS struct {
	srv *httptest.Server

	as               *fakeAS // its authorization server; may change
	prmPath          string  // default /.well-known/oauth-protected-resource/mcp
	inHeader         bool    // resource_metadata in the challenge
	resourceOverride string
	prmScopes        []string
	challengeScope   string
	required         func(body string) []string // scopes a request needs
	alwaysForbid     bool                       // 403 insufficient_scope whatever the token
	redirectGranted  string                     // where a request with a valid token is redirected (307)

	mu       sync.Mutex
	requests []string // Authorization header of each /mcp request
	prmHits  []string
	revoked  map[string]bool
}

func newFakeRS(t *testing.T, as *fakeAS, configure func(*fakeRS)) *fakeRS {
	t.Helper()
	rs := &fakeRS{as: as, inHeader: true, revoked: map[string]bool{}}
	if configure != nil {
		configure(rs)
	}
	if rs.prmPath == "" {
		rs.prmPath = "/.well-known/oauth-protected-resource/mcp"
	}
	rs.srv = httptest.NewServer(http.HandlerFunc(rs.serve))
	t.Cleanup(rs.srv.Close)
	return rs
}

func (rs *fakeRS) url() string { return rs.srv.URL + "/mcp" }

func (rs *fakeRS) setAS(as *fakeAS) {
	rs.mu.Lock()
	rs.as = as
	rs.mu.Unlock()
}

func (rs *fakeRS) serve(w http.ResponseWriter, r *http.Request) {
	rs.mu.Lock()
	as := rs.as
	rs.mu.Unlock()
	if r.Method == http.MethodGet && r.URL.Path == rs.prmPath {
		rs.mu.Lock()
		rs.prmHits = append(rs.prmHits, r.URL.Path)
		rs.mu.Unlock()
		res := rs.url()
		if rs.prmPath == "/.well-known/oauth-protected-resource" {
			res = rs.srv.URL
		}
		if rs.resourceOverride != "" {
			res = rs.resourceOverride
		}
		md := map[string]any{"resource": res, "authorization_servers": []string{as.issuer()}}
		if rs.prmScopes != nil {
			md["scopes_supported"] = rs.prmScopes
		}
		writeJSON(w, 200, md)
		return
	}
	if r.URL.Path != "/mcp" {
		http.NotFound(w, r)
		return
	}
	buf := new(strings.Builder)
	if r.Body != nil {
		_, _ = fmt.Fprint(buf, readAll(r))
	}
	body := buf.String()
	authz := r.Header.Get("Authorization")
	rs.mu.Lock()
	rs.requests = append(rs.requests, authz)
	rs.mu.Unlock()
	challenge := func(status int, extra string) {
		v := "Bearer "
		parts := []string{}
		if rs.challengeScope != "" && status == 401 {
			parts = append(parts, fmt.Sprintf("scope=%q", rs.challengeScope))
		}
		if rs.inHeader {
			parts = append(parts, fmt.Sprintf("resource_metadata=%q", rs.srv.URL+rs.prmPath))
		}
		if extra != "" {
			parts = append(parts, extra)
		}
		w.Header().Set("WWW-Authenticate", v+strings.Join(parts, ", "))
		w.WriteHeader(status)
	}
	tok, ok := strings.CutPrefix(authz, "Bearer ")
	if !ok {
		challenge(401, "")
		return
	}
	scopes, valid := as.tokenValid(tok)
	rs.mu.Lock()
	revoked := rs.revoked[tok]
	rs.mu.Unlock()
	if !valid || revoked {
		challenge(401, `error="invalid_token"`)
		return
	}
	if rs.alwaysForbid {
		challenge(403, fmt.Sprintf(`error="insufficient_scope", scope=%q`, rs.challengeScope))
		return
	}
	if rs.required != nil {
		for _, need := range rs.required(body) {
			if !slices.Contains(scopes, need) {
				challenge(403, fmt.Sprintf(`error="insufficient_scope", scope=%q`, need))
				return
			}
		}
	}
	if rs.redirectGranted != "" {
		http.Redirect(w, r, rs.redirectGranted, http.StatusTemporaryRedirect)
		return
	}
	w.WriteHeader(200)
	fmt.Fprint(w, body)
}

func (rs *fakeRS) authHeaders() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return slices.Clone(rs.requests)
}

func readAll(r *http.Request) string {
	b := new(strings.Builder)
	buf := make([]byte, 4096)
	for {
		n, err := r.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}
