package streamhttp

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
)

// seenHeaders records the headers of every request a handler serves.
type seenHeaders struct {
	mu   sync.Mutex
	reqs []http.Header
	next http.Handler
}

func (s *seenHeaders) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, r.Header.Clone())
	s.mu.Unlock()
	if s.next != nil {
		s.next.ServeHTTP(w, r)
	}
}

func (s *seenHeaders) all() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.reqs...)
}

// syncBuffer is a bytes.Buffer for a logger that goroutines write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// configured are the caller's headers of the redirect tests: a bearer
// token, an API key, and a key in a non-canonical spelling (the transport
// copies the map's keys as they are).
func configured() http.Header {
	return http.Header{
		"Authorization": {"Bearer s3cret"},
		"X-Api-Key":     {"k3y"},
		"x-tenant-key":  {"t3nant"},
	}
}

// redirector answers every request with a 307 to where(r), which keeps the
// method and the body.
func redirector(t *testing.T, seen *seenHeaders, where func(r *http.Request) string) *httptest.Server {
	t.Helper()
	seen.next = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, where(r), http.StatusTemporaryRedirect)
	})
	srv := httptest.NewServer(seen)
	t.Cleanup(srv.Close)
	return srv
}

// leaked returns the configured headers (or a Referer) a request carried.
func leaked(h http.Header) []string {
	var out []string
	for _, k := range []string{"Authorization", "X-Api-Key", "X-Tenant-Key", "Referer"} {
		if v := h.Get(k); v != "" {
			out = append(out, k+": "+v)
		}
	}
	return out
}

// TestConfiguredHeadersStayAtTheOrigin: a server that redirects the
// client to another origin (here another port of the same host, where
// net/http itself would forward Authorization, and would forward an API
// key to any host) gets the request without the caller's configured
// headers and without a Referer; the transport's own headers still go,
// the call succeeds, and the log names the headers left out. Both
// generations: the 2026-07-28 POSTs and a legacy session's.
func TestConfiguredHeadersStayAtTheOrigin(t *testing.T) {
	for _, version := range []mcp.ProtocolVersion{mcp.LatestVersion, mcp.Version20251125} {
		t.Run(string(version), func(t *testing.T) {
			away := &seenHeaders{next: NewHandler(newFixture().s, nil)}
			awaySrv := httptest.NewServer(away)
			t.Cleanup(awaySrv.Close)
			home := &seenHeaders{}
			homeSrv := redirector(t, home, func(*http.Request) string { return awaySrv.URL })
			var logs syncBuffer
			sess := connect(t, homeSrv.URL, &client.Options{ProtocolVersion: version}, &ClientOptions{
				Header: configured(),
				Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			})
			if res, err := sess.CallTool(context.Background(), "echo", map[string]string{"text": "hi"}); err != nil || textOf(res) != "hi" {
				t.Fatalf("echo through the redirect: %v %v", textOf(res), err)
			}
			for _, h := range home.all() {
				if h.Get("Authorization") != "Bearer s3cret" || h.Get("X-Api-Key") != "k3y" || h.Get("X-Tenant-Key") != "t3nant" {
					t.Errorf("the endpoint itself did not get the configured headers: %v", h)
				}
			}
			reqs := away.all()
			if len(reqs) == 0 {
				t.Fatal("no request reached the server redirected to")
			}
			for _, h := range reqs {
				if l := leaked(h); len(l) > 0 {
					t.Errorf("the other origin received %q", l)
				}
				if h.Get("Mcp-Protocol-Version") == "" && h.Get("Accept") == "" {
					t.Errorf("the transport's own headers were left out too: %v", h)
				}
			}
			log := logs.String()
			if !strings.Contains(log, "level=WARN") || !strings.Contains(log, "another origin") ||
				!strings.Contains(log, "Authorization") || !strings.Contains(log, "X-Api-Key") || !strings.Contains(log, "x-tenant-key") {
				t.Errorf("the log does not say which headers were left out:\n%s", log)
			}
			if strings.Contains(log, "s3cret") || strings.Contains(log, "k3y") {
				t.Errorf("the log holds a credential:\n%s", log)
			}
		})
	}
}

