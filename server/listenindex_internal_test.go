package server

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
)

// TestHubIndex: a publish reaches streams and sessions through the index
// (by URI, by kind), and what ends leaves the index: nothing of a closed
// stream or session is kept, so the index costs only what is open.
func TestHubIndex(t *testing.T) {
	s := New(mcp.Implementation{Name: "i", Version: "1"}, nil)
	h := &s.hub
	a := &subscription{filter: mcp.SubscriptionFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"u1", "u2", "u1"}}, queue: changeQueue{limit: 8}, wake: make(chan struct{}, 1)}
	b := &subscription{filter: mcp.SubscriptionFilter{ResourceSubscriptions: []string{"u2"}}, queue: changeQueue{limit: 8}, wake: make(chan struct{}, 1)}
	h.add(a, 0, 0)
	h.add(b, 0, 0)
	if count(h.byURI.all("u1")) != 1 || count(h.byURI.all("u2")) != 2 || len(h.byKind[0]) != 1 || len(h.byKind[1]) != 0 {
		t.Fatalf("index after two streams: u1 %d, u2 %d, tools %d, prompts %d", count(h.byURI.all("u1")), count(h.byURI.all("u2")), len(h.byKind[0]), len(h.byKind[1]))
	}
	s.NotifyResourceUpdated("u1") // a only, once although it listed u1 twice
	s.NotifyResourceUpdated("u3") // nobody
	s.NotifyToolListChanged()     // a only
	s.NotifyPromptListChanged()   // nobody
	if len(a.queue.items) != 2 || len(b.queue.items) != 0 {
		t.Fatalf("delivered: a %d (want 2), b %d (want 0)", len(a.queue.items), len(b.queue.items))
	}

	msg := &jsonrpc.Request{ID: jsonrpc.Int64ID(0), Method: mcp.MethodInitialize,
		Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)}
	s.HandleReadResource(func(context.Context, *Request, *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	ss, _, err := s.Initialize(context.Background(), msg, nil)
	if err != nil {
		t.Fatal(err)
	}
	sub := func(method, uri string) {
		t.Helper()
		params, _ := json.Marshal(map[string]string{"uri": uri})
		if _, err := ss.subscribe(&jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: method, Params: params}); err != nil {
			t.Fatal(err)
		}
	}
	sub(mcp.MethodSubscribeResource, "u1")
	sub(mcp.MethodSubscribeResource, "u4")
	sub(mcp.MethodUnsubscribeResource, "u4")
	if h.sessionURI.len() != 1 || count(h.sessionURI.all("u1")) != 1 {
		t.Fatalf("session index: %v", h.sessionURI)
	}

	h.remove(a, 0)
	h.remove(b, 0)
	ss.Close()
	s.EndSubscriptions()
	if h.byURI.len() != 0 || len(h.byURI.more) != 0 || h.sessionURI.len() != 0 || len(h.byKind[0]) != 0 || len(h.subs) != 0 || len(h.sessions) != 0 || len(h.callers) != 0 {
		t.Fatalf("index after everything closed: byURI %d, sessionURI %d, tools %d, subs %d, sessions %d", h.byURI.len(), h.sessionURI.len(), len(h.byKind[0]), len(h.subs), len(h.sessions))
	}
}

