package oauthclient

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

func TestHeadlessAuthorizerRefusesForeignRedirect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://elsewhere.example/callback?code=x", http.StatusFound)
	}))
	defer srv.Close()
	_, err := (&HeadlessAuthorizer{}).Authorize(context.Background(), srv.URL)
	if err == nil || !strings.Contains(err.Error(), "not to the redirect URI") {
		t.Fatalf("err = %v, want a refusal of the foreign redirect", err)
	}
	login := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<form>login</form>")) }))
	defer login.Close()
	if _, err := (&HeadlessAuthorizer{}).Authorize(context.Background(), login.URL); err == nil {
		t.Fatal("a login page (200) was taken for a redirect")
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func TestLoopbackAuthorizer(t *testing.T) {
	opened := make(chan string, 1)
	out := &syncBuffer{}
	a, err := NewLoopbackAuthorizer(&LoopbackOptions{Out: out, Open: func(u string) error { opened <- u; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ru, err := url.Parse(a.RedirectURI())
	if err != nil || ru.Hostname() != "127.0.0.1" || ru.Path != "/callback" || ru.Port() == "0" {
		t.Fatalf("redirect URI %q", a.RedirectURI())
	}
	// Nothing is waiting yet: a stray redirect is refused.
	if resp, err := http.Get(a.RedirectURI() + "?code=early"); err != nil || resp.StatusCode != 404 {
		t.Fatalf("stray redirect: %v %v", resp, err)
	}
	type result struct {
		q   url.Values
		err error
	}
	done := make(chan result, 1)
	go func() {
		q, err := a.Authorize(context.Background(), "https://as.example/authorize?x=1")
		done <- result{q, err}
	}()
	if u := <-opened; u != "https://as.example/authorize?x=1" {
		t.Errorf("opened %q", u)
	}
	resp, err := http.Get(a.RedirectURI() + "?code=c1&state=s1")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("redirect: %v %v", resp, err)
	}
	r := <-done
	if r.err != nil || r.q.Get("code") != "c1" || r.q.Get("state") != "s1" {
		t.Fatalf("Authorize = %v, %v", r.q, r.err)
	}
	out.mu.Lock()
	printed := out.b.String()
	out.mu.Unlock()
	if !strings.Contains(printed, "https://as.example/authorize?x=1") {
		t.Errorf("the URL was not shown to the user: %q", printed)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Authorize(ctx, "https://as.example/authorize"); err != context.Canceled {
		t.Errorf("cancelled Authorize: %v", err)
	}
}
