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
	maxCachedDecodeLen = 1 << 10
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

// cacheCaps returns what clientCapsCache keeps of c, whose sub-capabilities
// are in blk; ok is false when c holds maps (see the top of this file).
func cacheCaps(c *ClientCapabilities, blk *capsBlock) (v cachedCaps, ok bool) {
	if c.Experimental != nil || c.Extensions != nil {
		return v, false
	}
	v = cachedCaps{caps: *c, blk: *blk, roots: c.Roots != nil, sampling: c.Sampling != nil, elicitation: c.Elicitation != nil}
	v.caps.Roots, v.caps.Sampling, v.caps.Elicitation = nil, nil, nil
	return v, true
}

// fill copies v into *c, with its sub-capabilities in blk.
func (v *cachedCaps) fill(c *ClientCapabilities, blk *capsBlock) {
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
}

var clientCapsCache decodeCache[cachedCaps]

// decodeCached decodes data into *c as c.decode(data, blk) does (blk must
// not be nil), through clientCapsCache.
func (c *ClientCapabilities) decodeCached(data []byte, blk *capsBlock) error {
	if v, ok := clientCapsCache.get(data); ok {
		v.fill(c, blk)
		return nil
	}
	if err := c.decode(data, blk); err != nil {
		return err
	}
	if len(data) <= maxCachedDecodeLen {
		if v, ok := cacheCaps(c, blk); ok {
			clientCapsCache.put(data, v)
		}
	}
	return nil
}

// cachedRequestMeta is a whole decoded request _meta, kept when it is the
// common envelope and nothing else: protocol version, capabilities, client
// info and log level. A progress token or trace context differs on every
// request, so a _meta holding one is not kept (its members still are).
type cachedRequestMeta struct {
	meta    RequestMetaObject // its pointers cleared
	caps    cachedCaps
	info    Implementation
	hasCaps bool
	hasInfo bool
}

var requestMetaCache decodeCache[cachedRequestMeta]

// decodeRequestMetaCached is blk.meta.decode(raw, &blk.metaBlock, a)
// through requestMetaCache; blk must be zero.
func decodeRequestMetaCached(raw []byte, blk *requestMetaBlock, a *strArena) error {
	if v, ok := requestMetaCache.get(raw); ok {
		blk.meta = v.meta
		if v.hasCaps {
			v.caps.fill(&blk.caps, &blk.capsBlock)
			blk.meta.ClientCapabilities = &blk.caps
		}
		if v.hasInfo {
			blk.info = v.info
			blk.meta.ClientInfo = &blk.info
		}
		return nil
	}
	if err := blk.meta.decode(raw, &blk.metaBlock, a); err != nil {
		return err
	}
	m := &blk.meta
	if len(raw) > maxCachedDecodeLen || m.Extra != nil || m.ProgressToken.IsValid() ||
		m.Traceparent != "" || m.Tracestate != "" || m.Baggage != "" ||
		m.ClientInfo != nil && m.ClientInfo.Icons != nil {
		return nil
	}
	// Within maxCachedDecodeLen, clientInfo's strings are its own (see
	// Implementation.decodeCached), not the params' arena.
	v := cachedRequestMeta{meta: *m}
	v.meta.ClientCapabilities, v.meta.ClientInfo = nil, nil
	if m.ClientCapabilities != nil {
		caps, ok := cacheCaps(m.ClientCapabilities, &blk.capsBlock)
		if !ok {
			return nil
		}
		v.caps, v.hasCaps = caps, true
	}
	if m.ClientInfo != nil {
		v.info, v.hasInfo = *m.ClientInfo, true
	}
	requestMetaCache.put(raw, v)
	return nil
}

// cachedResultMeta is a whole decoded result _meta that holds serverInfo
// (without icons) and nothing else, the one a server puts on every result.
type cachedResultMeta struct {
	info    Implementation
	hasInfo bool
}

var resultMetaCache decodeCache[cachedResultMeta]

// decodeResultMetaCached is meta.decode(raw, a, info) (info not nil)
// through resultMetaCache.
func decodeResultMetaCached(raw []byte, a *strArena, meta *ResultMetaObject, info *Implementation) error {
	if v, ok := resultMetaCache.get(raw); ok {
		*meta = ResultMetaObject{}
		if v.hasInfo {
			*info = v.info
			meta.ServerInfo = info
		}
		return nil
	}
	if err := meta.decode(raw, a, info); err != nil {
		return err
	}
	if len(raw) > maxCachedDecodeLen || meta.Extra != nil || meta.SubscriptionID.IsValid() ||
		meta.ServerInfo != nil && meta.ServerInfo.Icons != nil {
		return nil
	}
	v := cachedResultMeta{hasInfo: meta.ServerInfo != nil}
	if v.hasInfo {
		v.info = *meta.ServerInfo
	}
	resultMetaCache.put(raw, v)
	return nil
}
