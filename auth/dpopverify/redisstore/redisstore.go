// Package redisstore is a [dpopverify.ReplayStore] in Redis, for a fleet:
// every instance that takes DPoP-bound tokens for one resource points its
// verifier at one Redis (or one Redis Cluster), and a DPoP proof is then
// accepted at most once across all of them.
//
//	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR")})
//	dv, err := dpopverify.New(&dpopverify.Options{Replay: redisstore.New(rdb, nil)})
//
// Each accepted proof costs one command, SET key 1 NX PXAT expiry: atomic,
// so of any number of instances presenting one proof at once exactly one
// succeeds, and Redis forgets the key by itself once the proof could no
// longer be accepted anyway. The key is a prefix and the proof's id
// ([dpopverify.ProofID]: a hash of its jti, key and URL), never the proof.
//
// When Redis cannot be reached or does not answer, the request is refused
// with 503 (the store fails closed) and the error is logged. Bound the wait
// with the client's own timeouts (redis.Options.ReadTimeout, WriteTimeout,
// DialTimeout) or the request's context. A proof is recorded only as
// durably as Redis keeps it: one that loses writes (a failover to a
// replica that had not received the key) may accept a proof again within
// its window.
//
// It gives callers no shares: Redis is bounded by its maxmemory, and a
// client flooding it is best bounded at the edge (rate limits per client).
package redisstore

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/parley-mcp/parley/auth/dpopverify"
	"github.com/parley-mcp/parley/internal/oncestore/redisonce"
)

// DefaultPrefix starts every key the store writes.
const DefaultPrefix = "parley:dpop:used:"

// Client is the one command the store needs. *redis.Client,
// *redis.ClusterClient, *redis.Ring and redis.UniversalClient have it.
type Client interface {
	SetArgs(ctx context.Context, key string, value any, a redis.SetArgs) *redis.StatusCmd
}

// Options tunes a [Store]. A nil *Options means defaults.
type Options struct {
	// Prefix starts every key: set it to keep several services, or
	// environments, that share one Redis apart. Default: DefaultPrefix.
	Prefix string
}

// Store is a [dpopverify.ReplayStore] in Redis. It is safe for concurrent
// use, as the client is.
type Store struct {
	client Client
	prefix string
}

// New returns a store that records proofs through client.
func New(client Client, o *Options) *Store {
	s := &Store{client: client, prefix: DefaultPrefix}
	if o != nil && o.Prefix != "" {
		s.prefix = o.Prefix
	}
	return s
}

// Consume implements [dpopverify.ReplayStore] with SET NX PXAT: nil if the
// key was new, [dpopverify.ErrReplayed] if it was there, the client's error,
// wrapped, if Redis could not be asked. caller is not used.
func (s *Store) Consume(ctx context.Context, id dpopverify.ProofID, expires time.Time, _ string) error {
	return redisonce.Consume(ctx, s.client, s.prefix+id.String(), expires, dpopverify.ErrReplayed, "recording a DPoP proof")
}
