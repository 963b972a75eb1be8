package requeststate_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
)

// TestSingleUseCountsPrincipalBeforeAddress: the rounds of an
// authenticated caller count against its principal's share wherever they
// come from: a burner that changes its address between rounds is still
// refused once its principal holds its share, and the rounds are not
// counted against the addresses.
func TestSingleUseCountsPrincipalBeforeAddress(t *testing.T) {
	clk := newClock()
	const max = 64
	share := max / requeststate.DefaultCallerShares
	s, store := burnerServer(t, clk, max)
	info := &auth.Info{ClientID: "c", Issuer: "https://as", Subject: "roamer"}
	accepted := 0
	for i := range 4 * share {
		ctx := auth.WithInfo(auth.WithRemoteAddr(context.Background(), fmt.Sprintf("192.0.2.%d", i+1)), info)
		accepted += burn(t, s, ctx, 1)
	}
	if accepted != share {
		t.Errorf("a principal roaming over %d addresses had %d rounds accepted, want its share of %d", 4*share, accepted, share)
	}
	if n := store.CallerLen("addr:192.0.2.1"); n != 0 {
		t.Errorf("an address of the authenticated roamer holds %d states, want 0", n)
	}
}

// TestSingleUseManyBurnersKeepRoom: twenty callers (twenty addresses)
// burning rounds each take what they may; the store keeps room that
// callers holding their reserve share cannot take, so an honest caller
// arriving last still completes a round. Without it, sixteen burners at
// their share (16 × 4 of 64) filled the store and every later caller was
// refused.
func TestSingleUseManyBurnersKeepRoom(t *testing.T) {
	clk := newClock()
	const max = 64
	s, store := burnerServer(t, clk, max)
	for i := range 20 {
		burn(t, s, auth.WithRemoteAddr(context.Background(), fmt.Sprintf("203.0.113.%d", i+1)), 2*max)
	}
	honest := auth.WithRemoteAddr(context.Background(), "198.51.100.1")
	if got := burn(t, s, honest, 1); got != 1 {
		t.Fatalf("an honest caller after twenty burners: its round was refused (the store holds %d of %d)", store.Len(), max)
	}
}

// tenantKey is the context key the tenant test's Principal hook reads.
type tenantKey struct{}

// TestSingleUseCountsThePolicysPrincipal: the share a state counts against
// is the principal the policy binds it to (here a tenant, named by its
// Principal hook, with no access token at all), before the address: a
// tenant whose requests come from many addresses holds one share.
func TestSingleUseCountsThePolicysPrincipal(t *testing.T) {
	clk := newClock()
	const max = 64
	share := max / requeststate.DefaultCallerShares
	store, err := requeststate.NewMemoryStore(&requeststate.MemoryStoreOptions{Now: clk.Now, MaxEntries: max})
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(mcp.Implementation{Name: "svc", Version: "1"}, nil)
	requeststate.MustProtect(s, &requeststate.Policy{
		Keys: [][]byte{key(1)}, Now: clk.Now, SingleUse: store, Logger: discard(),
		Principal: func(ctx context.Context, req *server.Request) (string, error) {
			tenant, _ := ctx.Value(tenantKey{}).(string)
			return tenant, nil
		},
	})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return &mcp.InputRequiredResult{RequestState: "round after " + p.RequestState}, nil
	})
	accepted := 0
	for i := range 4 * share {
		ctx := context.WithValue(auth.WithRemoteAddr(context.Background(), fmt.Sprintf("192.0.2.%d", i+1)), tenantKey{}, "acme")
		accepted += burn(t, s, ctx, 1)
	}
	if accepted != share {
		t.Errorf("a tenant over %d addresses had %d rounds accepted, want its share of %d", 4*share, accepted, share)
	}
	if n := store.CallerLen("principal:acme"); n != share {
		t.Errorf("the tenant holds %d states, want %d", n, share)
	}
}
