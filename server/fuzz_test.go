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

// FuzzLegacySession feeds arbitrary params to every method of a legacy
// session, initialize included: the same promise as FuzzHandle, for the
// session's own methods and for the _meta it builds from each request.
func FuzzLegacySession(f *testing.F) {
	methods := []string{
		mcp.MethodInitialize, mcp.MethodPing, mcp.MethodSetLoggingLevel, mcp.MethodSubscribeResource,
		mcp.MethodUnsubscribeResource, mcp.MethodListTools, mcp.MethodCallTool, mcp.MethodGetPrompt,
		mcp.MethodReadResource, mcp.MethodComplete, mcp.MethodDiscover, "x/y",
	}
	for i := range methods {
		f.Add(uint8(i), []byte(`{}`))
		f.Add(uint8(i), []byte(`{"_meta":{"progressToken":"p1"},"name":"echo","arguments":{"text":"x"}}`))
		f.Add(uint8(i), []byte(`{"uri":"file:///readme.txt","level":"debug"}`))
		f.Add(uint8(i), []byte(`{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"x","version":"1"}}`))
		f.Add(uint8(i), []byte(`{"_meta":{"progressToken":{}},"level":7,"uri":null}`))
	}
	s := newFixture(nil)
	sess, _, err := s.Initialize(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: mcp.MethodInitialize,
		Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}`)}, nil)
	if err != nil {
		f.Fatal(err)
	}
	defer sess.Close()
	f.Fuzz(func(t *testing.T, which uint8, params []byte) {
		if !json.Valid(params) {
			return
		}
		method := methods[int(which)%len(methods)]
		var p struct{ Name string }
		if json.Unmarshal(params, &p) == nil && p.Name == "fail" {
			return // logs by design
		}
		msg := &jsonrpc.Request{ID: jsonrpc.Int64ID(2), Method: method, Params: params}
		if method == mcp.MethodInitialize {
			if s, res, err := s.Initialize(context.Background(), msg, nil); err == nil {
				s.Close()
				if res == nil {
					t.Fatal("initialize: neither result nor error")
				}
			} else if !errors.As(err, new(*jsonrpc.Error)) {
				t.Fatalf("initialize %s: non-JSON-RPC error %T: %v", params, err, err)
			}
		}
		res, err := sess.Handle(context.Background(), msg, nil, nil)
		if err != nil {
			if !errors.As(err, new(*jsonrpc.Error)) {
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
