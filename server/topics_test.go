package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

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
