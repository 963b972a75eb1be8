package oauthclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestServerMetadataURLs(t *testing.T) {
	for _, tc := range []struct {
		issuer string
		want   []string
	}{
		{"https://as.example", []string{
			"https://as.example/.well-known/oauth-authorization-server",
			"https://as.example/.well-known/openid-configuration",
		}},
		{"https://as.example/tenant1", []string{
			"https://as.example/.well-known/oauth-authorization-server/tenant1",
			"https://as.example/.well-known/openid-configuration/tenant1",
			"https://as.example/tenant1/.well-known/openid-configuration",
		}},
	} {
		got, err := serverMetadataURLs(tc.issuer)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, %v; want %q", tc.issuer, got, err, tc.want)
		}
	}
	for _, bad := range []string{"ftp://as.example", "https://as.example?x=1", "https://as.example#f", "as.example"} {
		if _, err := serverMetadataURLs(bad); !errors.Is(err, ErrDiscovery) {
			t.Errorf("%s: err = %v, want ErrDiscovery", bad, err)
		}
	}
}

func TestResourceMetadataURLs(t *testing.T) {
	u, _ := url.Parse("https://rs.example/a/mcp")
	got := resourceMetadataURLs(u, "https://rs.example/custom.json")
	want := []string{
		"https://rs.example/custom.json",
		"https://rs.example/.well-known/oauth-protected-resource/a/mcp",
		"https://rs.example/.well-known/oauth-protected-resource",
	}
	if !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
	root, _ := url.Parse("https://rs.example/")
	if got := resourceMetadataURLs(root, ""); !slices.Equal(got, want[2:]) {
		t.Errorf("root: %q", got)
	}
}

func TestResourceCovers(t *testing.T) {
	u, _ := url.Parse("https://rs.example:8443/api/mcp")
	for res, want := range map[string]bool{
		"https://rs.example:8443/api/mcp":  true,
		"https://rs.example:8443/api/mcp/": true,
		"https://rs.example:8443/api":      true,
		"https://rs.example:8443":          true,
		"https://rs.example:8443/":         true,
		"https://rs.example:8443/ap":       false, // not a segment boundary
		"https://rs.example:8443/api/mcpx": false,
		"https://rs.example/api/mcp":       false, // another port
		"http://rs.example:8443/api/mcp":   false, // another scheme
		"https://evil.example/api/mcp":     false,
		"https://rs.example:8443/api#x":    false,
		"":                                 false,
	} {
		if got := resourceCovers(res, u); got != want {
			t.Errorf("resourceCovers(%q) = %v, want %v", res, got, want)
		}
	}
}

// TestDiscoveryVariants runs the whole flow against the metadata layouts
// of the conformance suite: PRM at the path-aware or the root well-known
// URL, announced in the challenge or not, and authorization server
// metadata at RFC 8414 or OpenID locations, for issuers with and without
// a path.
func TestDiscoveryVariants(t *testing.T) {
	for _, tc := range []struct {
		name     string
		prmPath  string
		inHeader bool
		prefix   string
		mdPath   string
		// wantResource is the resource parameter: the PRM's resource.
		rootResource bool
	}{
		{"path-aware PRM, RFC 8414", "/.well-known/oauth-protected-resource/mcp", true, "", "", false},
		{"path-aware PRM not announced, OpenID", "/.well-known/oauth-protected-resource/mcp", false, "", "/.well-known/openid-configuration", false},
		{"root PRM, issuer with path", "/.well-known/oauth-protected-resource", false, "/tenant1", "", true},
		{"custom PRM, OpenID path appended", "/custom/metadata.json", true, "/tenant1", "/tenant1/.well-known/openid-configuration", false},
		{"OpenID path inserted", "/.well-known/oauth-protected-resource/mcp", true, "/tenant1", "/.well-known/openid-configuration/tenant1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := newFakeAS(t, func(as *fakeAS) { as.prefix, as.metadataPath = tc.prefix, tc.mdPath })
			rs := newFakeRS(t, as, func(rs *fakeRS) { rs.prmPath, rs.inHeader = tc.prmPath, tc.inHeader })
			mustOK(t, newTransport(t, Config{}), rs.url(), "x")
			want := rs.url()
			if tc.rootResource {
				want = rs.srv.URL
			}
			if got := as.authReqs[0].Get("resource"); got != want {
				t.Errorf("resource %q, want %q", got, want)
			}
			if tc.prmPath == "/.well-known/oauth-protected-resource/mcp" && slices.Contains(rs.prmHits, "/.well-known/oauth-protected-resource") {
				t.Errorf("the root PRM was asked for although the path-aware one exists")
			}
		})
	}
}

