package mcptest_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/mcptest"
)

// TestGenerationSpoken: the session speaks the generation the test pins,
// against a server that serves both: a legacy session opens with
// initialize, a 2026-07-28 one with server/discover.
func TestGenerationSpoken(t *testing.T) {
	for _, v := range mcptest.Generations() {
		t.Run(string(v), func(t *testing.T) {
			sess := mcptest.Connect(t, newFixture(t), &mcptest.Options{Version: v})
			if got := sess.ProtocolVersion(); got != v {
				t.Errorf("the session speaks %s, want %s", got, v)
			}
			first, _, _ := strings.Cut(string(sess.Transcript()), "\n")
			want := `"method":"server/discover"`
			if v.Era() == mcp.EraLegacy {
				want = `"method":"initialize"`
			}
			if !strings.HasPrefix(first, "client ") || !strings.Contains(first, want) {
				t.Errorf("the first message is %s, want the client's %s", first, want)
			}
		})
	}
	if g := mcptest.Generations(); len(g) != 2 || g[0].Era() != mcp.EraModern || g[1].Era() != mcp.EraLegacy {
		t.Errorf("Generations() = %v, want one modern then one legacy", g)
	}
}

// TestDefaultVersion: without a version the session speaks the newest.
func TestDefaultVersion(t *testing.T) {
	sess := mcptest.Connect(t, newFixture(t), nil)
	if got := sess.ProtocolVersion(); got != mcp.LatestVersion {
		t.Errorf("the session speaks %s, want %s", got, mcp.LatestVersion)
	}
}

// TestConnectFails: a server that does not serve the pinned generation
// fails the test at Connect, naming the version.
func TestConnectFails(t *testing.T) {
	f := runFake(t, func(t testing.TB) {
		s := newAsker() // serves both; refuse 2026-07-28 below
		mcptest.Connect(t, s, &mcptest.Options{Version: "1999-01-01"})
		t.Errorf("Connect returned")
	})
	f.only(t, "mcptest: connecting with protocol version 1999-01-01")
}

// TestScriptByKey: one script answers a tool's question by its key in
// both generations; on a legacy session the key is learnt from the
// server's side of the pipe, and what the client's callbacks and the
// caller's middleware see carries nothing of the kit's.
func TestScriptByKey(t *testing.T) {
	for _, v := range mcptest.Generations() {
		t.Run(string(v), func(t *testing.T) {
			sess := mcptest.Connect(t, newFixture(t), &mcptest.Options{
				Version: v,
				Script:  mcptest.Script{"region": mcptest.Accept(regionForm{Region: "eu-west-1"})},
			})
			res := sess.Call("provision", provisionArgs{Name: "orders"})
			if got := mcptest.Text(t, res); got != "Provisioned 'orders' in eu-west-1." {
				t.Errorf("provision said %q", got)
			}
			qs := sess.Questions()
			if len(qs) != 1 || qs[0].Key != "region" || qs[0].Method() != mcp.MethodElicit || qs[0].Message() != "Which region should orders live in?" {
				t.Fatalf("questions %v", qs)
			}
			form := qs[0].Request.(*mcp.ElicitRequest).Params.(*mcp.ElicitRequestFormParams)
			if form.Meta != nil {
				t.Errorf("the question kept a _meta: %v", form.Meta)
			}
			if strings.Contains(string(sess.Transcript()), "questionKey") {
				t.Errorf("the kit's key reached the transcript:\n%s", sess.Transcript())
			}
		})
	}
}

// TestKeysTellQuestionsApart: two questions of the same form asked in one
// round (at once over a legacy back-channel) get each its own answer, by
// key, in both generations.
func TestKeysTellQuestionsApart(t *testing.T) {
	for _, v := range mcptest.Generations() {
		t.Run(string(v), func(t *testing.T) {
			sess := mcptest.Connect(t, newFixture(t), &mcptest.Options{
				Version: v,
				Script: mcptest.Script{
					"primary": mcptest.Accept(map[string]any{"region": "eu-west-1"}),
					"replica": mcptest.Accept(map[string]any{"region": "us-east-2"}),
				},
			})
			for range 3 { // the back-channel's questions race: more than once
				res := sess.Call("replicate", provisionArgs{Name: "orders"})
				if got := mcptest.Text(t, res); got != "orders: written in eu-west-1, copied to us-east-2." {
					t.Fatalf("replicate said %q", got)
				}
			}
		})
	}
}

