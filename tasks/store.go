package tasks

import (
	"container/heap"
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
	// ("" when the request was not authenticated): the task is served to
	// that principal only.
	ID, Principal string
	// Caller is what the store's bounds per caller count the task under
	// (see MemoryStoreOptions): Principal when there is one, else a hash
	// of the client's address (auth.CallerKey), else "" (stdio: one
	// client). It grants nothing: an unauthenticated task is read by
	// whoever has its id, from any address.
	Caller string
	// Status, StatusMessage: see mcp.Task.
	Status        mcp.TaskStatus
	StatusMessage string
	// Created, Updated and Expires are the task's times; a zero Expires
	// means no limit. A task that ended (completed, failed, cancelled)
	// has not changed since Updated.
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
	// PollInterval is how long clients are asked to wait between polls
	// of this task; zero means the manager's Options.PollInterval.
	PollInterval time.Duration
}

// PartialAnswerBytes returns the size of the answers r holds while it
// waits for more (input_required with a question still open): what the
// stores' bounds per caller on answers count. Once every question has
// its answer it is zero: the body takes them at once.
func (r *Record) PartialAnswerBytes() int64 {
	if r.Status != mcp.TaskInputRequired || complete(r) {
		return 0
	}
	var n int64
	for _, a := range r.Answers {
		n += int64(len(a))
	}
	return n
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

// ErrStoreFull is returned by a Store's Create when the creator's caller
// already holds as many open tasks (working or waiting for input) as the
// store allows one caller.
var ErrStoreFull = errors.New("tasks: too many tasks for this caller")

// ErrAnswersFull is returned by a Store's Update when the change would make
// the answers held by the tasks of one caller (answers delivered to tasks
// still waiting for more) larger than the store allows.
var ErrAnswersFull = errors.New("tasks: the answers held for this caller's tasks are too large")

// A Store keeps task records. Implementations must be safe for concurrent
// use; MemoryStore is the one for a single process.
type Store interface {
	// Create stores a new, open record, or returns an error wrapping
	// ErrStoreFull when its Caller holds too many open tasks.
	Create(ctx context.Context, r *Record) error
	// Get returns a copy of the record with id, or an error wrapping
	// ErrNotFound. It never writes: polls cost a read.
	Get(ctx context.Context, id string) (*Record, error)
	// Update applies f to the record with id atomically (f sees a copy
	// and its changes are stored only when it returns nil) and returns the
	// stored result. It may refuse a change that makes the answers its
	// Caller's tasks hold too large, with an error wrapping
	// ErrAnswersFull.
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

// The defaults of the bounds per caller of MemoryStoreOptions (and of
// tasks/redisstore's Options).
const (
	DefaultMaxOpenPerCaller        = 1000
	DefaultMaxFinishedPerCaller    = 1000
	DefaultMaxAnswerBytesPerCaller = 16 << 20
)

// MemoryStoreOptions configure a MemoryStore. Nil means defaults.
//
// A caller is what Record.Caller names: the principal when the request was
// authenticated, else the client's address, so that unauthenticated
// clients do not share one allowance (those behind one proxy or NAT still
// do).
type MemoryStoreOptions struct {
	// MaxOpenPerCaller bounds the open tasks (working or waiting for
	// input) of one caller: one more tools/call is refused with -32600
	// naming the limit (ErrStoreFull) until one of them ends. Finished
	// tasks do not count. Default DefaultMaxOpenPerCaller.
	MaxOpenPerCaller int
	// MaxFinishedPerCaller bounds the finished tasks (completed, failed,
	// cancelled) kept for one caller until their TTL: when one more
	// finishes, the one that finished longest ago is forgotten at once,
	// as if it had expired. Default DefaultMaxFinishedPerCaller.
	MaxFinishedPerCaller int
	// MaxAnswerBytesPerCaller bounds the answers held, in bytes, by the
	// tasks of one caller that wait for more answers (a task keeps the
	// answers it has until its last question is answered; see
	// Record.PartialAnswerBytes): a tasks/update over it is refused with
	// -32600 naming the limit (ErrAnswersFull). An update that answers a
	// task's last open question is never refused by it. Default
	// DefaultMaxAnswerBytesPerCaller.
	MaxAnswerBytesPerCaller int64
	// PerPrincipal is the old name of MaxOpenPerCaller, used when that is
	// zero.
	//
	// Deprecated: use MaxOpenPerCaller. Tasks are now bounded per caller
	// (the principal, else the client's address), and only open ones.
	PerPrincipal int
	// Now is the clock, for expiry. Default time.Now.
	Now func() time.Time
}

// MemoryStore is a Store in this process's memory. Expired tasks are
// dropped as later calls pass them, soonest expiry first.
type MemoryStore struct {
	mu          sync.Mutex
	tasks       map[string]*entry
	callers     map[string]*callerShare
	expiries    expiryHeap // the tasks that expire, soonest first
	maxOpen     int
	maxFinished int
	maxAnswers  int64
	now         func() time.Time

	watchMu  sync.Mutex
	watchers map[*func(string)]struct{}
}

// callerShare is what one caller's tasks hold of a MemoryStore.
type callerShare struct {
	open     int
	finished map[string]time.Time // finished task → when it finished
	answers  int64
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore(opts *MemoryStoreOptions) *MemoryStore {
	s := &MemoryStore{
		tasks: map[string]*entry{}, callers: map[string]*callerShare{}, now: time.Now,
		maxOpen: DefaultMaxOpenPerCaller, maxFinished: DefaultMaxFinishedPerCaller, maxAnswers: DefaultMaxAnswerBytesPerCaller,
	}
	if opts != nil {
		switch {
		case opts.MaxOpenPerCaller > 0:
			s.maxOpen = opts.MaxOpenPerCaller
		case opts.PerPrincipal > 0:
			s.maxOpen = opts.PerPrincipal
		}
		if opts.MaxFinishedPerCaller > 0 {
			s.maxFinished = opts.MaxFinishedPerCaller
		}
		if opts.MaxAnswerBytesPerCaller > 0 {
			s.maxAnswers = opts.MaxAnswerBytesPerCaller
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
	if c := s.callers[r.Caller]; c != nil && c.open >= s.maxOpen && !r.Status.Terminal() {
		return fmt.Errorf("%w (the limit is %d)", ErrStoreFull, s.maxOpen)
	}
	if _, dup := s.tasks[r.ID]; dup {
		return fmt.Errorf("tasks: id %s exists", r.ID)
	}
	e := &entry{r: r.clone(), index: -1}
	s.tasks[r.ID] = e
	s.expireAt(e)
	s.count(e.r)
	return nil
}

// Get implements Store.
func (s *MemoryStore) Get(ctx context.Context, id string) (*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
	e, ok := s.tasks[id]
	if !ok || s.expired(e.r) {
		return nil, ErrNotFound
	}
	return e.r.clone(), nil
}

// Update implements Store.
func (s *MemoryStore) Update(ctx context.Context, id string, f func(*Record) error) (*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
	e, ok := s.tasks[id]
	if !ok || s.expired(e.r) {
		return nil, ErrNotFound
	}
	r, c := e.r, e.r.clone()
	if err := f(c); err != nil {
		return nil, err
	}
	s.uncount(r)
	if grew := c.PartialAnswerBytes(); grew > r.PartialAnswerBytes() && s.share(c.Caller).answers+grew > s.maxAnswers {
		s.count(r)
		return nil, fmt.Errorf("%w (the limit is %d bytes)", ErrAnswersFull, s.maxAnswers)
	}
	e.r = c
	s.expireAt(e)
	s.count(c)
	if !r.Status.Terminal() && c.Status.Terminal() {
		s.evict(c.Caller)
	}
	return c.clone(), nil
}

// Len returns the number of records held (expired ones are dropped as
// later calls pass them).
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

// share returns caller's share, making it if needed.
func (s *MemoryStore) share(caller string) *callerShare {
	c := s.callers[caller]
	if c == nil {
		c = &callerShare{finished: map[string]time.Time{}}
		s.callers[caller] = c
	}
	return c
}

// count adds what r holds to its caller's share.
func (s *MemoryStore) count(r *Record) {
	c := s.share(r.Caller)
	if r.Status.Terminal() {
		c.finished[r.ID] = r.Updated
	} else {
		c.open++
	}
	c.answers += r.PartialAnswerBytes()
}

// uncount takes what r holds out of its caller's share.
func (s *MemoryStore) uncount(r *Record) {
	c := s.callers[r.Caller]
	if c == nil {
		return
	}
	if r.Status.Terminal() {
		delete(c.finished, r.ID)
	} else {
		c.open--
	}
	c.answers -= r.PartialAnswerBytes()
	if c.open <= 0 && len(c.finished) == 0 && c.answers <= 0 {
		delete(s.callers, r.Caller)
	}
}

// evict forgets caller's tasks that finished longest ago while it has more
// finished tasks than the store keeps.
func (s *MemoryStore) evict(caller string) {
	c := s.callers[caller]
	for c != nil && len(c.finished) > s.maxFinished {
		var oldest string
		var at time.Time
		for id, t := range c.finished {
			if oldest == "" || t.Before(at) || t.Equal(at) && id < oldest {
				oldest, at = id, t
			}
		}
		s.drop(oldest)
		c = s.callers[caller]
	}
}

// drop forgets the task id.
func (s *MemoryStore) drop(id string) {
	e, ok := s.tasks[id]
	if !ok {
		return
	}
	delete(s.tasks, id)
	if e.index >= 0 {
		heap.Remove(&s.expiries, e.index)
	}
	s.uncount(e.r)
}

// expireAt puts e in the expiry heap where its record's expiry says.
func (s *MemoryStore) expireAt(e *entry) {
	switch {
	case e.index >= 0 && e.r.Expires.IsZero():
		heap.Remove(&s.expiries, e.index)
	case e.index >= 0:
		heap.Fix(&s.expiries, e.index)
	case !e.r.Expires.IsZero():
		heap.Push(&s.expiries, e)
	}
}

// sweep drops the records whose expiry has passed, so that an expired
// task gives its caller's share back as soon as the store is next used.
func (s *MemoryStore) sweep() {
	for len(s.expiries) > 0 && s.expired(s.expiries[0].r) {
		s.drop(s.expiries[0].r.ID)
	}
}

// entry is a record held, with its place in the expiry heap (-1: none).
type entry struct {
	r     *Record
	index int
}

// expiryHeap orders entries by expiry, soonest first (container/heap).
type expiryHeap []*entry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].r.Expires.Before(h[j].r.Expires) }
func (h expiryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *expiryHeap) Push(x any) {
	e := x.(*entry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	e.index = -1
	*h = old[:len(old)-1]
	return e
}