// TestConfiguredHeadersFollowSameOriginRedirects: a redirect within the
// endpoint's origin keeps the configured headers, and nothing is logged.
func TestConfiguredHeadersFollowSameOriginRedirects(t *testing.T) {
	real := &seenHeaders{next: NewHandler(newFixture().s, nil)}
	mux := http.NewServeMux()
	mux.Handle("/old", http.RedirectHandler("/mcp", http.StatusPermanentRedirect))
	mux.Handle("/mcp", real)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	var logs syncBuffer
	sess := connect(t, srv.URL+"/old", nil, &ClientOptions{Header: configured(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if res, err := sess.CallTool(context.Background(), "echo", map[string]string{"text": "hi"}); err != nil || textOf(res) != "hi" {
		t.Fatalf("echo: %v %v", textOf(res), err)
	}
	for _, h := range real.all() {
		if h.Get("Authorization") != "Bearer s3cret" || h.Get("X-Api-Key") != "k3y" || h.Get("X-Tenant-Key") != "t3nant" {
			t.Errorf("a same-origin redirect lost the configured headers: %v", h)
		}
	}
	if strings.Contains(logs.String(), "another origin") {
		t.Errorf("a same-origin redirect was logged as leaving it:\n%s", logs.String())
	}
}

// TestConfiguredHeadersNotBackAfterLeaving: a chain that leaves the
// origin and comes back does not get the headers back: the server that
// redirected back chose where they would go.
func TestConfiguredHeadersNotBackAfterLeaving(t *testing.T) {
	real := &seenHeaders{next: NewHandler(newFixture().s, nil)}
	var homeURL string
	away := &seenHeaders{}
	awaySrv := redirector(t, away, func(*http.Request) string { return homeURL + "/mcp" })
	mux := http.NewServeMux()
	mux.Handle("/start", http.RedirectHandler(awaySrv.URL, http.StatusTemporaryRedirect))
	mux.Handle("/mcp", real)
	homeSrv := httptest.NewServer(mux)
	t.Cleanup(homeSrv.Close)
	homeURL = homeSrv.URL
	sess := connect(t, homeURL+"/start", nil, &ClientOptions{Header: configured(), Logger: slog.New(slog.DiscardHandler)})
	if res, err := sess.CallTool(context.Background(), "echo", map[string]string{"text": "hi"}); err != nil || textOf(res) != "hi" {
		t.Fatalf("echo: %v %v", textOf(res), err)
	}
	for _, h := range append(away.all(), real.all()...) {
		if l := leaked(h); len(l) > 0 {
			t.Errorf("a hop after the chain left the origin received %q", l)
		}
	}
}

// TestRedirectLimitKept: the transport's guard keeps the caller's own
// CheckRedirect, and without one net/http's limit of ten.
func TestRedirectLimitKept(t *testing.T) {
	hops := 0
	hc := keepHeadersHome(&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
		hops++
		return http.ErrUseLastResponse
	}}, configured(), slog.New(slog.DiscardHandler))
	seen := &seenHeaders{}
	srv := redirector(t, seen, func(r *http.Request) string { return "/again" })
	resp, err := hc.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || hops != 1 {
		t.Errorf("status %d after %d calls of the caller's CheckRedirect, want the 307 after one", resp.StatusCode, hops)
	}
	hc = keepHeadersHome(&http.Client{}, configured(), slog.New(slog.DiscardHandler))
	before := len(seen.all())
	if _, err := hc.Get(srv.URL); err == nil || !strings.Contains(err.Error(), "stopped after 10 redirects") {
		t.Errorf("an endless chain: %v, want net/http's limit", err)
	}
	if n := len(seen.all()) - before; n != 10 {
		t.Errorf("an endless chain: %d requests, want 10 (net/http's limit: the tenth redirect is not followed)", n)
	}
	if got := keepHeadersHome(http.DefaultClient, http.Header{"Accept": {"x"}, "Mcp-Param-Region": {"y"}}, nil); got != http.DefaultClient {
		t.Error("a client whose configured headers are all the transport's own was replaced")
	}
}

func TestSameURLOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"https://mcp.example/mcp", "https://mcp.example/other?x=1", true},
		{"https://mcp.example/mcp", "https://MCP.example:443/mcp", true},
		{"http://mcp.example/mcp", "http://mcp.example:80/mcp", true},
		{"https://mcp.example/mcp", "https://mcp.example:8443/mcp", false},
		{"https://mcp.example/mcp", "http://mcp.example/mcp", false},
		{"https://mcp.example:8443/mcp", "http://mcp.example:8443/mcp", false},
		{"https://mcp.example/mcp", "https://api.mcp.example/mcp", false},
		{"https://mcp.example/mcp", "https://example/mcp", false},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8081/", false},
		{"http://[::1]:8080/", "http://[::1]:8080/x", true},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := sameURLOrigin(a, b); got != tc.want {
			t.Errorf("sameURLOrigin(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
