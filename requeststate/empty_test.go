package requeststate_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
)

// "requestState":"" is a state, present like any other (design record
// 015). No token is empty, so a sealed server refuses it; a handler may
// still seal an empty plaintext, and gets it back as present.

// withEmptyState returns c carrying "requestState":"" and an answer under
// each key.
func (c call) withEmptyState(keys ...string) call {
	c = c.with("", keys...) // copies the params
	c.params["requestState"] = ""
	return c
}

// TestEmptyStateIsVerified: an empty requestState reaches the codec like
// any other and is refused with the fixed error, on every carrier, with
// the codec's reason in the log; no handler runs, and its answers go
// nowhere.
func TestEmptyStateIsVerified(t *testing.T) {
	for _, codec := range []struct {
		name   string
		policy func() *requeststate.Policy
		reason string
	}{
		{"built-in codec", func() *requeststate.Policy { return &requeststate.Policy{Keys: [][]byte{key(1)}} }, "malformed"},
		{"custom codec", func() *requeststate.Policy { return &requeststate.Policy{Codec: signingCodec{key: key(9)}} }, "hs1: malformed token"},
		{"process-local default", requeststate.ProcessLocal, "malformed"},
	} {
		for _, c := range []call{tool("ask", map[string]any{"n": 1}), prompt("ask", map[string]string{"a": "b"}), resource("ask://one")} {
			t.Run(codec.name+"/"+c.method, func(t *testing.T) {
				logger, logs := newLogger()
				p := codec.policy()
				p.Logger = logger
				f := newFixture(t, "svc", true, p)
				if got := f.raw(c.withEmptyState("confirm")); got != wantRejected {
					t.Fatalf("an empty requestState: %s, want %s", got, wantRejected)
				}
				if n := f.runs.Load(); n != 0 {
					t.Errorf("a handler ran %d times", n)
				}
				warns := logs.lines("WARN")
				if len(warns) != 1 || warns[0]["reason"] != codec.reason || warns[0]["method"] != c.method {
					t.Errorf("logged %v, want one Warn line with reason %q and method %s", warns, codec.reason, c.method)
				}
				// Absent is still no state: a first round.
				if st := f.begin(c); st == "" {
					t.Error("a first round without state")
				}
			})
		}
	}
}

// emptyStateTool is a tool whose first round asks "confirm" with an empty
// plaintext state, and whose retry reports what it got.
func emptyStateTool(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	state, present := p.LookupRequestState()
	if !present {
		return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"confirm": confirmQ}, ForceRequestState: true}, nil
	}
	return mcp.TextResult(fmt.Sprintf("state=%q present=%v answers=%d asked=%v",
		state, present, len(p.InputResponses), requeststate.Asked(ctx, "confirm", confirmQ))), nil
}

// TestEmptyPlaintextIsSealed: a handler that returns an empty state has it
// sealed like any other (a token, bound and pinned), and its retry sees
// the empty plaintext as present. Without a boundary, "" crosses the wire
// as the handler wrote it and comes back present.
func TestEmptyPlaintextIsSealed(t *testing.T) {
	c := tool("empty", map[string]any{"n": 1})

	f := newFixture(t, "svc", true, &requeststate.Policy{Keys: [][]byte{key(1)}})
	f.s.HandleCallTool(emptyStateTool)
	st := f.begin(c)
	if !strings.HasPrefix(st, "rs1.") {
		t.Fatalf("an empty plaintext went out as %q, not sealed", st)
	}
	if r := f.do(c.with(st, "confirm")); r.text() != `state="" present=true answers=1 asked=true` {
		t.Fatalf("retry: %q (%+v)", r.text(), r)
	}
	// It is bound like any other: not to other arguments.
	if got := f.raw(tool("empty", map[string]any{"n": 2}).with(st, "confirm")); got != wantRejected {
		t.Errorf("replayed onto other arguments: %s", got)
	}

	bare := newFixture(t, "svc", false, nil)
	bare.s.HandleCallTool(emptyStateTool)
	r := bare.do(c)
	if st, ok := r.Result["requestState"].(string); !ok || st != "" || r.Result["resultType"] != "input_required" {
		t.Fatalf("without a boundary: %+v, want an input_required result carrying requestState \"\"", r)
	}
	if r := bare.do(c.withEmptyState("confirm")); r.text() != `state="" present=true answers=1 asked=false` {
		t.Fatalf("without a boundary, retry: %q (%+v)", r.text(), r)
	}
}
