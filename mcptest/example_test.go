package mcptest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/mcptest"
	"github.com/parley-mcp/parley/tasks"
)

// exampleT stands in for a test's *testing.T, so that the examples run
// and print as examples do: it prints what would fail the test, and runs
// the cleanups when the example ends. In a test, pass the test's t.
type exampleT struct {
	testing.TB
	failed   bool
	cleanups []func()
}

func newT() *exampleT { return &exampleT{} }

func (t *exampleT) Helper()                   {}
func (t *exampleT) Logf(string, ...any)       {}
func (t *exampleT) Failed() bool              { return t.failed }
func (t *exampleT) Cleanup(f func())          { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) Fatalf(f string, a ...any) { t.Errorf(f, a...); panic("the example failed") }
func (t *exampleT) Errorf(f string, a ...any) {
	t.failed = true
	fmt.Printf("FAIL: "+f+"\n", a...)
}

// end is what the testing package does when a test ends: it runs the
// cleanups, last first.
func (t *exampleT) end() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

// The servers of the examples.

type GreetArgs struct {
	Name string `json:"name"`
}

func greeter() *mcpserver.Server {
	s := mcpserver.MustNew(mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	mcpserver.AddTool(s, &mcp.Tool{Name: "greet"}, func(ctx context.Context, c *mcpserver.Call, a GreetArgs) (string, error) {
		return "Hello, " + a.Name + "!", nil
	})
	return s
}

type ProvisionArgs struct {
	Name string `json:"name"`
}

type Region struct {
	Region string `json:"region" jsonschema:"where the database lives"`
}

var regionQuestion = mcpserver.Elicit[Region]("region", func(a ProvisionArgs, _ *mcpserver.Call) string {
	return "Which region should " + a.Name + " live in?"
})

func provisioner() *mcpserver.Server {
	s := mcpserver.MustNew(mcp.Implementation{Name: "provisioner", Version: "1.0.0"}, nil)
	mcpserver.AddTool(s, &mcp.Tool{Name: "provision"}, func(ctx context.Context, c *mcpserver.Call, a ProvisionArgs) (string, error) {
		return fmt.Sprintf("Provisioned '%s' in %s.", a.Name, regionQuestion.Get(c).Region), nil
	}, regionQuestion)
	return s
}

// A session on a server, a call, its text.
func ExampleConnect() {
	t := newT() // in a test: the test's t
	defer t.end()

	sess := mcptest.Connect(t, greeter(), nil)
	res := sess.Call("greet", GreetArgs{Name: "Ada"})
	fmt.Println(mcptest.Text(t, res))
	fmt.Println(sess.ProtocolVersion())
	// Output:
	// Hello, Ada!
	// 2026-07-28
}

// One script answers the tool's question by its key, in both protocol
// generations: under 2026-07-28 in a round of the client's loop, on a
// legacy session over the server's back-channel.
func ExampleScript() {
	t := newT()
	defer t.end()

	script := mcptest.Script{"region": mcptest.Accept(Region{Region: "eu-west-1"})}
	for _, v := range mcptest.Generations() {
		sess := mcptest.Connect(t, provisioner(), &mcptest.Options{Version: v, Script: script})
		res := sess.Call("provision", ProvisionArgs{Name: "orders"})
		fmt.Println(v, mcptest.Text(t, res))
		for _, q := range sess.Questions() {
			fmt.Println("  asked", q)
		}
	}
	// Output:
	// 2026-07-28 Provisioned 'orders' in eu-west-1.
	//   asked "region" (elicitation/create "Which region should orders live in?")
	// 2025-11-25 Provisioned 'orders' in eu-west-1.
	//   asked "region" (elicitation/create "Which region should orders live in?")
}

// A scripted answer that no question asked for fails the test when it
// ends: a script cannot go stale unnoticed.
func ExampleScript_unused() {
	t := newT()
	sess := mcptest.Connect(t, provisioner(), &mcptest.Options{Script: mcptest.Script{
		"region": mcptest.Accept(map[string]any{"region": "eu-west-1"}),
		"size":   mcptest.Accept(map[string]any{"size": "large"}),
	}})
	sess.Call("provision", ProvisionArgs{Name: "orders"})
	t.end()
	// Output:
	// FAIL: mcptest: the script answers "size", but the server never asked it (the questions asked: "region")
}

// A question the script has no answer for is refused, and fails the test
// when it ends, naming the question.
func ExampleErrUnexpectedQuestion() {
	t := newT()
	sess := mcptest.Connect(t, provisioner(), nil)
	_, err := sess.CallTool(context.Background(), "provision", ProvisionArgs{Name: "orders"})
	fmt.Println(errors.Is(err, mcptest.ErrUnexpectedQuestion))
	t.end()
	// Output:
	// true
	// FAIL: mcptest: the server asked "region" (elicitation/create "Which region should orders live in?"), which the script does not answer
}

// A decline reaches the server as a decline: here the tool's question
// does not allow one, and the call ends with a tool error.
func ExampleDecline() {
	t := newT()
	defer t.end()

	sess := mcptest.Connect(t, provisioner(), &mcptest.Options{Script: mcptest.Script{"region": mcptest.Decline()}})
	res := sess.Call("provision", ProvisionArgs{Name: "orders"})
	fmt.Println(res.IsError)
	// Output:
	// true
}

// A cancel is delivered as a cancel; a question that allows it lets the
// tool read what the person did.
func ExampleCancel() {
	t := newT()
	defer t.end()

	type Confirm struct {
		OK bool `json:"ok"`
	}
	confirm := mcpserver.Elicit[Confirm]("confirm", func(struct{}, *mcpserver.Call) string { return "Drop the table?" }).AllowDecline()
	s := mcpserver.MustNew(mcp.Implementation{Name: "dba", Version: "1.0.0"}, nil)
	mcpserver.AddTool(s, &mcp.Tool{Name: "drop"}, func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
		return "the person chose: " + string(confirm.Outcome(c).Action), nil
	}, confirm)

	sess := mcptest.Connect(t, s, &mcptest.Options{Script: mcptest.Script{"confirm": mcptest.Cancel()}})
	fmt.Println(mcptest.Text(t, sess.Call("drop", nil)))
	// Output:
	// the person chose: cancel
}

