package mcpserver_test

import (
	"context"
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

// Allocation budgets of the high-level server, per whole round trip
// (client and server together) over the in-memory transport. They are
// asserted without -race (make allocs), which perturbs them.
const (
	// typedCallAllocBudget: a typed trivial tool call.
	// client.TestCallToolAllocBudget's untyped low-level call is the floor.
	// 28 without the client's default RequestTimeout; its per-call
	// cancellable context costs 2 (see docs/rough_edges.md).
	typedCallAllocBudget = 30
	// provisionerAllocBudget: the Provisioner flow, two rounds with one
	// elicitation and a sealed requestState.
	provisionerAllocBudget = 115
	// legacyProvisionerAllocBudget: the same flow on a 2025-11-25 session,
	// the question asked over the back-channel (144 before the client
	// decoded elicitation/create params in one pass).
	legacyProvisionerAllocBudget = 116
)

func TestTypedCallAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race; make test checks the budget in a separate run without it")
	}
	sess := benchSession(t)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(200, func() { callEcho(t, ctx, sess) })
	t.Logf("%.1f allocations per typed tools/call round trip (budget %d)", allocs, typedCallAllocBudget)
	if allocs > typedCallAllocBudget {
		t.Errorf("a typed tools/call round trip allocates %.1f times, over the budget of %d", allocs, typedCallAllocBudget)
	}
}

func TestLegacyProvisionerAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race; make test checks the budget in a separate run without it")
	}
	sess := benchSessionAt(t, mcp.Version20251125)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(200, func() { callProvision(t, ctx, sess) })
	t.Logf("%.1f allocations per Provisioner flow over the back-channel (budget %d)", allocs, legacyProvisionerAllocBudget)
	if allocs > legacyProvisionerAllocBudget {
		t.Errorf("the Provisioner flow over the back-channel allocates %.1f times, over the budget of %d", allocs, legacyProvisionerAllocBudget)
	}
}

func TestProvisionerAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race; make test checks the budget in a separate run without it")
	}
	sess := benchSession(t)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(200, func() { callProvision(t, ctx, sess) })
	t.Logf("%.1f allocations per Provisioner flow, two rounds (budget %d)", allocs, provisionerAllocBudget)
	if allocs > provisionerAllocBudget {
		t.Errorf("the Provisioner flow allocates %.1f times, over the budget of %d", allocs, provisionerAllocBudget)
	}
}
