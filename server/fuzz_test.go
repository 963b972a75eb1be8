package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
)

// FuzzHandle feeds arbitrary params to every method. Whatever a peer sends,
// Handle must not panic, and must answer with either a result or a
// *jsonrpc.Error (never another error type, which would be a leak of
// internal detail or a missing mapping).
func FuzzHandle(f *testing.F) {
	methods := []string{
		mcp.MethodDiscover, mcp.MethodListTools, mcp.MethodCallTool, mcp.MethodListPrompts, mcp.MethodGetPrompt,
		mcp.MethodListResources, mcp.MethodListResourceTemplates, mcp.MethodReadResource, mcp.MethodComplete,
		mcp.MethodInitialize, "x/y",
	}
	metaJSON := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for i := range methods {
		f.Add(uint8(i), []byte(`{"_meta":`+metaJSON+`}`))
		f.Add(uint8(i), []byte(`{"_meta":`+metaJSON+`,"name":"echo","arguments":{"text":"x"}}`))
		f.Add(uint8(i), []byte(`{"_meta":`+metaJSON+`,"uri":"file:///readme.txt","cursor":"cGFybGV5LnBhZ2UudjE6Mg"}`))
		f.Add(uint8(i), []byte(`{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}`))
		f.Add(uint8(i), []byte(`[]`))
	}
	s := newFixture(nil)
	f.Fuzz(func(t *testing.T, which uint8, params []byte) {
		if !json.Valid(params) {
			return // the connection answers those before Handle sees them
		}
		method := methods[int(which)%len(methods)]
		if method == mcp.MethodCallTool && json.Valid(params) {
			// The fixture's "fail" tool logs by design; keep it quiet.
			var p struct{ Name string }
			if json.Unmarshal(params, &p) == nil && p.Name == "fail" {
				return
			}
		}
		res, err := s.Handle(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: method, Params: params}, nil)
		if err != nil {
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) {
				t.Fatalf("%s %s: non-JSON-RPC error %T: %v", method, params, err, err)
			}
			return
		}
		if res == nil {
			t.Fatalf("%s %s: neither result nor error", method, params)
		}
		if _, err := json.Marshal(res); err != nil {
			t.Fatalf("%s %s: result does not encode: %v", method, params, err)
		}
	})
}
