package streamhttp

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/parley-mcp/parley/auth"
)

// CallerOptions says how the handler names the caller of a request that
// carries no authenticated principal, for the limits per caller: the
// legacy sessions' shares here, and further down (through
// [auth.CallerKey]) listen streams, single-use states and whatever else
// counts per caller. Such a caller is its client's address, with the
// addresses of one host or site grouped into one caller. A nil
// *CallerOptions means defaults: the address of the connection's peer,
// IPv6 addresses grouped by /64, each IPv4 address its own caller, every
// loopback address one caller, and no forwarding header believed.
type CallerOptions struct {
	// Prefixes groups addresses into callers: the addresses sharing
	// their first Prefixes.IPv6 (or Prefixes.IPv4) bits are one caller.
	// Zero fields mean auth.DefaultIPv6Prefix (64) and
	// auth.DefaultIPv4Prefix (32). Widen them (IPv6 48, IPv4 24) where
	// clients are given whole blocks; 128 makes each IPv6 address its
	// own caller, which lets one host multiply its shares.
	Prefixes auth.AddrPrefixes

	// TrustedProxies lists the peers whose forwarding header is believed,
	// as prefixes (a single proxy is its /32 or /128). Only when a
	// request's peer (the connection's address) is one of them does the
	// handler read ForwardedHeader, walking its addresses from the right
	// (the hop the nearest proxy added) past every trusted proxy; the
	// first address that is not one is the client. An address that does
	// not parse ("unknown", an obfuscated name, garbage) stops the walk,
	// and the last trusted proxy stands for the client. Empty (the
	// default): no header is believed, whoever sends it, and the client
	// is the connection's peer. List only proxies you run: a client
	// allowed in here can name any address as its own.
	TrustedProxies []netip.Prefix

	// ForwardedHeader names the header TrustedProxies write the client's
	// address in: "X-Forwarded-For" by default, any header holding
	// addresses separated by commas (X-Real-IP, for one), or
	// "Forwarded", read as RFC 7239 says (the for= parameter of each
	// element). It is ignored unless TrustedProxies is set.
	ForwardedHeader string
}

// The headers that carry a client's address through proxies.
const (
	headerXForwardedFor = "X-Forwarded-For"
	headerForwarded     = "Forwarded"
)

// maxForwardedHops bounds the hops of a forwarding header the handler
// considers, from the right: a chain of trusted proxies is short, and a
// client can make the header as long as the server's header limit.
const maxForwardedHops = 32

// callerPolicy is CallerOptions, resolved.
type callerPolicy struct {
	prefixes auth.AddrPrefixes
	trusted  []netip.Prefix
	header   string // canonical; "" when no proxy is trusted
	rfc7239  bool   // header is Forwarded
}

func newCallerPolicy(o *CallerOptions) callerPolicy {
	var p callerPolicy
	if o == nil {
		return p
	}
	p.prefixes = o.Prefixes
	for _, t := range o.TrustedProxies {
		if !t.IsValid() {
			continue
		}
		if a := t.Addr(); a.Is4In6() && t.Bits() >= 96 {
			// Addresses are compared unmapped: an IPv4 proxy written
			// as ::ffff:a.b.c.d is the IPv4 proxy.
			t = netip.PrefixFrom(a.Unmap(), t.Bits()-96)
		}
		p.trusted = append(p.trusted, t.Masked())
	}
	if len(p.trusted) > 0 {
		p.header = http.CanonicalHeaderKey(o.ForwardedHeader)
		if p.header == "" {
			p.header = headerXForwardedFor
		}
		p.rfc7239 = p.header == headerForwarded
	}
	return p
}

