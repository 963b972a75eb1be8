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