// Sampling answered with text, roots listed.
func ExampleReply() {
	t := newT()
	defer t.end()

	summary := mcpserver.Sample("summary", func(struct{}, *mcpserver.Call) mcp.CreateMessageRequestParams {
		return mcp.CreateMessageRequestParams{
			Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.SamplingContent{mcp.NewTextContent("Summarise the project.")}}},
			MaxTokens: 200,
		}
	})
	project := mcpserver.ListRoots("project")
	s := mcpserver.MustNew(mcp.Implementation{Name: "summariser", Version: "1.0.0"}, nil)
	mcpserver.AddTool(s, &mcp.Tool{Name: "summarise"}, func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
		return project.Get(c)[0].URI + ": " + summary.Get(c).Text(), nil
	}, summary, project)

	sess := mcptest.Connect(t, s, &mcptest.Options{Script: mcptest.Script{
		"summary": mcptest.Reply("A CLI and two libraries."),
		"project": mcptest.Roots(mcp.Root{URI: "file:///src/app", Name: "app"}),
	}})
	fmt.Println(mcptest.Text(t, sess.Call("summarise", nil)))
	// Output:
	// file:///src/app: A CLI and two libraries.
}

// An answer computed from the question.
func ExampleAnswerFunc() {
	t := newT()
	defer t.end()

	sess := mcptest.Connect(t, provisioner(), &mcptest.Options{Script: mcptest.Script{
		"region": mcptest.AnswerFunc(func(ctx context.Context, q mcptest.Question) (mcp.InputResponse, error) {
			region := "us-east-1"
			if strings.Contains(q.Message(), "eu-") {
				region = "eu-west-1"
			}
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": region}}, nil
		}),
	}})
	fmt.Println(mcptest.Text(t, sess.Call("provision", ProvisionArgs{Name: "eu-orders"})))
	// Output:
	// Provisioned 'eu-orders' in eu-west-1.
}

