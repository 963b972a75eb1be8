package requeststate

import (
	"context"
	"errors"
	"time"

	"github.com/parley-mcp/parley/internal/oncestore"
)

// DefaultMaxEntries is how many unexpired states a [MemoryStore] holds
// when its options set no limit: at the default TTL (plus [ClockSkew]) it
// sustains about 400 new rounds a second, in about 17 MB at most (about
// 64 bytes an entry, measured).
const DefaultMaxEntries = 1 << 18

// DefaultCallerShares is what a [MemoryStore]'s MaxEntries is divided by
// for the share of one caller when MaxEntriesPerCaller is not set: with the
// defaults each caller holds at most 16,384 states, about 26 new rounds a
// second sustained at the default TTL, and a burner exhausts only that.
const DefaultCallerShares = 16

// ErrStoreFull is what a [MemoryStore] returns, wrapped with its limit,
// when it already holds MaxEntries unexpired states and is asked to record
// another. The boundary refuses that state (single use fails closed)
// rather than grow without bound.
var ErrStoreFull = errors.New("requeststate: single-use store full")

// ErrCallerShareFull is what a [MemoryStore] returns, wrapped with its
// limit, when the caller presenting a state already holds
// MaxEntriesPerCaller unexpired states, or holds its reserve share while
// the store is in its reserve (see MemoryStoreOptions.MaxEntriesPerCaller):
// that caller's rounds are refused until some of its states expire, and
// the rounds of callers holding less are not.
var ErrCallerShareFull = errors.New("requeststate: the caller's share of the single-use store is full")

// MemoryStoreOptions tunes a [MemoryStore]. A nil *MemoryStoreOptions means
// defaults.
type MemoryStoreOptions struct {
	// MaxEntries bounds the unexpired states held at once. A state is
	// held until its expiry plus ClockSkew, so a store needs about
	// (new rounds per second) × (TTL + 30 s) entries; each costs under
	// 80 bytes. When full, Consume refuses new states with ErrStoreFull
	// until some expire. Default: DefaultMaxEntries.
	MaxEntries int
	// MaxEntriesPerCaller bounds the unexpired states one caller (its
	// principal, else its client address; see [CallerStore]) holds at
	// once, so that one client burning rounds fills only its own share
	// and the others keep working. Size it as the rounds per second one
	// legitimate caller sustains × (TTL + 30 s); MaxEntries then serves
	// MaxEntries / MaxEntriesPerCaller callers at that rate.
	//
	// Callers each at their share would still fill the store together,
	// so its last eighth is kept for callers holding fewer than a
	// sixty-fourth of MaxEntriesPerCaller (at least one): once seven
	// eighths of MaxEntries are held, a caller holding that many is
	// refused with ErrCallerShareFull, and a caller new to the store still
	// gets its rounds accepted (design record 039). With the defaults
	// that is 256 states, a round every 2.5 s sustained.
	//
	// States recorded through Consume (no caller known) count only
	// against MaxEntries. Zero means MaxEntries / DefaultCallerShares (at
	// least 1); negative means no bound per caller, and no reserve.
	MaxEntriesPerCaller int
	// Now is the clock that expires entries. Default: time.Now. Tests
	// inject their own.
	Now func() time.Time
}

// MemoryStore is a [SingleUseStore] for one process: a server that is a
// single process (stdio, or exactly one HTTP worker). Instances behind a
// load balancer each have their own, so a state replayed to another
// instance would be accepted there: a fleet shares a store instead
// (requeststate/redisstore).
//
// Its memory is bounded: an entry is dropped once its expiry has passed,
// and at most MaxEntries are held. Consume costs one lock, a map lookup and
// insert, and a heap push; expired entries are dropped as later calls pass
// them, oldest first. It is safe for concurrent use.
type MemoryStore struct {
	s *oncestore.Store[StateID]
}

// NewMemoryStore returns an empty store. o nil means defaults; a negative
// MaxEntries is an error.
func NewMemoryStore(o *MemoryStoreOptions) (*MemoryStore, error) {
	var opts MemoryStoreOptions
	if o != nil {
		opts = *o
	}
	s, err := oncestore.New[StateID](oncestore.Config{
		MaxEntries:          opts.MaxEntries,
		MaxEntriesPerCaller: opts.MaxEntriesPerCaller,
		Now:                 opts.Now,
		DefaultMaxEntries:   DefaultMaxEntries,
		DefaultCallerShares: DefaultCallerShares,
		Pkg:                 "requeststate",
		Noun:                "states",
		Replayed:            ErrReplayed,
		Full:                ErrStoreFull,
		ShareFull:           ErrCallerShareFull,
	})
	if err != nil {
		return nil, err
	}
	return &MemoryStore{s: s}, nil
}

// Consume records id until expires, or returns [ErrReplayed] if id is held
// already, or an error matching [ErrStoreFull] if MaxEntries unexpired
// states are held. An expires already past is not recorded: nothing is
// promised beyond it.
func (m *MemoryStore) Consume(_ context.Context, id StateID, expires time.Time) error {
	return m.s.Consume(id, expires, "")
}

// ConsumeAs is Consume for a state presented by caller: it also returns an
// error matching [ErrCallerShareFull] when caller already holds
// MaxEntriesPerCaller unexpired states, or its reserve share while the
// store is in its last eighth. A caller of "" is not bounded apart from
// the store as a whole.
func (m *MemoryStore) ConsumeAs(_ context.Context, id StateID, expires time.Time, caller string) error {
	return m.s.Consume(id, expires, caller)
}

// Len returns how many states the store holds, expired ones not yet
// dropped included.
func (m *MemoryStore) Len() int { return m.s.Len() }

// CallerLen returns how many states the store holds for caller, expired
// ones not yet dropped included.
func (m *MemoryStore) CallerLen(caller string) int { return m.s.CallerLen(caller) }
