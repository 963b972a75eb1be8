package client_test

import (
	"context"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// twoRoundServer has one tool that asks for a region by form elicitation
// on the first call and answers on the retry: the smallest
// multi-round-trip call.
func twoRoundServer() *server.Server {
	s := server.New(mcp.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	ask := &mcp.InputRequiredResult{
		InputRequests: mcp.InputRequests{"region": regionForm("Which region?")},
		RequestState:  "bench-v1",
	}
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if !p.InputResponses.Has("region") {
			return ask, nil
		}
		ans, err := p.InputResponses.Elicit("region")
		if err != nil || p.RequestState != "bench-v1" {
			return nil, wire.InvalidParams("Invalid params: %v", err)
		}
		return mcp.TextResult("ok " + string(ans.Action)), nil
	})
	return s
}

func twoRoundOptions() *client.Options {
	answer := &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "eu-west-1"}}
	return &client.Options{Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
		return answer, nil
	}}
}

// BenchmarkCallToolTwoRounds is a tools/call that takes two rounds over the
// in-memory transport with the automatic loop: the first call, the
// InputRequiredResult, the callback, the retry with the answer and the
// state, and the complete result. Compare BenchmarkCallToolInMemory.
func BenchmarkCallToolTwoRounds(b *testing.B) {
	sess := connectInMemory(b, twoRoundServer(), twoRoundOptions())
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := sess.CallTool(ctx, "provision", benchArgs)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Content) != 1 {
			b.Fatal(res)
		}
	}
}

// BenchmarkCallToolTwoRoundsCancellable is BenchmarkCallToolTwoRounds with
// a context that can end, as most real calls have: the callback then runs
// on a goroutine of its own, so that the call can return the moment the
// context ends.
func BenchmarkCallToolTwoRoundsCancellable(b *testing.B) {
	sess := connectInMemory(b, twoRoundServer(), twoRoundOptions())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sess.CallTool(ctx, "provision", benchArgs); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTwoRoundAllocBudget keeps the second round cheap: the extra round
// (its callback, the answers, the retry and the InputRequiredResult) may
// cost at most three times the allocations of a whole plain call.
func TestTwoRoundAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race; make test checks the budget in a separate run without it")
	}
	ctx := context.Background()
	plainSess := connectInMemory(t, trivialServer(), nil)
	plain := testing.AllocsPerRun(200, func() {
		if _, err := plainSess.CallTool(ctx, "trivial", benchArgs); err != nil {
			t.Fatal(err)
		}
	})
	twoSess := connectInMemory(t, twoRoundServer(), twoRoundOptions())
	two := testing.AllocsPerRun(200, func() {
		if _, err := twoSess.CallTool(ctx, "provision", benchArgs); err != nil {
			t.Fatal(err)
		}
	})
	// The same with a context that can end, which runs the callback on a
	// goroutine of its own.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	twoCancellable := testing.AllocsPerRun(200, func() {
		if _, err := twoSess.CallTool(cctx, "provision", benchArgs); err != nil {
			t.Fatal(err)
		}
	})
	for _, c := range []struct {
		name string
		two  float64
	}{{"context.Background", two}, {"a cancellable context", twoCancellable}} {
		extra := c.two - plain
		t.Logf("with %s: plain call %.1f allocations, two-round call %.1f: the extra round costs %.1f (%.1fx the plain call)", c.name, plain, c.two, extra, extra/plain)
		if extra > 3*plain {
			t.Errorf("with %s the extra round allocates %.1f times, more than 3x the %.1f of a plain call", c.name, extra, plain)
		}
	}
}
