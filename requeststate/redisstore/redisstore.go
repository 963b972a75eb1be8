// Package redisstore is a [requeststate.SingleUseStore] in Redis, for a
// fleet: every instance that shares the requestState keys points its
// boundary at one Redis (or one Redis Cluster), and a sealed round is then
// accepted at most once across all of them.
//
//	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR")})
//	p := &requeststate.Policy{Keys: keys, SingleUse: redisstore.New(rdb, nil)}
//
// Each verified requestState costs one command, SET key 1 NX PXAT expiry:
// it is atomic, so of any number of instances presenting one state at once
// exactly one succeeds, and Redis forgets the key by itself when the state
// could no longer be accepted anyway. The key is a prefix and the state's
// random id (requeststate.StateID), never the token or its plaintext.
//
// When Redis cannot be reached or does not answer, the state is refused
// (single use fails closed), the log says "single-use store failed", and
// the error matches [requeststate.ErrStoreUnavailable]. Bound the wait with
// the client's own timeouts (redis.Options.ReadTimeout, WriteTimeout,
// DialTimeout) or the request's context.
//
// A state is recorded only as durably as Redis keeps it: one that loses
// writes (a failover to a replica that had not received the key, a restart
// without persistence) may accept a state again that was used within the
// last TTL.
//
// This package is separate from requeststate so that only servers that use
// Redis depend on its client.
package redisstore

import (
	"context"
	"time"

	"github.com/parley-mcp/parley/internal/oncestore/redisonce"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/redis/go-redis/v9"
)

// DefaultPrefix starts every key the store writes.
const DefaultPrefix = "parley:requeststate:used:"

// Client is the one command the store needs. *redis.Client,
// *redis.ClusterClient, *redis.Ring and redis.UniversalClient have it.
type Client interface {
	SetArgs(ctx context.Context, key string, value any, a redis.SetArgs) *redis.StatusCmd
}

// Options tunes a [Store]. A nil *Options means defaults.
type Options struct {
	// Prefix starts every key: set it to keep several services, or
	// several environments, that share one Redis apart. Default:
	// DefaultPrefix.
	Prefix string
}

// Store is a [requeststate.SingleUseStore] in Redis. It is safe for
// concurrent use, as the client is.
type Store struct {
	client Client
	prefix string
}

// New returns a store that records used states through client.
func New(client Client, o *Options) *Store {
	s := &Store{client: client, prefix: DefaultPrefix}
	if o != nil && o.Prefix != "" {
		s.prefix = o.Prefix
	}
	return s
}

// Consume records id until expires with SET NX PXAT. It returns nil if
// the key was new, an error matching [requeststate.ErrReplayed] if it was
// there, and the client's error, wrapped, if Redis could not be asked.
func (s *Store) Consume(ctx context.Context, id requeststate.StateID, expires time.Time) error {
	return redisonce.Consume(ctx, s.client, s.prefix+id.String(), expires, requeststate.ErrReplayed, "recording a used requestState")
}