// TestDeclineAndCancel: a decline reaches the server as a decline, a
// cancel as a cancel, in both generations; a question that does not allow
// them ends its call with a tool error.
func TestDeclineAndCancel(t *testing.T) {
	for _, v := range mcptest.Generations() {
		t.Run(string(v), func(t *testing.T) {
			for _, c := range []struct {
				answer mcptest.Answer
				want   string
			}{
				{mcptest.Decline(), "decline"},
				{mcptest.Cancel(), "cancel"},
				{mcptest.Accept(confirmForm{OK: true}), "accept"},
			} {
				sess := mcptest.Connect(t, newFixture(t), &mcptest.Options{Version: v, Script: mcptest.Script{"confirm": c.answer}})
				if got := mcptest.Text(t, sess.Call("confirm", nil)); got != c.want {
					t.Errorf("the server saw %q, want %q", got, c.want)
				}
			}
			sess := mcptest.Connect(t, newFixture(t), &mcptest.Options{Version: v, Script: mcptest.Script{"region": mcptest.Decline()}})
			if msg := mcptest.ToolError(t, sess.Call("provision", provisionArgs{Name: "orders"})); !strings.Contains(msg, "region") || !strings.Contains(msg, "decline") {
				t.Errorf("a declined region: %q", msg)
			}
		})
	}
}

// TestSampleAndRoots: a sampling reply and a list of roots, by key, in
// both generations.
func TestSampleAndRoots(t *testing.T) {
	for _, v := range mcptest.Generations() {
		t.Run(string(v), func(t *testing.T) {
			sess := mcptest.Connect(t, newFixture(t), &mcptest.Options{Version: v, Script: mcptest.Script{
				"summary": mcptest.Reply("Three tables."),
				"project": mcptest.Roots(mcp.Root{URI: "file:///src/app"}, mcp.Root{URI: "file:///src/lib"}),
			}})
			if got := mcptest.Text(t, sess.Call("summarise", nil)); got != "Three tables." {
				t.Errorf("summarise said %q", got)
			}
			if got := mcptest.Text(t, sess.Call("where", nil)); got != "file:///src/app file:///src/lib" {
				t.Errorf("where said %q", got)
			}
		})
	}
}

// TestUnexpectedQuestion: a question the script does not answer is
// refused (the call fails, under 2026-07-28 with an error wrapping
// ErrUnexpectedQuestion), and the test fails when it ends, naming the
// question; the scripted answer nobody asked for is not reported on top.
func TestUnexpectedQuestion(t *testing.T) {
	for _, v := range mcptest.Generations() {
		t.Run(string(v), func(t *testing.T) {
			var callErr error
			var res *mcp.CallToolResult
			f := runFake(t, func(ft testing.TB) {
				sess := mcptest.Connect(ft, newFixture(t), &mcptest.Options{Version: v, Script: mcptest.Script{"zone": mcptest.Accept(nil)}})
				res, callErr = sess.CallTool(context.Background(), "provision", provisionArgs{Name: "orders"})
			})
			f.only(t, `mcptest: the server asked "region" (elicitation/create "Which region should orders live in?"), which the script does not answer`)
			if v.Era() == mcp.EraModern {
				var cb *client.CallbackError
				if !errors.Is(callErr, mcptest.ErrUnexpectedQuestion) || !errors.As(callErr, &cb) || cb.Key != "region" {
					t.Errorf("the call's error: %v, want a callback error wrapping ErrUnexpectedQuestion", callErr)
				}
			} else if callErr == nil && !res.IsError {
				t.Errorf("the call succeeded: %+v", res)
			}
		})
	}
}