// TestDiscoveryOrder checks which URLs are asked, in order, by recording
// every GET.
func TestDiscoveryOrder(t *testing.T) {
	var got []string
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = append(got, r.URL.String())
		return &http.Response{StatusCode: 404, Body: io.NopCloser(strings.NewReader("")), Header: http.Header{}, Request: r}, nil
	})}
	u, _ := url.Parse("https://rs.example/mcp")
	_, err := discoverResource(context.Background(), hc, u, "https://rs.example/prm")
	if !errors.Is(err, ErrDiscovery) {
		t.Fatalf("err = %v, want ErrDiscovery", err)
	}
	_, err = discoverServer(context.Background(), hc, "https://as.example/t", true)
	if !errors.Is(err, ErrDiscovery) {
		t.Fatalf("err = %v, want ErrDiscovery", err)
	}
	want := []string{
		"https://rs.example/prm",
		"https://rs.example/.well-known/oauth-protected-resource/mcp",
		"https://rs.example/.well-known/oauth-protected-resource",
		"https://as.example/.well-known/oauth-authorization-server/t",
		"https://as.example/.well-known/openid-configuration/t",
		"https://as.example/t/.well-known/openid-configuration",
	}
	if !slices.Equal(got, want) {
		t.Errorf("asked\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestDiscoveryRefusesBadDocuments(t *testing.T) {
	serve := func(body string, status int) *http.Client {
		return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader(body)), Header: http.Header{}, Request: r}, nil
		})}
	}
	ctx := context.Background()
	u, _ := url.Parse("https://rs.example/mcp")
	if _, err := discoverResource(ctx, serve(`{"resource":"https://rs.example/mcp"}`, 200), u, ""); !errors.Is(err, ErrDiscovery) {
		t.Errorf("PRM without authorization_servers: err = %v", err)
	}
	if _, err := discoverResource(ctx, serve(`not json`, 200), u, ""); err == nil {
		t.Errorf("PRM that is not JSON: no error")
	}
	if _, err := discoverResource(ctx, serve(strings.Repeat(" ", maxMetadataSize+10)+"{}", 200), u, ""); err == nil {
		t.Errorf("oversized PRM: no error")
	}
	md := `{"issuer":"https://as.example","authorization_endpoint":"https://as.example/a","token_endpoint":"https://as.example/t"%s}`
	if _, err := discoverServer(ctx, serve(fmt.Sprintf(md, ""), 200), "https://as.example", true); !errors.Is(err, ErrPKCEUnsupported) {
		t.Errorf("metadata without code_challenge_methods_supported: err = %v, want ErrPKCEUnsupported", err)
	}
	if _, err := discoverServer(ctx, serve(fmt.Sprintf(md, `,"code_challenge_methods_supported":["plain"]`), 200), "https://as.example", true); !errors.Is(err, ErrPKCEUnsupported) {
		t.Errorf("plain only: err = %v, want ErrPKCEUnsupported", err)
	}
	if _, err := discoverServer(ctx, serve(fmt.Sprintf(md, `,"code_challenge_methods_supported":["S256"]`), 200), "https://as.example/", true); !errors.Is(err, ErrIssuerMismatch) {
		t.Errorf("issuer differing by a trailing slash: err = %v, want ErrIssuerMismatch", err)
	}
	if _, err := discoverServer(ctx, serve(`{}`, 500), "https://as.example", true); err == nil || errors.Is(err, ErrIssuerMismatch) {
		t.Errorf("500: err = %v", err)
	}
}

func TestParseChallenges(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string // the Bearer params, nil for none
	}{
		{`Bearer scope="a b", resource_metadata="https://x/y"`, map[string]string{"scope": "a b", "resource_metadata": "https://x/y"}},
		{`Bearer error="insufficient_scope", scope="mcp:write", error_description="need \"more\""`, map[string]string{"error": "insufficient_scope", "scope": "mcp:write", "error_description": `need "more"`}},
		{`Basic realm="x", Bearer realm=y, scope="s"`, map[string]string{"realm": "y", "scope": "s"}},
		{`Basic YWxhZGRpbjpvcGVu==, Bearer scope="s"`, map[string]string{"scope": "s"}},
		{`DPoP algs="ES256", bearer Scope=s`, map[string]string{"scope": "s"}},
		{`Bearer`, map[string]string{}},
		{`Basic realm="x"`, nil},
		{``, nil},
		{`Bearer scope="unterminated`, map[string]string{"scope": "unterminated"}},
		{`=,,"" Bearer`, nil},
	} {
		h := http.Header{}
		if tc.in != "" {
			h.Set("WWW-Authenticate", tc.in)
		}
		got := bearerChallenge(h)
		if (got == nil) != (tc.want == nil) || len(got) != len(tc.want) {
			t.Errorf("%q: %v, want %v", tc.in, got, tc.want)
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%q: %s = %q, want %q", tc.in, k, got[k], v)
			}
		}
	}
}

func FuzzParseChallenges(f *testing.F) {
	for _, s := range []string{
		`Bearer scope="a b", resource_metadata="https://x/y"`,
		`Basic YQ==, Bearer error="insufficient_scope"`,
		`Bearer scope="\"`, `,,,`, `a=b=c`, `Bearer x="y\`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parseChallenges(s) // must end, and must not panic
	})
}
