package servercard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-mcp/parley/mcp"
)

// cardServer serves h at /mcp/server-card and counts the requests, keeping
// the last one's headers.
type cardServer struct {
	*httptest.Server
	requests atomic.Int32
	last     atomic.Pointer[http.Header]
}

func newCardServer(t *testing.T, h http.Handler) *cardServer {
	t.Helper()
	cs := &cardServer{}
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs.requests.Add(1)
		hdr := r.Header.Clone()
		cs.last.Store(&hdr)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(cs.Close)
	return cs
}

func (cs *cardServer) url() string { return cs.URL + "/mcp/server-card" }

func TestFetch(t *testing.T) {
	cs := newCardServer(t, mustHandler(t, validCard(), nil))
	c, err := Fetch(t.Context(), cs.url())
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "com.example/weather" || c.Version != "1.0.0" {
		t.Errorf("card %+v", c)
	}
	if got := (*cs.last.Load()).Get("Accept"); !strings.HasPrefix(got, MediaType) {
		t.Errorf("Accept %q, want the card's media type first", got)
	}
}

// Every way a card can fail to arrive has its own error.
func TestFetchRefusals(t *testing.T) {
	raw := func(status int, ct, body string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ct != "" {
				w.Header().Set("Content-Type", ct)
			}
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		})
	}
	var (
		status *StatusError
		media  *MediaTypeError
		inv    *InvalidError
	)
	valid := `{"$schema":"` + SchemaURL + `","name":"a/b","version":"1","description":"d"}`
	cases := []struct {
		name  string
		h     http.Handler
		check func(error) bool
	}{
		{"404", raw(404, "text/plain", "no"), func(err error) bool {
			return errors.Is(err, ErrNoCard) && errors.As(err, &status) && status.StatusCode == 404
		}},
		{"410", raw(410, "", ""), func(err error) bool { return errors.Is(err, ErrNoCard) }},
		{"500", raw(500, "", ""), func(err error) bool {
			return errors.As(err, &status) && status.StatusCode == 500 && !errors.Is(err, ErrNoCard)
		}},
		{"304 unasked", raw(304, "", ""), func(err error) bool { return errors.As(err, &status) && status.StatusCode == 304 }},
		{"html", raw(200, "text/html; charset=utf-8", "<html>"), func(err error) bool { return errors.As(err, &media) && media.ContentType == "text/html; charset=utf-8" }},
		{"no type", raw(200, "", valid), func(err error) bool { return errors.As(err, &media) }},
		{"not JSON", raw(200, MediaType, "{"), func(err error) bool { return errors.As(err, &inv) && inv.Field == "(document)" }},
		{"trailing", raw(200, MediaType, valid+"{}"), func(err error) bool { return errors.As(err, &inv) && inv.Field == "(document)" }},
		{"invalid", raw(200, "application/json", strings.Replace(valid, "a/b", "ab", 1)), func(err error) bool { return errors.As(err, &inv) && inv.Field == "name" }},
		{"plain JSON", raw(200, "application/json; charset=utf-8", valid), func(err error) bool { return err == nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs := newCardServer(t, tc.h)
			_, err := Fetch(t.Context(), cs.url())
			if !tc.check(err) {
				t.Errorf("Fetch: %v (%T)", err, err)
			}
		})
	}
}

// MaxSize is exact: a card of MaxSize bytes is read, one byte more is not.
func TestFetchMaxSize(t *testing.T) {
	base := `{"$schema":"` + SchemaURL + `","name":"a/b","version":"1","description":"d"}`
	const limit = 200
	body := base + strings.Repeat(" ", limit-len(base))
	for _, tc := range []struct {
		body string
		ok   bool
	}{{body, true}, {body + " ", false}} {
		cs := newCardServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", MediaType)
			fmt.Fprint(w, tc.body)
		}))
		_, err := (&Fetcher{MaxSize: limit}).Fetch(t.Context(), cs.url())
		var large *TooLargeError
		if tc.ok != (err == nil) || !tc.ok && (!errors.As(err, &large) || large.Limit != limit) {
			t.Errorf("%d bytes: %v", len(tc.body), err)
		}
	}
}

