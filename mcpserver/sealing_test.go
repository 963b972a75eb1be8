package mcpserver_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
)

// Sealing is on for every server: state one server issued is accepted by
// a server holding the same keys and name, and by no other.

func sharedKeys() [][]byte {
	k := sha256.Sum256([]byte("mcpserver shared test key"))
	return [][]byte{k[:]}
}

// provisionServer returns a server named name with policy, serving the
// provision tool.
func provisionServer(t *testing.T, name string, policy *requeststate.Policy) *mcpserver.Server {
	t.Helper()
	s, err := mcpserver.New(mcp.Implementation{Name: name, Version: "1"}, &mcpserver.Options{RequestState: policy, Logger: quietLogger()})
	mustOK(t, err)
	addProvision(t, s, regionQuestion())
	return s
}

func TestSealingSharedKeys(t *testing.T) {
	a := provisionServer(t, "fleet", &requeststate.Policy{Keys: sharedKeys()})
	b := provisionServer(t, "fleet", &requeststate.Policy{Keys: sharedKeys()})
	sessA, sessB := connect(t, a, manual), connect(t, b, manual)
	answer := responses(t, map[string]mcp.InputResponse{"region": accept(map[string]any{"region": "eu"})})

	// Begun on one instance, finished on the other, both ways.
	p := begin(t, sessA, provisionCall(t, "orders"))
	wantText(t, finish(t, sessB, p, answer), false, "Provisioned orders in eu.")
	p = begin(t, sessB, provisionCall(t, "users"))
	wantText(t, finish(t, sessA, p, answer), false, "Provisioned users in eu.")
}

func TestSealingRefusesOtherServers(t *testing.T) {
	answer := responses(t, map[string]mcp.InputResponse{"region": accept(map[string]any{"region": "eu"})})
	for _, tc := range []struct {
		name           string
		issuer, holder *mcpserver.Server
	}{
		{"default process-local keys",
			provisionServer(t, "fleet", nil), provisionServer(t, "fleet", nil)},
		{"other service, same keys",
			provisionServer(t, "fleet", &requeststate.Policy{Keys: sharedKeys()}),
			provisionServer(t, "billing", &requeststate.Policy{Keys: sharedKeys()})},
		{"other keys",
			provisionServer(t, "fleet", &requeststate.Policy{Keys: sharedKeys()}),
			provisionServer(t, "fleet", &requeststate.Policy{Keys: [][]byte{[]byte("another key, 32 bytes or longer!")}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			issuer, holder := connect(t, tc.issuer, manual), connect(t, tc.holder, manual)
			p := begin(t, issuer, provisionCall(t, "orders"))
			_, _, err := holder.Continue(context.Background(), p, answer)
			wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Invalid or expired requestState")
			// The issuer itself still accepts it.
			wantText(t, finish(t, issuer, p, answer), false, "Provisioned orders in eu.")
		})
	}
}

func TestSealingPolicyErrors(t *testing.T) {
	_, err := mcpserver.New(mcp.Implementation{Version: "1"}, &mcpserver.Options{RequestState: &requeststate.Policy{Keys: sharedKeys()}})
	if err == nil {
		t.Fatal("an explicit policy on a server without a name was accepted")
	}
	wantContains(t, "error", err.Error(), "mcpserver: ", "no name")

	_, err = mcpserver.New(serverInfo, &mcpserver.Options{RequestState: &requeststate.Policy{Keys: [][]byte{[]byte("short")}}})
	if err == nil {
		t.Error("a short key was accepted")
	}

	// An explicit audience stands in for the name.
	_, err = mcpserver.New(mcp.Implementation{Version: "1"}, &mcpserver.Options{RequestState: &requeststate.Policy{Keys: sharedKeys(), Audience: "fleet"}})
	mustOK(t, err)
	// The default policy needs no name.
	s, err := mcpserver.New(mcp.Implementation{Version: "1"}, &mcpserver.Options{Logger: quietLogger()})
	mustOK(t, err)
	addProvision(t, s, regionQuestion())
	sess := connect(t, s, manual)
	p := begin(t, sess, provisionCall(t, "orders"))
	wantText(t, finish(t, sess, p, responses(t, map[string]mcp.InputResponse{"region": accept(map[string]any{"region": "eu"})})), false, "Provisioned orders in eu.")

	func() {
		defer func() {
			v := recover()
			if v == nil || !strings.Contains(v.(error).Error(), "no name") {
				t.Errorf("MustNew with an unusable policy: recovered %v", v)
			}
		}()
		mcpserver.MustNew(mcp.Implementation{}, &mcpserver.Options{RequestState: &requeststate.Policy{Keys: sharedKeys()}})
	}()
}

// Every refused token is logged with its reason; the wire says only the
// fixed message.
func TestSealingLogsReason(t *testing.T) {
	s, logs := newServer(t, nil)
	addProvision(t, s, regionQuestion())
	sess := connect(t, s, manual)
	p := begin(t, sess, provisionCall(t, "orders"))
	other := *p
	other.Call = *provisionCall(t, "users")
	_, _, err := sess.Continue(context.Background(), &other, nil)
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Invalid or expired requestState")
	wantContains(t, "log", logs.String(), "rejected requestState", "bound to another request")
}

// testClock is a clock that moves only when told to.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestSealingTTLPerRound (S32): a tool with three dependent questions
// re-seals its state every round, so each answer may take just under the
// TTL, the flow as long as it likes; a round that takes the whole TTL is
// refused with the fixed error.
func TestSealingTTLPerRound(t *testing.T) {
	const ttl = time.Minute
	type envField struct {
		Env string `json:"env"`
	}
	region := regionQuestion()
	env := mcpserver.Elicit[envField]("env", func(a dbArgs, c *mcpserver.Call) string {
		return "Which environment is " + a.Name + " in " + region.Get(c).Region + " for?"
	}, region)
	confirm := mcpserver.Elicit[yesNo]("confirm", func(a dbArgs, c *mcpserver.Call) string {
		return fmt.Sprintf("Create %s in %s for %s?", a.Name, region.Get(c).Region, env.Get(c).Env)
	}, env)
	answers := []mcp.InputResponses{
		responses(t, map[string]mcp.InputResponse{"region": accept(map[string]any{"region": "eu"})}),
		responses(t, map[string]mcp.InputResponse{"env": accept(map[string]any{"env": "prod"})}),
		responses(t, map[string]mcp.InputResponse{"confirm": accept(map[string]any{"ok": true})}),
	}
	for slow := 0; slow <= 3; slow++ { // the round that takes the whole TTL; 0: none
		t.Run(fmt.Sprintf("slow round %d", slow), func(t *testing.T) {
			clk := &testClock{now: time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)}
			s, logs := newServer(t, &mcpserver.Options{RequestState: &requeststate.Policy{Keys: sharedKeys(), TTL: ttl, Now: clk.Now}})
			mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "provision"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
				return fmt.Sprintf("%s %s %s %v", a.Name, region.Get(c).Region, env.Get(c).Env, confirm.Get(c).OK), nil
			}, confirm))
			sess := connect(t, s, manual)
			start := clk.Now()
			p := begin(t, sess, provisionCall(t, "orders"))
			for round := 1; round <= 3; round++ {
				wantKeys(t, p.InputRequests, []string{"region", "env", "confirm"}[round-1])
				if round == slow {
					clk.Advance(ttl)
					_, _, err := sess.Continue(context.Background(), p, answers[round-1])
					wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Invalid or expired requestState")
					wantContains(t, "log", logs.String(), "rejected requestState", "reason=expired")
					return
				}
				clk.Advance(ttl - time.Millisecond)
				if round == 3 {
					wantText(t, finish(t, sess, p, answers[2]), false, "orders eu prod true")
					break
				}
				p = again(t, sess, p, answers[round-1])
			}
			if took := clk.Now().Sub(start); took <= 2*ttl {
				t.Fatalf("the flow took %v; the test means one far longer than the TTL (%v)", took, ttl)
			}
		})
	}
}

