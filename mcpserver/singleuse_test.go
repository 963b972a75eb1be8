package mcpserver_test

import (
	"context"
	"errors"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
)

// Single use reaches the high-level server through its RequestState
// policy: a fleet sharing keys and a store accepts each round once.
func TestSingleUseAcrossInstances(t *testing.T) {
	store, err := requeststate.NewMemoryStore(nil) // one store shared by both, as Redis would be
	mustOK(t, err)
	a := provisionServer(t, "fleet", &requeststate.Policy{Keys: sharedKeys(), SingleUse: store})
	b := provisionServer(t, "fleet", &requeststate.Policy{Keys: sharedKeys(), SingleUse: store})
	sessA, sessB := connect(t, a, manual), connect(t, b, manual)
	answer := responses(t, map[string]mcp.InputResponse{"region": accept(map[string]any{"region": "eu"})})

	p := begin(t, sessA, provisionCall(t, "orders"))
	wantText(t, finish(t, sessB, p, answer), false, "Provisioned orders in eu.")
	for _, sess := range []*client.Session{sessA, sessB} {
		_, _, err := sess.Continue(context.Background(), p, answer)
		wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Invalid or expired requestState")
		if errors.Is(err, requeststate.ErrReplayed) {
			t.Error("the client learnt why the state was refused")
		}
	}
	if store.Len() != 1 {
		t.Errorf("store holds %d states, want 1", store.Len())
	}
}

// TestSingleUseAutomaticLoop: the client's own loop completes a flow under
// single use: every round echoes a fresh state once.
func TestSingleUseAutomaticLoop(t *testing.T) {
	store, err := requeststate.NewMemoryStore(nil)
	mustOK(t, err)
	s := provisionServer(t, "fleet", &requeststate.Policy{Keys: sharedKeys(), SingleUse: store})
	el := &elicitor{answer: func(string) *mcp.ElicitResult { return accept(map[string]any{"region": "us"}) }}
	sess := connect(t, s, &client.Options{Elicit: el.elicit})
	res, err := sess.CallTool(context.Background(), "provision", map[string]any{"name": "users"})
	mustOK(t, err)
	wantText(t, res, false, "Provisioned users in us.")
	if store.Len() != 1 || el.count() != 1 {
		t.Errorf("store holds %d states, %d questions asked; want 1 and 1", store.Len(), el.count())
	}
}
