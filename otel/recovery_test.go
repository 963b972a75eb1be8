package otel_test

import (
	"context"
	"encoding/json"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	parleyotel "github.com/parley-mcp/parley/otel"
)

// TestRecoveryAttributes: the spans of the requests a client sends to
// recover a legacy session say so: the initialize that opens the new
// session is "reinitialize", the request sent again "repeat", both with the
// lost session's id; a repeat after a failed POST names no lost session,
// and other requests carry neither attribute.
func TestRecoveryAttributes(t *testing.T) {
	tel := newTelemetry(t)
	r := &client.Reinitialization{Method: mcp.MethodListTools, LostSessionID: "old"}
	next := func(context.Context, *client.Request) (any, error) { return json.RawMessage(`{}`), nil }
	h := tel.ClientMiddleware(next)
	for _, req := range []*client.Request{
		{Kind: client.KindRequest, Method: mcp.MethodInitialize, Params: &mcp.InitializeRequestParams{}, Reinitialization: r},
		{Kind: client.KindRequest, Method: mcp.MethodListTools, Params: &mcp.PaginatedRequestParams{}, Reinitialization: r, Repeat: true},
		{Kind: client.KindRequest, Method: mcp.MethodListPrompts, Params: &mcp.PaginatedRequestParams{}, Repeat: true},
		{Kind: client.KindRequest, Method: mcp.MethodListResources, Params: &mcp.PaginatedRequestParams{}},
	} {
		if _, err := h(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][2]string{
		mcp.MethodInitialize:    {"reinitialize", "old"},
		mcp.MethodListTools:     {"repeat", "old"},
		mcp.MethodListPrompts:   {"repeat", ""},
		mcp.MethodListResources: {"", ""},
	}
	spans := tel.spans.Ended()
	if len(spans) != len(want) {
		t.Fatalf("%d spans, want %d", len(spans), len(want))
	}
	for _, sp := range spans {
		got := map[attribute.Key]string{}
		for _, kv := range sp.Attributes() {
			got[kv.Key] = kv.Value.AsString()
		}
		w, ok := want[sp.Name()]
		if !ok {
			t.Errorf("span %q", sp.Name())
			continue
		}
		if got[parleyotel.AttrSessionRecovery] != w[0] || got[parleyotel.AttrLostSessionID] != w[1] {
			t.Errorf("span %q: recovery %q, lost id %q; want %q, %q", sp.Name(), got[parleyotel.AttrSessionRecovery], got[parleyotel.AttrLostSessionID], w[0], w[1])
		}
	}
}