// callerContext returns r's context with the client's address added
// ([auth.WithRemoteAddrPrefixes]), so that limits per caller further down
// (the single-use store's shares, listen streams) can tell unauthenticated
// clients apart and group them. An address already in the context (put
// there by a middleware in front of the handler, which knows better) is
// kept; the handler's prefixes apply to it too.
func (h *Handler) callerContext(r *http.Request) context.Context {
	ctx := r.Context()
	host := auth.RemoteAddrFrom(ctx)
	if host == "" {
		host = h.callers.clientHost(r)
	}
	return auth.WithRemoteAddrPrefixes(ctx, host, h.callers.prefixes)
}

// clientHost is the address of r's client: its peer's, unless the peer is
// a trusted proxy and its forwarding header names another.
func (p *callerPolicy) clientHost(r *http.Request) string {
	peer := remoteHost(r)
	if p.header == "" {
		return peer
	}
	a, ok := parseHop(peer)
	if !ok || !p.isTrusted(a) {
		return peer // believed only from a proxy on the list
	}
	hops, n := p.forwardedHops(r.Header.Values(p.header))
	client := peer
	for i := range min(n, maxForwardedHops) {
		hop := hops[(n-1-i)%maxForwardedHops]
		a, ok := parseHop(hop)
		if !ok {
			return client // the last trusted proxy stands for what it could not name
		}
		client = a.String()
		if !p.isTrusted(a) {
			return client
		}
	}
	return client // every hop considered is a trusted proxy: the leftmost stands for the client
}

// isTrusted reports whether a is one of the trusted proxies.
func (p *callerPolicy) isTrusted(a netip.Addr) bool {
	for _, t := range p.trusted {
		if t.Contains(a) {
			return true
		}
	}
	return false
}

// forwardedHops returns the last maxForwardedHops hops of the forwarding
// header's values, in a ring: hop i (from the left, of n in all) is
// hops[i%maxForwardedHops]. A header too long for the ring keeps its
// rightmost hops, the ones proxies added.
func (p *callerPolicy) forwardedHops(values []string) (hops [maxForwardedHops]string, n int) {
	add := func(hop string) {
		hops[n%maxForwardedHops] = hop
		n++
	}
	for _, v := range values {
		if p.rfc7239 {
			forwardedFor(v, add)
			continue
		}
		for hop := range strings.SplitSeq(v, ",") {
			add(hop)
		}
	}
	return hops, n
}

// forwardedFor calls add with the for= value of each element of v, a
// Forwarded header's value (RFC 7239: elements separated by commas, each
// of pairs separated by semicolons, a value a token or a quoted string),
// or "" for an element without one. Separators inside a quoted string do
// not separate.
func forwardedFor(v string, add func(string)) {
	var (
		name, value string
		found       bool   // the current element has a for= pair
		forValue    string // and this is its value
		inName      = true
		start       int
	)
	endPair := func(i int) {
		if inName {
			name = v[start:i]
		} else {
			value = v[start:i]
		}
		if !inName && strings.EqualFold(strings.TrimSpace(name), "for") && !found {
			found, forValue = true, unquote(strings.TrimSpace(value))
		}
		name, value, inName, start = "", "", true, i+1
	}
	quoted := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case quoted && c == '\\':
			i++ // the escaped character, whatever it is
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '=' && inName:
			name, inName, start = v[start:i], false, i+1
		case c == ';':
			endPair(i)
		case c == ',':
			endPair(i)
			add(forValue)
			found, forValue = false, ""
		}
	}
	endPair(len(v))
	add(forValue)
}

// unquote returns a quoted string's content, its escapes undone; any
// other value is returned as it is.
func unquote(s string) string {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return s
	}
	s = s[1 : len(s)-1]
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// parseHop parses one address of a forwarding header, or a peer's host:
// an IP address, perhaps in brackets, perhaps with a port.
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil {
		return a.WithZone("").Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().WithZone("").Unmap(), true
	}
	if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil {
			return a.WithZone("").Unmap(), true
		}
	}
	return netip.Addr{}, false
}

// remoteHost is the host of r.RemoteAddr, without the port: one client
// opens many connections from one host.
func remoteHost(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}
