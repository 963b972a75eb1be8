// Package redisstore is a [tasks.Store] in Redis, for a fleet: every
// instance that serves the tasks extension points its manager at one
// Redis, and then any instance answers tasks/get, takes tasks/update and
// tasks/cancel for a task running on another, and fails the tasks of an
// instance that died once their lease runs out.
//
//	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR")})
//	m, err := tasks.Enable(s, &tasks.Options{Store: redisstore.New(rdb, nil)})
//
// A task is one key holding its record (JSON), written with PXAT at the
// task's expiry, so Redis forgets a finished task by itself; every change
// is a WATCH/MULTI transaction, so of two instances changing one task at
// once one retries on what the other wrote. Each principal's live tasks
// are counted in a sorted set scored by expiry, and Create refuses (with
// tasks.ErrStoreFull) when the creator already holds Options.PerPrincipal:
// one caller cannot fill Redis for everyone.
//
// The store is also a [tasks.Notifier]: a change published on one channel
// reaches the instance running the task at once (Redis pub/sub). Pub/sub
// does not keep what a disconnected subscriber missed; the manager's lease
// renewal re-reads its tasks every Lease/3, which bounds the delay of an
// answer or a cancel either way (design record 028).
//
// When Redis cannot be reached, every call fails with the client's error
// wrapped: tasks/get and friends answer -32603 and the log says why
// (fails closed); a running task whose lease cannot be renewed is failed
// by the first instance that reads it after the lease.
//
// The keys of one task and of its principal's count are two keys: on a
// Redis Cluster they are in different slots, and Create's script needs one
// node. Use one Redis (with replicas), not a cluster.
package redisstore

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/tasks"
	"github.com/redis/go-redis/v9"
)

// DefaultPrefix starts every key and channel the store uses.
const DefaultPrefix = "parley:tasks:"

// Options tunes a [Store]. A nil *Options means defaults.
type Options struct {
	// Prefix starts every key and the change channel: set it to keep
	// several services that share one Redis apart. Default DefaultPrefix.
	Prefix string
	// PerPrincipal bounds the live (unexpired) tasks of one principal;
	// the unauthenticated callers share one principal. Default 1000.
	PerPrincipal int
	// Now is the clock that decides expiry at the boundary (Redis's own
	// expiry then removes the key). Default time.Now.
	Now func() time.Time
	// MaxRetries bounds the retries of an update that lost a race with
	// another instance's. Default 16.
	MaxRetries int
}

// Store is a [tasks.Store] and [tasks.Notifier] in Redis. It is safe for
// concurrent use, as the client is.
type Store struct {
	client  redis.UniversalClient
	prefix  string
	max     int
	now     func() time.Time
	retries int
}

// New returns a store that keeps tasks through client.
func New(client redis.UniversalClient, o *Options) *Store {
	s := &Store{client: client, prefix: DefaultPrefix, max: 1000, now: time.Now, retries: 16}
	if o != nil {
		if o.Prefix != "" {
			s.prefix = o.Prefix
		}
		if o.PerPrincipal > 0 {
			s.max = o.PerPrincipal
		}
		if o.Now != nil {
			s.now = o.Now
		}
		if o.MaxRetries > 0 {
			s.retries = o.MaxRetries
		}
	}
	return s
}

func (s *Store) taskKey(id string) string     { return s.prefix + "task:" + id }
func (s *Store) principalKey(p string) string { return s.prefix + "principal:" + p }
func (s *Store) channel() string              { return s.prefix + "changed" }
func millis(t time.Time) string               { return strconv.FormatInt(t.UnixMilli(), 10) }
func (s *Store) wrap(what string, err error) error {
	return fmt.Errorf("redisstore: %s: %w", what, err)
}

// create is Create in one step: drop the principal's expired entries,
// refuse when it holds the most it may, store the record if its id is
// new, count it, and keep the count as long as its longest-lived task.
//
//go:embed create.lua
var createLua string

var createScript = redis.NewScript(createLua)

// Create implements tasks.Store.
func (s *Store) Create(ctx context.Context, r *tasks.Record) error {
	b, err := encode(r)
	if err != nil {
		return err
	}
	expiry := "0"
	if !r.Expires.IsZero() {
		expiry = millis(roundUp(r.Expires))
	}
	res, err := createScript.Run(ctx, s.client, []string{s.taskKey(r.ID), s.principalKey(r.Principal)},
		b, expiry, millis(s.now()), s.max).Text()
	if err != nil {
		return s.wrap("creating a task", err)
	}
	switch res {
	case "OK":
		return nil
	case "FULL":
		return fmt.Errorf("%w (the limit is %d)", tasks.ErrStoreFull, s.max)
	case "DUP":
		return fmt.Errorf("redisstore: task id %s exists", r.ID)
	}
	return fmt.Errorf("redisstore: creating a task: unexpected answer %q", res)
}

