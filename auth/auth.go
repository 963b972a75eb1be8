// Package auth carries the identity of an authenticated caller through a
// request's context.
//
// A transport (or an HTTP middleware in front of it, such as package
// [github.com/parley-mcp/parley/auth/resourceserver], which validates
// OAuth bearer tokens) that has validated an OAuth access token stores
// what it learnt with [WithInfo]; code further
// down, such as the requestState boundary, reads it with [InfoFrom]. The
// package validates nothing itself: an [Info] in a context is a promise, by
// whoever put it there, that its fields come from a verified credential and
// not from anything the client merely claimed.
package auth

import (
	"context"
	"encoding/binary"
	"net/netip"
	"time"
)

// Info is what a validated access token says about its bearer. Empty fields
// are unknown. A verifier should fill the same fields on every request of
// one caller: code that binds data to the caller (sealed requestState, for
// one) compares ClientID, Issuer and Subject, so a subject present on one
// request and missing on the next looks like a different caller.
//
// Scopes, Expiry and KeyThumbprint describe the token rather than the
// caller: they change when the client refreshes its token, and nothing that
// binds data to the caller reads them (see [Info.SameCaller]).
type Info struct {
	// ClientID is the OAuth client the token was issued to.
	ClientID string
	// Issuer is the authorization server that issued the token (its iss).
	Issuer string
	// Subject is the user or service the token speaks for (its sub). Two
	// people using one OAuth client differ only here.
	Subject string
	// Scopes are the scopes the token grants, in the order the
	// authorization server listed them.
	Scopes []string
	// Expiry is when the token stops being valid; zero when the token does
	// not say.
	Expiry time.Time
	// KeyThumbprint is the JWK SHA-256 thumbprint (RFC 7638, base64url) of
	// the key the token is bound to, its cnf.jkt (RFC 9449 section 6);
	// empty for a bearer token. A DPoP-bound token is accepted only with a
	// proof of possession of that key, never as a bearer token.
	KeyThumbprint string
}

// SameCaller reports whether info and other describe the same caller: the
// same client, issuer and subject. Scopes and expiry are ignored, so a
// refreshed token (new expiry, perhaps narrower scopes) is still the same
// caller. Two nil Infos are the same (unauthenticated) caller; nil and
// non-nil are not.
func (info *Info) SameCaller(other *Info) bool {
	if info == nil || other == nil {
		return info == other
	}
	return info.ClientID == other.ClientID && info.Issuer == other.Issuer && info.Subject == other.Subject
}

// HasScope reports whether the token grants scope.
func (info *Info) HasScope(scope string) bool {
	if info == nil {
		return false
	}
	for _, s := range info.Scopes {
		if s == scope {
			return true
		}
	}
	return false
}

// infoKey is the context key of an *Info; a private type keeps other
// packages from reading or forging it by accident.
type infoKey struct{}

// WithInfo returns a copy of ctx that carries info. Only code that has
// validated the credential info describes should call it.
func WithInfo(ctx context.Context, info *Info) context.Context {
	return context.WithValue(ctx, infoKey{}, info)
}

// InfoFrom returns the Info stored by [WithInfo], or nil when the request is
// not authenticated (or its authentication ended outside this process, at a
// proxy, say).
func InfoFrom(ctx context.Context) *Info {
	info, _ := ctx.Value(infoKey{}).(*Info)
	return info
}

// addrKey is the context key of the client's network address.
type addrKey struct{}

// remoteAddr is what WithRemoteAddrPrefixes stores: one pointer, so that
// the context value costs one allocation, as a boxed string did.
type remoteAddr struct {
	host     string
	prefixes AddrPrefixes
}

// Defaults of AddrPrefixes.
const (
	// DefaultIPv4Prefix makes each IPv4 address its own caller: an IPv4
	// address is scarce, and a NAT or proxy shares one already.
	DefaultIPv4Prefix = 32
	// DefaultIPv6Prefix groups IPv6 addresses by /64: the smallest block
	// a site is given, and the one a host configures its addresses in
	// (SLAAC, privacy addresses), so that one machine holds 2^64 of them.
	DefaultIPv6Prefix = 64
)

// AddrPrefixes says which client addresses are one caller for the limits
// per caller ([CallerKey]): those that share their first IPv4 (or IPv6)
// bits. A zero field means its default. A value above the address's
// length (32, 128) means the whole address; a negative one, the default.
type AddrPrefixes struct {
	// IPv4 is the prefix length of IPv4 addresses (and of IPv4-mapped
	// IPv6 addresses, which are IPv4 addresses). Zero means
	// DefaultIPv4Prefix.
	IPv4 int
	// IPv6 is the prefix length of IPv6 addresses. Zero means
	// DefaultIPv6Prefix.
	IPv6 int
}

