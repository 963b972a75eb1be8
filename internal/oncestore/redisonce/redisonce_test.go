package redisonce_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/parley-mcp/parley/internal/oncestore/redisonce"
	"github.com/parley-mcp/parley/internal/redistest"
)

var errReplayed = errors.New("replayed")

// SET NX: the first Consume records the key, with "1", until the expiry
// rounded up to the millisecond; every later one is the Replayed error,
// and does not move the expiry.
func TestConsumeOnce(t *testing.T) {
	rs := redistest.Start(t)
	c := rs.Client(t)
	ctx := context.Background()
	expires := time.Now().Add(10 * time.Minute).Truncate(time.Millisecond).Add(123*time.Millisecond + 400*time.Microsecond)
	if err := redisonce.Consume(ctx, c, "k1", expires, errReplayed, "recording"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := redisonce.Consume(ctx, c, "k1", expires.Add(time.Hour), errReplayed, "recording"); err != errReplayed {
			t.Fatalf("again: %v, want the Replayed error", err)
		}
	}
	if err := redisonce.Consume(ctx, c, "k2", expires, errReplayed, "recording"); err != nil {
		t.Fatalf("another key: %v", err)
	}
	if v, err := c.Get(ctx, "k1").Result(); err != nil || v != "1" {
		t.Fatalf("GET k1 = %q, %v", v, err)
	}
	want := expires.Add(time.Millisecond).Truncate(time.Millisecond).UnixMilli()
	if got, err := c.Do(ctx, "PEXPIRETIME", "k1").Int64(); err != nil || got != want {
		t.Fatalf("PEXPIRETIME = %d, %v; want %d", got, err, want)
	}
	// A whole millisecond stays as it is.
	whole := expires.Truncate(time.Millisecond).Add(time.Minute)
	if err := redisonce.Consume(ctx, c, "k3", whole, errReplayed, "recording"); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Do(ctx, "PEXPIRETIME", "k3").Int64(); err != nil || got != whole.UnixMilli() {
		t.Fatalf("PEXPIRETIME k3 = %d, %v; want %d", got, err, whole.UnixMilli())
	}
}

// Of many presentations of one key at once, exactly one is accepted.
func TestConcurrent(t *testing.T) {
	rs := redistest.Start(t)
	c := rs.Client(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted := 0
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := redisonce.Consume(context.Background(), c, "k", time.Now().Add(time.Minute), errReplayed, "recording")
			switch {
			case err == nil:
				mu.Lock()
				accepted++
				mu.Unlock()
			case err != errReplayed:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if accepted != 1 {
		t.Fatalf("%d of 16 accepted, want 1", accepted)
	}
}

// failing is a client whose every command fails with err.
type failing struct{ err error }

func (f failing) SetArgs(ctx context.Context, key string, value any, a redis.SetArgs) *redis.StatusCmd {
	return redis.NewStatusResult("", f.err)
}

// Redis not answering: the error says what failed and wraps the client's,
// and is never nil nor the Replayed error (the caller fails closed).
func TestFailsClosed(t *testing.T) {
	down := errors.New("connection refused")
	err := redisonce.Consume(context.Background(), failing{down}, "k", time.Now().Add(time.Minute), errReplayed, "recording a thing")
	if err == nil || errors.Is(err, errReplayed) || !errors.Is(err, down) || err.Error() != "redisstore: recording a thing: connection refused" {
		t.Fatalf("Redis down: %v", err)
	}

	// A real server gone.
	rs := redistest.Start(t)
	c := rs.Client(t)
	rs.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = redisonce.Consume(ctx, c, "k", time.Now().Add(time.Minute), errReplayed, "recording")
	if err == nil || errors.Is(err, errReplayed) {
		t.Fatalf("server stopped: %v", err)
	}
}

// A zero expiry is refused before Redis is asked: the key would never
// expire.
func TestZeroExpiry(t *testing.T) {
	rs := redistest.Start(t)
	c := rs.Client(t)
	ctx := context.Background()
	err := redisonce.Consume(ctx, c, "k", time.Time{}, errReplayed, "recording")
	if err == nil || !strings.Contains(err.Error(), "no expiry") {
		t.Fatalf("zero expiry: %v", err)
	}
	if n, err := c.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Fatalf("EXISTS k = %d, %v; want 0", n, err)
	}
}
