package requeststate

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/parley-mcp/parley/server"
)

// DefaultTTL is how long a token stays valid when the Policy sets no TTL.
// Every round seals a fresh token, so it bounds the time a person may take
// to answer one round, not the length of the whole flow.
const DefaultTTL = 600 * time.Second

// ClockSkew is how far in the future a token's issue time may lie and still
// be accepted: a sister instance whose clock runs up to this much ahead is
// not refused. Expiry gets no such allowance; a token is never honoured
// past its expiry as the verifying instance's clock sees it.
const ClockSkew = 30 * time.Second

// Policy says how the boundary seals requestState. A nil *Policy means
// [ProcessLocal].
type Policy struct {
	// Keys is the key ring of the built-in codec ([NewAESGCM]): keys[0]
	// seals, every key unseals. Each key is at least 32 bytes of secret
	// randomness; [ParseKeys] reads a ring from an environment variable.
	// Every instance that may receive a retry must hold the keys. Set
	// exactly one of Keys and Codec.
	Keys [][]byte
	// Codec replaces the built-in codec, to bring your own cryptography
	// (a KMS, an existing token service). Set exactly one of Keys and
	// Codec.
	Codec Codec
	// TTL is how long a token stays valid after it is sealed. Default:
	// DefaultTTL. It must not be negative, and at least a millisecond.
	// A verifying instance also refuses a token older than its own TTL,
	// so lowering the TTL takes effect for tokens already in flight.
	TTL time.Duration
	// Audience is the service the tokens are for: a token sealed with
	// another audience is refused even under a shared key. Default: the
	// server's name. A policy with Keys or Codec on a server without a
	// name must set it. Give several services one Audience only when they
	// must accept each other's state.
	Audience string
	// Principal returns the identity a token is bound to: a token sealed
	// for one principal is refused for another, and a token sealed with
	// a principal is refused without one and the other way round. ""
	// means nothing to bind. An error fails the request: sealing gives
	// an internal error, verifying the fixed rejection. Default:
	// [AuthPrincipal], the identity of the validated access token. Set
	// it when authentication ends outside the SDK (a proxy's header, a
	// tenant id); return "" to bind nothing.
	Principal func(ctx context.Context, req *server.Request) (string, error)
	// Now is the clock. Default: time.Now. Tests inject their own.
	Now func() time.Time
	// Logger receives a Warn line for every refused token (with the
	// method and the reason, never the token, its plaintext or the
	// principal) and an Error line for every failure to seal. Default:
	// the server's logger with [Protect], slog.Default() with
	// [NewBoundary].
	Logger *slog.Logger
	// Rejected, when not nil, is called once for every refused token,
	// on the request's goroutine before the answer goes out, with the
	// reason the log gets (such as "expired", "principal mismatch" or
	// "replayed (already accepted once)") and the error the request is
	// answered with (the fixed -32602, which for single-use refusals also
	// matches ErrReplayed or ErrStoreUnavailable). It is the place for
	// metrics and audit: the sealing step runs outside every middleware,
	// so no middleware sees a refusal.
	Rejected func(ctx context.Context, req *server.Request, reason string, err error)
	// SingleUse, when set, makes every sealed round usable at most once:
	// the first echo that verifies is recorded in the store, and every
	// later echo of the same token, with the same or other answers, is
	// refused like any invalid state. Instances that share a key ring
	// must share the store too. nil: a token may be echoed again within
	// its TTL. See [SingleUseStore], [MemoryStore] and package
	// requeststate/redisstore.
	SingleUse SingleUseStore

	// local is the key ProcessLocal generated: a policy holding only it
	// never leaves the process, so it needs no server name.
	local []byte
}

// ProcessLocal returns the zero-configuration policy: one random key,
// generated now, that lives and dies with the process. It suits a server
// that is a single process (stdio, or exactly one HTTP worker). A retry
// that reaches another instance, or this server after a restart, was sealed
// under a key this process lacks: the client gets the fixed rejection and
// must start the flow again. Deploy shared Keys where that matters.
//
// The policy it returns may be adjusted (a TTL, a Principal hook) before
// use. It is exempt from the rule that a server with an explicit policy
// must have a name, since its tokens cannot reach another service.
func ProcessLocal() *Policy {
	key := make([]byte, MinKeyLen)
	rand.Read(key)
	// local is a copy: a caller that overwrites the key in place (copy
	// into p.Keys[0]) has changed the keys, and loses the exemption.
	return &Policy{Keys: [][]byte{key}, local: bytes.Clone(key)}
}

// isLocal reports whether p still holds exactly the key ProcessLocal made.
func (p *Policy) isLocal() bool {
	return p.local != nil && p.Codec == nil && len(p.Keys) == 1 && bytes.Equal(p.Keys[0], p.local)
}

// resolve checks p and fills in its defaults for a server named
// serverName.
func (p *Policy) resolve(serverName string) (*Boundary, error) {
	if (len(p.Keys) > 0) == (p.Codec != nil) {
		return nil, errors.New("requeststate: a Policy takes exactly one of Keys and Codec")
	}
	b := &Boundary{
		codec:     p.Codec,
		ttl:       p.TTL,
		audience:  p.Audience,
		principal: p.Principal,
		now:       p.Now,
		log:       p.Logger,
		rejected:  p.Rejected,
		singleUse: p.SingleUse,
	}
	if b.codec == nil {
		c, err := NewAESGCM(p.Keys)
		if err != nil {
			return nil, err
		}
		b.codec = c
	}
	switch {
	case b.ttl == 0:
		b.ttl = DefaultTTL
	case b.ttl < time.Millisecond:
		return nil, fmt.Errorf("requeststate: TTL must be positive and at least 1ms, got %v", p.TTL)
	}
	if b.audience == "" {
		b.audience = serverName
	}
	if b.audience == "" && !p.isLocal() {
		return nil, errors.New("requeststate: the server has no name to use as the audience of its requestState; " +
			"name the server (server.New(mcp.Implementation{Name: ...}, ...)) or set Policy.Audience")
	}
	if b.principal == nil {
		b.principal = AuthPrincipal
	}
	if b.now == nil {
		b.now = time.Now
	}
	if b.log == nil {
		b.log = slog.Default()
	}
	return b, nil
}
