package requeststate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
)

// TestUseOrderCannotChangeWhatMiddlewareSees (design record 021): the
// boundary is a step of the server's dispatch outside every middleware, so
// a middleware added before Protect and one added after see the same
// thing: the plaintext state, never the token, and the same proof of what
// the token's round asked. With the boundary as middleware, the first saw
// the sealed token.
func TestUseOrderCannotChangeWhatMiddlewareSees(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "svc", Version: "1"}, nil)
	var mu sync.Mutex
	seen := map[string][]string{}
	watch := func(name string) server.Middleware {
		return func(next server.Handler) server.Handler {
			return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
				p := req.Params.(*mcp.CallToolRequestParams)
				state, present := p.LookupRequestState()
				asked := req.StateProof() != nil && req.StateProof().Asked("confirm", confirmQ)
				mu.Lock()
				seen[name] = append(seen[name], fmt.Sprintf("state=%q present=%v asked=%v", state, present, asked))
				mu.Unlock()
				res, err := next(ctx, req)
				if ir, ok := res.(*mcp.InputRequiredResult); ok && !strings.HasPrefix(ir.RequestState, "plain-") {
					t.Errorf("%s saw a sealed outgoing state %q", name, ir.RequestState)
				}
				return res, err
			}
		}
	}
	s.Use(watch("before"))
	requeststate.MustProtect(s, nil)
	s.Use(watch("after"))
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if p.RequestState == "" {
			return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"confirm": confirmQ}, RequestState: "plain-1"}, nil
		}
		return mcp.TextResult("done"), nil
	})
	ctx := context.Background()
	token := handleState(t, s, ctx, "")
	if strings.HasPrefix(token, "plain-") {
		t.Fatalf("the client got the plaintext state %q", token)
	}
	if err := handleErr(s, ctx, token); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{`state="" present=false asked=false`, `state="plain-1" present=true asked=true`}
	for _, name := range []string{"before", "after"} {
		if fmt.Sprint(seen[name]) != fmt.Sprint(want) {
			t.Errorf("middleware added %s Protect saw %q, want %q", name, seen[name], want)
		}
	}
}

// TestProtectTwiceRefused: a server takes one boundary; a second would
// seal tokens inside tokens.
func TestProtectTwiceRefused(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "svc", Version: "1"}, nil)
	requeststate.MustProtect(s, nil)
	if err := requeststate.Protect(s, nil); !errors.Is(err, server.ErrStateSealerSet) {
		t.Fatalf("second Protect = %v, want ErrStateSealerSet", err)
	}
}

// TestPrincipalAskedOncePerRound: a middle round verifies the echoed token
// and seals the next with the identity it verified, so the Principal hook
// (which may cost a call to an identity provider) runs once per round,
// not twice.
func TestPrincipalAskedOncePerRound(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "svc", Version: "1"}, nil)
	calls := 0
	p := requeststate.ProcessLocal()
	p.Logger = discard()
	p.Principal = func(ctx context.Context, req *server.Request) (string, error) {
		calls++
		return "alice", nil
	}
	requeststate.MustProtect(s, p)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return &mcp.InputRequiredResult{RequestState: "round " + p.RequestState}, nil
	})
	ctx := context.Background()
	token := handleState(t, s, ctx, "")
	for round := 2; round <= 3; round++ {
		token = handleState(t, s, ctx, token)
	}
	if calls != 3 {
		t.Fatalf("the Principal hook ran %d times in three rounds, want 3", calls)
	}
}

// TestRewriteOnAnsweredRoundBindsWhatTheClientSent: a round that echoed
// state is verified against the params the client sent, and the state it
// issues is sealed with the same request digest: so a middleware or a
// handler that rewrites the params on such a round (fills a default into
// the arguments, renames the tool) leaves the next state bound to what
// the client sent, and the client's next round, sending the same params
// again, is accepted. Three rounds, so that the rewrite happens on a
// round that both opens and seals.
func TestRewriteOnAnsweredRoundBindsWhatTheClientSent(t *testing.T) {
	for _, where := range []string{"middleware", "handler"} {
		t.Run(where, func(t *testing.T) {
			s := server.New(mcp.Implementation{Name: "svc", Version: "1"}, nil)
			p := requeststate.ProcessLocal()
			p.Logger = discard()
			requeststate.MustProtect(s, p)
			rewrite := func(p *mcp.CallToolRequestParams) {
				if _, answered := p.LookupRequestState(); answered {
					p.Arguments = json.RawMessage(`{"city":"Paris","units":"metric"}`)
					p.Name = "t-normalised"
				}
			}
			if where == "middleware" {
				s.Use(func(next server.Handler) server.Handler {
					return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
						rewrite(req.Params.(*mcp.CallToolRequestParams))
						return next(ctx, req)
					}
				})
			}
			s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
				st, _ := p.LookupRequestState()
				if where == "handler" {
					rewrite(p)
				}
				if st == "round 2" {
					return mcp.TextResult("done"), nil
				}
				next := "round 1"
				if st == "round 1" {
					next = "round 2"
				}
				return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"confirm": confirmQ}, RequestState: next}, nil
			})
			ctx := context.Background()
			call := func(state string) (any, error) {
				params := `{"name":"t","arguments":{"city":"paris"}`
				if state != "" {
					b, _ := json.Marshal(state)
					params += `,"requestState":` + string(b)
				}
				return s.Handle(ctx, rpcRequest(mcp.MethodCallTool, params+"}"), nil)
			}
			state := ""
			for round := 1; round <= 3; round++ {
				res, err := call(state)
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				ir, ok := res.(*mcp.InputRequiredResult)
				if round == 3 {
					if ok {
						t.Fatalf("round 3: input_required again")
					}
					break
				}
				if !ok {
					t.Fatalf("round %d: %T, want input_required", round, res)
				}
				state = ir.RequestState
			}
		})
	}
}
