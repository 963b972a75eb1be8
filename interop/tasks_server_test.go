package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/auth/resourceserver"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/tasks"
	"github.com/parley-mcp/parley/transport/stdio"
)

// pollLogEnv names the file the "tasks" stdio server records its tasks
// in (see pollRecorder).
const pollLogEnv = "PARLEY_INTEROP_POLL_LOG"

// pollRecorder records, in a file, each task a server creates and each
// tasks/get of it, "<taskId> created|get <unix ms>" a line, as the
// TypeScript tasks server does: the record the pacing checks read. It also
// lets a task body wait until its task has been polled a number of times,
// so that the fixture's tasks end by the client's polls, not by a clock.
type pollRecorder struct {
	path string

	mu      sync.Mutex
	gets    map[string]int // tasks/get answered, by task
	changed chan struct{}  // closed and replaced at each answer
}

func newPollRecorder(path string) *pollRecorder {
	return &pollRecorder{path: path, gets: map[string]int{}, changed: make(chan struct{})}
}

func (r *pollRecorder) record(task, what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := os.OpenFile(r.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		_, err = fmt.Fprintf(f, "%s %s %d\n", task, what, time.Now().UnixMilli())
		f.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "poll log:", err)
	}
}

// answered counts a tasks/get of task that has been answered, and wakes
// the bodies waiting in polled.
func (r *pollRecorder) answered(task string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gets[task]++
	close(r.changed)
	r.changed = make(chan struct{})
}

// middleware records task creations and polls: a poll when it arrives, a
// creation just before its answer leaves (so before any poll of it).
func (r *pollRecorder) middleware(next server.Handler) server.Handler {
	return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
		p, get := req.Params.(*mcp.GetTaskRequestParams)
		if get {
			r.record(p.TaskID, "get")
		}
		res, err := next(ctx, req)
		if t, ok := res.(*mcp.CreateTaskResult); ok {
			r.record(t.TaskID, "created")
		}
		if get {
			r.answered(p.TaskID)
		}
		return res, err
	}
}

