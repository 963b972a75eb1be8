package requeststate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
)

// StateID names one sealed round for single use: 16 random bytes the
// boundary draws when it seals, carried inside the sealed (authenticated,
// encrypted) envelope. It is not derived from the token or the plaintext,
// so a store that records it learns nothing about either, and a token
// re-encoded by a lax custom codec still has the same id.
type StateID [idLen]byte

// String returns the id as 32 lowercase hex digits, the form stores use in
// their keys.
func (id StateID) String() string { return hex.EncodeToString(id[:]) }

// SingleUseStore records which sealed rounds have been accepted, so that
// each is accepted at most once: by one process, or by every instance that
// shares the store. [MemoryStore] serves one process; package
// requeststate/redisstore serves a fleet.
//
// The boundary calls Consume once per inbound requestState, after the
// token has fully verified (authenticated, unexpired, for this audience,
// request and principal), and never for a token that failed any check, so
// that a forged or misdirected request cannot use up a valid state.
type SingleUseStore interface {
	// Consume records id as accepted until expires and returns nil, if
	// id is not recorded already. It returns an error matching
	// [ErrReplayed] if it is. Any other error means the store could not
	// decide (unreachable, timed out, full); the boundary then refuses
	// the state, failing closed. Consume is called concurrently; for a
	// given id, at most one call may return nil until expires has passed.
	Consume(ctx context.Context, id StateID, expires time.Time) error
}

// CallerStore is a [SingleUseStore] that gives each caller its own share:
// the boundary calls ConsumeAs instead of Consume when its store has it,
// naming who presented the state, so that one client burning rounds
// cannot fill the store for everyone. [MemoryStore] is one.
//
// The caller is "principal:" and the principal the policy binds states
// to (its Principal hook; by default the OAuth client, issuer and
// subject), else [auth.CallerKey] of the request (the client's address,
// "addr:" and the address or the prefix it is grouped in), else ""
// (unknown: stdio, or a transport that does not say), which a store
// should bound only as a whole.
type CallerStore interface {
	SingleUseStore
	// ConsumeAs is Consume for a state presented by caller. It may also
	// refuse the state because caller holds its share already (an error
	// that is neither nil nor ErrReplayed: the boundary then refuses the
	// state, failing closed, as for a store that is full).
	ConsumeAs(ctx context.Context, id StateID, expires time.Time, caller string) error
}

// ErrReplayed is what a [SingleUseStore] returns for a state it has
// already accepted, and what the error Policy.Rejected gets matches
// (errors.Is) when the boundary refuses a replay. The client sees only the
// fixed requestState error.
var ErrReplayed = errors.New("requeststate: requestState already accepted once (replayed)")

// ErrStoreUnavailable is what the error Policy.Rejected gets matches
// (errors.Is) when the single-use store failed to say whether a state was used, and
// the state was refused for it: single use fails closed. The error also
// matches the store's own error.
var ErrStoreUnavailable = errors.New("requeststate: the single-use store failed; the requestState was refused")

// The log-only reasons of single use.
const (
	reasonReplayed = "replayed (already accepted once)"
	reasonNoID     = "no single-use id (sealed by an instance without single use)"
	reasonStore    = "single-use store failed"
)

// newStateID draws the id of a round about to be sealed.
func newStateID() *StateID {
	id := new(StateID)
	rand.Read(id[:]) // never fails (it aborts the program instead)
	return id
}

// consume records a verified token as accepted. It runs only once every
// other check has passed. The reason is "" when the token may be used.
func (b *Boundary) consume(ctx context.Context, cl *claims) (string, error) {
	if len(cl.id) != idLen {
		// Sealed before single use was turned on, or by an instance
		// without it: such a token could be replayed, so it is refused.
		return reasonNoID, nil
	}
	// Remembered past the token's own expiry by the clock skew every
	// instance tolerates, so that an instance whose clock lags the store's
	// cannot accept the token again after the store forgot it.
	until := time.UnixMilli(cl.expires).Add(ClockSkew)
	var err error
	if cs, ok := b.singleUse.(CallerStore); ok {
		err = cs.ConsumeAs(ctx, StateID(cl.id), until, callerOf(ctx, cl.principalKey))
	} else {
		err = b.singleUse.Consume(ctx, StateID(cl.id), until)
	}
	switch {
	case err == nil:
		return "", nil
	case errors.Is(err, ErrReplayed):
		return reasonReplayed, &singleUseError{kind: ErrReplayed}
	default:
		return reasonStore, &singleUseError{kind: ErrStoreUnavailable, cause: err}
	}
}

// callerOf names the caller whose share of a [CallerStore] a state counts
// against: the principal the policy bound it to (its Principal hook may
// name a tenant rather than a user), else whoever [auth.CallerKey] says
// is calling (an authenticated principal, else the client's address as
// the transport groups it).
func callerOf(ctx context.Context, principal string) string {
	if principal != "" {
		return "principal:" + principal
	}
	return auth.CallerKey(ctx)
}

// singleUseError is a refusal by single use, as the boundary's middleware
// returns it: the fixed wire error, which the server sends, and the reason
// for Go code (middleware added before the boundary) to match.
type singleUseError struct {
	kind  error // ErrReplayed or ErrStoreUnavailable
	cause error // the store's error, or nil
	wire  *jsonrpc.Error
}

func (e *singleUseError) Error() string {
	if e.cause != nil {
		return e.kind.Error() + ": " + e.cause.Error()
	}
	return e.kind.Error()
}

func (e *singleUseError) Unwrap() []error {
	errs := []error{e.kind}
	if e.wire != nil {
		errs = append(errs, e.wire)
	}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	return errs
}

// rejection is the error a refused token returns from the middleware: the
// fixed wire error, wrapped with the single-use reason when there is one.
func rejection(cause error) error {
	wire := mcp.NewInvalidRequestStateError()
	var su *singleUseError
	if errors.As(cause, &su) {
		su.wire = wire
		return su
	}
	return wire
}
