package oauthclient

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
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
	// A deadline for the whole flow: an Authorize that never opens the
	// browser or never returns fails the test in seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan result, 1)
	go func() {
		q, err := a.Authorize(ctx, "https://as.example/authorize?x=1")
		done <- result{q, err}
	}()
	select {
	case u := <-opened:
		if u != "https://as.example/authorize?x=1" {
			t.Errorf("opened %q", u)
		}
	case r := <-done:
		t.Fatalf("Authorize returned %v, %v without opening the browser", r.q, r.err)
	case <-ctx.Done():
		t.Fatal("Authorize did not open the browser")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.RedirectURI()+"?code=c1&state=s1", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("redirect: %v %v", resp, err)
	}
	resp.Body.Close()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("Authorize did not return after the redirect")
	}
	if r.err != nil || r.q.Get("code") != "c1" || r.q.Get("state") != "s1" {
		t.Fatalf("Authorize = %v, %v", r.q, r.err)
	}
	out.mu.Lock()
	printed := out.b.String()
	out.mu.Unlock()
	if !strings.Contains(printed, "https://as.example/authorize?x=1") {
		t.Errorf("the URL was not shown to the user: %q", printed)
	}
	cancelled, cancelNow := context.WithCancel(context.Background())
	cancelNow()
	if _, err := a.Authorize(cancelled, "https://as.example/authorize"); err != context.Canceled {
		t.Errorf("cancelled Authorize: %v", err)
	}
}

// TestLoopbackAuthorizerWaitsForItsState runs the whole flow with a
// LoopbackAuthorizer whose "browser" first meets a stray request to the
// redirect path (wrong state, then none), then completes the consent. The
// strays are answered 400 and the flow goes on with the real code.
func TestLoopbackAuthorizerWaitsForItsState(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, as, nil)
	browser := &http.Client{}
	// get returns the status, content type and body of a GET of u, or
	// the error as the body.
	get := func(u string) (int, string, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return 0, "", err.Error()
		}
		resp, err := browser.Do(req)
		if err != nil {
			return 0, "", err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	var a *LoopbackAuthorizer
	var strays []string
	a, err := NewLoopbackAuthorizer(&LoopbackOptions{Out: io.Discard, Open: func(authURL string) error {
		for _, q := range []string{"?code=code-stray&state=wrong&iss=" + url.QueryEscape(as.issuer()), "?code=code-stray"} {
			status, ct, body := get(a.RedirectURI() + q)
			if status != http.StatusBadRequest || !strings.HasPrefix(ct, "text/plain") {
				strays = append(strays, fmt.Sprintf("%s: %d %s %s", q, status, ct, body))
			}
		}
		// The consent: the authorization server redirects the browser
		// to the callback with the real code and state.
		if status, _, body := get(authURL); status != 200 {
			strays = append(strays, fmt.Sprintf("consent: %d %s", status, body))
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tr := newTransport(t, Config{Authorizer: a})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rs.url(), strings.NewReader("x"))
	resp, err := tr.Client().Do(req)
	if err != nil {
		t.Fatalf("the flow failed: %v (browser: %q)", err, strays)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if len(strays) != 0 {
		t.Errorf("the stray redirects were not answered 400 text/plain: %q", strays)
	}
	if _, token, _ := as.counts(); token != 1 || as.tokenReqs[0].Get("code") == "code-stray" {
		t.Errorf("token requests %v, want one with the real code", as.tokenReqs)
	}
}
