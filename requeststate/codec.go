package requeststate

import (
	"errors"
)

// Codec turns a sealed envelope into the opaque token that crosses the
// wire, and back. It is the one part of the boundary you may replace, to
// bring your own cryptography (a KMS, an existing token service).
//
// A Codec owes the boundary integrity and, ideally, confidentiality:
//
//   - Unseal must return an error matching [ErrInvalidState] (errors.Is)
//     for every token it did not itself produce, unmodified. "Mostly
//     decodes" is a failure: reject non-canonical encodings, unknown
//     format versions and truncations rather than repairing them.
//   - Seal should encrypt, not only sign: the plaintext holds the
//     handler's state, which may be private to the server.
//   - Tokens should be URL-safe text and name no algorithm (a version
//     prefix bound into the authentication tag says enough).
//   - Both methods are called on the request path, concurrently, so keep
//     key material in memory (unwrap a KMS data key once, at start-up) and
//     compare secrets in constant time.
//
// Expiry, request binding, audience and principal binding are not a Codec's
// business: the boundary stamps them into the plaintext before Seal and
// checks them after Unseal, whatever the Codec.
type Codec interface {
	// Seal returns a token for plaintext. It must not retain or modify
	// plaintext.
	Seal(plaintext []byte) (string, error)
	// Unseal returns the plaintext of a token Seal produced, or an error
	// matching ErrInvalidState.
	Unseal(token string) ([]byte, error)
}

// ErrInvalidState is what a Codec's Unseal returns, wrapped or not, for a
// token it did not mint unmodified. The boundary answers every such token,
// and every token that fails a later check, with one fixed wire error.
var ErrInvalidState = errors.New("requeststate: invalid requestState")

// InvalidStateError is an [ErrInvalidState] with the reason it was
// rejected. The reason goes to the server log and never to the client; it
// must not contain the token or anything decrypted from it.
type InvalidStateError struct {
	// Reason is a short, fixed description such as "unknown key".
	Reason string
}

// Error returns the reason, prefixed with the package name.
func (e *InvalidStateError) Error() string { return "requeststate: invalid requestState: " + e.Reason }

// Is makes an *InvalidStateError match ErrInvalidState.
func (e *InvalidStateError) Is(target error) bool { return target == ErrInvalidState }

// invalid returns an *InvalidStateError. The reasons are package constants,
// so building one allocates only the small error value.
func invalid(reason string) error { return &InvalidStateError{Reason: reason} }
