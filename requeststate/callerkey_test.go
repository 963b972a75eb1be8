package requeststate_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/requeststate"
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
