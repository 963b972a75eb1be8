package client

import (
	"context"
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

// TestMiddlewareNoneAllocBudget: a client without middleware pays nothing
// for the hooks: marking a round, answering an input request and running
// a call through them allocate no more than what they wrap.
func TestMiddlewareNoneAllocBudget(t *testing.T) {
	if raceEnabledInternal {
		t.Skip("allocation counts are meaningless under -race; make test checks the budget in a separate run without it")
	}
	c := New(mcp.Implementation{Name: "t", Version: "1"}, &Options{
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) { return answer, nil },
	})
	s := &Session{client: c}
	ctx := context.Background()
	call := &Call{Method: mcp.MethodCallTool, Name: "x"}
	q := mcp.NewElicitFormRequest("?", mcp.ElicitRequestedSchema{})
	for name, f := range map[string]func(){
		"withRound": func() {
			if s.withRound(ctx, call, 1) != ctx {
				t.Fatal("withRound wrapped the context without middleware")
			}
		},
		"input": func() {
			if _, err := s.input(ctx, nil, "k", q); err != nil {
				t.Fatal(err)
			}
		},
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s without middleware allocates %.1f times, want 0", name, n)
		}
	}
	// run's hook: what it adds is measured against runRounds alone, on a
	// call that fails at once (an unknown method) before sending anything.
	bad := &Call{Method: "nope"}
	direct := testing.AllocsPerRun(100, func() { _, _ = s.runRounds(ctx, bad) })
	hooked := testing.AllocsPerRun(100, func() { _, _ = s.run(ctx, bad) })
	if hooked != direct {
		t.Errorf("run without middleware allocates %.1f times, runRounds %.1f: the hook costs %.1f", hooked, direct, hooked-direct)
	}
	// Middleware that hands back the handler it was given (a tracing
	// middleware with no provider) is no middleware at all.
	if buildChain([]Middleware{func(next Handler) Handler { return next }}) != nil {
		t.Error("a chain of pass-through middleware was kept")
	}
	// With one that wraps, the hooks do allocate (the Request): the budget test
	// would catch a hook that skipped the chain.
	c.chain = buildChain([]Middleware{func(next Handler) Handler {
		return func(ctx context.Context, req *Request) (any, error) { return next(ctx, req) }
	}})
	if n := testing.AllocsPerRun(100, func() { _, _ = s.input(ctx, nil, "k", q) }); n == 0 {
		t.Error("input with middleware allocated nothing: is the chain called?")
	}
}

var answer = &mcp.ElicitResult{Action: mcp.ActionAccept}
