package bridge

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// followChanges subscribes to the list changes the remote server declares
// and republishes them to the host: to a legacy host's session, and to a
// 2026-07-28 host's subscriptions/listen streams that asked for them.
func (b *bridge) followChanges(up *upstream) {
	caps := up.sess.ServerCapabilities()
	filter := mcp.SubscriptionFilter{
		ToolsListChanged:     caps.Tools != nil && caps.Tools.ListChanged,
		PromptsListChanged:   caps.Prompts != nil && caps.Prompts.ListChanged,
		ResourcesListChanged: caps.Resources != nil && caps.Resources.ListChanged,
	}
	if !filter.ToolsListChanged && !filter.PromptsListChanged && !filter.ResourcesListChanged {
		return
	}
	sub, err := up.sess.Listen(b.ctx, filter)
	if err != nil {
		b.log.Warn("bridge: cannot follow the remote server's list changes", "err", err)
		return
	}
	go func() {
		for ev := range sub.Events() {
			republish(up.srv, ev.Method, ev.URI)
		}
	}()
}

// republish tells the host's side of the bridge about one change.
func republish(s *server.Server, method, uri string) {
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

// watches are the resource subscriptions the bridge holds on the remote
// server for the host, one stream per URI, counted.
type watches struct {
	mu   sync.Mutex
	uris map[string]*watch

	hostMu sync.Mutex
	host   map[string]bool // a legacy host's subscriptions
}

type watch struct {
	n      int
	cancel context.CancelFunc
}

func (w *watches) init() {
	w.uris = make(map[string]*watch)
	w.host = make(map[string]bool)
}

// watchResource subscribes to uri on the remote server, unless the bridge
// already has, and republishes its updates. It returns once the remote
// server has acknowledged the subscription, so that an update made after
// the host's own subscription was answered reaches the host.
func (b *bridge) watchResource(up *upstream, uri string) {
	b.watch.mu.Lock()
	defer b.watch.mu.Unlock() // held while subscribing: subscriptions are rare
	if w := b.watch.uris[uri]; w != nil {
		w.n++
		return
	}
	ctx, cancel := context.WithCancel(b.ctx)
	sub, err := up.sess.Listen(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: []string{uri}})
	if err != nil {
		cancel()
		b.log.Warn("bridge: cannot subscribe to a resource of the remote server", "uri", uri, "err", err)
		return
	}
	b.watch.uris[uri] = &watch{n: 1, cancel: cancel}
	go func() {
		for ev := range sub.Events() {
			if ev.Method == mcp.NotificationResourceUpdated {
				up.srv.NotifyResourceUpdated(ev.URI)
			}
		}
	}()
}

// unwatchResource gives up one hold on uri's subscription.
func (b *bridge) unwatchResource(uri string) {
	b.watch.mu.Lock()
	defer b.watch.mu.Unlock()
	w := b.watch.uris[uri]
	if w == nil {
		return
	}
	if w.n--; w.n == 0 {
		w.cancel()
		delete(b.watch.uris, uri)
	}
}

// listenMiddleware holds a 2026-07-28 host's resource subscriptions on the
// remote server for as long as its subscriptions/listen stream lasts; the
// host's server serves the stream itself.
func (b *bridge) listenMiddleware(next server.Handler) server.Handler {
	return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
		p, ok := req.Params.(*mcp.SubscriptionsListenRequestParams)
		up := b.up.Load()
		if !ok || up == nil {
			return next(ctx, req)
		}
		for _, uri := range p.Notifications.ResourceSubscriptions {
			b.watchResource(up, uri)
			defer b.unwatchResource(uri)
		}
		return next(ctx, req)
	}
}

// afterLegacy mirrors on the remote server what a legacy host's session
// request changed: its resource subscriptions and, toward a legacy server,
// its log level (a 2026-07-28 server gets the level on every request).
func (b *bridge) afterLegacy(req *jsonrpc.Request) {
	up := b.up.Load()
	if up == nil {
		return
	}
	switch req.Method {
	case mcp.MethodSubscribeResource, mcp.MethodUnsubscribeResource:
		var p mcp.SubscribeRequestParams
		if json.Unmarshal(req.Params, &p) != nil || p.URI == "" {
			return
		}
		// The host's session holds a set of URIs: subscribing twice is
		// one subscription, which one unsubscribe ends.
		b.watch.hostMu.Lock()
		defer b.watch.hostMu.Unlock()
		subscribed := b.watch.host[p.URI]
		switch {
		case req.Method == mcp.MethodSubscribeResource && !subscribed:
			b.watch.host[p.URI] = true
			b.watchResource(up, p.URI)
		case req.Method == mcp.MethodUnsubscribeResource && subscribed:
			delete(b.watch.host, p.URI)
			b.unwatchResource(p.URI)
		}
	case mcp.MethodSetLoggingLevel:
		if !up.legacy {
			return
		}
		var p mcp.SetLevelRequestParams
		if json.Unmarshal(req.Params, &p) != nil {
			return
		}
		go func() {
			if _, err := client.CallMethod[mcp.EmptyResult](b.ctx, up.sess, mcp.MethodSetLoggingLevel, &p, nil); err != nil {
				b.log.Debug("bridge: the remote server refused logging/setLevel", "err", err)
			}
		}()
	}
}
