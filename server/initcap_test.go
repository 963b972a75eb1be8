package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// initializeOf returns initialize params whose declared capabilities carry
// an experimental member padded to size bytes in all.
func initializeOf(size int) json.RawMessage {
	head := `{"protocolVersion":"2025-11-25","clientInfo":{"name":"x","version":"1"},"capabilities":{"experimental":{"pad":"`
	tail := `"}}}`
	return json.RawMessage(head + strings.Repeat("a", size-len(head)-len(tail)) + tail)
}

// TestInitializeSizeLimit: what one legacy session keeps is bounded by the
// size of its initialize: params of exactly the limit open a session, one
// byte more is refused with -32602 naming the limit; a negative limit
// lifts it.
func TestInitializeSizeLimit(t *testing.T) {
	ctx := context.Background()
	init := func(s *server.Server, size int) error {
		sess, _, err := s.Initialize(ctx, &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: mcp.MethodInitialize, Params: initializeOf(size)}, nil)
		if err == nil {
			sess.Close()
		}
		return err
	}
	def := server.New(mcp.Implementation{Name: "s", Version: "1"}, nil)
	if err := init(def, server.DefaultMaxInitializeSize); err != nil {
		t.Fatalf("at the default limit: %v", err)
	}
	err := init(def, server.DefaultMaxInitializeSize+1)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, "limit of 65536") {
		t.Fatalf("one byte over: %v", err)
	}
	small := server.New(mcp.Implementation{Name: "s", Version: "1"}, &server.Options{MaxInitializeSize: 1000})
	if err := init(small, 1001); err == nil {
		t.Error("over a configured limit accepted")
	}
	unbounded := server.New(mcp.Implementation{Name: "s", Version: "1"}, &server.Options{MaxInitializeSize: -1})
	if err := init(unbounded, 1<<20); err != nil {
		t.Errorf("no bound: %v", err)
	}
}
