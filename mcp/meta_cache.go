package mcp

import "sync"

// Every 2026-07-28 request carries the client's info and capabilities in
// its _meta, and every result the server's info: the same bytes, message
// after message, from a peer that does not change its mind. Decoding them
// was most of the cost of decoding a tools/call's params (BENCHMARKS.md,
// "Profile-driven changes"), so the decoded values are kept, keyed by the
// member's exact wire form: decoding is a function of those bytes alone, so
// a hit gives what decoding would. Only values that hold no maps or slices
// are kept (no icons, experimental or extensions), so that a hit is copied
// whole into the caller's room and no two requests share anything a
// handler could change. Only successful decodes are kept; a failing one
// fails each time with its own error.
const (
	// maxCachedDecodes bounds the entries of each cache; when full, it is
	// emptied, so a peer that varies its info per request costs at most this
	// many entries.
	maxCachedDecodes = 64
	// maxCachedDecodeLen bounds the wire form worth keeping.
	maxCachedDecodeLen = 512
)

// decodeCache maps the wire form of a value to its decoded form.
type decodeCache[T any] struct {
	mu sync.RWMutex
	m  map[string]T
}

func (c *decodeCache[T]) get(raw []byte) (v T, ok bool) {
	if len(raw) > maxCachedDecodeLen {
		return v, false
	}
	c.mu.RLock()
	v, ok = c.m[string(raw)] // no allocation: a lookup by bytes
	c.mu.RUnlock()
	return v, ok
}

func (c *decodeCache[T]) put(raw []byte, v T) {
	if len(raw) > maxCachedDecodeLen {
		return
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedDecodes {
		c.m = make(map[string]T, maxCachedDecodes)
	}
	c.m[string(raw)] = v
	c.mu.Unlock()
}

var implementationCache decodeCache[Implementation]

// decodeCached decodes data into *m as m.decode(data, a)
// does, through implementationCache. A kept value's strings share one copy
// of its own text, never of a larger message around it.
func (m *Implementation) decodeCached(data []byte, a *strArena) error {
	if v, ok := implementationCache.get(data); ok {
		*m = v
		return nil
	}
	if len(data) > maxCachedDecodeLen {
		return m.decode(data, a)
	}
	if err := m.decode(data, nil); err != nil {
		return err
	}
	if m.Icons == nil {
		implementationCache.put(data, *m)
	}
	return nil
}

// cachedCaps is a decoded ClientCapabilities (its pointers cleared, so
// that the cache keeps nothing of the request that filled it) with the
// sub-capabilities it points to.
type cachedCaps struct {
	caps                         ClientCapabilities
	blk                          capsBlock
	roots, sampling, elicitation bool
}

var clientCapsCache decodeCache[cachedCaps]

// decodeCached decodes data into *c as c.decode(data, blk) does (blk must
// not be nil), through clientCapsCache.
func (c *ClientCapabilities) decodeCached(data []byte, blk *capsBlock) error {
	if v, ok := clientCapsCache.get(data); ok {
		*blk = v.blk
		*c = v.caps
		if v.roots {
			c.Roots = &blk.roots
		}
		if v.sampling {
			c.Sampling = &blk.sampling
		}
		if v.elicitation {
			c.Elicitation = &blk.elicitation
		}
		return nil
	}
	if err := c.decode(data, blk); err != nil {
		return err
	}
	if c.Experimental == nil && c.Extensions == nil && len(data) <= maxCachedDecodeLen {
		v := cachedCaps{caps: *c, blk: *blk, roots: c.Roots != nil, sampling: c.Sampling != nil, elicitation: c.Elicitation != nil}
		v.caps.Roots, v.caps.Sampling, v.caps.Elicitation = nil, nil, nil
		clientCapsCache.put(data, v)
	}
	return nil
}
