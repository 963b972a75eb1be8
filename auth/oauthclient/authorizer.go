package oauthclient

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
)

// An Authorizer runs the interactive step of the authorization code flow:
// it sends the user (a browser) to the authorization URL and returns the
// query of the request the authorization server redirected back to
// RedirectURI. It need not check the response: the caller checks state
// and iss, and redeems the code.
type Authorizer interface {
	// RedirectURI is the redirect_uri to register and to send. It must
	// not change between calls.
	RedirectURI() string
	// Authorize has the user visit authURL and returns the query
	// parameters of the redirect (code, state, iss, or error). It returns
	// when the redirect arrives or ctx ends.
	Authorize(ctx context.Context, authURL string) (url.Values, error)
}

// HeadlessAuthorizer is an Authorizer without a user: it requests the
// authorization URL itself and reads the redirect from the Location header
// of the answer, never following it. It works only with authorization
// servers that approve without a login page, such as test servers and the
// conformance suite's mocks.
type HeadlessAuthorizer struct {
	// Redirect is the redirect URI. Nothing listens there: the redirect is
	// read, not followed. Default: http://127.0.0.1/callback.
	Redirect string
	// HTTPClient requests the authorization URL. Its CheckRedirect is not
	// used. Default: a client with http.DefaultTransport.
	HTTPClient *http.Client
}

// RedirectURI implements [Authorizer].
func (h *HeadlessAuthorizer) RedirectURI() string {
	if h.Redirect == "" {
		return "http://127.0.0.1/callback"
	}
	return h.Redirect
}

// Authorize implements [Authorizer].
func (h *HeadlessAuthorizer) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	hc := http.Client{Transport: http.DefaultTransport}
	if h.HTTPClient != nil {
		hc = *h.HTTPClient
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("oauthclient: authorization request: %w", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	loc := resp.Header.Get("Location")
	if resp.StatusCode < 300 || resp.StatusCode >= 400 || loc == "" {
		return nil, fmt.Errorf("oauthclient: the authorization endpoint answered %d without a redirect; a headless authorizer needs one", resp.StatusCode)
	}
	u, err := resp.Request.URL.Parse(loc)
	if err != nil {
		return nil, fmt.Errorf("oauthclient: authorization redirect %q: %w", loc, err)
	}
	if !sameEndpoint(u, h.RedirectURI()) {
		return nil, fmt.Errorf("oauthclient: the authorization endpoint redirected to %s, not to the redirect URI %s", stripQuery(u), h.RedirectURI())
	}
	return u.Query(), nil
}

// sameEndpoint reports whether u is the redirect URI ru, query aside.
func sameEndpoint(u *url.URL, ru string) bool {
	r, err := url.Parse(ru)
	if err != nil {
		return false
	}
	return strings.EqualFold(u.Scheme, r.Scheme) && strings.EqualFold(u.Host, r.Host) && u.Path == r.Path
}

func stripQuery(u *url.URL) string {
	c := *u
	c.RawQuery, c.Fragment = "", ""
	return c.String()
}

// LoopbackAuthorizer is the Authorizer of a native application (RFC 8252
// section 7.3): it listens on a loopback port, shows the user the
// authorization URL (and opens it with Open, when set), and takes the
// redirect the browser brings back. Create it with [NewLoopbackAuthorizer]
// and Close it when done.
//
// It takes only the redirect whose state is the authorization URL's state
// parameter. Any other request to the redirect path while the user is at
// the consent screen (a stray or forged one, a stale tab's) is answered
// 400 and does not end the wait, so it cannot break the user's login.
type LoopbackAuthorizer struct {
	ln       net.Listener
	srv      *http.Server
	redirect string
	out      io.Writer
	open     func(string) error

	mu      sync.Mutex
	waiting *pendingAuthorization // the pending Authorize call, if any
}

// pendingAuthorization is an Authorize call waiting for its redirect.
type pendingAuthorization struct {
	ch    chan url.Values
	state string // of the authorization URL; "" takes any redirect
}

// LoopbackOptions configures a [LoopbackAuthorizer]. The zero value is
// ready to use.
type LoopbackOptions struct {
	// Addr is where to listen. Default: 127.0.0.1:0 (a free port).
	// Use a loopback address: the redirect carries the authorization code.
	Addr string
	// Path is the redirect path. Default: /callback.
	Path string
	// Out is where the authorization URL is printed for the user.
	// Default: os.Stderr.
	Out io.Writer
	// Open, when set, opens the URL in the user's browser (with
	// xdg-open, open or start, say). Its error is printed, not returned:
	// the user can still copy the URL.
	Open func(url string) error
}

// NewLoopbackAuthorizer starts listening for redirects.
func NewLoopbackAuthorizer(opts *LoopbackOptions) (*LoopbackAuthorizer, error) {
	var o LoopbackOptions
	if opts != nil {
		o = *opts
	}
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.Path == "" {
		o.Path = "/callback"
	}
	if o.Out == nil {
		o.Out = os.Stderr
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("oauthclient: loopback redirect listener: %w", err)
	}
	a := &LoopbackAuthorizer{
		ln:       ln,
		redirect: "http://" + ln.Addr().String() + o.Path,
		out:      o.Out,
		open:     o.Open,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+o.Path, a.callback)
	a.srv = &http.Server{Handler: mux}
	go a.srv.Serve(ln)
	return a, nil
}

// RedirectURI implements [Authorizer].
func (a *LoopbackAuthorizer) RedirectURI() string { return a.redirect }

// Authorize implements [Authorizer]. One authorization runs at a time.
func (a *LoopbackAuthorizer) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	p := &pendingAuthorization{ch: make(chan url.Values, 1)}
	if u, err := url.Parse(authURL); err == nil {
		p.state = u.Query().Get("state")
	}
	a.mu.Lock()
	if a.waiting != nil {
		a.mu.Unlock()
		return nil, errors.New("oauthclient: another authorization is already waiting for its redirect")
	}
	a.waiting = p
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.waiting = nil
		a.mu.Unlock()
	}()
	fmt.Fprintf(a.out, "Open this URL in your browser to authorize access:\n\n  %s\n\n", authURL)
	if a.open != nil {
		if err := a.open(authURL); err != nil {
			fmt.Fprintf(a.out, "(could not open a browser: %v)\n", err)
		}
	}
	select {
	case q := <-p.ch:
		return q, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (a *LoopbackAuthorizer) callback(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	p := a.waiting
	a.mu.Unlock()
	if p == nil {
		http.Error(w, "no authorization is in progress", http.StatusNotFound)
		return
	}
	q := r.URL.Query()
	if p.state != "" && subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(p.state)) != 1 {
		http.Error(w, "this is not the redirect of the authorization in progress (state does not match)", http.StatusBadRequest)
		return
	}
	select {
	case p.ch <- q:
	default: // a second redirect for the same request: the first one counts
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	msg := "Authorization complete. You can close this window."
	if e := q.Get("error"); e != "" {
		msg = "Authorization failed: " + e
	}
	fmt.Fprintf(w, "<!doctype html><title>Authorization</title><p>%s</p>", html.EscapeString(msg))
}

// Close stops listening.
func (a *LoopbackAuthorizer) Close() error { return a.srv.Close() }
