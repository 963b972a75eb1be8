// Package oncestore is the bounded "consume once until expiry" store of one
// process: the mechanism behind requeststate.MemoryStore (single-use
// requestStates) and dpopverify.MemoryStore (DPoP proofs). Each of those is
// a thin wrapper that keeps its own options, defaults and error values and
// hands them to [New]; the rules live here once.
//
// An id is held from its first Consume until its expiry; a second Consume
// of it before then is a replay. Memory is bounded: at most MaxEntries ids
// are held, one caller holds at most MaxEntriesPerCaller of them, and the
// last eighth is kept for callers holding little (internal/fairshare,
// design record 039). An entry is dropped once its expiry has passed, as
// later calls pass it, oldest first: there is no goroutine.
//
// Subpackage redisonce is the same promise in Redis, for a fleet.
package oncestore

import (
	"fmt"
	"sync"
	"time"

	"github.com/parley-mcp/parley/internal/fairshare"
)

// Config is a wrapper's options, defaults and errors. The limits are
// taken as its users gave them: zero means the default, and the meaning of
// a negative value is [New]'s.
type Config struct {
	// MaxEntries bounds the unexpired ids held at once. Zero means
	// DefaultMaxEntries; negative is an error.
	MaxEntries int
	// MaxEntriesPerCaller bounds the unexpired ids one caller holds. Zero
	// means MaxEntries / DefaultCallerShares (at least 1); negative means
	// no bound per caller, and no reserve.
	MaxEntriesPerCaller int
	// Now is the clock that expires entries. Default time.Now.
	Now func() time.Time

	// DefaultMaxEntries and DefaultCallerShares are the wrapper's exported
	// defaults.
	DefaultMaxEntries, DefaultCallerShares int

	// Pkg is the wrapper's package name, which starts its error messages
	// ("requeststate"); Noun is what it holds, plural ("states").
	Pkg, Noun string

	// Replayed is returned as it is for an id held already. Full and
	// ShareFull are returned wrapped with the limit reached: Full when
	// MaxEntries ids are held, ShareFull when the caller holds its share,
	// or its reserve share while the store is in its reserve. They are the
	// wrapper's exported errors, so that errors.Is matches them.
	Replayed, Full, ShareFull error
}

// Store holds ids of type K, each until its expiry. It is safe for
// concurrent use.
type Store[K comparable] struct {
	max       int
	perCaller int // 0: no bound per caller
	now       func() time.Time
	replayed  error
	// Made once: refusing an id allocates nothing.
	full        error
	shareFull   error
	reserveFull error

	mu      sync.Mutex
	held    map[K]struct{}
	queue   []entry[K] // a min-heap on exp: the next entry to expire first
	callers map[string]*callerCount
}

type entry[K comparable] struct {
	exp    int64 // Unix nanoseconds
	id     K
	caller *callerCount // nil when no caller was counted
}

// callerCount is how many held entries one caller has. Entries point at
// it, so that the caller's key is held once however many entries it has.
type callerCount struct {
	key string
	n   int
}

// New returns an empty store for c. A negative c.MaxEntries is an error,
// named as the wrapper's MemoryStoreOptions.MaxEntries.
func New[K comparable](c Config) (*Store[K], error) {
	switch {
	case c.MaxEntries == 0:
		c.MaxEntries = c.DefaultMaxEntries
	case c.MaxEntries < 0:
		return nil, fmt.Errorf("%s: MemoryStoreOptions.MaxEntries must not be negative, got %d", c.Pkg, c.MaxEntries)
	}
	switch {
	case c.MaxEntriesPerCaller == 0:
		c.MaxEntriesPerCaller = max(1, c.MaxEntries/c.DefaultCallerShares)
	case c.MaxEntriesPerCaller < 0:
		c.MaxEntriesPerCaller = 0
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Store[K]{
		max:       c.MaxEntries,
		perCaller: c.MaxEntriesPerCaller,
		now:       c.Now,
		replayed:  c.Replayed,
		full:      fmt.Errorf("%w: it holds MaxEntries (%d) unexpired %s; raise MemoryStoreOptions.MaxEntries", c.Full, c.MaxEntries, c.Noun),
		shareFull: fmt.Errorf("%w: the caller holds MaxEntriesPerCaller (%d) unexpired %s", c.ShareFull, c.MaxEntriesPerCaller, c.Noun),
		reserveFull: fmt.Errorf("%w: the store holds %d of MaxEntries (%d) and keeps the rest for callers holding fewer than %d %s",
			c.ShareFull, c.MaxEntries-fairshare.Reserve(c.MaxEntries), c.MaxEntries, fairshare.ReserveShare(c.MaxEntriesPerCaller), c.Noun),
		held:    make(map[K]struct{}),
		callers: make(map[string]*callerCount),
	}, nil
}

// Consume records id until expires, counted against caller's share, and
// returns nil; or the Replayed error if id is held already, or an error
// matching Full or ShareFull if recording it would pass a bound. An
// expires already past is not recorded: nothing is promised beyond it. A
// caller of "" counts only against MaxEntries.
func (m *Store[K]) Consume(id K, expires time.Time, caller string) error {
	now := m.now().UnixNano()
	exp := expires.UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(now)
	if _, ok := m.held[id]; ok {
		return m.replayed
	}
	if exp <= now {
		return nil
	}
	var cc *callerCount
	if caller != "" && m.perCaller > 0 {
		cc = m.callers[caller]
		if cc != nil && cc.n >= m.perCaller {
			return m.shareFull
		}
	}
	if len(m.held) >= m.max {
		return m.full
	}
	if cc != nil && fairshare.Refused(cc.n, m.perCaller, len(m.held), m.max) {
		return m.reserveFull
	}
	if cc == nil && caller != "" && m.perCaller > 0 {
		cc = &callerCount{key: caller}
		m.callers[caller] = cc
	}
	if cc != nil {
		cc.n++
	}
	m.held[id] = struct{}{}
	m.push(entry[K]{exp: exp, id: id, caller: cc})
	return nil
}

// Len returns how many ids the store holds, expired ones not yet dropped
// included.
func (m *Store[K]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.held)
}

// CallerLen returns how many ids the store holds for caller, expired ones
// not yet dropped included.
func (m *Store[K]) CallerLen(caller string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cc := m.callers[caller]; cc != nil {
		return cc.n
	}
	return 0
}

// expire drops every entry whose expiry is not after now.
func (m *Store[K]) expire(now int64) {
	for len(m.queue) > 0 && m.queue[0].exp <= now {
		delete(m.held, m.queue[0].id)
		if cc := m.queue[0].caller; cc != nil {
			if cc.n--; cc.n == 0 {
				delete(m.callers, cc.key)
			}
		}
		m.pop()
	}
}

// push and pop keep m.queue a binary min-heap on exp (container/heap would
// box every entry in an interface).
func (m *Store[K]) push(e entry[K]) {
	q := append(m.queue, e)
	i := len(q) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if q[parent].exp <= q[i].exp {
			break
		}
		q[parent], q[i] = q[i], q[parent]
		i = parent
	}
	m.queue = q
}

func (m *Store[K]) pop() {
	q := m.queue
	last := len(q) - 1
	q[0] = q[last]
	q = q[:last]
	i := 0
	for {
		small, l, r := i, 2*i+1, 2*i+2
		if l < len(q) && q[l].exp < q[small].exp {
			small = l
		}
		if r < len(q) && q[r].exp < q[small].exp {
			small = r
		}
		if small == i {
			break
		}
		q[i], q[small] = q[small], q[i]
		i = small
	}
	m.queue = q
}
