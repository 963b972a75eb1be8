// Package auth carries the identity of an authenticated caller through a
// request's context.
//
// A transport (or an HTTP middleware in front of it) that has validated an
// OAuth access token stores what it learnt with [WithInfo]; code further
// down, such as the requestState boundary, reads it with [InfoFrom]. The
// package validates nothing itself: an [Info] in a context is a promise, by
// whoever put it there, that its fields come from a verified credential and
// not from anything the client merely claimed.
package auth

import "context"

// Info is what a validated access token says about its bearer. Empty fields
// are unknown. A verifier should fill the same fields on every request of
// one caller: code that binds data to the caller (sealed requestState, for
// one) compares all three, so a subject present on one request and missing
// on the next looks like a different caller.
type Info struct {
	// ClientID is the OAuth client the token was issued to.
	ClientID string
	// Issuer is the authorization server that issued the token (its iss).
	Issuer string
	// Subject is the user or service the token speaks for (its sub). Two
	// people using one OAuth client differ only here.
	Subject string
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
