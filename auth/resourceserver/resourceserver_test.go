package resourceserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/auth/resourceserver"
)

const (
	resource    = "https://mcp.example.com/mcp"
	metadataURL = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
	issuer      = "https://as.example.com"
)

// syncBuffer is a log sink safe for the handler goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fakeVerifier knows a few tokens by name and answers the rest with the
// error registered for them.
func fakeVerifier() resourceserver.Verifier {
	return resourceserver.VerifierFunc(func(ctx context.Context, token string) (*auth.Info, error) {
		switch token {
		case "good":
			return &auth.Info{ClientID: "app", Issuer: issuer, Subject: "alice", Scopes: []string{"mcp:read", "mcp:write"}}, nil
		case "read-only":
			return &auth.Info{ClientID: "app", Issuer: issuer, Subject: "alice", Scopes: []string{"mcp:read"}}, nil
		case "expired":
			return nil, fmt.Errorf("%w: expired", resourceserver.ErrInvalidToken)
		case "needs-admin":
			return nil, &resourceserver.InsufficientScopeError{Scopes: []string{"mcp:admin"}}
		case "as-down":
			return nil, fmt.Errorf("%w: introspection: connection refused", resourceserver.ErrUnavailable)
		case "nil-nil":
			return nil, nil
		}
		return nil, errors.New("verifier bug")
	})
}

// guarded returns the middleware in front of a handler that reports the
// auth.Info it sees, and the log it writes.
func guarded(t *testing.T, scopes []string) (http.Handler, *syncBuffer) {
	t.Helper()
	logs := new(syncBuffer)
	rs, err := resourceserver.New(&resourceserver.Options{
		Metadata: resourceserver.Metadata{Resource: resource, AuthorizationServers: []string{issuer}},
		Verifier: fakeVerifier(),
		Scopes:   scopes,
		Logger:   slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	return rs.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := auth.InfoFrom(r.Context())
		fmt.Fprintf(w, "%s/%s/%s %v", info.ClientID, info.Issuer, info.Subject, info.Scopes)
	})), logs
}

func do(h http.Handler, authz ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, resource, strings.NewReader("{}"))
	for _, a := range authz {
		r.Header.Add("Authorization", a)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestMiddleware(t *testing.T) {
	h, logs := guarded(t, []string{"mcp:read", "mcp:write"})
	const (
		plain       = `Bearer scope="mcp:read mcp:write", resource_metadata="` + metadataURL + `"`
		invalid     = `Bearer error="invalid_token", scope="mcp:read mcp:write", resource_metadata="` + metadataURL + `"`
		badRequest  = `Bearer error="invalid_request", resource_metadata="` + metadataURL + `"`
		insuffWrite = `Bearer error="insufficient_scope", scope="mcp:read mcp:write", resource_metadata="` + metadataURL + `"`
		insuffAdmin = `Bearer error="insufficient_scope", scope="mcp:admin", resource_metadata="` + metadataURL + `"`
	)
	for _, tc := range []struct {
		name      string
		authz     []string
		status    int
		challenge string
	}{
		{"no header", nil, 401, plain},
		{"wrong scheme", []string{"Basic YWxpY2U6c2VjcmV0"}, 401, plain},
		{"empty header", []string{""}, 401, plain},
		{"bearer without token", []string{"Bearer"}, 400, badRequest},
		{"bearer with space only", []string{"Bearer "}, 400, badRequest},
		{"token with a comma", []string{"Bearer a,b"}, 400, badRequest},
		{"token with a quote", []string{`Bearer "good"`}, 400, badRequest},
		{"two tokens", []string{"Bearer good extra"}, 400, badRequest},
		{"two headers", []string{"Bearer good", "Bearer good"}, 400, badRequest},
		{"refused token", []string{"Bearer expired"}, 401, invalid},
		{"unknown token", []string{"Bearer forged"}, 500, ""},
		{"missing scope", []string{"Bearer read-only"}, 403, insuffWrite},
		{"verifier names scopes", []string{"Bearer needs-admin"}, 403, insuffAdmin},
		{"verifier unavailable", []string{"Bearer as-down"}, 503, ""},
		{"verifier returns nothing", []string{"Bearer nil-nil"}, 500, ""},
		{"good", []string{"Bearer good"}, 200, ""},
		{"scheme case-insensitive", []string{"bEARER good"}, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := do(h, tc.authz...)
			if w.Code != tc.status {
				t.Fatalf("status = %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			if got := w.Header().Get("WWW-Authenticate"); got != tc.challenge {
				t.Errorf("WWW-Authenticate = %s\nwant               %s", got, tc.challenge)
			}
			if tc.status == 200 {
				if got, want := w.Body.String(), "app/"+issuer+"/alice [mcp:read mcp:write]"; got != want {
					t.Errorf("the handler saw %q, want %q", got, want)
				}
			} else if strings.Contains(w.Body.String(), "app/") {
				t.Errorf("a refused request reached the handler: %s", w.Body)
			}
		})
	}
	// The operator hears why; the client does not.
	for _, want := range []string{"level=ERROR msg=\"resourceserver: cannot verify tokens\" err=\"resourceserver: token verifier unavailable: introspection: connection refused\"",
		"level=ERROR msg=\"resourceserver: token verifier failed\" err=\"verifier bug\"",
		"level=DEBUG msg=\"resourceserver: refused a token\" err=\"resourceserver: invalid token: expired\""} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %s\n%s", want, logs)
		}
	}
	if w := do(h, "Bearer expired"); strings.Contains(w.Body.String(), "expired") {
		t.Errorf("the reason reached the client: %s", w.Body)
	}
}

