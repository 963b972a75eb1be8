package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// listenTasks is a subscriptions/listen request naming task ids, from a
// client that declared the tasks extension or not.
func listenTasks(declared bool, ids ...string) *jsonrpc.Request {
	ext := ""
	if declared {
		ext = `"extensions":{"io.modelcontextprotocol/tasks":{}}`
	}
	b, _ := json.Marshal(ids)
	params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{` + ext + `}},` +
		`"notifications":{"taskIds":` + string(b) + `}}`
	return &jsonrpc.Request{ID: jsonrpc.Int64ID(7), Method: mcp.MethodSubscriptionsListen, Params: json.RawMessage(params)}
}

// TestListenTopic: an extension's topic grants what its Grant keeps (and
// the acknowledgement says so), publishes only to streams granted the key,
// with their subscription id in _meta; asking without the extension is
// -32021 naming it, and more keys than MaxStreamSubscriptions is -32602.
func TestListenTopic(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "topics", Version: "1"}, &server.Options{MaxStreamSubscriptions: 3})
	topic, err := s.AddListenTopic(server.ListenTopic{
		Extension: mcp.ExtensionTasks,
		Keys:      func(f *mcp.SubscriptionFilter) *[]string { return &f.TaskIDs },
		Grant: func(ctx context.Context, req *server.Request, keys []string) []string {
			return slices.DeleteFunc(keys, func(k string) bool { return k == "secret" })
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Refused, not served: a stream served here would last until its
	// context ended, so the answer is awaited with a deadline.
	refused := make(chan error, 1)
	stray, endStray := context.WithCancel(context.Background())
	defer endStray()
	go func() {
		_, err := s.Handle(stray, listenTasks(false, "a"), func(context.Context, string, any) error { return nil })
		refused <- err
	}()
	err = testwait.Recv(t, refused, "the refusal of a stream without the extension")
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || int64(rpc.Code) != wire.CodeMissingRequiredClientCapability {
		t.Errorf("without the extension: %v", err)
	}
	_, err = s.Handle(context.Background(), listenTasks(true, "a", "b", "c", "d"), nil)
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("over the limit: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type note struct {
		method string
		params any
	}
	got := make(chan note, 8)
	go s.Handle(ctx, listenTasks(true, "a", "secret"), func(ctx context.Context, method string, params any) error {
		got <- note{method, params}
		return nil
	})
	ack := testwait.Recv(t, got, "the acknowledgement")
	granted := ack.params.(*mcp.SubscriptionsAcknowledgedNotificationParams).Notifications.TaskIDs
	if !slices.Equal(granted, []string{"a"}) {
		t.Fatalf("granted %v, want [a]", granted)
	}
	if topic.Subscribed("secret") || !topic.Subscribed("a") {
		t.Error("Subscribed disagrees with the grant")
	}
	topic.Publish("secret", mcp.NotificationTasks, func(meta *mcp.NotificationMetaObject) any { return "secret" })
	topic.Publish("a", mcp.NotificationTasks, func(meta *mcp.NotificationMetaObject) any { return meta })
	n := testwait.Recv(t, got, "the notification of a")
	if meta, ok := n.params.(*mcp.NotificationMetaObject); n.method != mcp.NotificationTasks || !ok || meta.SubscriptionID != jsonrpc.Int64ID(7) {
		t.Errorf("notification %s %#v", n.method, n.params)
	}
	cancel()
}

// tasksLikeServer is a server as tasks.Enable leaves it, played on the
// extension surface alone (package server cannot import tasks): the tasks
// extension declared, and its listen topic, whose keys are the filter's
// taskIds and whose Grant keeps every key but "secret". It also serves
// tools, so that a stream may ask for the tools list's changes.
func tasksLikeServer(t *testing.T) (*server.Server, *server.Topic) {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "topics", Version: "1"}, nil)
	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		return &mcp.ListToolsResult{}, nil
	})
	if err := s.DeclareExtension(mcp.ExtensionTasks, nil); err != nil {
		t.Fatal(err)
	}
	topic, err := s.AddListenTopic(server.ListenTopic{
		Extension: mcp.ExtensionTasks,
		Keys:      func(f *mcp.SubscriptionFilter) *[]string { return &f.TaskIDs },
		Grant: func(ctx context.Context, req *server.Request, keys []string) []string {
			return slices.DeleteFunc(keys, func(k string) bool { return k == "secret" })
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, topic
}

// listenStream is one subscriptions/listen request served by s.Handle in
// a goroutine of its own: what it was sent, and how it ended.
type listenStream struct {
	notes  chan string // the method of each notification, in order
	acked  chan *mcp.SubscriptionsAcknowledgedNotificationParams
	ended  chan error
	cancel context.CancelFunc
}

// openTopicStream sends s a subscriptions/listen request with notifications
// (the filter's JSON) from a client whose capabilities are caps (JSON).
func openTopicStream(t *testing.T, s *server.Server, id int64, caps, notifications string) *listenStream {
	t.Helper()
	params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `},` +
		`"notifications":` + notifications + `}`
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ls := &listenStream{notes: make(chan string, 16), acked: make(chan *mcp.SubscriptionsAcknowledgedNotificationParams, 1), ended: make(chan error, 1), cancel: cancel}
	req := &jsonrpc.Request{ID: jsonrpc.Int64ID(id), Method: mcp.MethodSubscriptionsListen, Params: json.RawMessage(params)}
	go func() {
		_, err := s.Handle(ctx, req, func(ctx context.Context, method string, params any) error {
			if ack, ok := params.(*mcp.SubscriptionsAcknowledgedNotificationParams); ok {
				ls.acked <- ack
				return nil
			}
			ls.notes <- method
			return nil
		})
		ls.ended <- err
	}()
	return ls
}

// TestListenWithoutTheExtension: a server that serves the tasks extension
// (its listen topic added) still serves subscriptions/listen to a client
// that did not declare the extension and asks for nothing of it, whether
// its filter leaves taskIds out, as Parley's client and most do, or sends
// it empty. Only asking for task ids needs the extension.
func TestListenWithoutTheExtension(t *testing.T) {
	s, _ := tasksLikeServer(t)
	for i, c := range []struct{ name, caps, notifications string }{
		{"no extensions member", `{}`, `{"toolsListChanged":true}`},
		{"other extensions", `{"extensions":{"com.example/other":{}}}`, `{"toolsListChanged":true}`},
		{"taskIds empty", `{}`, `{"toolsListChanged":true,"taskIds":[]}`},
	} {
		ls := openTopicStream(t, s, int64(10+i), c.caps, c.notifications)
		select {
		case ack := <-ls.acked:
			if !ack.Notifications.ToolsListChanged || len(ack.Notifications.TaskIDs) != 0 {
				t.Errorf("%s: granted %+v, want the tools list's changes alone", c.name, ack.Notifications)
			}
		case err := <-ls.ended:
			t.Fatalf("%s: the stream was refused: %v", c.name, err)
		case <-time.After(testwait.FailAfter):
			t.Fatalf("%s: waited %v for the acknowledgement", c.name, testwait.FailAfter)
		}
		s.NotifyToolListChanged()
		if m := testwait.Recv(t, ls.notes, c.name+": the tools list_changed"); m != mcp.NotificationToolListChanged {
			t.Errorf("%s: got %s", c.name, m)
		}
		ls.cancel()
		testwait.Recv(t, ls.ended, c.name+": the end of the cancelled stream")
	}

	// Asking for task ids is what needs the extension.
	ls := openTopicStream(t, s, 20, `{}`, `{"toolsListChanged":true,"taskIds":["a"]}`)
	err := testwait.Recv(t, ls.ended, "the refusal of task ids without the extension")
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || int64(rpc.Code) != wire.CodeMissingRequiredClientCapability {
		t.Errorf("task ids without the extension: %v, want -32021", err)
	}
}

// TestListenTopicStreamsLeaveTheIndex: a listen stream granted a key
// leaves the topic's index when it ends, cancelled by its client or ended
// by EndSubscriptions, and takes only itself out: another stream granted
// the same key keeps receiving it.
func TestListenTopicStreamsLeaveTheIndex(t *testing.T) {
	s, topic := tasksLikeServer(t)
	const declared = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	first := openTopicStream(t, s, 1, declared, `{"taskIds":["a","b"]}`)
	second := openTopicStream(t, s, 2, declared, `{"taskIds":["a"]}`)
	for _, ls := range []*listenStream{first, second} {
		testwait.Recv(t, ls.acked, "the acknowledgement")
	}
	if !topic.Subscribed("a") || !topic.Subscribed("b") {
		t.Fatal("the granted keys are not in the index")
	}

	first.cancel()
	testwait.Recv(t, first.ended, "the end of the cancelled stream")
	if topic.Subscribed("b") {
		t.Error("a key only a cancelled stream held is still subscribed")
	}
	if !topic.Subscribed("a") {
		t.Error("a cancelled stream took another stream's key out of the index")
	}
	publish := func(key string) {
		topic.Publish(key, mcp.NotificationTasks, func(meta *mcp.NotificationMetaObject) any { return meta })
	}
	publish("a")
	if m := testwait.Recv(t, second.notes, "the notification of a on the stream still open"); m != mcp.NotificationTasks {
		t.Errorf("got %s", m)
	}

	s.EndSubscriptions()
	if err := testwait.Recv(t, second.ended, "the end of the stream EndSubscriptions ended"); err != nil {
		t.Errorf("EndSubscriptions: %v", err)
	}
	if topic.Subscribed("a") {
		t.Error("a stream EndSubscriptions ended is still subscribed")
	}
}
