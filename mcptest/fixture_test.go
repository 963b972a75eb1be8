package mcptest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/tasks"
)

// The fixture server's tools, one for each thing the kit must handle:
//
//   - provision asks one form question, "region";
//   - replicate asks two questions of the same form in one round,
//     "primary" and "replica", which only their keys tell apart;
//   - confirm asks "confirm" and allows a decline: it answers with the
//     action the person took;
//   - summarise samples ("summary"), where lists the roots ("project");
//   - forecast answers with structured content, fail with a tool error,
//     work with two progress notifications;
//   - report is a task that asks "include" halfway.

type provisionArgs struct {
	Name string `json:"name"`
}

type regionForm struct {
	Region string `json:"region" jsonschema:"where the database lives"`
}

type confirmForm struct {
	OK bool `json:"ok"`
}

type Forecast struct {
	City  string  `json:"city"`
	TempC float64 `json:"tempC"`
}

var (
	region = mcpserver.Elicit[regionForm]("region", func(a provisionArgs, _ *mcpserver.Call) string {
		return "Which region should " + a.Name + " live in?"
	})
	primary = mcpserver.Elicit[regionForm]("primary", func(a provisionArgs, _ *mcpserver.Call) string {
		return "Where should " + a.Name + " be written?"
	})
	replica = mcpserver.Elicit[regionForm]("replica", func(a provisionArgs, _ *mcpserver.Call) string {
		return "Where should " + a.Name + " be copied to?"
	})
	confirm = mcpserver.Elicit[confirmForm]("confirm", func(struct{}, *mcpserver.Call) string {
		return "Go ahead?"
	}).AllowDecline()
	summary = mcpserver.Sample("summary", func(struct{}, *mcpserver.Call) mcp.CreateMessageRequestParams {
		return mcp.CreateMessageRequestParams{
			Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.SamplingContent{mcp.NewTextContent("Summarise the schema.")}}},
			MaxTokens: 100,
		}
	})
	project = mcpserver.ListRoots("project")
)

func newFixture(t testing.TB) *mcpserver.Server {
	t.Helper()
	s, err := mcpserver.New(mcp.Implementation{Name: "fixture", Version: "1.0.0"}, &mcpserver.Options{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Tasks:  &tasks.Options{PollInterval: time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(mcpserver.AddTool(s, &mcp.Tool{Name: "provision"}, func(ctx context.Context, c *mcpserver.Call, a provisionArgs) (string, error) {
		return fmt.Sprintf("Provisioned '%s' in %s.", a.Name, region.Get(c).Region), nil
	}, region))
	must(mcpserver.AddTool(s, &mcp.Tool{Name: "replicate"}, func(ctx context.Context, c *mcpserver.Call, a provisionArgs) (string, error) {
		return fmt.Sprintf("%s: written in %s, copied to %s.", a.Name, primary.Get(c).Region, replica.Get(c).Region), nil
	}, primary, replica))
	must(mcpserver.AddTool(s, &mcp.Tool{Name: "confirm"}, func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
		return string(confirm.Outcome(c).Action), nil
	}, confirm))
	must(mcpserver.AddTool(s, &mcp.Tool{Name: "summarise"}, func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
		return summary.Get(c).Text(), nil
	}, summary))
	must(mcpserver.AddTool(s, &mcp.Tool{Name: "where"}, func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
		var uris []string
		for _, r := range project.Get(c) {
			uris = append(uris, r.URI)
		}
		return strings.Join(uris, " "), nil
	}, project))
	must(mcpserver.AddTool(s, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, c *mcpserver.Call, a struct {
		City string `json:"city"`
	}) (Forecast, error) {
		return Forecast{City: a.City, TempC: 21.5}, nil
	}))
	must(mcpserver.AddTool(s, &mcp.Tool{Name: "fail"}, func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
		return "", errors.New("no such city")
	}))
	must(mcpserver.AddTool(s, &mcp.Tool{Name: "work"}, func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
		for i := 1; i <= 2; i++ {
			if err := c.Progress(ctx, float64(i), 2, fmt.Sprintf("step %d", i)); err != nil {
				return "", err
			}
		}
		return "worked", nil
	}))
	must(mcpserver.AddTaskTool(s, &mcp.Tool{Name: "report"}, mcpserver.TaskOptional, func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
		run := tasks.FromContext(ctx)
		if run == nil {
			return "report without a task", nil
		}
		answers, err := run.Ask(ctx, mcp.InputRequests{
			"include": mcp.NewElicitFormRequest("Include last year?", mcp.ElicitRequestedSchema{
				Properties: map[string]mcp.PrimitiveSchemaDefinition{"include": &mcp.BooleanSchema{}},
				Required:   []string{"include"},
			}),
		})
		if err != nil {
			return "", err
		}
		var form struct {
			Include bool `json:"include"`
		}
		if r, err := answers.Elicit("include"); err == nil && r.Accepted() && r.DecodeContent(&form) == nil && form.Include {
			return "report with last year", nil
		}
		return "report", nil
	}))
	return s
}

