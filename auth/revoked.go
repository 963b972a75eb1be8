package auth

import "context"

// revokedKey is the context key of the function behind [Revoked].
type revokedKey struct{}

// WithRevocation returns a copy of ctx on which [Revoked] finds revoked: a
// function returning a channel that is closed once the credential of the
// request in ctx has been found no longer valid while the request runs.
// The middleware that validated the credential, and can check it again,
// calls it (auth/resourceserver does with Options.RecheckInterval).
// revoked is called by every [Revoked], first by the first, so that it can
// start checking only for requests that ask, and must return the same
// channel each time.
func WithRevocation(ctx context.Context, revoked func() <-chan struct{}) context.Context {
	return context.WithValue(ctx, revokedKey{}, revoked)
}

// Revoked returns a channel that is closed if the credential that
// authenticated the request in ctx is found no longer valid while the
// request still runs (revoked at the authorization server, or its scopes
// withdrawn), or nil when nothing checks it again (a nil channel never
// delivers, so a select may always include it). Code that holds a request
// open for long, such as a stream, selects on it beside the credential's
// [Info.Expiry] and ends the request when it closes, as Parley's
// subscriptions/listen streams and legacy GET streams do. The first call
// for a request may start the checks, so requests that never ask cost
// nothing.
func Revoked(ctx context.Context) <-chan struct{} {
	if f, _ := ctx.Value(revokedKey{}).(func() <-chan struct{}); f != nil {
		return f()
	}
	return nil
}
