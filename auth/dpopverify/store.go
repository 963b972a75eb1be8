package dpopverify

import (
	"context"
	"encoding/base64"
	"errors"
	"time"

	"github.com/parley-mcp/parley/internal/oncestore"
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
	s *oncestore.Store[ProofID]
}

// NewMemoryStore returns an empty store. o nil means defaults; a negative
// MaxEntries is an error.
func NewMemoryStore(o *MemoryStoreOptions) (*MemoryStore, error) {
	var opts MemoryStoreOptions
	if o != nil {
		opts = *o
	}
	s, err := oncestore.New[ProofID](oncestore.Config{
		MaxEntries:          opts.MaxEntries,
		MaxEntriesPerCaller: opts.MaxEntriesPerCaller,
		Now:                 opts.Now,
		DefaultMaxEntries:   DefaultMaxEntries,
		DefaultCallerShares: DefaultCallerShares,
		Pkg:                 "dpopverify",
		Noun:                "proofs",
		Replayed:            ErrReplayed,
		Full:                ErrStoreFull,
		ShareFull:           ErrCallerShareFull,
	})
	if err != nil {
		return nil, err
	}
	return &MemoryStore{s: s}, nil
}

// Consume implements [ReplayStore]. An expires already past is not
// recorded: nothing is promised beyond it.
func (m *MemoryStore) Consume(_ context.Context, id ProofID, expires time.Time, caller string) error {
	return m.s.Consume(id, expires, caller)
}

// Len returns how many proofs the store holds, expired ones not yet
// dropped included.
func (m *MemoryStore) Len() int { return m.s.Len() }