// TestRewriteOnAnsweredRoundKeepsTheChain: a middleware that normalises a
// call's arguments in place on every round that echoes state (a round the
// client answered) rewrites nothing the next state is bound to: each
// round's state is sealed with the digest of what the client sent, which
// verified it, so a chain of three questions, four requests, completes,
// and the body sees the normalised arguments. (A rewrite on the first
// round binds that round's state to what the middleware wrote, and the
// client's second round is refused: docs/rough_edges.md.)
func TestRewriteOnAnsweredRoundKeepsTheChain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	a := mcpserver.Elicit[yesNo]("a", func(_ dbArgs, _ *mcpserver.Call) string { return "A?" })
	b := mcpserver.Elicit[yesNo]("b", func(_ dbArgs, _ *mcpserver.Call) string { return "B?" }, a)
	c := mcpserver.Elicit[yesNo]("c", func(_ dbArgs, _ *mcpserver.Call) string { return "C?" }, b)
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "chain"}, func(ctx context.Context, call *mcpserver.Call, args dbArgs) (string, error) {
		return fmt.Sprint(args.Name, " ", a.Get(call).OK, b.Get(call).OK, c.Get(call).OK), nil
	}, a, b, c))
	var rewrites atomic.Int32
	s.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			if p, ok := req.Params.(*mcp.CallToolRequestParams); ok {
				if _, answered := p.LookupRequestState(); answered {
					p.Arguments = json.RawMessage(strings.ToLower(string(p.Arguments)))
					rewrites.Add(1)
				}
			}
			return next(ctx, req)
		}
	})
	el := &elicitor{answer: func(m string) *mcp.ElicitResult { return accept(map[string]any{"ok": m != "B?"}) }}
	sess := connect(t, s, &client.Options{Elicit: el.elicit})
	res, err := sess.CallTool(ctx, "chain", map[string]any{"name": "Orders"})
	mustOK(t, err)
	wantText(t, res, false, "orders true false true")
	if n := rewrites.Load(); n != 3 {
		t.Errorf("the middleware rewrote %d rounds, want 3", n)
	}
}
