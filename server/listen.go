package server

import (
	"context"
	"slices"
	"sync"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
)

// change is one published change, fanned out to the listen streams that
// asked for its kind.
type change struct {
	method string // the notification method
	uri    string // for resource updates
}

// subscription is one open subscriptions/listen stream.
type subscription struct {
	filter mcp.SubscriptionFilter // what the stream asked for and was granted
	events chan change
	done   chan struct{} // closed to end the stream gracefully
}

func (sub *subscription) wants(c change) bool {
	switch c.method {
	case mcp.NotificationToolListChanged:
		return sub.filter.ToolsListChanged
	case mcp.NotificationPromptListChanged:
		return sub.filter.PromptsListChanged
	case mcp.NotificationResourceListChanged:
		return sub.filter.ResourcesListChanged
	case mcp.NotificationResourceUpdated:
		return slices.Contains(sub.filter.ResourceSubscriptions, c.uri)
	}
	return false
}

// hub tracks the open listen streams and legacy sessions.
type hub struct {
	mu       sync.Mutex
	subs     map[*subscription]struct{}
	sessions map[*Session]struct{}
}

func (h *hub) init() {
	h.subs = make(map[*subscription]struct{})
	h.sessions = make(map[*Session]struct{})
}

func (h *hub) addSession(ss *Session) {
	h.mu.Lock()
	h.sessions[ss] = struct{}{}
	h.mu.Unlock()
}

func (h *hub) removeSession(ss *Session) {
	h.mu.Lock()
	delete(h.sessions, ss)
	h.mu.Unlock()
}

func (h *hub) add(sub *subscription) {
	h.mu.Lock()
	h.subs[sub] = struct{}{}
	h.mu.Unlock()
}

func (h *hub) remove(sub *subscription) {
	h.mu.Lock()
	delete(h.subs, sub)
	h.mu.Unlock()
}

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
	for sub := range s.hub.subs {
		if !sub.wants(c) {
			continue
		}
		select {
		case sub.events <- c:
		default:
			s.log.Warn("server: listen stream is not keeping up; dropping a change", "method", c.method)
		}
	}
	for ss := range s.hub.sessions {
		if !ss.wants(c) {
			continue
		}
		select {
		case ss.events <- c:
		default:
			s.log.Warn("server: legacy session is not keeping up; dropping a change", "method", c.method)
		}
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
		delete(s.hub.subs, sub)
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
func (s *Server) listen(ctx context.Context, req *Request, p *mcp.SubscriptionsListenRequestParams) (mcp.AnyResult, error) {
	limit := s.opts.MaxStreamSubscriptions
	if limit == 0 {
		limit = DefaultMaxStreamSubscriptions
	}
	if n := len(p.Notifications.ResourceSubscriptions); limit > 0 && n > limit {
		return nil, wire.InvalidParams("Invalid params: %d resourceSubscriptions, over the server's limit of %d per stream (Options.MaxStreamSubscriptions)", n, limit)
	}
	sub := &subscription{
		filter: s.grant(p.Notifications),
		events: make(chan change, s.opts.ListenBuffer),
		done:   make(chan struct{}),
	}
	s.hub.add(sub)
	defer s.hub.remove(sub)

	subID := req.ID
	err := req.Notify(ctx, mcp.NotificationSubscriptionsAcknowledged, &mcp.SubscriptionsAcknowledgedNotificationParams{
		Meta:          &mcp.NotificationMetaObject{SubscriptionID: subID},
		Notifications: sub.filter,
	})
	if err != nil {
		return nil, err
	}
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-sub.done:
			return &mcp.SubscriptionsListenResult{
				Result: mcp.Result{Meta: &mcp.ResultMetaObject{SubscriptionID: subID}},
			}, nil
		case c := <-sub.events:
			if err := req.Notify(ctx, c.method, changeParams(c, subID)); err != nil {
				return nil, err
			}
		}
	}
}

func changeParams(c change, subID jsonrpc.ID) any {
	meta := &mcp.NotificationMetaObject{SubscriptionID: subID}
	if c.method == mcp.NotificationResourceUpdated {
		return &mcp.ResourceUpdatedNotificationParams{Meta: meta, URI: c.uri}
	}
	return &mcp.NotificationParams{Meta: meta}
}
