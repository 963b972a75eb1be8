package mcpserver_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

// Tests that pin edges of the dependency engine the mutation run found
// unguarded (docs/testing.md, scripts/mutations.txt: MS05, MS10, MS11,
// MS24).

type survArgs struct {
	Name string `json:"name"`
}

type survStep struct {
	Value string `json:"value"`
}

// legacySession connects a 2025-11-25 client, whose questions the engine
// asks over the back-channel within the one call, answering with e.
func legacySession(t *testing.T, s *mcpserver.Server, e *elicitor) *client.Session {
	t.Helper()
	return connect(t, s, &client.Options{ProtocolVersion: mcp.Version20251125, Elicit: e.elicit})
}

// chainTool registers a tool whose n questions each depend on the one
// before, so that a back-channel call asks them one per round: n rounds.
func chainTool(t *testing.T, s *mcpserver.Server, name string, n int) {
	t.Helper()
	var prev mcpserver.Dependency
	var last *mcpserver.ElicitQuestion[survStep]
	for i := range n {
		var after []mcpserver.Dependency
		if prev != nil {
			after = append(after, prev)
		}
		msg := fmt.Sprintf("step %d", i)
		last = mcpserver.Elicit[survStep](fmt.Sprintf("q%03d", i), func(any, *mcpserver.Call) string { return msg }, after...)
		prev = last
	}
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: name}, func(ctx context.Context, c *mcpserver.Call, a survArgs) (string, error) {
		return "done after " + last.Get(c).Value, nil
	}, last))
}

// TestEngineRoundLimitBoundary: over the back-channel one request runs at
// most 64 rounds of questions. A chain of 64 dependent questions (64
// rounds) completes; a chain of 65 fails once 64 rounds are spent, before
// the 65th question is sent. (MS10: the limit off by one; MS11: the limit
// raised.)
func TestEngineRoundLimitBoundary(t *testing.T) {
	s, _ := newServer(t, nil)
	chainTool(t, s, "chain64", 64)
	chainTool(t, s, "chain65", 65)
	e := &elicitor{answer: func(message string) *mcp.ElicitResult {
		return accept(map[string]any{"value": message})
	}}
	sess := legacySession(t, s, e)

	res, err := sess.CallTool(context.Background(), "chain64", map[string]any{"name": "x"})
	mustOK(t, err)
	wantText(t, res, false, "done after step 63")
	if n := e.count(); n != 64 {
		t.Errorf("chain of 64: the client was asked %d times, want 64", n)
	}

	res, err = sess.CallTool(context.Background(), "chain65", map[string]any{"name": "x"})
	if err == nil {
		t.Fatalf("a chain of 65 questions completed within one request: %+v", res)
	}
	wantRPCError(t, err, jsonrpc.CodeInternalError, "")
	if n := e.count() - 64; n != 64 {
		t.Errorf("chain of 65: the client was asked %d times, want 64 (the 65th round is refused before asking)", n)
	}
	if e.times("step 64") != 0 {
		t.Error("the 65th question was sent")
	}
}

// TestEngineRoundLimitNeverMatchingQuestion: a question whose message
// renders differently every time never matches its answer, so the
// back-channel engine asks it again each round and gives up after exactly
// 64 rounds (Elicit's documentation: "asked again until the ... round
// limit ends the call"). The error names the limit.
func TestEngineRoundLimitNeverMatchingQuestion(t *testing.T) {
	s, logs := newServer(t, nil)
	var renders atomic.Int64
	q := mcpserver.Elicit[survStep]("drift", func(any, *mcpserver.Call) string {
		return fmt.Sprintf("drift %d", renders.Add(1))
	})
	ran := false
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "drift"}, func(ctx context.Context, c *mcpserver.Call, a survArgs) (string, error) {
		ran = true
		return q.Get(c).Value, nil
	}, q))
	e := &elicitor{answer: func(message string) *mcp.ElicitResult {
		return accept(map[string]any{"value": message})
	}}
	sess := legacySession(t, s, e)
	res, err := sess.CallTool(context.Background(), "drift", map[string]any{"name": "x"})
	if err == nil {
		t.Fatalf("a question that never renders the same completed: %+v", res)
	}
	if ran {
		t.Error("the body ran on an answer to another wording")
	}
	if n := e.count(); n != 64 {
		t.Errorf("the client was asked %d times, want 64", n)
	}
	// The limit is hit on the render after the 64th answer.
	if n := renders.Load(); n != 65 {
		t.Errorf("the question was rendered %d times, want 65", n)
	}
	// The client hears only -32603; the server's log names the limit.
	wantRPCError(t, err, jsonrpc.CodeInternalError, "")
	wantContains(t, "log", logs.String(), `tool \"drift\": questions still open after 64 rounds`)
}

