package servercard

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// serve answers one request to h.
func serve(h http.Handler, method string, header map[string]string) *http.Response {
	r := httptest.NewRequest(method, "/mcp/server-card", nil)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

func mustHandler(t *testing.T, c *Card, opts *HandlerOptions) http.Handler {
	t.Helper()
	h, err := Handler(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A GET answers the card with every header the proposal asks for.
func TestHandlerGet(t *testing.T) {
	c := validCard()
	resp := serve(mustHandler(t, c, nil), http.MethodGet, nil)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	want := map[string]string{
		"Content-Type":                  MediaType,
		"Cache-Control":                 "public, max-age=3600",
		"Access-Control-Allow-Origin":   "*",
		"Access-Control-Allow-Methods":  "GET",
		"Access-Control-Allow-Headers":  "Content-Type, If-None-Match",
		"Access-Control-Expose-Headers": "ETag",
		"X-Content-Type-Options":        "nosniff",
	}
	for k, v := range want {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if etag := resp.Header.Get("ETag"); !strings.HasPrefix(etag, `"`) || !strings.HasSuffix(etag, `"`) || len(etag) < 10 {
		t.Errorf("ETag %q is not a strong entity tag", etag)
	}
	var got Card
	if err := json.Unmarshal(body, &got); err != nil || got.Name != c.Name || got.Schema != SchemaURL {
		t.Errorf("body %s: %v", body, err)
	}
	// HEAD: the same headers, no body.
	head := serve(mustHandler(t, c, nil), http.MethodHead, nil)
	if b, _ := io.ReadAll(head.Body); len(b) != 0 || head.Header.Get("ETag") != resp.Header.Get("ETag") || head.StatusCode != 200 {
		t.Errorf("HEAD: %d %q, ETag %q", head.StatusCode, b, head.Header.Get("ETag"))
	}
}

// The ETag is the card's: the same card has the same tag (every instance
// of a fleet agrees), another card another.
func TestHandlerETag(t *testing.T) {
	a := serve(mustHandler(t, validCard(), nil), http.MethodGet, nil).Header.Get("ETag")
	b := serve(mustHandler(t, validCard(), nil), http.MethodGet, nil).Header.Get("ETag")
	other := validCard()
	other.Version = "1.0.1"
	c := serve(mustHandler(t, other, nil), http.MethodGet, nil).Header.Get("ETag")
	if a != b || a == c {
		t.Errorf("ETags %q, %q (same card), %q (another)", a, b, c)
	}
}

// If-None-Match: the card's tag (strong or weak, alone or in a list) or *
// is answered 304 without a body; another tag gets the card.
func TestHandlerNotModified(t *testing.T) {
	h := mustHandler(t, validCard(), nil)
	etag := serve(h, http.MethodGet, nil).Header.Get("ETag")
	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		resp := serve(h, http.MethodGet, map[string]string{"If-None-Match": inm})
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusNotModified || len(b) != 0 || resp.Header.Get("ETag") != etag || resp.Header.Get("Cache-Control") == "" {
			t.Errorf("If-None-Match %s: %d, %d bytes, ETag %q", inm, resp.StatusCode, len(b), resp.Header.Get("ETag"))
		}
	}
	for _, inm := range []string{`"other"`, strings.TrimSuffix(etag, `"`) + `x"`} {
		if resp := serve(h, http.MethodGet, map[string]string{"If-None-Match": inm}); resp.StatusCode != http.StatusOK {
			t.Errorf("If-None-Match %s: %d, want 200", inm, resp.StatusCode)
		}
	}
}

func TestHandlerMethods(t *testing.T) {
	h := mustHandler(t, validCard(), nil)
	pre := serve(h, http.MethodOptions, map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "GET"})
	if pre.StatusCode != http.StatusNoContent || pre.Header.Get("Access-Control-Allow-Origin") != "*" || pre.Header.Get("Access-Control-Allow-Methods") != "GET" {
		t.Errorf("preflight: %d %v", pre.StatusCode, pre.Header)
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		resp := serve(h, m, nil)
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD, OPTIONS" || resp.Header.Get("ETag") != "" {
			t.Errorf("%s: %d, Allow %q", m, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
}

func TestHandlerMaxAge(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "public, max-age=3600"},
		{90 * time.Second, "public, max-age=90"},
		{-1, "public, no-cache"},
	} {
		resp := serve(mustHandler(t, validCard(), &HandlerOptions{MaxAge: tc.d}), http.MethodGet, nil)
		if got := resp.Header.Get("Cache-Control"); got != tc.want {
			t.Errorf("MaxAge %v: Cache-Control %q, want %q", tc.d, got, tc.want)
		}
	}
}

// An invalid card is refused when the handler is made, not served.
func TestHandlerRefusesInvalid(t *testing.T) {
	c := validCard()
	c.Name = "no-slash"
	var inv *InvalidError
	if _, err := Handler(c, nil); !errors.As(err, &inv) || inv.Field != "name" {
		t.Errorf("Handler: %v", err)
	}
	if err := Mount(http.NewServeMux(), "/mcp", c, nil); !errors.As(err, &inv) {
		t.Errorf("Mount: %v", err)
	}
}

// The handler serves what c was when it was made.
func TestHandlerEncodesOnce(t *testing.T) {
	c := validCard()
	h := mustHandler(t, c, nil)
	c.Version = "9.9.9"
	var got Card
	json.NewDecoder(serve(h, http.MethodGet, nil).Body).Decode(&got)
	if got.Version != "1.0.0" {
		t.Errorf("served version %q after the card changed", got.Version)
	}
}

func TestMount(t *testing.T) {
	for _, endpoint := range []string{"/mcp", "/mcp/", "/tenant/a/mcp"} {
		mux := http.NewServeMux()
		if err := Mount(mux, endpoint, validCard(), nil); err != nil {
			t.Fatal(err)
		}
		path := strings.TrimSuffix(endpoint, "/") + "/server-card"
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code != http.StatusOK || w.Header().Get("Content-Type") != MediaType {
			t.Errorf("Mount(%q): GET %s = %d", endpoint, path, w.Code)
		}
	}
}

func TestLocation(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://host/mcp", "https://host/mcp/server-card"},
		{"https://host/mcp/", "https://host/mcp/server-card"},
		{"https://host", "https://host/server-card"},
		{"https://host/mcp?tenant=a#frag", "https://host/mcp/server-card?tenant=a"},
		{"https://host/mcp/server-card", "https://host/mcp/server-card"},
		{"http://127.0.0.1:8080/a%2Fb/mcp", "http://127.0.0.1:8080/a%2Fb/mcp/server-card"},
	} {
		if got, err := Location(tc.in); err != nil || got != tc.want {
			t.Errorf("Location(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"ftp://host/mcp", "/mcp", "https://", "http://[::1"} {
		if got, err := Location(bad); err == nil {
			t.Errorf("Location(%q) = %q, want an error", bad, got)
		}
	}
}
