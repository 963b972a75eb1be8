package dpopverify

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/parley-mcp/parley/internal/fairshare"
)

// ProofID names a proof in a [ReplayStore]: a SHA-256 hash of its jti, the
// thumbprint of its key and its URL. The store learns nothing else of the
// proof, and every id has the same size, whatever the proof says.
type ProofID [32]byte

// String is the id in base64url, as a key.
func (id ProofID) String() string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// ErrReplayed is what a [ReplayStore] returns for a proof it has recorded
// before: the proof is refused.
var ErrReplayed = errors.New("dpopverify: the DPoP proof was used before")

// A ReplayStore records the proofs a server accepted, so that each is
// accepted once (RFC 9449 section 11.1). A fleet's instances share one;
// package redisstore is one in Redis.
type ReplayStore interface {
	// Consume records id until expires (after which the proof could not
	// be accepted anyway). It returns nil when id is new, ErrReplayed
	// when it was recorded before, and any other error when it cannot
	// tell: the proof is then refused with 503 (the store is down, or
	// full), failing closed. caller names the token's principal, for a
	// store that gives each caller a share.
	Consume(ctx context.Context, id ProofID, expires time.Time, caller string) error
}

// DefaultMaxEntries is how many unexpired proofs a [MemoryStore] holds when
// its options set no limit: with the default window (a proof is held about
// ten minutes) it sustains about 400 requests a second, in about 30 MB.
const DefaultMaxEntries = 1 << 18

// DefaultCallerShares is what MaxEntries is divided by for the share of one
// caller when MaxEntriesPerCaller is not set: 16,384 proofs, about 27
// requests a second sustained.
const DefaultCallerShares = 16

// ErrStoreFull is what a [MemoryStore] returns, wrapped with its limit,
// when it holds MaxEntries unexpired proofs and is asked to record another:
// the proof is refused (with 503) rather than the store grow without bound
// or forget proofs that could still be replayed.
var ErrStoreFull = errors.New("dpopverify: the DPoP replay store is full")

// ErrCallerShareFull is what a [MemoryStore] returns, wrapped with its
// limit, when the caller already holds MaxEntriesPerCaller unexpired
// proofs: that caller's requests are refused until some expire, and every
// other caller's are not.
var ErrCallerShareFull = errors.New("dpopverify: the caller's share of the DPoP replay store is full")

// MemoryStoreOptions tunes a [MemoryStore]. A nil *MemoryStoreOptions means
// defaults.
type MemoryStoreOptions struct {
	// MaxEntries bounds the unexpired proofs held at once. A proof is held
	// for twice the window (it may have been made up to the window in the
	// future) plus a second, so a store needs about (requests per second)
	// × (2 × window) entries; each costs under 120 bytes. Default
	// [DefaultMaxEntries].
	MaxEntries int
	// MaxEntriesPerCaller bounds the unexpired proofs of one caller (the
	// token's principal), so that one client cannot fill the store for
	// everyone. And once the store is in its last eighth, a caller that
	// holds a sixty-fourth of its share is refused there too, so callers
	// each at their share do not fill it for the next one (design record
	// 039). Zero means MaxEntries / DefaultCallerShares (at least 1);
	// negative means no bound per caller (and no reserve).
	MaxEntriesPerCaller int
	// Now is the clock that expires entries. Default time.Now.
	Now func() time.Time
}

// MemoryStore is a [ReplayStore] for one process. Its memory is bounded:
// an entry is dropped once its expiry has passed (as later calls pass it,
// oldest first: no goroutine), and at most MaxEntries are held. It is safe
// for concurrent use.
type MemoryStore struct {
	max         int
	perCaller   int // 0: no bound per caller
	now         func() time.Time
	full        error
	shareFull   error
	reserveFull error

	mu      sync.Mutex
	held    map[ProofID]struct{}
	queue   []entry // a min-heap on exp
	callers map[string]*callerCount
}

type entry struct {
	exp    int64 // Unix nanoseconds
	id     ProofID
	caller *callerCount // nil when no caller was named
}

// callerCount is how many held entries one caller has.
type callerCount struct {
	key string
	n   int
}

// NewMemoryStore returns an empty store. o nil means defaults; a negative
// MaxEntries is an error.
func NewMemoryStore(o *MemoryStoreOptions) (*MemoryStore, error) {
	var opts MemoryStoreOptions
	if o != nil {
		opts = *o
	}
	switch {
	case opts.MaxEntries == 0:
		opts.MaxEntries = DefaultMaxEntries
	case opts.MaxEntries < 0:
		return nil, fmt.Errorf("dpopverify: MemoryStoreOptions.MaxEntries must not be negative, got %d", opts.MaxEntries)
	}
	switch {
	case opts.MaxEntriesPerCaller == 0:
		opts.MaxEntriesPerCaller = max(1, opts.MaxEntries/DefaultCallerShares)
	case opts.MaxEntriesPerCaller < 0:
		opts.MaxEntriesPerCaller = 0
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &MemoryStore{
		max:       opts.MaxEntries,
		perCaller: opts.MaxEntriesPerCaller,
		now:       opts.Now,
		full:      fmt.Errorf("%w: it holds MaxEntries (%d) unexpired proofs; raise MemoryStoreOptions.MaxEntries", ErrStoreFull, opts.MaxEntries),
		shareFull: fmt.Errorf("%w: the caller holds MaxEntriesPerCaller (%d) unexpired proofs", ErrCallerShareFull, opts.MaxEntriesPerCaller),
		reserveFull: fmt.Errorf("%w: the store holds %d of MaxEntries (%d) and keeps the rest for callers holding fewer than %d proofs",
			ErrCallerShareFull, opts.MaxEntries-fairshare.Reserve(opts.MaxEntries), opts.MaxEntries, fairshare.ReserveShare(opts.MaxEntriesPerCaller)),
		held:    make(map[ProofID]struct{}),
		callers: make(map[string]*callerCount),
	}, nil
}

// Consume implements [ReplayStore]. An expires already past is not
// recorded: nothing is promised beyond it.
func (m *MemoryStore) Consume(_ context.Context, id ProofID, expires time.Time, caller string) error {
	now := m.now().UnixNano()
	exp := expires.UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(now)
	if _, ok := m.held[id]; ok {
		return ErrReplayed
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
	m.push(entry{exp: exp, id: id, caller: cc})
	return nil
}

// Len returns how many proofs the store holds, expired ones not yet
// dropped included.
func (m *MemoryStore) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.held)
}

// expire drops every entry whose expiry is not after now.
func (m *MemoryStore) expire(now int64) {
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

// push and pop keep m.queue a binary min-heap on exp.
func (m *MemoryStore) push(e entry) {
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

func (m *MemoryStore) pop() {
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
