// Package redisonce is package oncestore's promise in Redis, for a fleet:
// the one command behind requeststate/redisstore and
// auth/dpopverify/redisstore, each a thin wrapper that keeps its own
// prefix, client interface and errors.
//
// A key is recorded with SET key 1 NX PXAT expiry: atomic, so of any number
// of instances presenting one id at once exactly one succeeds, and Redis
// forgets the key by itself once the id could no longer be accepted
// anyway. When Redis cannot be asked, the error says so and the wrapper's
// caller refuses (fails closed).
package redisonce

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Client is the one command the stores need.
type Client interface {
	SetArgs(ctx context.Context, key string, value any, a redis.SetArgs) *redis.StatusCmd
}

// Consume records key until expires. It returns nil if the key was new,
// replayed (as it is) if Redis held it already, and otherwise an error
// "redisstore: <what>: <the client's error>", wrapping it. A zero expires
// is an error: the key would never expire.
func Consume(ctx context.Context, c Client, key string, expires time.Time, replayed error, what string) error {
	if expires.IsZero() {
		// SetArgs would write a key that never expires.
		return errors.New("redisstore: no expiry given")
	}
	// Rounded up to a whole millisecond, so that the key never expires
	// before the id could no longer be accepted: the client sends PXAT in
	// milliseconds (EXAT on a whole second), truncating.
	exp := expires.Add(time.Millisecond - 1).Truncate(time.Millisecond)
	err := c.SetArgs(ctx, key, "1", redis.SetArgs{Mode: "NX", ExpireAt: exp}).Err()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, redis.Nil):
		return replayed
	default:
		return fmt.Errorf("redisstore: %s: %w", what, err)
	}
}