// Plain HTTP is for this machine only, unless the Fetcher allows it; a
// redirect from an allowed URL to plain HTTP elsewhere is refused too.
func TestFetchInsecure(t *testing.T) {
	var insecure *InsecureURLError
	if _, err := Fetch(t.Context(), "http://cards.example.com/mcp/server-card"); !errors.As(err, &insecure) {
		t.Errorf("plain HTTP to another machine: %v", err)
	}
	if _, err := Fetch(t.Context(), "file:///etc/passwd"); err == nil {
		t.Error("a file URL was fetched")
	}
	cs := newCardServer(t, http.RedirectHandler("http://cards.example.invalid/server-card", http.StatusFound))
	if _, err := Fetch(t.Context(), cs.url()); !errors.As(err, &insecure) || insecure.URL != "http://cards.example.invalid/server-card" {
		t.Errorf("redirect to plain HTTP elsewhere: %v", err)
	}
	// AllowInsecure lets a test network through: the redirect is then
	// followed (to a transport that only records where it was sent).
	var sent atomic.Value
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host == "cards.example.invalid" {
			sent.Store(r.URL.String())
			return nil, errors.New("not sent")
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	if _, err := (&Fetcher{HTTPClient: hc, AllowInsecure: true}).Fetch(t.Context(), cs.url()); errors.As(err, &insecure) || sent.Load() != "http://cards.example.invalid/server-card" {
		t.Errorf("AllowInsecure: %v; sent to %v", err, sent.Load())
	}
}

// The Fetcher keeps a card while it is fresh, then revalidates it with its
// ETag; the server's 304 costs no body.
func TestFetcherCache(t *testing.T) {
	cs := newCardServer(t, mustHandler(t, validCard(), &HandlerOptions{MaxAge: time.Minute}))
	now := time.Unix(1_000_000, 0)
	f := &Fetcher{now: func() time.Time { return now }}
	ctx := t.Context()
	first, err := f.Fetch(ctx, cs.url())
	if err != nil {
		t.Fatal(err)
	}
	etag := (*cs.last.Load()).Get("If-None-Match")
	if etag != "" {
		t.Errorf("first fetch sent If-None-Match %q", etag)
	}
	first.Version = "changed by the caller"

	now = now.Add(time.Minute - time.Nanosecond) // still fresh
	again, err := f.Fetch(ctx, cs.url())
	if err != nil || cs.requests.Load() != 1 || again.Version != "1.0.0" {
		t.Fatalf("fresh: %d requests, version %q, %v", cs.requests.Load(), again.Version, err)
	}

	now = now.Add(time.Nanosecond) // stale at exactly max-age
	again, err = f.Fetch(ctx, cs.url())
	if err != nil || cs.requests.Load() != 2 || again.Version != "1.0.0" {
		t.Fatalf("stale: %d requests, %+v, %v", cs.requests.Load(), again, err)
	}
	if inm := (*cs.last.Load()).Get("If-None-Match"); inm == "" || !strings.HasPrefix(inm, `"`) {
		t.Errorf("revalidation sent If-None-Match %q", inm)
	}
}

// no-store keeps nothing; no-cache keeps the ETag but asks every time.
func TestFetcherCacheControl(t *testing.T) {
	for _, tc := range []struct {
		cc       string
		requests int32
		inm      bool // whether the second request revalidates
	}{
		{"no-store", 2, false},
		{"public, no-cache", 2, true},
		{"max-age=0", 2, true},
		{"public, max-age=60", 1, false},
	} {
		t.Run(tc.cc, func(t *testing.T) {
			h := mustHandler(t, validCard(), nil)
			cs := newCardServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(&overrideCC{ResponseWriter: w, cc: tc.cc}, r)
			}))
			f := &Fetcher{}
			for range 2 {
				if _, err := f.Fetch(t.Context(), cs.url()); err != nil {
					t.Fatal(err)
				}
			}
			if cs.requests.Load() != tc.requests {
				t.Errorf("%d requests, want %d", cs.requests.Load(), tc.requests)
			}
			if got := (*cs.last.Load()).Get("If-None-Match") != ""; cs.requests.Load() == 2 && got != tc.inm {
				t.Errorf("revalidated: %v, want %v", got, tc.inm)
			}
		})
	}
}

