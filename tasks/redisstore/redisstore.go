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
// is a compare-and-set (a script that writes only if the task is still
// what the change read), so of two instances changing one task at once
// one retries on what the other wrote. Each caller (the principal, else
// the client's address; tasks.Record.Caller) has its bounds, kept by the
// same scripts: its open tasks are counted in a sorted set scored by
// expiry, and Create refuses (with tasks.ErrStoreFull) when it already
// holds Options.MaxOpenPerCaller; its finished tasks in another, scored by
// when they finished, of which the oldest are forgotten beyond
// Options.MaxFinishedPerCaller; and the answers its waiting tasks hold in
// a hash, which Update keeps under Options.MaxAnswerBytesPerCaller (else
// tasks.ErrAnswersFull). One caller cannot fill Redis for everyone.
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
// The keys of one task and of its caller's bounds are several keys: on a
// Redis Cluster they are in different slots, and the scripts need one
// node. Use one Redis (with replicas), not a cluster, of version 7.0 or
// later (the scripts use PEXPIRETIME).
package redisstore

import (
	"context"
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
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
	// MaxOpenPerCaller bounds the open tasks (working or waiting for
	// input) of one caller, as tasks.MemoryStoreOptions' field of that
	// name. Default tasks.DefaultMaxOpenPerCaller.
	MaxOpenPerCaller int
	// MaxFinishedPerCaller bounds the finished tasks kept for one caller,
	// as tasks.MemoryStoreOptions' field of that name. Default
	// tasks.DefaultMaxFinishedPerCaller.
	MaxFinishedPerCaller int
	// MaxAnswerBytesPerCaller bounds the answers held by the waiting tasks
	// of one caller, as tasks.MemoryStoreOptions' field of that name.
	// Default tasks.DefaultMaxAnswerBytesPerCaller.
	MaxAnswerBytesPerCaller int64
	// PerPrincipal is the old name of MaxOpenPerCaller, used when that is
	// zero.
	//
	// Deprecated: use MaxOpenPerCaller. Tasks are now bounded per caller
	// (the principal, else the client's address), and only open ones.
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
	client      redis.UniversalClient
	prefix      string
	maxOpen     int
	maxFinished int
	maxAnswers  int64
	now         func() time.Time
	retries     int
}

// New returns a store that keeps tasks through client.
func New(client redis.UniversalClient, o *Options) *Store {
	s := &Store{
		client: client, prefix: DefaultPrefix, now: time.Now, retries: 16,
		maxOpen: tasks.DefaultMaxOpenPerCaller, maxFinished: tasks.DefaultMaxFinishedPerCaller, maxAnswers: tasks.DefaultMaxAnswerBytesPerCaller,
	}
	if o != nil {
		if o.Prefix != "" {
			s.prefix = o.Prefix
		}
		switch {
		case o.MaxOpenPerCaller > 0:
			s.maxOpen = o.MaxOpenPerCaller
		case o.PerPrincipal > 0:
			s.maxOpen = o.PerPrincipal
		}
		if o.MaxFinishedPerCaller > 0 {
			s.maxFinished = o.MaxFinishedPerCaller
		}
		if o.MaxAnswerBytesPerCaller > 0 {
			s.maxAnswers = o.MaxAnswerBytesPerCaller
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

func (s *Store) taskKey(id string) string    { return s.prefix + "task:" + id }
func (s *Store) openKey(c string) string     { return s.prefix + "open:" + c }
func (s *Store) finishedKey(c string) string { return s.prefix + "finished:" + c }
func (s *Store) answersKey(c string) string  { return s.prefix + "answers:" + c }
func (s *Store) channel() string             { return s.prefix + "changed" }
func millis(t time.Time) string              { return strconv.FormatInt(t.UnixMilli(), 10) }
func (s *Store) wrap(what string, err error) error {
	return fmt.Errorf("redisstore: %s: %w", what, err)
}

// create is Create in one step: drop the caller's expired open tasks,
// refuse when it holds the most it may, store the record if its id is
// new, count it, and keep the count as long as its longest-lived task.
//
//go:embed create.lua
var createLua string

var createScript = redis.NewScript(createLua)

// update is the write of Update in one step, if the task is still what
// the update read: the record, the answers its caller's tasks hold
// (refused over the bound), and, when the task finishes, its move from
// the caller's open tasks to its finished ones, of which those finished
// longest ago are forgotten beyond the bound.
//
//go:embed update.lua
var updateLua string

var updateScript = redis.NewScript(updateLua)

// Create implements tasks.Store.
func (s *Store) Create(ctx context.Context, r *tasks.Record) error {
	b, err := encode(r)
	if err != nil {
		return err
	}
	res, err := createScript.Run(ctx, s.client, []string{s.taskKey(r.ID), s.openKey(r.Caller)},
		b, expiryOf(r), millis(s.now()), s.maxOpen).Text()
	if err != nil {
		return s.wrap("creating a task", err)
	}
	switch res {
	case "OK":
		return nil
	case "FULL":
		return fmt.Errorf("%w (the limit is %d)", tasks.ErrStoreFull, s.maxOpen)
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

// Update implements tasks.Store: read, apply f, and write if the task is
// still what was read (else read again and retry), with the caller's
// bounds kept in the same step.
func (s *Store) Update(ctx context.Context, id string, f func(*tasks.Record) error) (*tasks.Record, error) {
	key := s.taskKey(id)
	for range s.retries {
		b, err := s.client.Get(ctx, key).Bytes()
		if errors.Is(err, redis.Nil) {
			return nil, tasks.ErrNotFound
		}
		if err != nil {
			return nil, s.wrap("reading a task", err)
		}
		r, err := s.decodeLive(id, b)
		if err != nil {
			return nil, err
		}
		old := r.Status.Terminal()
		held := r.PartialAnswerBytes()
		if err := f(r); err != nil {
			return nil, err
		}
		nb, err := encode(r)
		if err != nil {
			return nil, err
		}
		sum := sha1.Sum(b)
		finishes, grew := "0", "0"
		if !old && r.Status.Terminal() {
			finishes = "1"
		}
		bytes := r.PartialAnswerBytes()
		if bytes > held {
			grew = "1"
		}
		res, err := updateScript.Run(ctx, s.client,
			[]string{key, s.openKey(r.Caller), s.finishedKey(r.Caller), s.answersKey(r.Caller)},
			hex.EncodeToString(sum[:]), nb, finishes, expiryOf(r), millis(s.now()), s.maxFinished, bytes, grew, s.maxAnswers).Text()
		if err != nil {
			return nil, s.wrap("updating a task", err)
		}
		switch res {
		case "OK":
			return r, nil
		case "RETRY":
			continue
		case "GONE":
			return nil, tasks.ErrNotFound
		case "ANSWERS":
			return nil, fmt.Errorf("%w (the limit is %d bytes)", tasks.ErrAnswersFull, s.maxAnswers)
		}
		return nil, fmt.Errorf("redisstore: updating a task: unexpected answer %q", res)
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

// expiryOf is r's expiry as the scripts take it: ms, rounded up, or "0"
// for none.
func expiryOf(r *tasks.Record) string {
	if r.Expires.IsZero() {
		return "0"
	}
	return millis(roundUp(r.Expires))
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
	Caller        string             `json:"caller,omitempty"`
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
	PollInterval  time.Duration      `json:"pollInterval,omitempty"` // nanoseconds
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
	if st.Caller == "" {
		// Written before records named their caller (or by a caller with
		// neither principal nor address, whose principal is "" too):
		// counted, then, under its principal.
		st.Caller = st.Principal
	}
	r := tasks.Record(st)
	return &r, nil
}
