package oauthclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// The tests of this file run the authorization servers on httptest's
// loopback listeners but name them example.com (TLS) and as.example
// (plain HTTP) in every URL; routedClient connects those names to the
// listeners. So the client sees non-loopback hosts, and the refusals are
// those a real deployment would meet.

// sendWithin sends one MCP request through tr, bounded by a deadline of
// its own, and returns the error.
func sendWithin(t *testing.T, tr *Transport, u string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.Client().Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return err
}

// wantInsecure fails t unless err is the refusal of rawURL as role (after
// a redirect from from, when set).
func wantInsecure(t *testing.T, err error, rawURL, role, from string) {
	t.Helper()
	var ie *InsecureURLError
	if !errors.As(err, &ie) || !errors.Is(err, ErrInsecureURL) {
		t.Fatalf("err = %v, want an *InsecureURLError for %s %s", err, role, rawURL)
	}
	if ie.URL != rawURL || ie.Role != role || ie.From != from {
		t.Errorf("refused %+v, want URL %q, Role %q, From %q", *ie, rawURL, role, from)
	}
	if !strings.Contains(err.Error(), rawURL) {
		t.Errorf("the message %q does not name the refused URL", err)
	}
}

// noPlainHTTP fails t if as received any request over plain HTTP.
func noPlainHTTP(t *testing.T, as *fakeAS) {
	t.Helper()
	for _, r := range as.requests() {
		if strings.HasPrefix(r, "http ") {
			t.Errorf("the authorization server got %q over plain HTTP", r)
		}
	}
}

func TestRefusesPlainHTTPIssuer(t *testing.T) {
	as := newFakeAS(t, func(as *fakeAS) { as.origin = "http://as.example" })
	rs := newFakeRS(t, as, nil)
	hc := routedClient(t, map[string]*httptest.Server{"as.example": as.srv})
	tr := newTransport(t, Config{HTTPClient: hc, Authorizer: &HeadlessAuthorizer{HTTPClient: hc}})
	wantInsecure(t, sendWithin(t, tr, rs.url()), "http://as.example", "issuer", "")
	if got := as.requests(); len(got) != 0 {
		t.Errorf("the plain-HTTP authorization server was asked %q", got)
	}
}

func TestRefusesPlainHTTPTokenEndpoint(t *testing.T) {
	as := newFakeAS(t, func(as *fakeAS) {
		as.tls, as.origin, as.tokenEndpoint = true, "https://example.com", "http://as.example/token"
	})
	plain := as.plainTwin(t)
	rs := newFakeRS(t, as, nil)
	hc := routedClient(t, map[string]*httptest.Server{"example.com": as.srv, "as.example": plain})
	tr := newTransport(t, Config{HTTPClient: hc, Authorizer: &HeadlessAuthorizer{HTTPClient: hc}})
	wantInsecure(t, sendWithin(t, tr, rs.url()), "http://as.example/token", "token_endpoint", "")
	noPlainHTTP(t, as)
	if auth, token, reg := as.counts(); auth+token+reg != 0 {
		t.Errorf("authorization, token and registration requests: %d %d %d; the refusal must come before any", auth, token, reg)
	}
}

func TestRefusesPlainHTTPAuthorizationEndpoint(t *testing.T) {
	as := newFakeAS(t, func(as *fakeAS) {
		as.tls, as.origin, as.authEndpoint = true, "https://example.com", "http://as.example/authorize"
	})
	plain := as.plainTwin(t)
	rs := newFakeRS(t, as, nil)
	hc := routedClient(t, map[string]*httptest.Server{"example.com": as.srv, "as.example": plain})
	tr := newTransport(t, Config{HTTPClient: hc, Authorizer: &HeadlessAuthorizer{HTTPClient: hc}})
	wantInsecure(t, sendWithin(t, tr, rs.url()), "http://as.example/authorize", "authorization_endpoint", "")
	noPlainHTTP(t, as)
	if auth, token, reg := as.counts(); auth+token+reg != 0 {
		t.Errorf("authorization, token and registration requests: %d %d %d; the refusal must come before any", auth, token, reg)
	}
}

// TestRefusesPlainHTTPRegistrationEndpoint: the registration endpoint is
// checked when it is used, and the refusal is a failed registration too.
func TestRefusesPlainHTTPRegistrationEndpoint(t *testing.T) {
	as := newFakeAS(t, func(as *fakeAS) {
		as.tls, as.origin, as.regEndpoint = true, "https://example.com", "http://as.example/register"
	})
	plain := as.plainTwin(t)
	rs := newFakeRS(t, as, nil)
	hc := routedClient(t, map[string]*httptest.Server{"example.com": as.srv, "as.example": plain})
	tr := newTransport(t, Config{HTTPClient: hc, Authorizer: &HeadlessAuthorizer{HTTPClient: hc}})
	err := sendWithin(t, tr, rs.url())
	wantInsecure(t, err, "http://as.example/register", "registration_endpoint", "")
	if !errors.Is(err, ErrRegistrationFailed) {
		t.Errorf("err = %v, want ErrRegistrationFailed as well", err)
	}
	noPlainHTTP(t, as)

	// A client registered otherwise never goes there, so the endpoint
	// does not stand in its way.
	pre := newTransport(t, Config{HTTPClient: hc, Authorizer: &HeadlessAuthorizer{HTTPClient: hc},
		PreRegistered: func(string) *ClientInfo { return &ClientInfo{ClientID: "pre"} }})
	if err := sendWithin(t, pre, rs.url()); err != nil {
		t.Fatalf("pre-registered client: %v", err)
	}
	noPlainHTTP(t, as)
}

