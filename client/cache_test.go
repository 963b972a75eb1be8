package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// Tests of the session cache (cache.go), in both generations. A 2026-07-28
// server is Parley's own, with handlers that set ttlMs and cacheScope; a
// legacy one is played by cacheLegacyServer, since 2025-11-25 defines no
// caching fields and Parley's server sends none on a legacy session: the
// legacy server here sends them anyway, as a dual-era server may, to show
// the cache follows ttlMs wherever it appears.

// testClock is the cache's injected clock.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock {
	return &testClock{now: time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// cacheHints is what the test servers put on their cacheable results.
type cacheHints struct {
	mu    sync.Mutex
	ttl   map[string]int64 // by cursor or URI; "*" for the rest
	scope mcp.CacheScope
	hold  func()
}

func (h *cacheHints) set(target string, ttlMs int64, scope mcp.CacheScope) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ttl == nil {
		h.ttl = make(map[string]int64)
	}
	h.ttl[target] = ttlMs
	if scope != "" {
		h.scope = scope
	}
}

func (h *cacheHints) get(target string) (int64, mcp.CacheScope) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ttl, ok := h.ttl[target]
	if !ok {
		ttl = h.ttl["*"]
	}
	return ttl, h.scope
}

// holdNext makes the next tools/list the server serves call f before it
// answers.
func (h *cacheHints) holdNext(f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hold = f
}

func (h *cacheHints) takeHold() func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.hold
	h.hold = nil
	return f
}

// requestCount counts the requests a test server served, by method and
// target ("tools/list c1", "resources/read file:///a").
type requestCount struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *requestCount) add(method, target string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = make(map[string]int)
	}
	c.n[strings.TrimSpace(method+" "+target)]++
}

func (c *requestCount) get(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

// cacheTools are the test servers' tools, three pages of one: cursors "",
// "c1" and "c2".
var cacheTools = []string{"a", "b", "c"}

func toolPage(cursor string) ([]mcp.Tool, string, bool) {
	i := 0
	if cursor != "" {
		if _, err := fmt.Sscanf(cursor, "c%d", &i); err != nil || i < 1 || i >= len(cacheTools) {
			return nil, "", false
		}
	}
	next := ""
	if i+1 < len(cacheTools) {
		next = fmt.Sprintf("c%d", i+1)
	}
	return []mcp.Tool{tool(cacheTools[i])}, next, true
}

// cacheBackend is a server of one generation for the cache tests.
type cacheBackend struct {
	hints  *cacheHints
	counts *requestCount
	dial   func(t testing.TB, opts *client.Options) *client.Session
	// changed makes the server announce that method changed (a
	// list_changed, or resources/updated of uri).
	changed func(method, uri string)
}

func (b *cacheBackend) count(key string) int { return b.counts.get(key) }

// modernCacheBackend is a Parley 2026-07-28 server whose list and read
// handlers put b.hints on their results.
func modernCacheBackend(t testing.TB) *cacheBackend {
	b := &cacheBackend{hints: &cacheHints{}, counts: &requestCount{}}
	s := newServer(&server.Options{SupportedVersions: []mcp.ProtocolVersion{mcp.LatestVersion}, DiscoverTTL: time.Minute})
	cacheable := func(target string) mcp.CacheableResult {
		ttl, scope := b.hints.get(target)
		return mcp.CacheableResult{TTLMs: ttl, CacheScope: scope}
	}
	s.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			if req.Method == mcp.MethodDiscover {
				b.counts.add(req.Method, "")
			}
			return next(ctx, req)
		}
	})
	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		b.counts.add(mcp.MethodListTools, p.Cursor)
		if hold := b.hints.takeHold(); hold != nil {
			hold()
		}
		page, next, ok := toolPage(p.Cursor)
		if !ok {
			return nil, wire.InvalidParams("Invalid params: unknown cursor")
		}
		return &mcp.ListToolsResult{CacheableResult: cacheable(p.Cursor), Tools: page, NextCursor: next}, nil
	})
	s.HandleListPrompts(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListPromptsResult, error) {
		b.counts.add(mcp.MethodListPrompts, p.Cursor)
		return &mcp.ListPromptsResult{CacheableResult: cacheable(p.Cursor), Prompts: []mcp.Prompt{{Name: "p"}}}, nil
	})
	s.HandleListResources(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListResourcesResult, error) {
		b.counts.add(mcp.MethodListResources, p.Cursor)
		return &mcp.ListResourcesResult{CacheableResult: cacheable(p.Cursor), Resources: []mcp.Resource{{URI: "file:///a", Name: "a"}}}, nil
	})
	s.HandleListResourceTemplates(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListResourceTemplatesResult, error) {
		b.counts.add(mcp.MethodListResourceTemplates, p.Cursor)
		return &mcp.ListResourceTemplatesResult{CacheableResult: cacheable(p.Cursor), ResourceTemplates: []mcp.ResourceTemplate{{URITemplate: "file:///{name}", Name: "files"}}}, nil
	})
	s.HandleReadResource(func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		b.counts.add(mcp.MethodReadResource, p.URI)
		if p.URI == "file:///ask" {
			if _, ok := p.LookupRequestState(); !ok {
				return &mcp.InputRequiredResult{RequestState: "again"}, nil
			}
		}
		return &mcp.ReadResourceResult{CacheableResult: cacheable(p.URI),
			Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: p.URI, Text: "text of " + p.URI}}}, nil
	})
	b.dial = func(t testing.TB, opts *client.Options) *client.Session {
		sess, _ := connect(t, newClient(opts), s)
		return sess
	}
	b.changed = func(method, uri string) {
		switch method {
		case mcp.NotificationToolListChanged:
			s.NotifyToolListChanged()
		case mcp.NotificationPromptListChanged:
			s.NotifyPromptListChanged()
		case mcp.NotificationResourceListChanged:
			s.NotifyResourceListChanged()
		case mcp.NotificationResourceUpdated:
			s.NotifyResourceUpdated(uri)
		}
	}
	return b
}

