package server

import (
	"context"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/internal/fairshare"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
)

// change is one published change, fanned out to the listen streams that
// asked for its kind.
type change struct {
	method string // the notification method
	uri    string // for resource updates
	// An extension's notification (Topic.Publish): its topic's index plus
	// one (0: a core change), its key, and its params for a stream's _meta.
	topic  int
	key    string
	params func(meta *mcp.NotificationMetaObject) any
}

// subscription is one open subscriptions/listen stream.
type subscription struct {
	filter mcp.SubscriptionFilter // what the stream asked for and was granted
	caller string                 // whose share it counts against (auth.CallerKey); "" unbounded
	queue  changeQueue            // changes not yet sent
	wake   chan struct{}          // holds a token when queue may have changes
	done   chan struct{}          // closed to end the stream gracefully
	// counted is true from hub.add to hub.remove: the stream holds its
	// place in the pool and its caller's share until its listen returns.
	counted bool

	perCaller int             // the caller's limit it was opened under
	expiry    *time.Timer     // fires when the access token that opened it expires
	revoked   <-chan struct{} // closed when a re-check refuses that token (auth.Revoked)
}

// hub tracks the open listen streams and legacy sessions, indexed by what
// they asked for, so that a publish costs what its matches cost rather
// than a scan of every stream's subscriptions.
type hub struct {
	mu       sync.Mutex
	subs     map[*subscription]struct{}
	sessions map[*Session]struct{}

	// The index. Legacy sessions take every list change.
	byKind     [3]map[*subscription]struct{} // by listKind
	byURI      uriIndex[*subscription]
	sessionURI uriIndex[*Session]
	callers    map[string]int // open listen streams per caller
	streams    int            // open listen streams, until their listen returns

	// Extensions' listen topics (AddListenTopic), and their index: for
	// each topic, the streams granted each key.
	topics []ListenTopic
	byKey  []map[string]map[*subscription]struct{}
}

// listKind numbers the list-changed notifications for hub.byKind; -1 for
// any other method.
func listKind(method string) int {
	switch method {
	case mcp.NotificationToolListChanged:
		return 0
	case mcp.NotificationPromptListChanged:
		return 1
	case mcp.NotificationResourceListChanged:
		return 2
	}
	return -1
}

func (h *hub) init() {
	h.subs = make(map[*subscription]struct{})
	h.sessions = make(map[*Session]struct{})
	for i := range h.byKind {
		h.byKind[i] = make(map[*subscription]struct{})
	}
	h.byURI.init()
	h.sessionURI.init()
	h.callers = make(map[string]int)
}

func (h *hub) addSession(ss *Session) {
	h.mu.Lock()
	h.sessions[ss] = struct{}{}
	h.mu.Unlock()
}

func (h *hub) removeSession(ss *Session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.sessions, ss)
	ss.mu.Lock()
	for uri := range ss.subs {
		h.sessionURI.remove(uri, ss)
	}
	ss.mu.Unlock()
}

// subscribeSession records (or, with on false, drops) a legacy session's
// subscription to uri, in the session and in the index together. It
// reports false when the session is at limit subscriptions (0: no bound)
// and uri would be a new one.
func (h *hub) subscribeSession(ss *Session, uri string, on bool, limit int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	_, had := ss.subs[uri]
	switch {
	case on && !had:
		if limit > 0 && len(ss.subs) >= limit {
			return false
		}
		ss.subs[uri] = struct{}{}
		if _, open := h.sessions[ss]; open {
			h.sessionURI.add(uri, ss)
		}
	case !on && had:
		delete(ss.subs, uri)
		h.sessionURI.remove(uri, ss)
	}
	return true
}

// Why hub.add refuses a stream.
type listenRefusal int

const (
	listenOpened     listenRefusal = iota
	listenCallerFull               // the caller holds its share
	listenPoolFull                 // the server holds its limit of streams
	listenReserved                 // the rest is kept for callers holding less
)

// add opens sub for its caller, unless the caller already has perCaller
// streams open (0: no bound), or size are open (0: no bound), or the last
// eighth of size is all that is left and the caller holds its reserve
// share. held is what the caller had open.
func (h *hub) add(sub *subscription, perCaller, size int) (refused listenRefusal, held int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	bounded := sub.caller != "" && perCaller > 0
	if bounded {
		held = h.callers[sub.caller]
		if held >= perCaller {
			return listenCallerFull, held
		}
	}
	if size > 0 && h.streams >= size {
		return listenPoolFull, held
	}
	if bounded && fairshare.Refused(held, perCaller, h.streams, size) {
		return listenReserved, held
	}
	h.streams++
	if bounded {
		h.callers[sub.caller]++
	}
	sub.counted = true
	h.subs[sub] = struct{}{}
	f := &sub.filter
	for i, on := range [...]bool{f.ToolsListChanged, f.PromptsListChanged, f.ResourcesListChanged} {
		if on {
			h.byKind[i][sub] = struct{}{}
		}
	}
	for _, uri := range f.ResourceSubscriptions {
		h.byURI.add(uri, sub) // a URI listed twice is indexed once
	}
	h.indexTopics(sub, true)
	return listenOpened, held
}

