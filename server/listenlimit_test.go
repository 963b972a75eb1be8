package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// listenWith returns a subscriptions/listen request subscribing to n URIs.
func listenWith(n int) *jsonrpc.Request {
	uris := make([]string, n)
	for i := range uris {
		uris[i] = fmt.Sprintf("file:///%d", i)
	}
	b, _ := json.Marshal(uris)
	params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},` +
		`"notifications":{"resourceSubscriptions":` + string(b) + `}}`
	return &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: mcp.MethodSubscriptionsListen, Params: json.RawMessage(params)}
}

// TestListenSubscriptionLimit: one listen stream subscribes to at most
// Options.MaxStreamSubscriptions URIs: exactly the limit opens the stream,
// one more is refused with -32602 naming the limit before any stream is
// opened.
func TestListenSubscriptionLimit(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "l", Version: "1"}, &server.Options{MaxStreamSubscriptions: 3})
	_, err := s.Handle(context.Background(), listenWith(4), nil)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, "limit of 3 per stream") {
		t.Fatalf("one over the limit: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	acked := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		_, err := s.Handle(ctx, listenWith(3), func(ctx context.Context, method string, params any) error {
			if method == mcp.NotificationSubscriptionsAcknowledged {
				acked <- struct{}{}
			}
			return nil
		})
		done <- err
	}()
	select {
	case <-acked:
	case err := <-done:
		t.Fatalf("at the limit the stream did not open: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no acknowledgement within 10s")
	}
	cancel()
	testwait.Recv(t, done, "the listen stream to end after its context was cancelled")

	def := server.New(mcp.Implementation{Name: "l", Version: "1"}, nil)
	if _, err := def.Handle(context.Background(), listenWith(server.DefaultMaxStreamSubscriptions+1), nil); !errors.As(err, &rpcErr) || !strings.Contains(rpcErr.Message, "limit of 1000") {
		t.Errorf("over the default limit: %v", err)
	}
}
