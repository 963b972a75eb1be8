package client

import (
	"bytes"
	lru "container/list"
	"context"
	"encoding/json"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/parley-mcp/parley/internal/jsontext"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
)

// The session cache: results the server marked cacheable (ttlMs,
// cacheScope; docs/design/031-client-cache.md) are kept for as long as the
// server says and served without a request. What it keeps: server/discover,
// each page of the four lists (by cursor), and resources/read results that
// came complete from a first round. It follows ttlMs wherever the server
// sends it; a legacy (2025-11-25) server sends none, so nothing of it is
// kept unless it does.

// CacheOptions configures the cache of a session. A nil *CacheOptions
// means the defaults: the cache is on.
type CacheOptions struct {
	// Disable turns the cache off: every call goes to the server.
	Disable bool
	// MaxEntries bounds how many results one session keeps. When full,
	// the least recently used result goes. Zero means
	// DefaultCacheMaxEntries.
	MaxEntries int
	// MaxBytes bounds the size of the results one session keeps, counted
	// as their JSON text. A result larger than MaxBytes is never kept.
	// Zero means DefaultCacheMaxBytes.
	MaxBytes int
	// Now is the clock that decides freshness: a result received at t
	// with ttlMs d is served while Now() is before t+d. Default: time.Now.
	Now func() time.Time
	// AuthContext names the authorization context a request made with ctx
	// is sent under, for a session whose transport sends different
	// credentials depending on the context (a gateway acting for several
	// users over one session). A "private" result is served only to
	// requests of the context that received it; a "public" one to all.
	// Nil means the session is one authorization context, the usual case:
	// one transport, one credential.
	AuthContext func(ctx context.Context) string
}

// The cache's default bounds.
const (
	// DefaultCacheMaxEntries is CacheOptions.MaxEntries' default: room
	// for the pages of several long lists and the resources a host reads
	// often.
	DefaultCacheMaxEntries = 512
	// DefaultCacheMaxBytes is CacheOptions.MaxBytes' default (4 MiB).
	DefaultCacheMaxBytes = 4 << 20
)

// maxTTL caps a ttlMs, so that a huge one cannot overflow the clock
// arithmetic; it is longer than any session lives.
const maxTTL = 365 * 24 * time.Hour

// cacheKey names one cached result. A public result is kept with an empty
// auth and public set, so that every authorization context finds it.
type cacheKey struct {
	version mcp.ProtocolVersion // results may differ between versions
	method  string
	target  string // the cursor of a list page, the URI of a read
	auth    string
	public  bool
}

type cacheEntry struct {
	key     cacheKey
	raw     json.RawMessage
	expires time.Time
}

// resultCache is one session's cache. The zero of a nil *resultCache is a
// cache that is off: its methods do nothing.
type resultCache struct {
	now        func() time.Time
	authOf     func(ctx context.Context) string
	maxEntries int
	maxBytes   int

	mu      sync.Mutex
	entries map[cacheKey]*lru.Element // of *cacheEntry
	order   lru.List                  // most recently used first
	bytes   int
	// epoch counts invalidations. A result fetched while one happened
	// may predate the change it announced, so it is not kept.
	epoch uint64
}

// newResultCache returns the cache opts describe, or nil when it is off.
func newResultCache(opts *CacheOptions) *resultCache {
	var o CacheOptions
	if opts != nil {
		o = *opts
	}
	if o.Disable {
		return nil
	}
	c := &resultCache{now: o.Now, authOf: o.AuthContext, maxEntries: o.MaxEntries, maxBytes: o.MaxBytes, entries: make(map[cacheKey]*lru.Element)}
	if c.now == nil {
		c.now = time.Now
	}
	if c.maxEntries <= 0 {
		c.maxEntries = DefaultCacheMaxEntries
	}
	if c.maxBytes <= 0 {
		c.maxBytes = DefaultCacheMaxBytes
	}
	return c
}

// cachedCall is call for a cacheable request: a fresh result the cache
// holds for method and target (a list cursor, a resource URI) is returned
// without a request; otherwise the request goes out and its result is
// kept if the server marked it cacheable.
func (s *Session) cachedCall(ctx context.Context, method, target string, params any, setMeta func(*mcp.RequestMetaObject)) (json.RawMessage, error) {
	c := s.cache
	if c == nil {
		return s.call(ctx, method, params, setMeta)
	}
	key := cacheKey{version: s.ProtocolVersion(), method: method, target: target}
	if c.authOf != nil {
		key.auth = c.authOf(ctx)
	}
	raw, epoch, ok := c.get(key)
	if ok {
		return raw, nil
	}
	raw, err := s.call(ctx, method, params, setMeta)
	if err != nil {
		if target != "" && isListMethod(method) {
			if e, ok := asRPCError(err); ok && e.Code == jsonrpc.CodeInvalidParams {
				// The specification: a cursor the server no longer takes
				// discards every page of that list.
				c.drop(func(k cacheKey) bool { return k.method == method })
			}
		}
		return nil, err
	}
	c.put(key, raw, epoch)
	return raw, nil
}

// isListMethod reports whether method is one of the paginated lists.
func isListMethod(method string) bool {
	switch method {
	case mcp.MethodListTools, mcp.MethodListPrompts, mcp.MethodListResources, mcp.MethodListResourceTemplates:
		return true
	}
	return false
}

// readCall sends a resources/read round, through the cache when the
// round may be cached: a first round, without input responses or request
// state (the specification forbids caching the result of a request that
// carries them).
func (s *Session) readCall(ctx context.Context, p *mcp.ReadResourceRequestParams) (json.RawMessage, error) {
	setMeta := func(m *mcp.RequestMetaObject) { p.Meta = m }
	if _, stated := p.LookupRequestState(); stated || len(p.InputResponses) > 0 {
		return s.call(ctx, mcp.MethodReadResource, p, setMeta)
	}
	return s.cachedCall(ctx, mcp.MethodReadResource, p.URI, p, setMeta)
}