// Get implements tasks.Store.
func (s *Store) Get(ctx context.Context, id string) (*tasks.Record, error) {
	b, err := s.client.Get(ctx, s.taskKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, tasks.ErrNotFound
	}
	if err != nil {
		return nil, s.wrap("reading a task", err)
	}
	return s.decodeLive(id, b)
}

// Update implements tasks.Store: read, apply f, write, all under WATCH,
// retried when another instance wrote the task in between.
func (s *Store) Update(ctx context.Context, id string, f func(*tasks.Record) error) (*tasks.Record, error) {
	key := s.taskKey(id)
	for range s.retries {
		var out *tasks.Record
		var ferr error // f's own error, passed on as it is
		err := s.client.Watch(ctx, func(tx *redis.Tx) error {
			b, err := tx.Get(ctx, key).Bytes()
			if errors.Is(err, redis.Nil) {
				ferr = tasks.ErrNotFound
				return ferr
			}
			if err != nil {
				return err
			}
			r, err := s.decodeLive(id, b)
			if err != nil {
				ferr = err
				return err
			}
			if err := f(r); err != nil {
				ferr = err
				return err
			}
			nb, err := encode(r)
			if err != nil {
				ferr = err
				return err
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.SetArgs(ctx, key, nb, redis.SetArgs{KeepTTL: true})
				return nil
			})
			out = r
			return err
		}, key)
		switch {
		case err == nil:
			return out, nil
		case ferr != nil:
			return nil, ferr
		case errors.Is(err, redis.TxFailedErr):
			continue
		}
		return nil, s.wrap("updating a task", err)
	}
	return nil, fmt.Errorf("redisstore: updating task %s lost the race %d times", id, s.retries)
}

// Notify implements tasks.Notifier: one PUBLISH.
func (s *Store) Notify(ctx context.Context, id string) error {
	if err := s.client.Publish(ctx, s.channel(), id).Err(); err != nil {
		return s.wrap("publishing a task's change", err)
	}
	return nil
}

// Watch implements tasks.Notifier: it subscribes to the change channel
// and calls f for each id published until ctx ends.
func (s *Store) Watch(ctx context.Context, f func(id string)) error {
	sub := s.client.Subscribe(ctx, s.channel())
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return s.wrap("subscribing to task changes", err)
	}
	f("") // listening now: what changed before is in the store
	// With subscriptions: after a reconnection the client subscribes again
	// and says so, and what was published meanwhile is lost to us.
	ch := sub.ChannelWithSubscriptions()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case msg, ok := <-ch:
			if !ok {
				return errors.New("redisstore: the subscription to task changes ended")
			}
			switch msg := msg.(type) {
			case *redis.Message:
				f(msg.Payload)
			case *redis.Subscription:
				f("")
			}
		}
	}
}

// roundUp rounds t up to a whole millisecond, so that Redis never forgets
// a task before its expiry.
func roundUp(t time.Time) time.Time {
	return t.Add(time.Millisecond - 1).Truncate(time.Millisecond)
}

// decodeLive decodes a stored record, and treats one past its expiry as
// gone: Redis's expiry is to the millisecond, the clock's to the
// nanosecond, and the boundary is the clock's.
func (s *Store) decodeLive(id string, b []byte) (*tasks.Record, error) {
	r, err := decode(b)
	if err != nil {
		return nil, fmt.Errorf("redisstore: task %s: %w", id, err)
	}
	if !r.Expires.IsZero() && !s.now().Before(r.Expires) {
		return nil, tasks.ErrNotFound
	}
	return r, nil
}

// stored is a record's form in Redis: its own names, so that renaming a
// Go field never strands the tasks of a running fleet.
type stored struct {
	ID            string             `json:"id"`
	Principal     string             `json:"principal"`
	Status        mcp.TaskStatus     `json:"status"`
	StatusMessage string             `json:"statusMessage,omitempty"`
	Created       time.Time          `json:"created"`
	Updated       time.Time          `json:"updated"`
	Expires       time.Time          `json:"expires,omitzero"`
	Result        json.RawMessage    `json:"result,omitempty"`
	Error         json.RawMessage    `json:"error,omitempty"`
	Pending       mcp.InputRequests  `json:"pending,omitempty"`
	Answers       mcp.InputResponses `json:"answers,omitempty"`
	Owner         string             `json:"owner,omitempty"`
	LeaseUntil    time.Time          `json:"leaseUntil,omitzero"`
}

func encode(r *tasks.Record) ([]byte, error) {
	b, err := json.Marshal(stored(*r))
	if err != nil {
		return nil, fmt.Errorf("redisstore: encoding task %s: %w", r.ID, err)
	}
	return b, nil
}

func decode(b []byte) (*tasks.Record, error) {
	var st stored
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, err
	}
	r := tasks.Record(st)
	return &r, nil
}