// newAsker is a low-level server whose tool "ask" asks over a legacy
// session's back-channel with Request.Ask, one question at a time: the
// questions have no keys.
func newAsker() *server.Server {
	s := server.New(mcp.Implementation{Name: "asker", Version: "1.0.0"}, &server.Options{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if p.Name != "ask" {
			return nil, wire.InvalidParams("unknown tool %q", p.Name)
		}
		raw, err := req.Ask(ctx, mcp.NewElicitFormRequest("Which region?", mcp.ElicitRequestedSchema{
			Properties: map[string]mcp.PrimitiveSchemaDefinition{"region": &mcp.StringSchema{}},
		}))
		if err != nil {
			return nil, err
		}
		answer, err := mcp.InputResponses{"q": raw}.Elicit("q")
		if err != nil {
			return nil, err
		}
		return mcp.TextResult(fmt.Sprintf("%s %v", answer.Action, answer.Content["region"])), nil
	})
	return s
}

// fakeT stands in for the *testing.T of a test the kit is to fail: it
// records what the kit reports, and its Fatal ends the goroutine as
// testing's does. What it does not stand in for goes to the real test.
type fakeT struct {
	testing.TB

	mu       sync.Mutex
	failures []string
	logs     []string
	cleanups []func()
}

func (f *fakeT) Helper() {}

func (f *fakeT) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = append(f.failures, fmt.Sprintf(format, args...))
}

func (f *fakeT) Error(args ...any) { f.Errorf("%s", fmt.Sprint(args...)) }

func (f *fakeT) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	runtime.Goexit()
}

func (f *fakeT) Fatal(args ...any) { f.Fatalf("%s", fmt.Sprint(args...)) }

func (f *fakeT) Fail() { f.Errorf("Fail") }

func (f *fakeT) FailNow() { f.Fatalf("FailNow") }

func (f *fakeT) Failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.failures) > 0
}

func (f *fakeT) Logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}

func (f *fakeT) Log(args ...any) { f.Logf("%s", fmt.Sprint(args...)) }

func (f *fakeT) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

// runFake runs body as a test of its own, on a goroutine of its own with
// a fakeT, then its cleanups (last first, each on a goroutine, as a Fatal
// in one does not stop the others), and returns what failed the fake
// test.
func runFake(t *testing.T, body func(t testing.TB)) *fakeT {
	t.Helper()
	f := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		body(f)
	}()
	testwait.Recv(t, done, "the fake test's body")
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		done := make(chan struct{})
		go func() {
			defer close(done)
			f.cleanups[i]()
		}()
		testwait.Recv(t, done, "a cleanup of the fake test")
	}
	return f
}

// runFakeBubble is runFake inside a synctest bubble, where a bounded
// wait cannot use testwait's wall clock: the bubble itself fails the test
// if the fake one deadlocks.
func runFakeBubble(t *testing.T, body func(t testing.TB)) *fakeT {
	t.Helper()
	f := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		body(f)
	}()
	<-done
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		done := make(chan struct{})
		go func() {
			defer close(done)
			f.cleanups[i]()
		}()
		<-done
	}
	return f
}

// only checks that the fake test failed exactly once, with a message
// holding every one of want.
func (f *fakeT) only(t *testing.T, want ...string) {
	t.Helper()
	if len(f.failures) != 1 {
		t.Fatalf("the fake test failed %d times, want once: %q", len(f.failures), f.failures)
	}
	for _, w := range want {
		if !strings.Contains(f.failures[0], w) {
			t.Errorf("the failure %q does not say %q", f.failures[0], w)
		}
	}
}

// passed checks that the fake test did not fail.
func (f *fakeT) passed(t *testing.T) {
	t.Helper()
	if len(f.failures) > 0 {
		t.Fatalf("the fake test failed: %q", f.failures)
	}
}
