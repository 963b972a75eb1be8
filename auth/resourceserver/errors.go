package resourceserver

import (
	"errors"
	"strings"
)

// The three ways a [Verifier] can refuse a token. A verifier returns one of
// them, wrapped with its reason (fmt.Errorf("%w: expired", ErrInvalidToken))
// or as a typed error that matches it; the middleware picks the answer by
// errors.Is. Any other error is the verifier's own failure.
var (
	// ErrInvalidToken: the token is malformed, forged, expired, not yet
	// valid, revoked, or issued by another server or for another resource.
	// The client is told 401 with error="invalid_token" and should get a
	// new token.
	ErrInvalidToken = errors.New("resourceserver: invalid token")

	// ErrInsufficientScope: the token is valid but does not grant what the
	// request needs. The client is told 403 with error="insufficient_scope"
	// and the scopes to ask for; return an [*InsufficientScopeError] to
	// name them.
	ErrInsufficientScope = errors.New("resourceserver: insufficient scope")

	// ErrUnavailable: the verifier could not decide (the authorization
	// server's JWKS or introspection endpoint is down, say). The client is
	// told 503 and the error is logged; the token may well be good, so the
	// client must not be sent to re-authorize.
	ErrUnavailable = errors.New("resourceserver: token verifier unavailable")
)

// InsufficientScopeError is an [ErrInsufficientScope] that names the scopes
// the request needs. The middleware sends them in the scope parameter of
// its WWW-Authenticate challenge.
type InsufficientScopeError struct {
	// Scopes are the scopes the client should request (all of them, not
	// only the missing ones, so that a new token is enough on its own).
	Scopes []string
}

// Error names the scopes.
func (e *InsufficientScopeError) Error() string {
	return "resourceserver: insufficient scope: the request needs " + strings.Join(e.Scopes, " ")
}

// Is makes an *InsufficientScopeError match [ErrInsufficientScope].
func (e *InsufficientScopeError) Is(target error) bool { return target == ErrInsufficientScope }
