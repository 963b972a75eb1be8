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
	"time"
)

// Info is what a validated access token says about its bearer. Empty fields
// are unknown. A verifier should fill the same fields on every request of
// one caller: code that binds data to the caller (sealed requestState, for
// one) compares ClientID, Issuer and Subject, so a subject present on one
// request and missing on the next looks like a different caller.
//
// Scopes and Expiry describe the token rather than the caller: they change
// when the client refreshes its token, and nothing that binds data to the
// caller reads them (see [Info.SameCaller]).
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

// WithRemoteAddr returns a copy of ctx that carries the network address
// the request came from: the host alone, without the port, since one
// client opens many connections from one host. Transports that know the
// address (Streamable HTTP) call it, so that limits per caller can tell
// unauthenticated clients apart. Behind a reverse proxy it is the proxy's
// address unless a middleware replaces it with the one the proxy vouches
// for.
func WithRemoteAddr(ctx context.Context, host string) context.Context {
	return context.WithValue(ctx, addrKey{}, host)
}

// RemoteAddrFrom returns the host stored by [WithRemoteAddr], or "".
func RemoteAddrFrom(ctx context.Context) string {
	host, _ := ctx.Value(addrKey{}).(string)
	return host
}

// CallerKey names the caller of a request for limits that give every
// caller its own share of a pool: the principal ([Info] client, issuer and
// subject) when the request is authenticated, else the client's address
// ([RemoteAddrFrom]), else "" (unknown: stdio, or a transport that says
// nothing of its peer). Two keys are the same caller when they are equal;
// a principal key never equals an address key. Limits per caller do not
// apply to "": there is either one client (stdio) or nothing to tell
// clients apart by.
func CallerKey(ctx context.Context) string {
	if info := InfoFrom(ctx); info != nil {
		return PrincipalKey(info)
	}
	if host := RemoteAddrFrom(ctx); host != "" {
		return "addr:" + host
	}
	return ""
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