// remove closes sub and gives back its place; it is safe to call for a
// stream already ended by EndSubscriptions, and more than once.
func (h *hub) remove(sub *subscription, perCaller int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.unlinkLocked(sub)
	if !sub.counted {
		return
	}
	sub.counted = false
	h.streams--
	if sub.caller != "" && perCaller > 0 {
		if h.callers[sub.caller]--; h.callers[sub.caller] <= 0 {
			delete(h.callers, sub.caller)
		}
	}
}

// unlinkLocked takes sub out of the streams that receive changes.
func (h *hub) unlinkLocked(sub *subscription) {
	if _, ok := h.subs[sub]; !ok {
		return
	}
	delete(h.subs, sub)
	for i := range h.byKind {
		delete(h.byKind[i], sub)
	}
	for _, uri := range sub.filter.ResourceSubscriptions {
		h.byURI.remove(uri, sub)
	}
	h.indexTopics(sub, false)
}

// uriIndex maps a resource URI to its subscribers. Most URIs have one, so
// the first is held in place (a map slot of a key and a pointer, nothing
// allocated for it) and only the others in a list.
type uriIndex[T comparable] struct {
	one  map[string]T
	more map[string][]T
}

func (x *uriIndex[T]) init() {
	x.one = make(map[string]T)
	x.more = make(map[string][]T)
}

// add makes v a subscriber of uri, once.
func (x *uriIndex[T]) add(uri string, v T) {
	first, ok := x.one[uri]
	switch {
	case !ok:
		x.one[uri] = v
	case first == v || slices.Contains(x.more[uri], v):
	default:
		x.more[uri] = append(x.more[uri], v)
	}
}

// remove takes v off the subscribers of uri.
func (x *uriIndex[T]) remove(uri string, v T) {
	first, ok := x.one[uri]
	if !ok {
		return
	}
	more := x.more[uri]
	i := -1 // v's place in more; -1 for first
	if first != v {
		if i = slices.Index(more, v); i < 0 {
			return
		}
	}
	if len(more) == 0 {
		delete(x.one, uri)
		return
	}
	last := len(more) - 1
	if i < 0 {
		x.one[uri] = more[last]
	} else {
		more[i] = more[last]
	}
	var zero T
	more[last] = zero
	if last == 0 {
		delete(x.more, uri)
	} else {
		x.more[uri] = more[:last]
	}
}

// all yields the subscribers of uri.
func (x *uriIndex[T]) all(uri string) iter.Seq[T] {
	return func(yield func(T) bool) {
		first, ok := x.one[uri]
		if !ok || !yield(first) {
			return
		}
		for _, v := range x.more[uri] {
			if !yield(v) {
				return
			}
		}
	}
}

// len returns how many URIs have a subscriber.
func (x *uriIndex[T]) len() int { return len(x.one) }

// NotifyToolListChanged tells every listen stream that asked for it, and
// every legacy session, that the tool list changed.
func (s *Server) NotifyToolListChanged() {
	s.publish(change{method: mcp.NotificationToolListChanged})
}

// NotifyPromptListChanged tells every listen stream that asked for it, and
// every legacy session, that the prompt list changed.
func (s *Server) NotifyPromptListChanged() {
	s.publish(change{method: mcp.NotificationPromptListChanged})
}

// NotifyResourceListChanged tells every listen stream that asked for it,
// and every legacy session, that the resource list changed.
func (s *Server) NotifyResourceListChanged() {
	s.publish(change{method: mcp.NotificationResourceListChanged})
}

// NotifyResourceUpdated tells every listen stream and legacy session
// subscribed to uri that the resource changed.
func (s *Server) NotifyResourceUpdated(uri string) {
	s.publish(change{method: mcp.NotificationResourceUpdated, uri: uri})
}

