package streamhttp

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
)

// Configured headers (ClientOptions.Header) carry credentials: an
// Authorization header, an API key. net/http copies a request's headers
// onto every redirect it follows, and leaves out only Authorization,
// Www-Authenticate and Cookie, and only when the new host is neither the
// old one nor a subdomain of it: another port of the same host, or plain
// HTTP on the same host, gets them all, and another host gets every API
// key. The transport therefore leaves its configured headers off any hop
// of a redirect chain once the chain has left the endpoint's origin
// (scheme, host and port), as browsers do with Authorization (Fetch
// standard, HTTP-redirect fetch), and says so in the log. The redirect is
// still followed: what the server chose to send elsewhere is its own
// request, but the credentials are the user's, given for the endpoint
// alone (design record 042).

// keepHeadersHome returns hc, or, when hdr holds headers of the caller's
// own, a copy of hc whose redirects leave those out of every request once
// the chain has left the first request's origin. hc's own CheckRedirect
// (net/http's limit of 10 when it has none) still decides whether the
// redirect is followed; it sees the request without the headers.
func keepHeadersHome(hc *http.Client, hdr http.Header, log *slog.Logger) *http.Client {
	var names []string // the keys as hdr has them: headers() copies them as they are
	for k := range hdr {
		if !transportHeader(http.CanonicalHeaderKey(k)) {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return hc
	}
	c := *hc
	next := hc.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if leftOrigin(req, via) {
			var dropped []string
			for _, k := range names {
				if _, ok := req.Header[k]; ok {
					dropped = append(dropped, k)
				}
				delete(req.Header, k)
				req.Header.Del(k)
			}
			// net/http adds a Referer naming the previous URL, whose path
			// and query may hold a key as well.
			req.Header.Del("Referer")
			if len(dropped) > 0 {
				log.Warn("streamhttp: a redirect leads to another origin than the endpoint's; the configured headers are not sent there",
					"from", origin(via[0].URL), "to", origin(req.URL), "headers", strings.Join(dropped, ", "))
			}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects") // net/http's own policy
		}
		return nil
	}
	return &c
}

// transportHeader reports whether the transport sets the header named k
// (canonical) itself: its value on a request is the transport's, and none
// of them is a credential of the caller's.
func transportHeader(k string) bool {
	switch k {
	case "Content-Type", "Accept", canonProtocolVersion, canonMethod, canonName, canonSessionID, canonLastEventID:
		return true
	}
	return strings.HasPrefix(k, canonParamPrefix)
}

// leftOrigin reports whether req, the next hop of the redirect chain via,
// or any hop before it, is at another origin than the chain's first
// request. Once the chain has been elsewhere it stays suspect: the
// server that redirected back chose where the credentials would go.
func leftOrigin(req *http.Request, via []*http.Request) bool {
	home := via[0].URL
	if !sameURLOrigin(home, req.URL) {
		return true
	}
	for _, r := range via[1:] {
		if !sameURLOrigin(home, r.URL) {
			return true
		}
	}
	return false
}

// sameURLOrigin compares two URLs' origins (RFC 6454): scheme, host and
// port, the port defaulting by scheme.
func sameURLOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && urlPort(a) == urlPort(b)
}

// origin is u's origin as text, for the log: a path or query may hold a
// key, and the origin is what the rule is about.
func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

func urlPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	return defaultPort(strings.ToLower(u.Scheme))
}