// overrideCC replaces the Cache-Control the card handler sets.
type overrideCC struct {
	http.ResponseWriter
	cc string
}

func (o *overrideCC) WriteHeader(code int) {
	o.Header().Set("Cache-Control", o.cc)
	o.ResponseWriter.WriteHeader(code)
}

// The cache is bounded.
func TestFetcherCacheBound(t *testing.T) {
	cs := newCardServer(t, mustHandler(t, validCard(), nil))
	f := &Fetcher{}
	for i := range maxCached + 10 {
		if _, err := f.Fetch(t.Context(), fmt.Sprintf("%s?n=%d", cs.url(), i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(f.cache); n > maxCached {
		t.Errorf("%d cards cached, bound %d", n, maxCached)
	}
}

func TestFetchContext(t *testing.T) {
	cs := newCardServer(t, mustHandler(t, validCard(), nil))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Fetch(ctx, cs.url()); !errors.Is(err, context.Canceled) {
		t.Errorf("Fetch with an ended context: %v", err)
	}
}

func TestCompare(t *testing.T) {
	c := validCard()
	c.Title = "Weather"
	c.Remotes = []Remote{
		{Type: TransportStreamableHTTP, URL: "https://x/mcp", SupportedProtocolVersions: []string{"2026-07-28", "2025-11-25"}},
		{Type: TransportSSE, URL: "https://x/sse", SupportedProtocolVersions: []string{"2024-11-05"}},
	}
	live := []mcp.ProtocolVersion{"2025-11-25", "2026-07-28"}
	if m := c.Compare(&mcp.Implementation{Name: "weather", Version: "1.0.0", Title: "Weather", Description: "Forecasts."}, live); len(m) != 0 {
		t.Errorf("agreeing server: %+v", m)
	}
	// Empty live fields are not contradictions.
	if m := c.Compare(&mcp.Implementation{Name: "w"}, nil); len(m) != 0 {
		t.Errorf("a server that says little: %+v", m)
	}
	m := c.Compare(&mcp.Implementation{Version: "1.0.1", Title: "Wetter", Description: "Forecasts."}, []mcp.ProtocolVersion{"2025-11-25"})
	want := []Mismatch{
		{Field: "version", Card: "1.0.0", Live: "1.0.1"},
		{Field: "title", Card: "Weather", Live: "Wetter"},
		{Field: "remotes[0].supportedProtocolVersions", Card: "2025-11-25, 2026-07-28", Live: "2025-11-25"},
	}
	if fmt.Sprint(m) != fmt.Sprint(want) {
		t.Errorf("Compare = %+v\nwant %+v", m, want)
	}
	// A card that hides a version the server serves is a contradiction
	// too (it could steer a client to the older one).
	c.Remotes[0].SupportedProtocolVersions = []string{"2025-11-25"}
	if m := c.Compare(nil, live); len(m) != 1 || m[0].Field != "remotes[0].supportedProtocolVersions" {
		t.Errorf("understated versions: %+v", m)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Redirects on this machine are followed, at most ten.
func TestFetchRedirectLimit(t *testing.T) {
	var hops atomic.Int32
	var cs *cardServer
	cs = newCardServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hops.Add(1)
		http.Redirect(w, r, cs.url(), http.StatusFound)
	}))
	if _, err := Fetch(t.Context(), cs.url()); err == nil || !strings.Contains(err.Error(), "10 redirects") {
		t.Errorf("endless redirects: %v", err)
	}
	if n := hops.Load(); n != 10 {
		t.Errorf("%d requests, want 10 (the first and nine redirects; the tenth is refused)", n)
	}
}