// publish never blocks: a stream whose queue is full loses the change, and
// the loss is logged. A client that fell that far behind should re-list.
func (s *Server) publish(c change) {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	if c.topic > 0 {
		for sub := range s.hub.byKey[c.topic-1][c.key] {
			s.sendStream(sub, c)
		}
		return
	}
	if k := listKind(c.method); k >= 0 {
		for sub := range s.hub.byKind[k] {
			s.sendStream(sub, c)
		}
		for ss := range s.hub.sessions {
			s.sendSession(ss, c)
		}
	} else if c.method == mcp.NotificationResourceUpdated {
		for sub := range s.hub.byURI.all(c.uri) {
			s.sendStream(sub, c)
		}
		for ss := range s.hub.sessionURI.all(c.uri) {
			s.sendSession(ss, c)
		}
	}
}

func (s *Server) sendStream(sub *subscription, c change) {
	if ok, _ := sub.queue.push(c, false); !ok {
		s.log.Warn("server: listen stream is not keeping up; dropping a change", "method", c.method)
		return
	}
	select {
	case sub.wake <- struct{}{}:
	default: // a token is already there
	}
}

func (s *Server) sendSession(ss *Session, c change) {
	ok, start := ss.queue.push(c, true)
	if !ok {
		s.log.Warn("server: legacy session is not keeping up; dropping a change", "method", c.method)
		return
	}
	if start {
		go ss.send()
	}
}

// EndSubscriptions ends every open subscriptions/listen stream gracefully:
// each receives its final result and its request completes. Call it before
// shutting down (for HTTP, register it with http.Server.RegisterOnShutdown),
// since listen streams otherwise last until the client leaves.
func (s *Server) EndSubscriptions() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	for sub := range s.hub.subs {
		close(sub.done)
		s.hub.unlinkLocked(sub)
	}
}

// grant narrows what a listen request asked for to what this server can
// deliver.
func (s *Server) grant(asked mcp.SubscriptionFilter) mcp.SubscriptionFilter {
	caps := s.capabilities()
	var g mcp.SubscriptionFilter
	if caps.Tools != nil && caps.Tools.ListChanged {
		g.ToolsListChanged = asked.ToolsListChanged
	}
	if caps.Prompts != nil && caps.Prompts.ListChanged {
		g.PromptsListChanged = asked.PromptsListChanged
	}
	if caps.Resources != nil {
		if caps.Resources.ListChanged {
			g.ResourcesListChanged = asked.ResourcesListChanged
		}
		if caps.Resources.Subscribe && len(asked.ResourceSubscriptions) > 0 {
			g.ResourceSubscriptions = slices.Clone(asked.ResourceSubscriptions)
		}
	}
	return g
}

// listen serves subscriptions/listen: the acknowledgement first, then the
// changes the stream asked for, each tagged with the subscription id, until
// the client cancels (no result is sent then) or the server ends the stream
// (the final result is sent).
//
// Opening the stream and serving it are functions of their own, so that the
// goroutine an idle stream parks (over HTTP, net/http's, whose stack also
// holds the handler's frames and, on the stream's first flush, net/http's
// header writing) keeps a small stack: about 8 KiB, where one large frame
// here had it grow to 16 KiB and stay there.
func (s *Server) listen(ctx context.Context, req *Request, p *mcp.SubscriptionsListenRequestParams) (mcp.AnyResult, error) {
	sub, err := s.openListen(ctx, req, p)
	if err != nil {
		return nil, err
	}
	defer s.closeListen(sub)
	return s.serveListen(ctx, req, sub)
}

// openListen grants what a listen request asked for and opens its
// stream; closeListen closes it.
func (s *Server) openListen(ctx context.Context, req *Request, p *mcp.SubscriptionsListenRequestParams) (*subscription, error) {
	limit := s.opts.MaxStreamSubscriptions
	if limit == 0 {
		limit = DefaultMaxStreamSubscriptions
	}
	if n := len(p.Notifications.ResourceSubscriptions); limit > 0 && n > limit {
		return nil, wire.InvalidParams("Invalid params: %d resourceSubscriptions, over the server's limit of %d per stream (Options.MaxStreamSubscriptions)", n, limit)
	}
	granted := s.grant(p.Notifications)
	if err := s.grantTopics(ctx, req, &p.Notifications, &granted, limit); err != nil {
		return nil, err
	}
	sub := &subscription{
		filter:    granted,
		caller:    auth.CallerKey(ctx),
		queue:     changeQueue{limit: s.opts.ListenBuffer},
		wake:      make(chan struct{}, 1),
		done:      make(chan struct{}),
		perCaller: s.maxListenStreamsPerCaller(),
	}
	size := s.maxListenStreams()
	switch refused, held := s.hub.add(sub, sub.perCaller, size); refused {
	case listenCallerFull:
		return nil, wire.InvalidRequest("Too many listen streams: this caller already has %d open, the server's limit per caller (Options.MaxListenStreamsPerCaller); close one first", sub.perCaller)
	case listenPoolFull:
		s.log.Warn("server: refusing a listen stream: the limit of listen streams is reached", "limit", size)
		return nil, wire.Internal("Too many listen streams: the server's limit of %d open streams (Options.MaxListenStreams) is reached; try again later", size)
	case listenReserved:
		return nil, wire.InvalidRequest("Too many listen streams: nearly all of the server's %d (Options.MaxListenStreams) are open, and the rest is kept for callers with fewer than %d; this caller has %d open; close one first or try again later",
			size, fairshare.ReserveShare(sub.perCaller), held)
	}
	// A stream opened with a bearer token lasts no longer than the token:
	// the token was checked only when the stream opened. Where the
	// middleware checks it again (auth.Revoked), not after it is refused.
	if info := auth.InfoFrom(ctx); info != nil && !info.Expiry.IsZero() {
		sub.expiry = time.NewTimer(time.Until(info.Expiry))
	}
	sub.revoked = auth.Revoked(ctx)
	return sub, nil
}

