package server_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// TestLegacyRequestMetaCannotWiden: on a legacy session the capabilities,
// client info and protocol version are the session's, from initialize; a
// request whose own _meta claims others (elicitation the session never
// declared, another version, another client) does not get them, so it
// cannot widen what the server may ask of it.
func TestLegacyRequestMetaCannotWiden(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "legacy", Version: "1"}, nil)
	var seen *mcp.RequestMetaObject
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		seen = req.Meta
		return mcp.TextResult("ok"), nil
	})
	ctx := context.Background()
	sess, _, err := s.Initialize(ctx, &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: mcp.MethodInitialize,
		Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"declared","version":"1"}}`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	params := `{"name":"t","_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{},"roots":{}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"claimed","version":"9"}}}`
	if _, err := sess.Handle(ctx, &jsonrpc.Request{ID: jsonrpc.Int64ID(2), Method: mcp.MethodCallTool, Params: json.RawMessage(params)}, nil, nil); err != nil {
		t.Fatal(err)
	}
	caps := seen.ClientCapabilities
	if caps == nil || caps.Elicitation != nil || caps.Sampling != nil || caps.Roots != nil {
		t.Errorf("the request's own _meta widened the capabilities: %+v", caps)
	}
	if seen.ProtocolVersion != mcp.Version20251125 || seen.ClientInfo == nil || seen.ClientInfo.Name != "declared" {
		t.Errorf("version %s, client %+v: want the session's", seen.ProtocolVersion, seen.ClientInfo)
	}
	if !seen.ProgressToken.IsValid() {
		t.Error("the request's own progress token was lost")
	}
}