// TestUnusedAnswer: a scripted answer no question asked for fails the
// test when it ends, naming it and what was asked; the answers used are
// not reported.
func TestUnusedAnswer(t *testing.T) {
	for _, v := range mcptest.Generations() {
		t.Run(string(v), func(t *testing.T) {
			f := runFake(t, func(ft testing.TB) {
				sess := mcptest.Connect(ft, newFixture(t), &mcptest.Options{Version: v, Script: mcptest.Script{
					"region": mcptest.Accept(regionForm{Region: "eu-west-1"}),
					"zone":   mcptest.Accept(map[string]any{"zone": "b"}),
				}})
				sess.Call("provision", provisionArgs{Name: "orders"})
			})
			f.only(t, `mcptest: the script answers "zone", but the server never asked it (the questions asked: "region")`)
		})
	}
	t.Run("nothing asked", func(t *testing.T) {
		f := runFake(t, func(ft testing.TB) {
			mcptest.Connect(ft, newFixture(t), &mcptest.Options{Script: mcptest.Script{"zone": mcptest.Decline()}})
		})
		f.only(t, `"zone", but the server never asked it (no question was asked)`)
	})
}

// TestUnusedNotReportedAfterFailure: a test that failed already hears
// nothing about the answers it never got to use.
func TestUnusedNotReportedAfterFailure(t *testing.T) {
	f := runFake(t, func(ft testing.TB) {
		mcptest.Connect(ft, newFixture(t), &mcptest.Options{Script: mcptest.Script{"zone": mcptest.Decline()}})
		ft.Fatalf("the test's own failure")
	})
	f.only(t, "the test's own failure")
}

// TestScriptMistakes: an answer of the wrong kind, content that is not an
// object of fields, and the zero Answer fail the test, naming the
// question and the mistake.
func TestScriptMistakes(t *testing.T) {
	for _, c := range []struct {
		answer mcptest.Answer
		want   string
	}{
		{mcptest.Reply("eu-west-1"), `the script's answer to "region" (elicitation/create "Which region should orders live in?") answers sampling/createMessage, not elicitation/create`},
		{mcptest.Accept("eu-west-1"), `the script's answer to "region" (elicitation/create "Which region should orders live in?") is "eu-west-1", not an object of fields`},
		{mcptest.Answer{}, `the script's answer to "region" (elicitation/create "Which region should orders live in?") is empty`},
		{mcptest.AnswerFunc(func(context.Context, mcptest.Question) (mcp.InputResponse, error) {
			return &mcp.ListRootsResult{}, nil
		}), `answers roots/list, not elicitation/create`},
	} {
		f := runFake(t, func(ft testing.TB) {
			sess := mcptest.Connect(ft, newFixture(t), &mcptest.Options{Script: mcptest.Script{"region": c.answer}})
			if _, err := sess.CallTool(context.Background(), "provision", provisionArgs{Name: "orders"}); err == nil {
				ft.Errorf("the call succeeded")
			}
		})
		f.only(t, c.want)
	}
}

// TestAnswerFunc: a function answers from the question, and an error it
// returns on purpose reaches the server without failing the test.
func TestAnswerFunc(t *testing.T) {
	sess := mcptest.Connect(t, newFixture(t), &mcptest.Options{Script: mcptest.Script{
		"region": mcptest.AnswerFunc(func(ctx context.Context, q mcptest.Question) (mcp.InputResponse, error) {
			if strings.Contains(q.Message(), "orders") {
				return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "eu-north-1"}}, nil
			}
			return nil, errors.New("the host's form crashed")
		}),
	}})
	if got := mcptest.Text(t, sess.Call("provision", provisionArgs{Name: "orders"})); got != "Provisioned 'orders' in eu-north-1." {
		t.Errorf("provision said %q", got)
	}
	_, err := sess.CallTool(context.Background(), "provision", provisionArgs{Name: "users"})
	var cb *client.CallbackError
	if !errors.As(err, &cb) || !strings.Contains(err.Error(), "the host's form crashed") {
		t.Errorf("the call's error: %v, want the callback's", err)
	}
}