// Without required scopes, the challenge names none and any valid token
// passes.
func TestMiddlewareNoScopes(t *testing.T) {
	h, _ := guarded(t, nil)
	w := do(h)
	if got, want := w.Header().Get("WWW-Authenticate"), `Bearer resource_metadata="`+metadataURL+`"`; got != want {
		t.Errorf("WWW-Authenticate = %s, want %s", got, want)
	}
	if w := do(h, "Bearer read-only"); w.Code != 200 {
		t.Errorf("status = %d", w.Code)
	}
}

func TestMetadataDocument(t *testing.T) {
	rs, err := resourceserver.New(&resourceserver.Options{
		Metadata: resourceserver.Metadata{
			Resource:             resource,
			AuthorizationServers: []string{issuer},
			ScopesSupported:      []string{"mcp:read", "mcp:write"},
			ResourceName:         "Example MCP",
		},
		Verifier: fakeVerifier(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if rs.MetadataURL() != metadataURL || rs.MetadataPath() != "/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("MetadataURL %s, MetadataPath %s", rs.MetadataURL(), rs.MetadataPath())
	}
	mux := http.NewServeMux()
	rs.Mount(mux, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("mcp")) }))

	r := httptest.NewRequest(http.MethodGet, metadataURL, nil)
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET metadata: %d %s", w.Code, w.Header())
	}
	var doc map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"resource":                 resource,
		"authorization_servers":    []any{issuer},
		"scopes_supported":         []any{"mcp:read", "mcp:write"},
		"bearer_methods_supported": []any{"header"},
		"resource_name":            "Example MCP",
	}
	if fmt.Sprint(doc) != fmt.Sprint(want) {
		t.Errorf("document = %v\nwant       %v", doc, want)
	}

	// The metadata is public; the endpoint is not; other paths are not
	// ours.
	for _, tc := range []struct {
		method, target string
		status         int
	}{
		{"POST", metadataURL, 405},
		{"HEAD", metadataURL, 200},
		{"POST", resource, 401},
		{"POST", resource + "/other", 404},
		{"GET", "https://mcp.example.com/.well-known/oauth-protected-resource", 404},
	} {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(tc.method, tc.target, nil))
		if w.Code != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.target, w.Code, tc.status)
		}
	}
}

