package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/parley-mcp/parley/internal/questionkey"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// TestAskAllCarriesTheKey: each server-to-client request AskAll sends on a
// legacy session goes out with its question's key in the context that
// reaches the back-channel (and so the transport's Write), where package
// mcptest matches it with a scripted answer, with the round it belongs to
// (the requests sent together share one); the wire names no key. A
// request sent with Ask alone carries neither.
func TestAskAllCarriesTheKey(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "v", Version: "1"}, &server.Options{SupportedVersions: []mcp.ProtocolVersion{mcp.Version20251125}})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if _, err := req.AskAll(ctx, mcp.InputRequests{
			"region": mcp.NewElicitFormRequest("Which region?", mcp.ElicitRequestedSchema{}),
			"zone":   mcp.NewElicitFormRequest("Which zone?", mcp.ElicitRequestedSchema{}),
		}); err != nil {
			return nil, err
		}
		if _, err := req.Ask(ctx, mcp.NewElicitFormRequest("Sure?", mcp.ElicitRequestedSchema{})); err != nil {
			return nil, err
		}
		return mcp.TextResult("asked"), nil
	})
	questionkey.Enable()
	ctx := context.Background()
	init := &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: mcp.MethodInitialize,
		Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"x","version":"1"}}`)}
	sess, _, err := s.Initialize(ctx, init, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	var (
		mu     sync.Mutex
		got    = map[string]string{} // message -> key
		rounds []*questionkey.Round
	)
	call := func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		var p struct {
			Message string `json:"message"`
		}
		json.Unmarshal(params, &p)
		key, round, ok := questionkey.From(ctx)
		if !ok {
			key = "(none)"
		}
		mu.Lock()
		rounds = append(rounds, round)
		mu.Unlock()
		if strings.Contains(string(params), "_meta") {
			t.Errorf("something reached the params' _meta: %s", params)
		}
		mu.Lock()
		got[p.Message] = key
		mu.Unlock()
		return json.RawMessage(`{"action":"decline"}`), nil
	}
	msg := &jsonrpc.Request{ID: jsonrpc.Int64ID(2), Method: mcp.MethodCallTool, Params: json.RawMessage(`{"name":"t"}`)}
	if _, err := sess.Handle(ctx, msg, nil, call); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Which region?": "region", "Which zone?": "zone", "Sure?": "(none)"}
	if len(got) != len(want) {
		t.Fatalf("the back-channel saw %v, want %v", got, want)
	}
	for m, k := range want {
		if got[m] != k {
			t.Errorf("%q went out with key %q, want %q", m, got[m], k)
		}
	}
	// The two of one AskAll share a round; Ask's has none.
	if len(rounds) != 3 || rounds[0] == nil || rounds[0] != rounds[1] || rounds[2] != nil {
		t.Errorf("rounds %v, want the first two alike and the third nil", rounds)
	}
}