// legacyCacheInit is the cache tests' legacy server's answer to
// initialize.
const legacyCacheInit = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},` +
	`"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true}},"serverInfo":{"name":"legacy-cache","version":"0.1"}}`

// legacyCacheBackend plays a legacy server that answers every session it
// is dialled for, putting b.hints on its results.
func legacyCacheBackend(t testing.TB) *cacheBackend {
	b := &cacheBackend{hints: &cacheHints{}, counts: &requestCount{}}
	var (
		mu    sync.Mutex
		conns []transport.Conn
	)
	reply := func(conn transport.Conn, id json.RawMessage, result any) {
		res, err := json.Marshal(result)
		if err != nil {
			panic(err)
		}
		conn.Write(context.Background(), fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, res))
	}
	hinted := func(target string, result map[string]any) map[string]any {
		ttl, scope := b.hints.get(target)
		result["ttlMs"] = ttl
		if scope != "" {
			result["cacheScope"] = scope
		}
		return result
	}
	serveConn := func(conn transport.Conn) {
		for {
			raw, err := conn.Read(context.Background())
			if err != nil {
				return
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Cursor string `json:"cursor"`
					URI    string `json:"uri"`
				} `json:"params"`
			}
			if err := json.Unmarshal(raw, &m); err != nil || m.ID == nil {
				continue // notifications
			}
			switch m.Method {
			case mcp.MethodInitialize:
				conn.Write(context.Background(), fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, legacyCacheInit))
			case mcp.MethodListTools:
				b.counts.add(m.Method, m.Params.Cursor)
				page, next, ok := toolPage(m.Params.Cursor)
				if !ok {
					conn.Write(context.Background(), fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"unknown cursor"}}`, m.ID))
					continue
				}
				r := map[string]any{"tools": page}
				if next != "" {
					r["nextCursor"] = next
				}
				reply(conn, m.ID, hinted(m.Params.Cursor, r))
			case mcp.MethodListPrompts:
				b.counts.add(m.Method, m.Params.Cursor)
				reply(conn, m.ID, hinted(m.Params.Cursor, map[string]any{"prompts": []mcp.Prompt{{Name: "p"}}}))
			case mcp.MethodListResources:
				b.counts.add(m.Method, m.Params.Cursor)
				reply(conn, m.ID, hinted(m.Params.Cursor, map[string]any{"resources": []mcp.Resource{{URI: "file:///a", Name: "a"}}}))
			case mcp.MethodListResourceTemplates:
				b.counts.add(m.Method, m.Params.Cursor)
				reply(conn, m.ID, hinted(m.Params.Cursor, map[string]any{"resourceTemplates": []mcp.ResourceTemplate{{URITemplate: "file:///{name}", Name: "files"}}}))
			case mcp.MethodReadResource:
				b.counts.add(m.Method, m.Params.URI)
				reply(conn, m.ID, hinted(m.Params.URI, map[string]any{"contents": []map[string]string{{"uri": m.Params.URI, "text": "text of " + m.Params.URI}}}))
			case mcp.MethodSubscribeResource, mcp.MethodUnsubscribeResource:
				reply(conn, m.ID, map[string]any{})
			default:
				conn.Write(context.Background(), fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, m.ID))
			}
		}
	}
	b.dial = func(t testing.TB, opts *client.Options) *client.Session {
		t.Helper()
		clientEnd, serverEnd := transport.NewMemoryPipe()
		t.Cleanup(func() { serverEnd.Close() })
		mu.Lock()
		conns = append(conns, serverEnd)
		mu.Unlock()
		go serveConn(serverEnd)
		o := client.Options{ProtocolVersion: mcp.Version20251125}
		if opts != nil {
			o = *opts
			o.ProtocolVersion = mcp.Version20251125
		}
		ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
		defer cancel()
		sess, err := newClient(&o).Connect(ctx, transport.NewMemoryTransport(clientEnd))
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		t.Cleanup(func() { sess.Close() })
		return sess
	}
	b.changed = func(method, uri string) {
		params := "{}"
		if uri != "" {
			params = fmt.Sprintf(`{"uri":%q}`, uri)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, conn := range conns {
			conn.Write(context.Background(), fmt.Appendf(nil, `{"jsonrpc":"2.0","method":%q,"params":%s}`, method, params))
		}
	}
	return b
}

// forEachGeneration runs test against a server of each generation.
func forEachGeneration(t *testing.T, test func(t *testing.T, b *cacheBackend)) {
	t.Run("2026-07-28", func(t *testing.T) { test(t, modernCacheBackend(t)) })
	t.Run("legacy", func(t *testing.T) { test(t, legacyCacheBackend(t)) })
}

// cachedOptions returns client options whose cache runs on clock.
func cachedOptions(clock *testClock) *client.Options {
	return &client.Options{Cache: &client.CacheOptions{Now: clock.Now}}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	t.Cleanup(cancel)
	return ctx
}

func listTools(t *testing.T, ctx context.Context, sess *client.Session, cursor string) *mcp.ListToolsResult {
	t.Helper()
	r, err := sess.ListTools(ctx, cursor)
	if err != nil {
		t.Fatalf("ListTools(%q): %v", cursor, err)
	}
	return r
}

func readText(t *testing.T, ctx context.Context, sess *client.Session, uri string) string {
	t.Helper()
	r, err := sess.ReadResource(ctx, uri)
	if err != nil {
		t.Fatalf("ReadResource(%q): %v", uri, err)
	}
	if len(r.Contents) != 1 {
		t.Fatalf("ReadResource(%q): %d contents", uri, len(r.Contents))
	}
	tc, ok := r.Contents[0].(*mcp.TextResourceContents)
	if !ok {
		t.Fatalf("ReadResource(%q): %T", uri, r.Contents[0])
	}
	return tc.Text
}

func wantCount(t *testing.T, b *cacheBackend, key string, want int, when string) {
	t.Helper()
	if got := b.count(key); got != want {
		t.Errorf("%s: the server served %q %d times, want %d", when, key, got, want)
	}
}

// A result is served from the cache while now < received + ttlMs, and
// fetched again at exactly received + ttlMs.
func TestCacheServesWithinTTL(t *testing.T) {
	forEachGeneration(t, func(t *testing.T, b *cacheBackend) {
		ctx := testCtx(t)
		clock := newTestClock()
		b.hints.set("*", 1000, mcp.CacheScopePublic)
		sess := b.dial(t, cachedOptions(clock))

		first := listTools(t, ctx, sess, "")
		readText(t, ctx, sess, "file:///a")
		clock.advance(999 * time.Millisecond)
		second := listTools(t, ctx, sess, "")
		if got := readText(t, ctx, sess, "file:///a"); got != "text of file:///a" {
			t.Errorf("cached read = %q", got)
		}
		wantCount(t, b, "tools/list", 1, "within the TTL")
		wantCount(t, b, "resources/read file:///a", 1, "within the TTL")
		if len(second.Tools) != 1 || second.Tools[0].Name != "a" || second.NextCursor != "c1" {
			t.Errorf("cached page = %+v", second)
		}
		// A hit is decoded afresh: what a caller does to one result does
		// not reach the next.
		second.Tools[0].Name = "changed by the caller"
		if third := listTools(t, ctx, sess, ""); third.Tools[0].Name != "a" || first == second {
			t.Errorf("a hit shares its value with an earlier one: %q", third.Tools[0].Name)
		}

		clock.advance(time.Millisecond) // exactly received + ttlMs: stale
		listTools(t, ctx, sess, "")
		readText(t, ctx, sess, "file:///a")
		wantCount(t, b, "tools/list", 2, "at the TTL's end")
		wantCount(t, b, "resources/read file:///a", 2, "at the TTL's end")
	})
}

// ttlMs 0, or none at all, means immediately stale: nothing is kept.
func TestCacheZeroTTLKeepsNothing(t *testing.T) {
	forEachGeneration(t, func(t *testing.T, b *cacheBackend) {
		ctx := testCtx(t)
		b.hints.set("*", 0, mcp.CacheScopePublic)
		b.hints.set("file:///neg", -5, "")
		sess := b.dial(t, cachedOptions(newTestClock()))
		for range 2 {
			listTools(t, ctx, sess, "")
			readText(t, ctx, sess, "file:///neg")
		}
		wantCount(t, b, "tools/list", 2, "with ttlMs 0")
		wantCount(t, b, "resources/read file:///neg", 2, "with a negative ttlMs")
	})
}

// A legacy server that says nothing about caching, as 2025-11-25 servers
// do (Parley's server drops the fields on a legacy session even when it
// has a ListTTL), has nothing of its cached.
func TestCacheLegacyServerWithoutHints(t *testing.T) {
	ctx := testCtx(t)
	s := newServer(&server.Options{SupportedVersions: []mcp.ProtocolVersion{mcp.Version20251125}, ListTTL: time.Hour, CacheScope: mcp.CacheScopePublic})
	var served requestCount
	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		served.add(mcp.MethodListTools, p.Cursor)
		return &mcp.ListToolsResult{Tools: []mcp.Tool{tool("a")}}, nil
	})
	sess, _ := dialLegacy(t, newClient(cachedOptions(newTestClock())), s)
	for range 3 {
		listTools(t, ctx, sess, "")
	}
	if got := served.get("tools/list"); got != 3 {
		t.Errorf("the legacy server served tools/list %d times, want 3", got)
	}
}

// A disabled cache sends every request.
func TestCacheDisabled(t *testing.T) {
	forEachGeneration(t, func(t *testing.T, b *cacheBackend) {
		ctx := testCtx(t)
		b.hints.set("*", 60_000, mcp.CacheScopePublic)
		sess := b.dial(t, &client.Options{Cache: &client.CacheOptions{Disable: true}})
		for range 3 {
			listTools(t, ctx, sess, "")
			readText(t, ctx, sess, "file:///a")
		}
		wantCount(t, b, "tools/list", 3, "with the cache disabled")
		wantCount(t, b, "resources/read file:///a", 3, "with the cache disabled")
	})
}

type userKey struct{}

// A private result is served only to its own authorization context; a
// public one to every context of the session.
func TestCacheScope(t *testing.T) {
	forEachGeneration(t, func(t *testing.T, b *cacheBackend) {
		alice := context.WithValue(testCtx(t), userKey{}, "alice")
		bob := context.WithValue(testCtx(t), userKey{}, "bob")
		opts := cachedOptions(newTestClock())
		opts.Cache.AuthContext = func(ctx context.Context) string { s, _ := ctx.Value(userKey{}).(string); return s }
		sess := b.dial(t, opts)

		b.hints.set("*", 60_000, mcp.CacheScopePrivate)
		readText(t, alice, sess, "file:///mine")
		readText(t, alice, sess, "file:///mine")
		wantCount(t, b, "resources/read file:///mine", 1, "private, same context")
		readText(t, bob, sess, "file:///mine")
		wantCount(t, b, "resources/read file:///mine", 2, "private, another context")
		readText(t, bob, sess, "file:///mine")
		wantCount(t, b, "resources/read file:///mine", 2, "private, the other context's own copy")

		// A scope the client does not know is taken for the narrower one.
		b.hints.set("*", 60_000, mcp.CacheScope("team"))
		readText(t, alice, sess, "file:///team")
		readText(t, bob, sess, "file:///team")
		wantCount(t, b, "resources/read file:///team", 2, "unknown scope, two contexts")

		b.hints.set("*", 60_000, mcp.CacheScopePublic)
		listTools(t, alice, sess, "")
		listTools(t, bob, sess, "")
		listTools(t, context.Background(), sess, "")
		wantCount(t, b, "tools/list", 1, "public, three contexts")

		// Without an AuthContext function the session is one context:
		// private results are reused across all its calls.
		b.hints.set("*", 60_000, mcp.CacheScopePrivate)
		one := b.dial(t, cachedOptions(newTestClock()))
		readText(t, alice, one, "file:///one")
		readText(t, bob, one, "file:///one")
		wantCount(t, b, "resources/read file:///one", 1, "private, one-context session")
	})
}

// Each page is cached on its own, under its cursor, for its own ttlMs.
func TestCachePagesByCursor(t *testing.T) {
	forEachGeneration(t, func(t *testing.T, b *cacheBackend) {
		ctx := testCtx(t)
		clock := newTestClock()
		b.hints.set("*", 10_000, mcp.CacheScopePublic)
		b.hints.set("c1", 100, "")
		sess := b.dial(t, cachedOptions(clock))
		all := func() []string {
			var names []string
			for tl, err := range sess.Tools(ctx) {
				if err != nil {
					t.Fatalf("Tools: %v", err)
				}
				names = append(names, tl.Name)
			}
			return names
		}
		if got := all(); !slices.Equal(got, cacheTools) {
			t.Fatalf("Tools = %v", got)
		}
		clock.advance(100 * time.Millisecond) // page c1 is stale, the others fresh
		if got := all(); !slices.Equal(got, cacheTools) {
			t.Fatalf("Tools again = %v", got)
		}
		wantCount(t, b, "tools/list", 1, "first page, fresh")
		wantCount(t, b, "tools/list c1", 2, "second page, stale")
		wantCount(t, b, "tools/list c2", 1, "third page, fresh")

		// A cursor the server refuses discards every cached page of the
		// list, as the specification asks.
		if _, err := sess.ListTools(ctx, "c9"); err == nil {
			t.Fatal("ListTools(c9) succeeded")
		}
		all()
		wantCount(t, b, "tools/list", 2, "after a refused cursor")
		wantCount(t, b, "tools/list c2", 2, "after a refused cursor")
	})
}

// A list_changed drops that list's pages, a resources/updated the reads
// of its URI, when they reach the client: on a 2026-07-28 session only on
// a subscriptions/listen stream it has open, on a legacy one unasked
// (here, too, a stream waits for them, so the test knows they arrived).
func TestCacheInvalidatedByNotifications(t *testing.T) {
	forEachGeneration(t, func(t *testing.T, b *cacheBackend) {
		ctx := testCtx(t)
		b.hints.set("*", 60_000, mcp.CacheScopePublic)
		sess := b.dial(t, cachedOptions(newTestClock()))
		sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"file:///a"}})
		if err != nil {
			t.Fatalf("Listen: %v", err)
		}
		defer sub.Close()
		listTools(t, ctx, sess, "")
		listTools(t, ctx, sess, "c1")
		readText(t, ctx, sess, "file:///a")
		readText(t, ctx, sess, "file:///b")
		if _, err := sess.ListPrompts(ctx, ""); err != nil {
			t.Fatalf("ListPrompts: %v", err)
		}

		b.changed(mcp.NotificationToolListChanged, "")
		if e := testwait.Recv(t, sub.Events(), "the tools list_changed"); e.Method != mcp.NotificationToolListChanged {
			t.Fatalf("event %s", e.Method)
		}
		listTools(t, ctx, sess, "")
		listTools(t, ctx, sess, "c1")
		readText(t, ctx, sess, "file:///a")
		sess.ListPrompts(ctx, "")
		wantCount(t, b, "tools/list", 2, "after tools list_changed")
		wantCount(t, b, "tools/list c1", 2, "after tools list_changed")
		wantCount(t, b, "resources/read file:///a", 1, "after tools list_changed")
		wantCount(t, b, "prompts/list", 1, "after tools list_changed")

		b.changed(mcp.NotificationResourceUpdated, "file:///a")
		if e := testwait.Recv(t, sub.Events(), "the resource update"); e.URI != "file:///a" {
			t.Fatalf("event %s %s", e.Method, e.URI)
		}
		readText(t, ctx, sess, "file:///a")
		readText(t, ctx, sess, "file:///b")
		listTools(t, ctx, sess, "")
		wantCount(t, b, "resources/read file:///a", 2, "after its update")
		wantCount(t, b, "resources/read file:///b", 1, "after another resource's update")
		wantCount(t, b, "tools/list", 2, "after a resource update")
	})
}

// Each list_changed drops the pages of its own lists and nothing else: a
// prompts list_changed the prompt pages only, a resources list_changed
// the resource pages and the template pages too (templates have no
// notification of their own). Reads stay: resources/updated is theirs.
func TestCacheListChangedDropsItsOwnLists(t *testing.T) {
	forEachGeneration(t, func(t *testing.T, b *cacheBackend) {
		ctx := testCtx(t)
		b.hints.set("*", 60_000, mcp.CacheScopePublic)
		sess := b.dial(t, cachedOptions(newTestClock()))
		sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{PromptsListChanged: true, ResourcesListChanged: true})
		if err != nil {
			t.Fatalf("Listen: %v", err)
		}
		defer sub.Close()
		all := func() {
			t.Helper()
			listTools(t, ctx, sess, "")
			if _, err := sess.ListPrompts(ctx, ""); err != nil {
				t.Fatalf("ListPrompts: %v", err)
			}
			if _, err := sess.ListResources(ctx, ""); err != nil {
				t.Fatalf("ListResources: %v", err)
			}
			if _, err := sess.ListResourceTemplates(ctx, ""); err != nil {
				t.Fatalf("ListResourceTemplates: %v", err)
			}
			readText(t, ctx, sess, "file:///a")
		}
		want := func(when string, tools, prompts, resources, templates, reads int) {
			t.Helper()
			wantCount(t, b, "tools/list", tools, when)
			wantCount(t, b, "prompts/list", prompts, when)
			wantCount(t, b, "resources/list", resources, when)
			wantCount(t, b, "resources/templates/list", templates, when)
			wantCount(t, b, "resources/read file:///a", reads, when)
		}
		all()
		all()
		want("twice within the TTL", 1, 1, 1, 1, 1)

		b.changed(mcp.NotificationPromptListChanged, "")
		if e := testwait.Recv(t, sub.Events(), "the prompts list_changed"); e.Method != mcp.NotificationPromptListChanged {
			t.Fatalf("event %s", e.Method)
		}
		all()
		want("after prompts list_changed", 1, 2, 1, 1, 1)

		b.changed(mcp.NotificationResourceListChanged, "")
		if e := testwait.Recv(t, sub.Events(), "the resources list_changed"); e.Method != mcp.NotificationResourceListChanged {
			t.Fatalf("event %s", e.Method)
		}
		all()
		want("after resources list_changed", 1, 2, 2, 2, 1)
	})
}

// Under 2026-07-28 a list_changed reaches only a client with a listen
// stream open; without one, the TTL alone decides.
func TestCacheWithoutListenStreamFollowsTTL(t *testing.T) {
	b := modernCacheBackend(t)
	ctx := testCtx(t)
	clock := newTestClock()
	b.hints.set("*", 60_000, mcp.CacheScopePublic)
	sess := b.dial(t, cachedOptions(clock))
	listTools(t, ctx, sess, "")
	b.changed(mcp.NotificationToolListChanged, "")
	listTools(t, ctx, sess, "")
	wantCount(t, b, "tools/list", 1, "a change announced to no stream")
	clock.advance(time.Minute)
	listTools(t, ctx, sess, "")
	wantCount(t, b, "tools/list", 2, "after the TTL")
}

// A new session, to the same server from the same client, starts empty.
func TestCacheNewSessionStartsEmpty(t *testing.T) {
	forEachGeneration(t, func(t *testing.T, b *cacheBackend) {
		ctx := testCtx(t)
		b.hints.set("*", 60_000, mcp.CacheScopePublic)
		opts := cachedOptions(newTestClock())
		first := b.dial(t, opts)
		listTools(t, ctx, first, "")
		listTools(t, ctx, first, "")
		first.Close()
		second := b.dial(t, opts)
		listTools(t, ctx, second, "")
		wantCount(t, b, "tools/list", 2, "one call on each of two sessions")
		second.ClearCache()
		listTools(t, ctx, second, "")
		wantCount(t, b, "tools/list", 3, "after ClearCache")
	})
}

// server/discover is cached for its ttlMs: Connect's own probe fills the
// cache.
func TestCacheDiscover(t *testing.T) {
	b := modernCacheBackend(t) // DiscoverTTL: one minute
	ctx := testCtx(t)
	clock := newTestClock()
	sess := b.dial(t, cachedOptions(clock))
	if _, err := sess.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	wantCount(t, b, "server/discover", 1, "Connect and Discover within the TTL")
	clock.advance(time.Minute)
	d, err := sess.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantCount(t, b, "server/discover", 2, "Discover after the TTL")
	if d.ServerInfo() == nil || d.ServerInfo().Name != "test-server" {
		t.Errorf("Discover = %+v", d)
	}
}

// A read that needed input is not cached (its last request carried
// requestState), but a first-round read is.
func TestCacheSkipsMultiRoundReads(t *testing.T) {
	b := modernCacheBackend(t)
	ctx := testCtx(t)
	b.hints.set("*", 60_000, mcp.CacheScopePublic)
	sess := b.dial(t, cachedOptions(newTestClock()))
	readText(t, ctx, sess, "file:///ask")
	readText(t, ctx, sess, "file:///ask")
	wantCount(t, b, "resources/read file:///ask", 4, "two reads of two rounds each")
}

// The cache holds at most MaxEntries results and MaxBytes of them,
// dropping the least recently used first.
func TestCacheBounds(t *testing.T) {
	b := modernCacheBackend(t)
	ctx := testCtx(t)
	b.hints.set("*", 60_000, mcp.CacheScopePublic)
	opts := cachedOptions(newTestClock())
	opts.Cache.MaxEntries = 3 // server/discover is one of them
	sess := b.dial(t, opts)
	readText(t, ctx, sess, "file:///1")
	readText(t, ctx, sess, "file:///2")
	readText(t, ctx, sess, "file:///1") // 1 is now used more recently than 2
	readText(t, ctx, sess, "file:///3") // evicts discover, then 2 is the oldest
	readText(t, ctx, sess, "file:///4") // evicts 2
	readText(t, ctx, sess, "file:///1")
	wantCount(t, b, "resources/read file:///1", 1, "recently used")
	readText(t, ctx, sess, "file:///2")
	wantCount(t, b, "resources/read file:///2", 2, "least recently used")

	// A result larger than MaxBytes is not kept, and costs the others
	// nothing.
	small := cachedOptions(newTestClock())
	small.Cache.MaxBytes = 1000
	tiny := b.dial(t, small)
	big := "file:///big/" + strings.Repeat("x", 1000)
	readText(t, ctx, tiny, "file:///small")
	readText(t, ctx, tiny, big)
	readText(t, ctx, tiny, big)
	readText(t, ctx, tiny, "file:///small")
	wantCount(t, b, "resources/read "+big, 2, "a result over MaxBytes")
	wantCount(t, b, "resources/read file:///small", 1, "a small result beside one over MaxBytes")
}

// The byte bound holds however many results come and go: past MaxBytes
// the least recently used results are evicted until the rest fit, every
// eviction gives its bytes back, and the most recent results are served
// from the cache. (Bytes not given back would make the cache evict
// everything, and then reach for an entry that is not there.)
func TestCacheByteBoundEvicts(t *testing.T) {
	b := modernCacheBackend(t)
	ctx := testCtx(t)
	b.hints.set("*", 60_000, mcp.CacheScopePublic)
	opts := cachedOptions(newTestClock())
	opts.Cache.MaxBytes = 5000 // two of the results below, not three
	sess := b.dial(t, opts)
	pad := strings.Repeat("x", 900) // each result holds its URI twice: about 2 KB
	uri := func(i int) string { return fmt.Sprintf("file:///%d/%s", i, pad) }
	const n = 12
	for round := range 2 {
		for i := range n {
			readText(t, ctx, sess, uri(i))
			readText(t, ctx, sess, uri(i)) // the result just kept is served from the cache
			wantCount(t, b, "resources/read "+uri(i), round+1, fmt.Sprintf("round %d, read %d twice in a row", round, i))
		}
	}
	// The last two fit and stay; the one before them was evicted.
	readText(t, ctx, sess, uri(n-1))
	readText(t, ctx, sess, uri(n-2))
	wantCount(t, b, "resources/read "+uri(n-1), 2, "the most recent result")
	wantCount(t, b, "resources/read "+uri(n-2), 2, "the second most recent result")
	readText(t, ctx, sess, uri(n-3))
	wantCount(t, b, "resources/read "+uri(n-3), 3, "a result evicted by the byte bound")
}

// A request that fails is not cached, and the error is the server's.
func TestCacheKeepsNoErrors(t *testing.T) {
	b := modernCacheBackend(t)
	ctx := testCtx(t)
	b.hints.set("*", 60_000, mcp.CacheScopePublic)
	sess := b.dial(t, cachedOptions(newTestClock()))
	for range 2 {
		_, err := sess.ListTools(ctx, "c7")
		var e *jsonrpc.Error
		if !errors.As(err, &e) || e.Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("ListTools(c7): %v", err)
		}
	}
	wantCount(t, b, "tools/list c7", 2, "a refused cursor")
}

// A result whose request was in flight when a list_changed arrived may
// predate the change: it is not kept.
func TestCacheDropsResultsFetchedAcrossAChange(t *testing.T) {
	b := modernCacheBackend(t)
	ctx := testCtx(t)
	b.hints.set("*", 60_000, mcp.CacheScopePublic)
	sess := b.dial(t, cachedOptions(newTestClock()))
	sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true})
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	defer sub.Close()
	started, release := make(chan struct{}), make(chan struct{})
	b.hints.holdNext(func() { close(started); <-release })
	first := async(func() error { _, err := sess.ListTools(ctx, ""); return err })
	testwait.Recv(t, started, "the start of tools/list")
	b.changed(mcp.NotificationToolListChanged, "")
	testwait.Recv(t, sub.Events(), "the list_changed sent while tools/list was served")
	close(release)
	if err := testwait.Recv(t, first, "the tools/list in flight"); err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	listTools(t, ctx, sess, "")
	wantCount(t, b, "tools/list", 2, "a page fetched across a change, then again")
}

// An input_required result is never kept, even one that (against the
// specification) carries ttlMs, nor the result of the round that answers
// it.
func TestCacheSkipsInputRequired(t *testing.T) {
	c := newClient(cachedOptions(newTestClock()))
	sess, f := dialFake(t, c)
	ctx := testCtx(t)
	for range 2 {
		done := async(func() error { _, err := sess.ReadResource(ctx, "file:///x"); return err })
		m := f.expect(mcp.MethodReadResource)
		if strings.Contains(string(m.Params), "requestState") {
			t.Fatalf("the call began with the cached input_required: %s", m.Raw)
		}
		f.reply(m.ID, `{"resultType":"input_required","requestState":"s1","ttlMs":60000,"cacheScope":"public"}`)
		m = f.expect(mcp.MethodReadResource)
		f.reply(m.ID, `{"resultType":"complete","contents":[{"uri":"file:///x","text":"x"}],"ttlMs":60000,"cacheScope":"public"}`)
		if err := testwait.Recv(t, done, "ReadResource"); err != nil {
			t.Fatalf("ReadResource: %v", err)
		}
	}
}