// TestOwnCallbacks: a question the script has no entry for goes to the
// caller's own callback of its kind, and the caller's middleware sees
// every question, the scripted ones included.
func TestOwnCallbacks(t *testing.T) {
	for _, v := range mcptest.Generations() {
		t.Run(string(v), func(t *testing.T) {
			var inputs []string
			sess := mcptest.Connect(t, newFixture(t), &mcptest.Options{
				Version: v,
				Script:  mcptest.Script{"region": mcptest.Accept(regionForm{Region: "eu-west-1"})},
				Client: &client.Options{
					Sample: func(ctx context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
						return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: mcp.SamplingContent{mcp.NewTextContent("from the callback")}, Model: "m"}, nil
					},
					Middleware: []client.Middleware{func(next client.Handler) client.Handler {
						return func(ctx context.Context, req *client.Request) (any, error) {
							if req.Kind == client.KindInput {
								inputs = append(inputs, req.Method)
							}
							return next(ctx, req)
						}
					}},
				},
			})
			if got := mcptest.Text(t, sess.Call("summarise", nil)); got != "from the callback" {
				t.Errorf("summarise said %q", got)
			}
			sess.Call("provision", provisionArgs{Name: "orders"})
			if strings.Join(inputs, " ") != "sampling/createMessage elicitation/create" {
				t.Errorf("the caller's middleware saw %q", inputs)
			}
		})
	}
}

// TestKeylessLegacyQuestion: a legacy question sent with Request.Ask has
// no key; the one scripted answer of its kind that fits answers it, and
// two that fit fail the test, naming both.
func TestKeylessLegacyQuestion(t *testing.T) {
	legacy := &mcptest.Options{Version: mcp.Version20251125}
	o := *legacy
	o.Script = mcptest.Script{
		"region": mcptest.Accept(map[string]any{"region": "eu-west-1"}),
		"sample": mcptest.Reply("not this"),
	}
	f := runFake(t, func(ft testing.TB) {
		sess := mcptest.Connect(ft, newAsker(), &o)
		if got := mcptest.Text(ft, sess.Call("ask", nil)); got != "accept eu-west-1" {
			ft.Errorf("ask said %q", got)
		}
		if qs := sess.Questions(); len(qs) != 1 || qs[0].Key != "" || qs[0].String() != `a question without a key (elicitation/create "Which region?")` {
			ft.Errorf("questions %v", qs)
		}
	})
	f.only(t, `the script answers "sample", but the server never asked it (only questions without a key were asked)`)

	o.Script = mcptest.Script{"a": mcptest.Decline(), "b": mcptest.Accept(map[string]any{"region": "x"}), "c": mcptest.Accept(map[string]any{"zone": "x"})}
	f = runFake(t, func(ft testing.TB) {
		sess := mcptest.Connect(ft, newAsker(), &o)
		sess.CallTool(context.Background(), "ask", nil)
	})
	f.only(t, `mcptest: the server asked a question without a key (elicitation/create "Which region?"), which several of the script's answers fit ("a", "b")`)
}

// TestFatalOnTheTestGoroutine: the kit's failures in callbacks never end
// a goroutine but the test's: the call returns, the fake test goes on to
// its next line.
func TestFatalOnTheTestGoroutine(t *testing.T) {
	reached := false
	runFake(t, func(ft testing.TB) {
		sess := mcptest.Connect(ft, newFixture(t), nil)
		sess.CallTool(context.Background(), "provision", provisionArgs{Name: "orders"})
		reached = true
	})
	if !reached {
		t.Error("the fake test stopped in the call")
	}
}

// TestServerStillServing: a handler that goes on after the session closed
// (one that ignores its context) fails the test once Options.Timeout has
// passed, instead of outliving it unnoticed.
func TestServerStillServing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		s := mcpserver.MustNew(mcp.Implementation{Name: "stuck", Version: "1.0.0"}, &mcpserver.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		started := make(chan struct{})
		mcpserver.AddTool(s, &mcp.Tool{Name: "stuck"}, func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
			close(started)
			<-release // not ctx.Done()
			return "", nil
		})
		f := runFakeBubble(t, func(ft testing.TB) {
			sess := mcptest.Connect(ft, s, &mcptest.Options{Timeout: time.Minute})
			go sess.CallTool(context.Background(), "stuck", nil)
			<-started
		})
		close(release)
		f.only(t, "mcptest: the server was still serving 1m0s after the session closed")
	})
}
