package streamhttp

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// This file is the handler's protection against DNS rebinding: a web page
// on evil.example.com whose DNS name is re-pointed at 127.0.0.1 can make the
// user's browser send requests to a server listening on the loopback
// interface. The browser then says "Host: evil.example.com" and
// "Origin: http://evil.example.com", which is how the server tells.

// originPolicy decides which Host and Origin headers a handler accepts.
type originPolicy struct {
	disabled bool
	hosts    []hostPattern // AllowedHosts; empty means the loopback default
	origins  map[string]bool
}

// hostPattern is one AllowedHosts entry: a host name or IP, with an optional
// port ("" matches any port).
type hostPattern struct {
	host string
	port string
}

func newOriginPolicy(o *HandlerOptions) *originPolicy {
	p := &originPolicy{disabled: o.DisableHostCheck, origins: map[string]bool{}}
	for _, h := range o.AllowedHosts {
		host, port := splitHostPort(strings.TrimSpace(h))
		p.hosts = append(p.hosts, hostPattern{host: strings.ToLower(host), port: port})
	}
	for _, o := range o.AllowedOrigins {
		if n, ok := normalizeOrigin(o); ok {
			p.origins[n] = true
		}
	}
	return p
}

// check returns "" when the request may proceed, or the reason it must be
// refused with 403 Forbidden.
func (p *originPolicy) check(r *http.Request) string {
	if p.disabled {
		return ""
	}
	loopback := servesLoopback(r)
	if len(p.hosts) > 0 {
		if !p.hostAllowed(r.Host) {
			return "Host " + echoHeader(r.Host) + " is not allowed"
		}
	} else if loopback && !isLoopbackHost(hostOnly(r.Host)) {
		return "Host " + echoHeader(r.Host) + " is not allowed: this server listens on a loopback address and accepts only localhost, 127.0.0.1 or [::1]"
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	n, ok := normalizeOrigin(origin)
	switch {
	case ok && p.origins[n]:
		return ""
	case !ok:
		return "Origin " + echoHeader(origin) + " is not allowed"
	case loopback:
		if isLoopbackHost(hostOnly(originHost(n))) {
			return ""
		}
		return "Origin " + echoHeader(origin) + " is not allowed: this server listens on a loopback address"
	case sameOrigin(n, r.Host) || p.hostAllowedOrigin(n):
		return "" // same origin
	}
	return "Origin " + echoHeader(origin) + " is not allowed"
}

func (p *originPolicy) hostAllowed(hostport string) bool {
	host, port := splitHostPort(hostport)
	host = strings.ToLower(host)
	for _, h := range p.hosts {
		if h.host == host && (h.port == "" || h.port == port) {
			return true
		}
	}
	return false
}

// hostAllowedOrigin reports whether an origin names one of AllowedHosts:
// a page served from an allowed host may call the server. An origin without
// a port is on its scheme's default port, so "https://x" matches "x:443".
func (p *originPolicy) hostAllowedOrigin(origin string) bool {
	if len(p.hosts) == 0 {
		return false
	}
	host, port := originHostPort(origin)
	for _, h := range p.hosts {
		if h.host == host && (h.port == "" || h.port == port) {
			return true
		}
	}
	return false
}

// sameOrigin reports whether a normalized origin names the host and port a
// request was sent to (its Host header). A missing port, on either side, is
// the default port of the origin's scheme (browsers leave a default port
// out of both, but a proxy or a client may spell it): "https://x:443" and
// Host "x" are the same origin, while "https://x:8443" and Host "x", or
// "http://x" and Host "x:443", are not.
func sameOrigin(origin, hostHeader string) bool {
	oHost, oPort := originHostPort(origin)
	host, port := splitHostPort(hostHeader)
	if port == "" {
		port = defaultPort(originScheme(origin))
	}
	return strings.EqualFold(oHost, host) && oPort == port
}

// servesLoopback reports whether the request arrived on a loopback address
// of this machine. Requests that did not come through an http.Server (no
// local address in the context) are not considered loopback.
func servesLoopback(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// isLoopbackHost reports whether host (without port) is localhost or a
// loopback IP address.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// splitHostPort splits "host", "host:port", "[v6]" or "[v6]:port".
func splitHostPort(hostport string) (host, port string) {
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		return h, p
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), ""
}

func hostOnly(hostport string) string {
	h, _ := splitHostPort(hostport)
	return h
}

// normalizeOrigin returns "scheme://host[:port]" in lower case, or false
// when origin is not a serialized origin (including the opaque "null"). An
// explicit default port is dropped, as browsers serialize origins:
// "https://x:443" becomes "https://x".
func normalizeOrigin(origin string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(origin))
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") {
		return "", false
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if port := u.Port(); port != "" && port == defaultPort(scheme) {
		host = strings.TrimSuffix(host, ":"+port)
	}
	return scheme + "://" + host, true
}

// originScheme returns the scheme of a normalized origin.
func originScheme(origin string) string {
	scheme, _, _ := strings.Cut(origin, "://")
	return scheme
}

// originHost returns the host[:port] of a normalized origin.
func originHost(origin string) string {
	_, rest, _ := strings.Cut(origin, "://")
	return rest
}

// originHostPort returns the host and port of a normalized origin, the
// port being its scheme's default when the origin names none.
func originHostPort(origin string) (host, port string) {
	host, port = splitHostPort(originHost(origin))
	if port == "" {
		port = defaultPort(originScheme(origin))
	}
	return host, port
}

// defaultPort returns the port a URL of scheme means when it names none:
// "80" for http, "443" for https, "" for any other scheme.
func defaultPort(scheme string) string {
	switch scheme {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}
