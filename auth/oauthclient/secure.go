package oauthclient

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// isLoopback reports whether host, a URL's Hostname, is this machine:
// localhost or a loopback IP literal. Plain HTTP to it never leaves the
// machine, which is why the MCP authorization spec exempts it (and why
// tests can run over httptest's plain listeners).
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// secureURL reports whether u may carry authorization traffic: https, or
// http to a loopback host.
func secureURL(u *url.URL) bool {
	switch u.Scheme {
	case "https":
		return true
	case "http":
		return isLoopback(u.Hostname())
	}
	return false
}

// requireSecure returns an *InsecureURLError unless raw, used as role, is
// a secure URL.
func requireSecure(raw, role string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %s %q is not a URL: %v", ErrDiscovery, role, raw, err)
	}
	if !secureURL(u) {
		return &InsecureURLError{URL: raw, Role: role}
	}
	return nil
}

// maxRedirects is net/http's own limit, kept for a client without a
// CheckRedirect of its own.
const maxRedirects = 10

// guardRedirects returns a copy of hc that refuses a redirect to a URL
// allow refuses, with an *InsecureURLError naming role; other redirects
// are left to hc's own CheckRedirect. Checking the URLs before the request
// is not enough: a server at an https URL may answer with a redirect to a
// plain-HTTP one, and for a 307 or 308 the client would re-send the token
// request's body (the code and its verifier) there.
func guardRedirects(hc *http.Client, role string, allow func(*url.URL) bool) *http.Client {
	c := *hc
	next := hc.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if !allow(req.URL) {
			return &InsecureURLError{URL: req.URL.String(), Role: role, From: via[len(via)-1].URL.String()}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}