// polled waits until n polls of the task running under ctx have been
// answered, or ctx ends: those answers showed the task unfinished.
func (r *pollRecorder) polled(ctx context.Context, n int) error {
	id := tasks.FromContext(ctx).ID()
	for {
		r.mu.Lock()
		got, changed := r.gets[id], r.changed
		r.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// newParleyTasksServer returns the Parley server the TypeScript tasks
// client calls, recording in pollLog. Its tools are those of
// ts/tasks-server.mjs, all TaskRequired, and end their work once their
// task's second poll has been answered (so the third poll, at the
// earliest, sees the end):
//
//	complete    "done"
//	tool_error  an isError result
//	fail        -32602 "Invalid params: bad input": a failed task
//	wait        works until cancelled
//	ask_mid     asks a form for a name while it runs (tasks.Run.Ask), answers "hello <name>"
//	ask_first   asks the name in a round before the task starts (a declared question)
func newParleyTasksServer(pollLog string) (*mcpserver.Server, error) {
	s, err := mcpserver.New(mcp.Implementation{Name: "parley-interop-tasks", Version: "1.0.0"}, &mcpserver.Options{
		Logger: slog.New(slog.DiscardHandler),
		Tasks:  &tasks.Options{PollInterval: tasksPollInterval},
	})
	if err != nil {
		return nil, err
	}
	rec := newPollRecorder(pollLog)
	s.Use(rec.middleware)
	work := func(ctx context.Context) error { return rec.polled(ctx, 2) }
	body := func(answer func(context.Context) (string, error)) mcpserver.ToolHandler[struct{}, string] {
		return func(ctx context.Context, _ *mcpserver.Call, _ struct{}) (string, error) {
			if err := work(ctx); err != nil {
				return "", err
			}
			return answer(ctx)
		}
	}
	name := mcpserver.Elicit[Name]("name", func(struct{}, *mcpserver.Call) string { return "What is your name?" })
	for _, tool := range []struct {
		name string
		h    mcpserver.ToolHandler[struct{}, string]
		deps []mcpserver.Dependency
	}{
		{"complete", body(func(context.Context) (string, error) { return "done", nil }), nil},
		{"tool_error", body(func(context.Context) (string, error) { return "", errors.New("the tool failed") }), nil},
		{"fail", body(func(context.Context) (string, error) { return "", wire.InvalidParams("Invalid params: bad input") }), nil},
		{"wait", func(ctx context.Context, _ *mcpserver.Call, _ struct{}) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}, nil},
		{"ask_mid", func(ctx context.Context, _ *mcpserver.Call, _ struct{}) (string, error) {
			answers, err := tasks.FromContext(ctx).Ask(ctx, mcp.InputRequests{
				"name": mcp.NewElicitFormRequest("What is your name?", mcp.ElicitRequestedSchema{
					Properties: map[string]mcp.PrimitiveSchemaDefinition{"name": &mcp.StringSchema{}},
				}),
			})
			if err != nil {
				return "", err
			}
			r, err := answers.Elicit("name")
			if err != nil || !r.Accepted() {
				return "", fmt.Errorf("no name: %v", err)
			}
			if err := work(ctx); err != nil {
				return "", err
			}
			return fmt.Sprintf("hello %v", r.Content["name"]), nil
		}, nil},
		{"ask_first", func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
			if err := work(ctx); err != nil {
				return "", err
			}
			return "hello " + name.Get(c).Name, nil
		}, []mcpserver.Dependency{name}},
	} {
		if err := mcpserver.AddTaskTool(s, &mcp.Tool{Name: tool.name}, mcpserver.TaskRequired, tool.h, tool.deps...); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// serveTasksStdio serves newParleyTasksServer on stdin and stdout, with
// its record in $PARLEY_INTEROP_POLL_LOG: the test binary's life as the
// TypeScript tasks client's stdio server.
func serveTasksStdio() int {
	s, err := newParleyTasksServer(os.Getenv(pollLogEnv))
	if err == nil {
		err = s.ServeConn(context.Background(), stdio.ServerConn(nil))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "parley tasks stdio server:", err)
		return 1
	}
	return 0
}

// tokenVerifier accepts the two principals' bearer tokens: Alice and Bob,
// two subjects of one client, which is what tells tasks apart.
var tokenVerifier = resourceserver.VerifierFunc(func(ctx context.Context, token string) (*auth.Info, error) {
	switch token {
	case aliceToken:
		return &auth.Info{ClientID: "interop", Issuer: "https://issuer.test", Subject: "alice"}, nil
	case bobToken:
		return &auth.Info{ClientID: "interop", Issuer: "https://issuer.test", Subject: "bob"}, nil
	}
	return nil, errors.New("unknown token")
})

// tsTasksReport is what tasks-client.mjs prints: a report per flow.
type tsTasksReport struct {
	ProtocolVersion  string       `json:"protocolVersion"`
	Complete         tsExecution  `json:"complete"`
	ToolError        tsExecution  `json:"toolError"`
	Failure          tsExecution  `json:"failure"`
	InputMidTask     tsExecution  `json:"inputMidTask"`
	RoundsBeforeTask tsExecution  `json:"roundsBeforeTask"`
	Cancel           tsExecution  `json:"cancel"`
	UnknownID        tsError      `json:"unknownId"`
	AnotherPrincipal *tsPrincipal `json:"anotherPrincipal"`
}

// tsExecution is how one call's execution ended, as ext-tasks saw it.
type tsExecution struct {
	Thrown       string   `json:"thrown"` // the flow threw this instead
	Kind         string   `json:"kind"`   // "task" or "immediate"
	TaskID       string   `json:"taskId"`
	Status       string   `json:"status"` // the outcome: completed, failed, cancelled
	ResultType   string   `json:"resultType"`
	Text         string   `json:"text"`
	IsError      bool     `json:"isError"`
	Code         int      `json:"code"`
	Message      string   `json:"message"`
	Asked        []string `json:"asked"`        // the scopes of the input requests answered
	ServerStatus string   `json:"serverStatus"` // tasks/get after a cancel
}

type tsError struct {
	Thrown  string `json:"thrown"`
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type tsPrincipal struct {
	Thrown      string  `json:"thrown"`
	TaskID      string  `json:"taskId"`
	Get         tsError `json:"get"`
	Cancel      tsError `json:"cancel"`
	OwnerStatus string  `json:"ownerStatus"`
}

// TestTypeScriptTasksClientAgainstParley: the tasks extension's own
// client, @modelcontextprotocol/ext-tasks on the TypeScript SDK client,
// runs every flow against a Parley server with task tools, over
// Streamable HTTP (behind a resource server that knows two principals'
// tokens) and stdio (the test binary); the server's record shows it kept
// the poll interval.
func TestTypeScriptTasksClientAgainstParley(t *testing.T) {
	needNode(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"http", "stdio"} {
		t.Run(kind, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "polls.log")
			var args []string
			env := os.Environ()
			if kind == "http" {
				s, err := newParleyTasksServer(log)
				if err != nil {
					t.Fatal(err)
				}
				srv := httptest.NewUnstartedServer(nil)
				url := "http://" + srv.Listener.Addr().String() + "/mcp"
				rs, err := resourceserver.New(&resourceserver.Options{
					Metadata: resourceserver.Metadata{Resource: url, AuthorizationServers: []string{"https://issuer.test"}},
					Verifier: tokenVerifier,
					Logger:   slog.New(slog.DiscardHandler),
				})
				if err != nil {
					t.Fatal(err)
				}
				srv.Config.Handler = rs.Wrap(s.HTTPHandler(nil))
				srv.Start()
				t.Cleanup(srv.Close)
				args = []string{"http", url, aliceToken, bobToken}
			} else {
				args = []string{"stdio", self}
				env = append(env, serveEnv+"=tasks", pollLogEnv+"="+log)
			}
			cmd := nodeCommand(t, "tasks-client.mjs", args...)
			cmd.Env = env
			out, err := cmd.Output()
			if err != nil {
				var exit *exec.ExitError
				if errors.As(err, &exit) {
					t.Fatalf("tasks-client.mjs %s: %v", kind, err)
				}
				t.Fatal(err)
			}
			var r tsTasksReport
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatalf("tasks-client.mjs printed %q: %v", out, err)
			}
			if r.ProtocolVersion != string(mcp.LatestVersion) {
				t.Errorf("the client speaks %q, want %q", r.ProtocolVersion, mcp.LatestVersion)
			}
			checkCompleted := func(t *testing.T, e tsExecution, text string, isError bool) {
				t.Helper()
				if e.Thrown != "" {
					t.Fatalf("the flow threw: %s", e.Thrown)
				}
				if e.Kind != "task" || e.Status != "completed" || e.ResultType != "complete" || e.Text != text || e.IsError != isError {
					t.Errorf("execution %+v, want a completed task with %q (isError %v)", e, text, isError)
				}
			}
			t.Run("complete", func(t *testing.T) { checkCompleted(t, r.Complete, "done", false) })
			t.Run("tool-error", func(t *testing.T) { checkCompleted(t, r.ToolError, "the tool failed", true) })
			t.Run("failure", func(t *testing.T) {
				e := r.Failure
				if e.Thrown != "" {
					t.Fatalf("the flow threw: %s", e.Thrown)
				}
				if e.Kind != "task" || e.Status != "failed" || e.Code != -32602 || e.Message != "Invalid params: bad input" {
					t.Errorf("execution %+v, want a failed task with -32602", e)
				}
			})
			t.Run("input-mid-task", func(t *testing.T) {
				checkCompleted(t, r.InputMidTask, "hello Ada", false)
				if got := strings.Join(r.InputMidTask.Asked, ","); got != "task" {
					t.Errorf("questions asked in scopes %q, want one of the task", got)
				}
			})
			t.Run("rounds-before-task", func(t *testing.T) {
				checkCompleted(t, r.RoundsBeforeTask, "hello Ada", false)
				if got := strings.Join(r.RoundsBeforeTask.Asked, ","); got != "request" {
					t.Errorf("questions asked in scopes %q, want one of the request, before the task", got)
				}
			})
			t.Run("cancel", func(t *testing.T) {
				e := r.Cancel
				if e.Thrown != "" {
					t.Fatalf("the flow threw: %s", e.Thrown)
				}
				if e.Kind != "task" || e.Status != "cancelled" || e.ServerStatus != "cancelled" {
					t.Errorf("execution %+v, want a task cancelled, and so on the server", e)
				}
			})
			t.Run("unknown-id", func(t *testing.T) {
				if e := r.UnknownID; e.Code != -32602 {
					t.Errorf("tasks/get of an unknown id: %+v, want -32602", e)
				}
			})
			if kind == "http" {
				t.Run("another-principal", func(t *testing.T) {
					e := r.AnotherPrincipal
					switch {
					case e == nil:
						t.Fatal("no report")
					case e.Thrown != "":
						t.Fatalf("the flow threw: %s", e.Thrown)
					}
					if e.Get.Code != -32602 || e.Cancel.Code != -32602 || e.OwnerStatus != "working" {
						t.Errorf("another principal: %+v, want -32602 to its tasks/get and tasks/cancel, the task working for its owner", e)
					}
				})
			}
			t.Run("poll-interval", func(t *testing.T) {
				// The tasks whose end the client awaited (not those it
				// read by hand), each polled at least three times.
				ids := map[string]bool{}
				for _, e := range []tsExecution{r.Complete, r.ToolError, r.Failure, r.InputMidTask, r.RoundsBeforeTask} {
					ids[e.TaskID] = true
				}
				var events []pollEvent
				for _, e := range readPollLog(t, log) {
					if ids[e.task] {
						events = append(events, e)
					}
				}
				checkPacing(t, events, 3)
			})
		})
	}
}