func (s *Server) closeListen(sub *subscription) {
	if sub.expiry != nil {
		sub.expiry.Stop()
	}
	s.hub.remove(sub, sub.perCaller)
}

// serveListen sends the acknowledgement and then the changes, until the
// stream ends.
func (s *Server) serveListen(ctx context.Context, req *Request, sub *subscription) (mcp.AnyResult, error) {
	subID := req.ID
	err := req.Notify(ctx, mcp.NotificationSubscriptionsAcknowledged, &mcp.SubscriptionsAcknowledgedNotificationParams{
		Meta:          &mcp.NotificationMetaObject{SubscriptionID: subID},
		Notifications: sub.filter,
	})
	if err != nil {
		return nil, err
	}
	var expired <-chan time.Time
	if sub.expiry != nil {
		expired = sub.expiry.C
	}
	var batch []change // the changes being sent, then the queue's spare room
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-sub.done:
			return &mcp.SubscriptionsListenResult{
				Result: mcp.Result{Meta: &mcp.ResultMetaObject{SubscriptionID: subID}},
			}, nil
		case <-expired:
			s.log.Debug("server: listen stream ended: the access token that opened it expired")
			return nil, tokenExpired()
		case <-sub.revoked:
			s.log.Debug("server: listen stream ended: a re-check refused the access token that opened it")
			return nil, tokenRevoked()
		case <-sub.wake:
			batch = sub.queue.take(batch, false)
			for _, c := range batch {
				if err := req.Notify(ctx, c.method, changeParams(c, subID)); err != nil {
					return nil, err
				}
			}
		}
	}
}

// maxListenStreamsPerCaller is Options.MaxListenStreamsPerCaller with its
// default; 0 means no bound.
func (s *Server) maxListenStreamsPerCaller() int {
	switch n := s.opts.MaxListenStreamsPerCaller; {
	case n == 0:
		return DefaultMaxListenStreamsPerCaller
	case n < 0:
		return 0 // no bound per caller
	default:
		return n
	}
}

// maxListenStreams is Options.MaxListenStreams with its default; 0 means
// no bound.
func (s *Server) maxListenStreams() int {
	switch n := s.opts.MaxListenStreams; {
	case n == 0:
		return DefaultMaxListenStreams
	case n < 0:
		return 0 // no bound on the streams of all callers
	default:
		return n
	}
}

func changeParams(c change, subID jsonrpc.ID) any {
	meta := &mcp.NotificationMetaObject{SubscriptionID: subID}
	if c.params != nil {
		return c.params(meta)
	}
	if c.method == mcp.NotificationResourceUpdated {
		return &mcp.ResourceUpdatedNotificationParams{Meta: meta, URI: c.uri}
	}
	return &mcp.NotificationParams{Meta: meta}
}

// tokenRevoked is the error a listen stream ends with when a re-check of
// the access token it was opened with refuses it (auth.Revoked): like
// tokenExpired, with data.reason "token_revoked".
func tokenRevoked() *jsonrpc.Error {
	return wire.InvalidRequest("Unauthorized: the access token this stream was opened with is no longer valid; send subscriptions/listen again with a valid token").
		WithData(struct {
			Reason string `json:"reason"`
		}{"token_revoked"})
}

// tokenExpired is the error a listen stream ends with when the access
// token it was opened with expires: the client learns why (an error, not
// the graceful result, which would say nothing), and data.reason lets code
// tell it from other refusals and listen again once it has a fresh token.
func tokenExpired() *jsonrpc.Error {
	return wire.InvalidRequest("Unauthorized: the access token this stream was opened with has expired; send subscriptions/listen again with a fresh token").
		WithData(struct {
			Reason string `json:"reason"`
		}{"token_expired"})
}