// Structured content decoded into the tool's own type.
func ExampleStructured() {
	t := newT()
	defer t.end()

	type Forecast struct {
		City  string  `json:"city"`
		TempC float64 `json:"tempC"`
	}
	s := mcpserver.MustNew(mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	mcpserver.AddTool(s, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, c *mcpserver.Call, a struct {
		City string `json:"city"`
	}) (Forecast, error) {
		return Forecast{City: a.City, TempC: 21.5}, nil
	})

	sess := mcptest.Connect(t, s, nil)
	f := mcptest.Structured[Forecast](t, sess.Call("forecast", map[string]any{"city": "Oslo"}))
	fmt.Printf("%s %.1f\n", f.City, f.TempC)
	// Output:
	// Oslo 21.5
}

// A tool error's message; the call itself succeeded.
func ExampleToolError() {
	t := newT()
	defer t.end()

	s := mcpserver.MustNew(mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	mcpserver.AddTool(s, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, c *mcpserver.Call, a struct {
		City string `json:"city"`
	}) (string, error) {
		return "", fmt.Errorf("no forecast for %s", a.City)
	})

	sess := mcptest.Connect(t, s, nil)
	fmt.Println(mcptest.ToolError(t, sess.Call("forecast", map[string]any{"city": "Atlantis"})))
	// Output:
	// no forecast for Atlantis
}

// The wire of a legacy session: the server's question arrives over its
// back-channel while the call is open, indented under it.
func ExampleSession_Transcript() {
	t := newT()
	defer t.end()

	sess := mcptest.Connect(t, provisioner(), &mcptest.Options{
		Version: mcp.Version20251125,
		Script:  mcptest.Script{"region": mcptest.Accept(Region{Region: "eu-west-1"})},
	})
	sess.Call("provision", ProvisionArgs{Name: "orders"})
	for _, line := range strings.Split(string(sess.Transcript()), "\n")[3:] {
		fmt.Println(line)
	}
	// Output:
	// client {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{},"name":"provision","arguments":{"name":"orders"}}}
	//   server {"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"Which region should orders live in?","requestedSchema":{"type":"object","properties":{"region":{"type":"string","description":"where the database lives"}},"required":["region"]}}}
	//   client {"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"region":"eu-west-1"}}}
	// server {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Provisioned 'orders' in eu-west-1."}]}}
}

// A task started, its question answered from the script, awaited to its
// end.
func ExampleSession_AwaitTask() {
	t := newT()
	defer t.end()

	s := mcpserver.MustNew(mcp.Implementation{Name: "reports", Version: "1.0.0"}, nil)
	mcpserver.AddTaskTool(s, &mcp.Tool{Name: "report"}, mcpserver.TaskOptional, func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
		answers, err := tasks.FromContext(ctx).Ask(ctx, mcp.InputRequests{
			"include": mcp.NewElicitFormRequest("Include last year?", mcp.ElicitRequestedSchema{
				Properties: map[string]mcp.PrimitiveSchemaDefinition{"include": &mcp.BooleanSchema{}},
			}),
		})
		if err != nil {
			return "", err
		}
		r, _ := answers.Elicit("include")
		return fmt.Sprintf("report (include last year: %v)", r.Content["include"]), nil
	})

	sess := mcptest.Connect(t, s, &mcptest.Options{
		Tasks:  true,
		Script: mcptest.Script{"include": mcptest.Accept(map[string]any{"include": true})},
	})
	task := sess.StartTask("report", nil)
	fmt.Println(mcptest.Text(t, sess.AwaitTask(task)))
	// Output:
	// report (include last year: true)
}

// A test run in both generations, one subtest each.
func ExampleGenerations() {
	for _, v := range mcptest.Generations() {
		fmt.Println(v, v.Era())
	}
	// Output:
	// 2026-07-28 modern
	// 2025-11-25 legacy
}
