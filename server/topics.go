package server

import (
	"context"
	"errors"
	"slices"

	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
)

// A ListenTopic is a kind of notification an extension delivers on
// subscriptions/listen streams: the stream names keys (task ids, for the
// tasks extension's notifications/tasks) in a member of its notifications
// filter that the extension owns, the server grants those the caller may
// see, and the extension publishes by key. It is the listen side of the
// extension surface (design record 026).
type ListenTopic struct {
	// Extension is the extension the member belongs to: a client that did
	// not declare it and asks for keys is answered -32021 naming it.
	Extension string
	// Keys returns the member of f that holds the topic's keys (such as
	// &f.TaskIDs): the server reads what a stream asked for there, and
	// writes what it granted there for the acknowledgement.
	Keys func(f *mcp.SubscriptionFilter) *[]string
	// Grant returns the keys, of those asked for, that the stream will be
	// told about: the ones the caller may see. nil grants none.
	Grant func(ctx context.Context, req *Request, keys []string) []string
}

// Topic publishes notifications of one ListenTopic; AddListenTopic
// returns it.
type Topic struct {
	s *Server
	i int // the topic's index in hub.topics and hub.byKey
}

// AddListenTopic makes listen streams accept t's keys, and returns the
// Topic to publish with.
func (s *Server) AddListenTopic(t ListenTopic) (*Topic, error) {
	if t.Keys == nil || t.Grant == nil {
		return nil, errors.New("server: AddListenTopic needs Keys and Grant")
	}
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	s.hub.topics = append(s.hub.topics, t)
	s.hub.byKey = append(s.hub.byKey, make(map[string]map[*subscription]struct{}))
	return &Topic{s: s, i: len(s.hub.topics) - 1}, nil
}

// Publish sends method to every listen stream granted key, with the params
// params returns for the stream's _meta (which carries its subscription
// id). Like the core notifications it never blocks: a stream that is not
// keeping up loses it, and the loss is logged.
func (t *Topic) Publish(key, method string, params func(meta *mcp.NotificationMetaObject) any) {
	t.s.publish(change{method: method, topic: t.i + 1, key: key, params: params})
}

// Subscribed reports whether any listen stream is granted key, so that a
// publisher can skip building what nobody would receive.
func (t *Topic) Subscribed(key string) bool {
	h := &t.s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.byKey[t.i][key]) > 0
}

// grantTopics fills g with the keys of every topic that asked names,
// granted; it answers -32021 when the client did not declare a topic's
// extension, and -32602 when a stream asks for more keys than limit.
func (s *Server) grantTopics(ctx context.Context, req *Request, asked *mcp.SubscriptionFilter, g *mcp.SubscriptionFilter, limit int) error {
	s.hub.mu.Lock()
	topics := slices.Clone(s.hub.topics)
	s.hub.mu.Unlock()
	for _, t := range topics {
		keys := *t.Keys(asked)
		if len(keys) == 0 {
			continue
		}
		var caps *mcp.ClientCapabilities
		if req.Meta != nil {
			caps = req.Meta.ClientCapabilities
		}
		if err := requireDeclared(t.Extension, caps); err != nil {
			return err
		}
		if limit > 0 && len(keys) > limit {
			return tooManyKeys(len(keys), limit)
		}
		*t.Keys(g) = t.Grant(ctx, req, slices.Clone(keys))
	}
	return nil
}

// indexTopics adds (on) or removes sub's granted keys in the topic index.
// h.mu is held.
func (h *hub) indexTopics(sub *subscription, on bool) {
	for i, t := range h.topics {
		for _, key := range *t.Keys(&sub.filter) {
			subs := h.byKey[i][key]
			switch {
			case on && subs == nil:
				h.byKey[i][key] = map[*subscription]struct{}{sub: {}}
			case on:
				subs[sub] = struct{}{}
			case subs != nil:
				delete(subs, sub)
				if len(subs) == 0 {
					delete(h.byKey[i], key)
				}
			}
		}
	}
}

// tooManyKeys is the refusal of a listen request that names more keys of
// one topic than a stream may hold.
func tooManyKeys(n, limit int) error {
	return wire.InvalidParams("Invalid params: %d keys in one notifications member, over the server's limit of %d per stream (Options.MaxStreamSubscriptions)", n, limit)
}