// TestBackChannelRewordedQuestionAskedAgain: an answer that came over the
// back-channel counts only for the wording it answered. A question whose
// message changes between the round that asked it and the next render is
// asked again in the new wording, and the body sees the answer to that
// one, never the stale answer (the back-channel twin of the requestState
// digest check). (MS05: the digest ignored.)
func TestBackChannelRewordedQuestionAskedAgain(t *testing.T) {
	s, _ := newServer(t, nil)
	var renders atomic.Int64
	q := mcpserver.Elicit[survStep]("limit", func(a survArgs, _ *mcpserver.Call) string {
		if renders.Add(1) == 1 {
			return "Old limit for " + a.Name + "?"
		}
		return "New limit for " + a.Name + "?"
	})
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "reword"}, func(ctx context.Context, c *mcpserver.Call, a survArgs) (string, error) {
		return "limit " + q.Get(c).Value, nil
	}, q))
	e := &elicitor{answer: func(message string) *mcp.ElicitResult {
		if strings.HasPrefix(message, "Old") {
			return accept(map[string]any{"value": "stale"})
		}
		return accept(map[string]any{"value": "fresh"})
	}}
	sess := legacySession(t, s, e)
	res, err := sess.CallTool(context.Background(), "reword", map[string]any{"name": "db"})
	mustOK(t, err)
	wantText(t, res, false, "limit fresh")
	if e.times("Old limit for db?") != 1 || e.times("New limit for db?") != 1 || e.count() != 2 {
		t.Errorf("asked %v, want the old wording once, then the new one once", e.asked)
	}
}

// TestZeroValueDependencyRefused: depending on a zero-value question (a
// Dependency whose question was never made by Elicit, Sample or
// ListRoots) is a construction error, reported when the dependent
// question is registered; nothing is registered. (MS24: only a nil
// interface refused.)
func TestZeroValueDependencyRefused(t *testing.T) {
	zeros := map[string]mcpserver.Dependency{
		"elicit": &mcpserver.ElicitQuestion[survStep]{},
		"sample": &mcpserver.SampleQuestion{},
		"roots":  &mcpserver.RootsQuestion{},
	}
	for name, zero := range zeros {
		t.Run(name, func(t *testing.T) {
			s, _ := newServer(t, nil)
			mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "other"}, func(ctx context.Context, c *mcpserver.Call, a survArgs) (string, error) {
				return "ok", nil
			}))
			q := mcpserver.Elicit[survStep]("next", func(any, *mcpserver.Call) string { return "?" }, zero)
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("registration panicked: %v", r)
					}
				}()
				err = mcpserver.AddTool(s, &mcp.Tool{Name: "zero"}, func(ctx context.Context, c *mcpserver.Call, a survArgs) (string, error) {
					return "ran", nil
				}, q)
			}()
			if err == nil {
				t.Fatal("a question depending on a zero-value question registered")
			}
			wantContains(t, "error", err.Error(), `tool "zero"`, `question "next" depends on a nil question`)
			res, err := rawRequest(t, s, "tools/list", nil)
			mustOK(t, err)
			if l, ok := res.(*mcp.ListToolsResult); !ok || len(l.Tools) != 1 || l.Tools[0].Name != "other" {
				t.Errorf("tools/list after the refused registration = %+v", res)
			}
		})
	}
}
