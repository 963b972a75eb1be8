package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// TestAnswerTimeout: a legacy client that keeps its connection but never
// answers a server-to-client request does not hold the call for ever: Ask
// ends after Options.AnswerTimeout (an answer a moment before it is used)
// with an error
// naming the request and the limit, which reaches the client as -32603
// with that message; an answer in time is used; a negative timeout waits
// for the call's own context.
func TestAnswerTimeout(t *testing.T) {
	for _, c := range []struct {
		name    string
		timeout time.Duration
		answer  time.Duration // when the client answers; 0: never
		want    string        // "" for the answer
	}{
		{"no answer", time.Minute, 0, "did not answer roots/list within 1m0s"},
		{"answer just in time", time.Minute, time.Minute - time.Millisecond, ""},
		{"no bound", -1, 24 * time.Hour, ""},
		{"default", 0, server.DefaultAnswerTimeout - time.Second, ""},
		{"default exceeded", 0, 0, "within 10m0s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := server.New(mcp.Implementation{Name: "bc", Version: "1"}, &server.Options{AnswerTimeout: c.timeout})
				var askErr error
				s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
					_, err := req.Ask(ctx, mcp.NewListRootsRequest())
					askErr = err
					if err != nil {
						return nil, err
					}
					return mcp.TextResult("roots"), nil
				})
				ctx := context.Background()
				sess, _, err := s.Initialize(ctx, &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: mcp.MethodInitialize,
					Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"x","version":"1"}}`)}, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer sess.Close()
				call := func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
					if c.answer == 0 {
						<-ctx.Done()
						return nil, ctx.Err()
					}
					select {
					case <-time.After(c.answer):
						return json.RawMessage(`{"roots":[]}`), nil
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				_, err = sess.Handle(ctx, &jsonrpc.Request{ID: jsonrpc.Int64ID(2), Method: mcp.MethodCallTool, Params: json.RawMessage(`{"name":"t"}`)}, nil, call)
				if c.want == "" {
					if err != nil {
						t.Fatalf("an answer in time: %v", err)
					}
					return
				}
				var rpcErr *jsonrpc.Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError || !strings.Contains(rpcErr.Message, c.want) {
					t.Fatalf("the client got %v, want -32603 saying %q", err, c.want)
				}
				var te *server.AnswerTimeoutError
				if !errors.As(askErr, &te) || !errors.Is(askErr, context.DeadlineExceeded) || te.Method != mcp.MethodListRoots {
					t.Errorf("Ask returned %v", askErr)
				}
			})
		})
	}
}