func TestMetadataURL(t *testing.T) {
	for resource, want := range map[string]string{
		"https://mcp.example.com/mcp":       "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
		"https://mcp.example.com/a/b/":      "https://mcp.example.com/.well-known/oauth-protected-resource/a/b",
		"https://mcp.example.com":           "https://mcp.example.com/.well-known/oauth-protected-resource",
		"https://mcp.example.com/":          "https://mcp.example.com/.well-known/oauth-protected-resource",
		"http://127.0.0.1:8080/mcp":         "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp",
		"https://mcp.example.com/mcp?t=one": "https://mcp.example.com/.well-known/oauth-protected-resource/mcp?t=one",
	} {
		got, err := resourceserver.MetadataURL(resource)
		if err != nil || got != want {
			t.Errorf("MetadataURL(%s) = %s, %v; want %s", resource, got, err, want)
		}
	}
	for _, bad := range []string{"", "mcp.example.com/mcp", "ftp://mcp.example.com", "https://mcp.example.com/mcp#x", "https://u:p@mcp.example.com/", "https:///mcp"} {
		if _, err := resourceserver.MetadataURL(bad); err == nil {
			t.Errorf("MetadataURL(%q) accepted", bad)
		}
	}
}

func TestNewValidates(t *testing.T) {
	good := resourceserver.Metadata{Resource: resource, AuthorizationServers: []string{issuer}}
	for name, o := range map[string]*resourceserver.Options{
		"nil":                nil,
		"no verifier":        {Metadata: good},
		"no resource":        {Metadata: resourceserver.Metadata{AuthorizationServers: []string{issuer}}, Verifier: fakeVerifier()},
		"no auth servers":    {Metadata: resourceserver.Metadata{Resource: resource}, Verifier: fakeVerifier()},
		"scope with a quote": {Metadata: good, Verifier: fakeVerifier(), Scopes: []string{`a"b`}},
		"scope with a space": {Metadata: good, Verifier: fakeVerifier(), Scopes: []string{"a b"}},
		"resource with frag": {Metadata: resourceserver.Metadata{Resource: resource + "#f", AuthorizationServers: []string{issuer}}, Verifier: fakeVerifier()},
	} {
		if _, err := resourceserver.New(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestErrors(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", &resourceserver.InsufficientScopeError{Scopes: []string{"a", "b"}})
	if !errors.Is(err, resourceserver.ErrInsufficientScope) || errors.Is(err, resourceserver.ErrInvalidToken) {
		t.Error("InsufficientScopeError does not match ErrInsufficientScope alone")
	}
	var se *resourceserver.InsufficientScopeError
	if !errors.As(err, &se) || !slices.Equal(se.Scopes, []string{"a", "b"}) || !strings.Contains(err.Error(), "needs a b") {
		t.Errorf("%v", err)
	}
}

// A client that leaves while its token is checked is not an outage: no
// error-level log.
func TestMiddlewareClientGone(t *testing.T) {
	logs := new(syncBuffer)
	rs, err := resourceserver.New(&resourceserver.Options{
		Metadata: resourceserver.Metadata{Resource: resource, AuthorizationServers: []string{issuer}},
		Verifier: resourceserver.VerifierFunc(func(ctx context.Context, token string) (*auth.Info, error) {
			<-ctx.Done()
			return nil, fmt.Errorf("%w: introspection: %w", resourceserver.ErrUnavailable, ctx.Err())
		}),
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequestWithContext(ctx, http.MethodPost, resource, nil)
	r.Header.Set("Authorization", "Bearer tok")
	w := httptest.NewRecorder()
	rs.Wrap(http.NotFoundHandler()).ServeHTTP(w, r)
	if w.Code != http.StatusServiceUnavailable || strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "request ended") {
		t.Errorf("%d, log:\n%s", w.Code, logs)
	}
}