// WithRemoteAddr returns a copy of ctx that carries the network address
// the request came from: the host alone, without the port, since one
// client opens many connections from one host. Transports that know the
// address (Streamable HTTP) call it, so that limits per caller can tell
// unauthenticated clients apart; [CallerKey] groups addresses by the
// default [AddrPrefixes]. Behind a reverse proxy it is the proxy's
// address unless a middleware replaces it with the one the proxy vouches
// for (or the transport is told which proxies to believe).
func WithRemoteAddr(ctx context.Context, host string) context.Context {
	return WithRemoteAddrPrefixes(ctx, host, AddrPrefixes{})
}

// WithRemoteAddrPrefixes is [WithRemoteAddr] with the prefixes that group
// addresses into callers.
func WithRemoteAddrPrefixes(ctx context.Context, host string, prefixes AddrPrefixes) context.Context {
	return context.WithValue(ctx, addrKey{}, &remoteAddr{host: host, prefixes: prefixes})
}

// RemoteAddrFrom returns the host stored by [WithRemoteAddr], or "".
func RemoteAddrFrom(ctx context.Context) string {
	if ra, _ := ctx.Value(addrKey{}).(*remoteAddr); ra != nil {
		return ra.host
	}
	return ""
}

// CallerKey names the caller of a request for limits that give every
// caller its own share of a pool: the principal ([Info] client, issuer and
// subject) when the request is authenticated, else the client's address
// ([RemoteAddrFrom]) as [AddrCallerKey] groups it, else "" (unknown:
// stdio, or a transport that says nothing of its peer). Two keys are the
// same caller when they are equal; a principal key never equals an address
// key. Limits per caller do not apply to "": there is either one client
// (stdio) or nothing to tell clients apart by. It is the one answer to
// "who is calling" that every limit per caller in Parley uses.
func CallerKey(ctx context.Context) string {
	if info := InfoFrom(ctx); info != nil {
		return PrincipalKey(info)
	}
	if ra, _ := ctx.Value(addrKey{}).(*remoteAddr); ra != nil && ra.host != "" {
		return AddrCallerKey(ra.host, ra.prefixes)
	}
	return ""
}

// AddrCallerKey is the caller key of an unauthenticated client at host
// (an IP address, without port): "addr:" and the address, or the prefix
// prefixes group it in ("addr:2001:db8:1:2::/64"). An IPv4-mapped IPv6
// address is its IPv4 address, a zone (fe80::1%eth0) is dropped, and
// every loopback address (127.0.0.0/8, ::1) is one caller,
// "addr:loopback": each is the machine itself, which may use any of them.
// A host that is not an IP address (a Unix socket's name) is its own key.
func AddrCallerKey(host string, prefixes AddrPrefixes) string {
	h := host
	if len(h) > 2 && h[0] == '[' && h[len(h)-1] == ']' {
		h = h[1 : len(h)-1]
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return "addr:" + host
	}
	a = a.WithZone("").Unmap()
	if a.IsLoopback() {
		return "addr:loopback"
	}
	bits, def := prefixes.IPv6, DefaultIPv6Prefix
	if a.Is4() {
		bits, def = prefixes.IPv4, DefaultIPv4Prefix
	}
	if bits <= 0 {
		bits = def
	}
	var buf [len("addr:") + len("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128")]byte
	b := append(buf[:0], "addr:"...)
	if bits >= a.BitLen() {
		b = a.AppendTo(b)
	} else {
		p, _ := a.Prefix(bits) // bits is within the address's length
		b = p.AppendTo(b)
	}
	return string(b)
}

// PrincipalKey encodes the caller info describes (client, issuer and
// subject, as [Info.SameCaller] compares them) as one string, with no two
// callers sharing an encoding. info must not be nil. It is the principal
// requeststate.AuthPrincipal binds sealed state to.
func PrincipalKey(info *Info) string {
	b := make([]byte, 0, len("oauth")+3*binary.MaxVarintLen64+len(info.ClientID)+len(info.Issuer)+len(info.Subject))
	b = append(b, "oauth"...)
	for _, part := range [...]string{info.ClientID, info.Issuer, info.Subject} {
		b = binary.AppendUvarint(b, uint64(len(part)))
		b = append(b, part...)
	}
	return string(b)
}