// TestSessionSubscriptionLimit: a legacy session's resources/subscribe is
// bounded like a listen stream's list (Options.MaxStreamSubscriptions):
// one URI over it is refused naming the limit, a URI already held is not
// new, and unsubscribing makes room.
func TestSessionSubscriptionLimit(t *testing.T) {
	s := New(mcp.Implementation{Name: "i", Version: "1"}, &Options{MaxStreamSubscriptions: 2})
	s.HandleReadResource(func(context.Context, *Request, *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	msg := &jsonrpc.Request{ID: jsonrpc.Int64ID(0), Method: mcp.MethodInitialize,
		Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)}
	ss, _, err := s.Initialize(context.Background(), msg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	sub := func(method, uri string) error {
		params, _ := json.Marshal(map[string]string{"uri": uri})
		_, err := ss.subscribe(&jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: method, Params: params})
		return err
	}
	for _, u := range []string{"a", "b", "b"} {
		if err := sub(mcp.MethodSubscribeResource, u); err != nil {
			t.Fatalf("subscribe %s: %v", u, err)
		}
	}
	err = sub(mcp.MethodSubscribeResource, "c")
	if e, ok := err.(*jsonrpc.Error); !ok || e.Code != jsonrpc.CodeInvalidParams || !strings.Contains(e.Message, "MaxStreamSubscriptions") {
		t.Fatalf("over the limit: %v", err)
	}
	if err := sub(mcp.MethodUnsubscribeResource, "a"); err != nil {
		t.Fatal(err)
	}
	if err := sub(mcp.MethodSubscribeResource, "c"); err != nil {
		t.Fatalf("after an unsubscribe: %v", err)
	}
}

func count[T any](seq func(func(T) bool)) int {
	n := 0
	for range seq {
		n++
	}
	return n
}

// TestURIIndex: subscribers added once, removed in any order (the first
// one too, which a later one then replaces), and nothing left behind.
func TestURIIndex(t *testing.T) {
	var x uriIndex[int]
	x.init()
	for _, v := range []int{1, 2, 3, 2, 1, 4} {
		x.add("u", v)
	}
	x.add("w", 9)
	if got := slices.Collect(x.all("u")); !slices.Equal(slices.Sorted(slices.Values(got)), []int{1, 2, 3, 4}) {
		t.Fatalf("subscribers of u: %v", got)
	}
	for _, v := range []int{1, 5, 3, 4} {
		x.remove("u", v)
	}
	x.remove("none", 1)
	if got := slices.Collect(x.all("u")); !slices.Equal(got, []int{2}) || x.len() != 2 {
		t.Fatalf("after removals: %v (%d URIs)", got, x.len())
	}
	for _, b := range []struct {
		uri string
		v   int
	}{{"u", 2}, {"w", 9}} {
		x.remove(b.uri, b.v)
	}
	if x.len() != 0 || len(x.more) != 0 {
		t.Fatalf("left behind: %v %v", x.one, x.more)
	}
	x.add("u", 1)
	x.add("u", 2)
	for range x.all("u") {
		break // all stops when told to
	}
}

// TestTopicIndex: the streams granted a listen topic's keys are indexed by
// key, and what ends leaves the index: a stream takes out only itself, and
// a key no open stream holds is not kept (an index that kept every key a
// stream ever held would grow with every task a client ever followed).
func TestTopicIndex(t *testing.T) {
	s := New(mcp.Implementation{Name: "i", Version: "1"}, nil)
	topic, err := s.AddListenTopic(ListenTopic{
		Keys:  func(f *mcp.SubscriptionFilter) *[]string { return &f.TaskIDs },
		Grant: func(ctx context.Context, req *Request, keys []string) []string { return keys },
	})
	if err != nil {
		t.Fatal(err)
	}
	h := &s.hub
	a := &subscription{filter: mcp.SubscriptionFilter{TaskIDs: []string{"k1", "k2"}}, queue: changeQueue{limit: 8}, wake: make(chan struct{}, 1)}
	b := &subscription{filter: mcp.SubscriptionFilter{TaskIDs: []string{"k2", "k3", "k3"}}, queue: changeQueue{limit: 8}, wake: make(chan struct{}, 1)}
	h.add(a, 0, 0)
	h.add(b, 0, 0)
	if len(h.byKey[0]) != 3 || len(h.byKey[0]["k2"]) != 2 {
		t.Fatalf("index after two streams: %v", h.byKey[0])
	}
	topic.Publish("k2", mcp.NotificationTasks, nil)
	if len(a.queue.items) != 1 || len(b.queue.items) != 1 {
		t.Fatalf("k2 delivered to a %d and b %d times, want once each", len(a.queue.items), len(b.queue.items))
	}
	h.remove(a, 0)
	if _, ok := h.byKey[0]["k1"]; ok || len(h.byKey[0]["k2"]) != 1 || len(h.byKey[0]["k3"]) != 1 {
		t.Fatalf("index after a left: %v", h.byKey[0])
	}
	h.remove(b, 0)
	h.remove(b, 0) // a second remove, as EndSubscriptions then the stream's own end do
	if len(h.byKey[0]) != 0 || len(h.subs) != 0 || h.streams != 0 {
		t.Fatalf("index after every stream left: %v, %d streams counted", h.byKey[0], h.streams)
	}
}
