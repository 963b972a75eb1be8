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
			return "Host " + quoteHeader(r.Host) + " is not allowed"
		}
	} else if loopback && !isLoopbackHost(hostOnly(r.Host)) {
		return "Host " + quoteHeader(r.Host) + " is not allowed: this server listens on a loopback address and accepts only localhost, 127.0.0.1 or [::1]"
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
		return "Origin " + quoteHeader(origin) + " is not allowed"
	case loopback:
		if isLoopbackHost(hostOnly(originHost(n))) {
			return ""
		}
		return "Origin " + quoteHeader(origin) + " is not allowed: this server listens on a loopback address"
	case strings.EqualFold(originHost(n), r.Host) || p.hostAllowedOrigin(n):
		return "" // same origin
	}
	return "Origin " + quoteHeader(origin) + " is not allowed"
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
// a page served from an allowed host may call the server.
func (p *originPolicy) hostAllowedOrigin(origin string) bool {
	return len(p.hosts) > 0 && p.hostAllowed(originHost(origin))
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
// when origin is not a serialized origin (including the opaque "null").
func normalizeOrigin(origin string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(origin))
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") {
		return "", false
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), true
}

// originHost returns the host[:port] of a normalized origin.
func originHost(origin string) string {
	_, rest, _ := strings.Cut(origin, "://")
	return rest
}

// quoteHeader quotes a header value for an error message, cutting it short.
func quoteHeader(v string) string {
	if len(v) > 100 {
		v = v[:100] + "..."
	}
	return `"` + strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' {
			return '?'
		}
		return r
	}, v) + `"`
}