func TestRefusesMetadataRedirectToPlainHTTP(t *testing.T) {
	const md = "/.well-known/oauth-authorization-server"
	as := newFakeAS(t, func(as *fakeAS) {
		as.tls, as.origin, as.metadataRedirect = true, "https://example.com", "http://as.example"+md
	})
	plain := as.plainTwin(t)
	rs := newFakeRS(t, as, nil)
	hc := routedClient(t, map[string]*httptest.Server{"example.com": as.srv, "as.example": plain})
	tr := newTransport(t, Config{HTTPClient: hc, Authorizer: &HeadlessAuthorizer{HTTPClient: hc}})
	wantInsecure(t, sendWithin(t, tr, rs.url()), "http://as.example"+md, "authorization_server_metadata", "https://example.com"+md)
	noPlainHTTP(t, as)
	// Refused at once: the next well-known URL is not tried either, so
	// the redirect is not taken for "no metadata here".
	if got, want := as.requests(), []string{"https GET " + md}; !slices.Equal(got, want) {
		t.Errorf("requests %q, want %q", got, want)
	}
}

// TestRefusesTokenRequestRedirectToPlainHTTP: a 307 from the token
// endpoint would re-send the code and its verifier to where it points.
func TestRefusesTokenRequestRedirectToPlainHTTP(t *testing.T) {
	as := newFakeAS(t, func(as *fakeAS) {
		as.tls, as.origin, as.tokenRedirect = true, "https://example.com", "http://as.example/token"
	})
	plain := as.plainTwin(t)
	rs := newFakeRS(t, as, nil)
	hc := routedClient(t, map[string]*httptest.Server{"example.com": as.srv, "as.example": plain})
	tr := newTransport(t, Config{HTTPClient: hc, Authorizer: &HeadlessAuthorizer{HTTPClient: hc}})
	wantInsecure(t, sendWithin(t, tr, rs.url()), "http://as.example/token", "token_endpoint", "https://example.com/token")
	noPlainHTTP(t, as)
}

// TestResourceMetadataRefusesPlainHTTP checks the protected-resource metadata
// fetches: plain HTTP is fine from the MCP server's own origin (the user
// chose it) and from loopback, not from elsewhere, and an https server's
// metadata is never fetched over plain HTTP.
func TestResourceMetadataRefusesPlainHTTP(t *testing.T) {
	var asked []string
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		asked = append(asked, r.URL.String())
		h := http.Header{}
		status := 200
		body := `{"resource":"` + r.URL.Scheme + `://rs.example/mcp","authorization_servers":["https://as.example"]}`
		if r.URL.Path == "/moved" {
			status, body = http.StatusFound, ""
			h.Set("Location", "http://rs.example/.well-known/oauth-protected-resource/mcp")
		}
		return &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader(body)), Header: h, Request: r}, nil
	})}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	secure, _ := url.Parse("https://rs.example/mcp")
	insecure, _ := url.Parse("http://rs.example/mcp")

	asked = nil
	_, err := discoverResource(ctx, hc, secure, "http://rs.example/.well-known/oauth-protected-resource/mcp")
	wantInsecure(t, err, "http://rs.example/.well-known/oauth-protected-resource/mcp", "resource_metadata", "")
	if len(asked) != 0 {
		t.Errorf("asked %q before refusing", asked)
	}
	_, err = discoverResource(ctx, hc, secure, "https://rs.example/moved")
	wantInsecure(t, err, "http://rs.example/.well-known/oauth-protected-resource/mcp", "resource_metadata", "https://rs.example/moved")
	_, err = discoverResource(ctx, hc, insecure, "http://elsewhere.example/prm")
	wantInsecure(t, err, "http://elsewhere.example/prm", "resource_metadata", "")

	for _, tc := range []struct {
		server     *url.URL
		fromHeader string
		first      string // the URL asked first
	}{
		{insecure, "", "http://rs.example/.well-known/oauth-protected-resource/mcp"}, // the server's own well-known URL
		{insecure, "http://rs.example/prm", "http://rs.example/prm"},                 // its own origin
		{secure, "http://127.0.0.1:8080/prm", "http://127.0.0.1:8080/prm"},           // loopback
		{secure, "", "https://rs.example/.well-known/oauth-protected-resource/mcp"},
	} {
		asked = nil
		if _, err := discoverResource(ctx, hc, tc.server, tc.fromHeader); errors.Is(err, ErrInsecureURL) || len(asked) == 0 || asked[0] != tc.first {
			t.Errorf("%s with %q: %v after asking %q, want %s asked", tc.server, tc.fromHeader, err, asked, tc.first)
		}
	}
}

func TestSecureURL(t *testing.T) {
	for raw, want := range map[string]bool{
		"https://as.example/token":          true,
		"http://127.0.0.1:8080/token":       true,
		"http://127.0.0.2/token":            true, // all of 127.0.0.0/8 is loopback
		"http://[::1]:8080/token":           true,
		"http://localhost:8080/token":       true,
		"http://LocalHost/token":            true,
		"HTTP://127.0.0.1/token":            true,
		"http://as.example/token":           false,
		"http://10.0.0.1/token":             false,
		"http://[::2]/token":                false,
		"http://0.0.0.0/token":              false,
		"http://localhost.as.example/token": false,
		"http://evil-localhost/token":       false,
		"http://127.0.0.1.as.example/token": false,
		"ftp://127.0.0.1/token":             false,
		"/token":                            false,
		"//as.example/token":                false,
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := secureURL(u); got != want {
			t.Errorf("secureURL(%q) = %v, want %v", raw, got, want)
		}
	}
}