// get returns the fresh result kept under key, public or of key's
// authorization context, and the epoch a fetch for it starts in.
func (c *resultCache) get(key cacheKey) (json.RawMessage, uint64, bool) {
	now := c.now()
	pub := key
	pub.auth, pub.public = "", true
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range [2]cacheKey{pub, key} {
		el, ok := c.entries[k]
		if !ok {
			continue
		}
		e := el.Value.(*cacheEntry)
		if now.Before(e.expires) {
			c.order.MoveToFront(el)
			return e.raw, c.epoch, true
		}
		c.remove(el)
	}
	return nil, c.epoch, false
}

// put keeps raw under key if its cache hints allow: a complete result
// with a positive ttlMs, fetched in epoch (no invalidation since).
func (c *resultCache) put(key cacheKey, raw json.RawMessage, epoch uint64) {
	ttl, scope, ok := cacheHints(raw)
	if !ok || ttl <= 0 || len(raw) > c.maxBytes {
		return
	}
	// Received now: the freshness clock starts when the answer arrived.
	expires := c.now().Add(ttl)
	pub := key
	pub.auth, pub.public = "", true
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch != epoch {
		return
	}
	// Whatever was kept for the target before, in either scope, is older.
	for _, k := range [2]cacheKey{pub, key} {
		if el, ok := c.entries[k]; ok {
			c.remove(el)
		}
	}
	if scope == mcp.CacheScopePublic {
		key = pub
	}
	e := &cacheEntry{key: key, raw: bytes.Clone(raw), expires: expires}
	c.entries[key] = c.order.PushFront(e)
	c.bytes += len(e.raw)
	for len(c.entries) > c.maxEntries || c.bytes > c.maxBytes {
		c.remove(c.order.Back())
	}
}

// remove drops one entry; c.mu is held.
func (c *resultCache) remove(el *lru.Element) {
	e := c.order.Remove(el).(*cacheEntry)
	delete(c.entries, e.key)
	c.bytes -= len(e.raw)
}

// drop removes every entry whose key matches, and starts a new epoch so
// that a fetch in flight does not bring one back.
func (c *resultCache) drop(match func(cacheKey) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	for k, el := range c.entries {
		if match(k) {
			c.remove(el)
		}
	}
}

// notified invalidates what a server's notification says has changed: a
// list_changed drops every page of its lists, a resources/updated the
// reads of its URI. It takes them from wherever they arrive (a listen
// stream, or a legacy session's unsolicited notifications): dropping a
// result costs at most one request.
func (c *resultCache) notified(method string, params json.RawMessage) {
	if c == nil {
		return
	}
	switch method {
	case mcp.NotificationToolListChanged:
		c.drop(func(k cacheKey) bool { return k.method == mcp.MethodListTools })
	case mcp.NotificationPromptListChanged:
		c.drop(func(k cacheKey) bool { return k.method == mcp.MethodListPrompts })
	case mcp.NotificationResourceListChanged:
		// The templates have no notification of their own.
		c.drop(func(k cacheKey) bool {
			return k.method == mcp.MethodListResources || k.method == mcp.MethodListResourceTemplates
		})
	case mcp.NotificationResourceUpdated:
		var p struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(params, &p) != nil || p.URI == "" {
			// An update that names nothing readable: every read may be
			// stale.
			c.drop(func(k cacheKey) bool { return k.method == mcp.MethodReadResource })
			return
		}
		c.drop(func(k cacheKey) bool { return k.method == mcp.MethodReadResource && k.target == p.URI })
	}
}

// clear empties the cache.
func (c *resultCache) clear() {
	if c != nil {
		c.drop(func(cacheKey) bool { return true })
	}
}

// ClearCache forgets every result the session's cache holds, so the next
// call of each kind goes to the server. A host calls it when it has reason
// to think the server's data changed that no notification announced, or
// when the session's credentials now belong to someone else.
func (s *Session) ClearCache() { s.cache.clear() }

// cacheHints reads the top-level ttlMs, cacheScope and resultType of a
// result. ok is false for a result that may not be cached: one that is
// not complete, or not an object. A missing or negative ttlMs is 0, as
// the specification says; a missing or unknown scope is private, the
// narrower one.
func cacheHints(raw []byte) (ttl time.Duration, scope mcp.CacheScope, ok bool) {
	scope = mcp.CacheScopePrivate
	it := jsontext.NewObjectIter(raw)
	for it.Next() {
		switch string(it.Key) {
		case "resultType":
			if string(it.Val) != `"complete"` && string(it.Val) != "null" {
				return 0, "", false
			}
		case "ttlMs":
			ttl = parseTTL(it.Val)
		case "cacheScope":
			if string(it.Val) == `"public"` {
				scope = mcp.CacheScopePublic
			}
		}
	}
	if it.Err != nil {
		return 0, "", false
	}
	return ttl, scope, true
}

// parseTTL reads a ttlMs value: milliseconds, an integer on the wire,
// though a number with a fraction or exponent is read too. Anything else,
// and anything not positive, is 0.
func parseTTL(v []byte) time.Duration {
	ms, err := strconv.ParseFloat(string(v), 64)
	if err != nil || !(ms > 0) {
		return 0
	}
	if ms >= float64(maxTTL/time.Millisecond) || math.IsInf(ms, 1) {
		return maxTTL
	}
	return time.Duration(ms * float64(time.Millisecond))
}
