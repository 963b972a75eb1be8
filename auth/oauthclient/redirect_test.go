package oauthclient

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// A protected server that redirects a request, once it carries a valid
// token, to another origin (another port of the same host: net/http
// alone forwards an Authorization header there) sends the request on, but
// not the token: the transport adds a token per request, for the server
// the request goes to, and holds none for the other.
func TestTokenDoesNotFollowRedirectToAnotherOrigin(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	away := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.WriteHeader(200)
		fmt.Fprint(w, readAll(r))
	}))
	t.Cleanup(away.Close)
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, as, func(rs *fakeRS) { rs.redirectGranted = away.URL + "/mcp" })
	tr := newTransport(t, Config{})
	mustOK(t, tr, rs.url(), "first")
	mustOK(t, tr, rs.url(), "second")
	if h := rs.authHeaders(); len(h) != 3 || h[1] != "Bearer tok-1" || h[2] != "Bearer tok-1" {
		t.Fatalf("the protected server got %q, want no token and then the token twice", h)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != "" || seen[1] != "" {
		t.Errorf("the server redirected to got Authorization %q, want none", seen)
	}
}

// chain serves /r0 → /r1 → … → /rN, each a redirect, and /rN itself 200.
func chain(t *testing.T, n int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/r"))
		if k < n {
			http.Redirect(w, r, "/r"+strconv.Itoa(k+1), http.StatusFound)
			return
		}
		fmt.Fprint(w, "end")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The metadata, registration and token requests follow at most as many
// redirects as net/http does by default: nine are followed, a tenth ends
// the request ("stopped after 10 redirects"), whatever follows it. A
// client with a CheckRedirect of its own keeps it.
func TestRedirectLimit(t *testing.T) {
	any := func(*url.URL) bool { return true }
	for _, tc := range []struct {
		redirects int
		ok        bool
	}{{9, true}, {10, false}, {11, false}} {
		srv := chain(t, tc.redirects)
		for name, hc := range map[string]*http.Client{"net/http": {}, "guarded": guardRedirects(&http.Client{}, "test", any)} {
			resp, err := hc.Get(srv.URL + "/r0")
			if err == nil {
				resp.Body.Close()
			}
			if tc.ok && err != nil {
				t.Errorf("%s, %d redirects: %v", name, tc.redirects, err)
			}
			if !tc.ok && (err == nil || !strings.Contains(err.Error(), "stopped after 10 redirects")) {
				t.Errorf("%s, %d redirects: err = %v, want the limit of 10", name, tc.redirects, err)
			}
		}
	}
	calls := 0
	own := guardRedirects(&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
		calls++
		return http.ErrUseLastResponse
	}}, "test", any)
	resp, err := own.Get(chain(t, 3).URL + "/r0")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || calls != 1 {
		t.Errorf("status %d after %d calls of the client's CheckRedirect, want the first redirect, one call", resp.StatusCode, calls)
	}
}
