package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/parley-mcp/parley/mcp"
)

// Record is a task as a Store keeps it.
type Record struct {
	// ID is the task id; Principal what the creator's identity hashes to
	// ("" when the request was not authenticated).
	ID, Principal string
	// Status, StatusMessage: see mcp.Task.
	Status        mcp.TaskStatus
	StatusMessage string
	// Created, Updated and Expires are the task's times; a zero Expires
	// means no limit.
	Created, Updated, Expires time.Time
	// Result is the tool's result (completed), Error the JSON-RPC error
	// object (failed), both raw.
	Result, Error json.RawMessage
	// Pending are the questions the task waits on (input_required), and
	// Answers the answers tasks/update has delivered to them so far.
	Pending mcp.InputRequests
	Answers mcp.InputResponses
	// Owner names the instance running the task (Options.Instance), and
	// LeaseUntil is when its claim on the task runs out unless renewed: a
	// task still open after that is failed by whichever instance reads it
	// next. A zero LeaseUntil means no lease (Options.Lease 0).
	Owner      string
	LeaseUntil time.Time
}

// clone returns a copy of r that shares nothing writable with it.
func (r *Record) clone() *Record {
	c := *r
	if r.Pending != nil {
		c.Pending = make(mcp.InputRequests, len(r.Pending))
		for k, v := range r.Pending {
			c.Pending[k] = v
		}
	}
	if r.Answers != nil {
		c.Answers = make(mcp.InputResponses, len(r.Answers))
		for k, v := range r.Answers {
			c.Answers[k] = v
		}
	}
	return &c
}

// ErrNotFound is returned by a Store for an id it does not hold (or no
// longer holds: expired).
var ErrNotFound = errors.New("tasks: no such task")

// ErrStoreFull is returned by a Store's Create when the creator already
// holds as many tasks as the store allows one principal.
var ErrStoreFull = errors.New("tasks: too many tasks for this caller")

// A Store keeps task records. Implementations must be safe for concurrent
// use; MemoryStore is the one for a single process.
type Store interface {
	// Create stores a new record, or returns an error wrapping
	// ErrStoreFull when its principal holds too many tasks.
	Create(ctx context.Context, r *Record) error
	// Get returns a copy of the record with id, or an error wrapping
	// ErrNotFound. It never writes: polls cost a read.
	Get(ctx context.Context, id string) (*Record, error)
	// Update applies f to the record with id atomically (f sees a copy
	// and its changes are stored only when it returns nil) and returns the
	// stored result.
	Update(ctx context.Context, id string, f func(*Record) error) (*Record, error)
}

// A Notifier carries word that a task changed (answers arrived, or it was
// cancelled) between the instances that share a Store, so that the
// instance running the task learns of it at once rather than at its next
// lease renewal. A Store that can reach its peers implements it; the
// manager finds it by type assertion. Delivery may be lost: the renewal
// is the bound on the delay either way (design record 028).
type Notifier interface {
	// Notify tells every watcher that task id changed.
	Notify(ctx context.Context, id string) error
	// Watch calls f with the id of every task notified until ctx ends,
	// and then returns ctx's error; or returns another error if it cannot
	// watch. It calls f("") once it is listening (and again whenever it
	// may have missed word, after a reconnection): the manager then
	// re-reads every task it runs, so word sent while it was not yet
	// listening is not lost. f must not block for long.
	Watch(ctx context.Context, f func(id string)) error
}

// MemoryStoreOptions configure a MemoryStore. Nil means defaults.
type MemoryStoreOptions struct {
	// PerPrincipal bounds the live tasks of one principal (the
	// unauthenticated callers share the principal ""). Default 1000.
	PerPrincipal int
	// Now is the clock, for expiry. Default time.Now.
	Now func() time.Time
}

// MemoryStore is a Store in this process's memory.
type MemoryStore struct {
	mu     sync.Mutex
	tasks  map[string]*Record
	counts map[string]int
	max    int
	now    func() time.Time

	watchMu  sync.Mutex
	watchers map[*func(string)]struct{}
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore(opts *MemoryStoreOptions) *MemoryStore {
	s := &MemoryStore{tasks: map[string]*Record{}, counts: map[string]int{}, max: 1000, now: time.Now}
	if opts != nil {
		if opts.PerPrincipal > 0 {
			s.max = opts.PerPrincipal
		}
		if opts.Now != nil {
			s.now = opts.Now
		}
	}
	return s
}

// Create implements Store.
func (s *MemoryStore) Create(ctx context.Context, r *Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
	if s.counts[r.Principal] >= s.max {
		return fmt.Errorf("%w (the limit is %d)", ErrStoreFull, s.max)
	}
	if _, dup := s.tasks[r.ID]; dup {
		return fmt.Errorf("tasks: id %s exists", r.ID)
	}
	s.tasks[r.ID] = r.clone()
	s.counts[r.Principal]++
	return nil
}

// Get implements Store.
func (s *MemoryStore) Get(ctx context.Context, id string) (*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.tasks[id]
	if !ok || s.expired(r) {
		return nil, ErrNotFound
	}
	return r.clone(), nil
}

// Update implements Store.
func (s *MemoryStore) Update(ctx context.Context, id string, f func(*Record) error) (*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.tasks[id]
	if !ok || s.expired(r) {
		return nil, ErrNotFound
	}
	c := r.clone()
	if err := f(c); err != nil {
		return nil, err
	}
	s.tasks[id] = c
	return c.clone(), nil
}

// Len returns the number of records held, expired ones included until
// the next Create sweeps them.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tasks)
}

// Notify implements Notifier, for the managers of one process that share
// this store.
func (s *MemoryStore) Notify(ctx context.Context, id string) error {
	s.watchMu.Lock()
	fs := make([]func(string), 0, len(s.watchers))
	for f := range s.watchers {
		fs = append(fs, *f)
	}
	s.watchMu.Unlock()
	for _, f := range fs {
		f(id)
	}
	return nil
}

// Watch implements Notifier.
func (s *MemoryStore) Watch(ctx context.Context, f func(id string)) error {
	s.watchMu.Lock()
	if s.watchers == nil {
		s.watchers = map[*func(string)]struct{}{}
	}
	s.watchers[&f] = struct{}{}
	s.watchMu.Unlock()
	f("")
	<-ctx.Done()
	s.watchMu.Lock()
	delete(s.watchers, &f)
	s.watchMu.Unlock()
	return ctx.Err()
}

func (s *MemoryStore) expired(r *Record) bool {
	return !r.Expires.IsZero() && !s.now().Before(r.Expires)
}

// sweep drops expired records. It runs on Create, so the store's size is
// bounded by what its creators keep alive.
func (s *MemoryStore) sweep() {
	for id, r := range s.tasks {
		if s.expired(r) {
			delete(s.tasks, id)
			if s.counts[r.Principal]--; s.counts[r.Principal] <= 0 {
				delete(s.counts, r.Principal)
			}
		}
	}
}
