package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/tasks"
)

// fixture is a server with the tasks extension whose tools/call starts a
// task running the test's body for the tool's name.
type fixture struct {
	t      *testing.T
	s      *server.Server
	m      *tasks.Manager
	bodies map[string]tasks.Body
	store  *tasks.MemoryStore
}

// who is the principal of a request: the "who" _meta extra, for tests.
func who(ctx context.Context, req *server.Request) (string, error) {
	var w string
	if req.Meta != nil {
		req.Meta.Extra.Decode("who", &w)
	}
	return w, nil
}

func newFixture(t *testing.T, opts *tasks.Options) *fixture {
	t.Helper()
	f := &fixture{t: t, s: server.New(mcp.Implementation{Name: "tasks", Version: "1"}, nil), bodies: map[string]tasks.Body{}}
	if opts == nil {
		opts = &tasks.Options{}
	}
	if opts.Store == nil {
		f.store = tasks.NewMemoryStore(&tasks.MemoryStoreOptions{Now: opts.Now})
		opts.Store = f.store
	}
	opts.Principal = who
	m, err := tasks.Enable(f.s, opts)
	if err != nil {
		t.Fatal(err)
	}
	f.m = m
	f.s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if !tasks.Declared(req) {
			return nil, tasks.RequiredError()
		}
		return m.Start(ctx, req, f.bodies[p.Name])
	})
	return f
}

// call sends method with the params members (a JSON object's inside) as
// principal w, from a client that declared the extension.
func (f *fixture) call(w, method, members string) (json.RawMessage, error) {
	return f.callAs(w, true, method, members)
}

func (f *fixture) callAs(w string, declared bool, method, members string) (json.RawMessage, error) {
	return f.callCtx(context.Background(), w, declared, method, members)
}

// callFrom is call from a client at the network address addr, as
// Streamable HTTP reports it.
func (f *fixture) callFrom(addr, w, method, members string) (json.RawMessage, error) {
	return f.callCtx(auth.WithRemoteAddr(context.Background(), addr), w, true, method, members)
}

func (f *fixture) callCtx(ctx context.Context, w string, declared bool, method, members string) (json.RawMessage, error) {
	ext := ""
	if declared {
		ext = `"extensions":{"io.modelcontextprotocol/tasks":{}}`
	}
	params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{` + ext + `},"who":"` + w + `"},` + members + `}`
	res, err := f.s.Handle(ctx, &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: method, Params: json.RawMessage(params)}, nil)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(res)
	if err != nil {
		f.t.Fatal(err)
	}
	return b, nil
}

// start calls the tool name and returns the new task's id.
func (f *fixture) start(w, name string) string {
	f.t.Helper()
	b, err := f.call(w, mcp.MethodCallTool, `"name":"`+name+`"`)
	if err != nil {
		f.t.Fatal(err)
	}
	var c mcp.CreateTaskResult
	if err := json.Unmarshal(b, &c); err != nil || c.ResultType != mcp.ResultTypeTask || c.TaskID == "" || c.Status != mcp.TaskWorking {
		f.t.Fatalf("tools/call answered %s (%v)", b, err)
	}
	if strings.Contains(string(b), "requestState") || strings.Contains(string(b), `"task":`) {
		f.t.Errorf("CreateTaskResult %s carries what it must not", b)
	}
	return c.TaskID
}

// get returns tasks/get's answer for id as principal w.
func (f *fixture) get(w, id string) (*mcp.GetTaskResult, error) {
	b, err := f.call(w, mcp.MethodGetTask, `"taskId":"`+id+`"`)
	if err != nil {
		return nil, err
	}
	var g mcp.GetTaskResult
	if err := json.Unmarshal(b, &g); err != nil {
		f.t.Fatal(err)
	}
	return &g, nil
}

func (f *fixture) mustGet(w, id string) *mcp.GetTaskResult {
	f.t.Helper()
	g, err := f.get(w, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return g
}

func wantCode(t *testing.T, err error, code int64) *jsonrpc.Error {
	t.Helper()
	var e *jsonrpc.Error
	if !errors.As(err, &e) || int64(e.Code) != code {
		t.Fatalf("err = %v, want code %d", err, code)
	}
	return e
}

// TestLifecycle: a task is readable at once, completes with its result
// inlined (a tool error completes too), fails with an error object and no
// Go text (a body's error or panic), and keeps a protocol error's code.
func TestLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, nil)
		release := make(chan struct{})
		f.bodies["slow"] = func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			<-release
			return mcp.TextResult("done " + run.ID()[:0]), nil
		}
		f.bodies["toolerr"] = func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			return mcp.ErrorResult("the disk is full"), nil
		}
		f.bodies["goerr"] = func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			return nil, errors.New("secret internal detail")
		}
		f.bodies["panics"] = func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) { panic("secret panic") }
		f.bodies["rpcerr"] = func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			return nil, wire.InvalidParams("Invalid params: no such file")
		}

		id := f.start("alice", "slow")
		if g := f.mustGet("alice", id); g.Status != mcp.TaskWorking || g.ToolResult != nil || g.Error != nil || g.TTLMs == nil || *g.TTLMs != 3600000 || g.PollIntervalMs != 1000 {
			t.Errorf("working task: %+v", g)
		}
		close(release)
		synctest.Wait()
		if g := f.mustGet("alice", id); g.Status != mcp.TaskCompleted || !strings.Contains(string(g.ToolResult), `"text":"done "`) || g.Error != nil || g.ResultType != mcp.ResultTypeComplete {
			t.Errorf("completed task: %+v %s", g, g.ToolResult)
		}

		id = f.start("alice", "toolerr")
		synctest.Wait()
		if g := f.mustGet("alice", id); g.Status != mcp.TaskCompleted || !strings.Contains(string(g.ToolResult), `"isError":true`) {
			t.Errorf("a tool error: %+v %s", g, g.ToolResult)
		}
		for _, name := range []string{"goerr", "panics"} {
			id = f.start("alice", name)
			synctest.Wait()
			g := f.mustGet("alice", id)
			if g.Status != mcp.TaskFailed || g.ToolResult != nil || !strings.Contains(string(g.Error), `"code":-32603`) || strings.Contains(string(g.Error), "secret") {
				t.Errorf("%s: %+v %s", name, g, g.Error)
			}
		}
		id = f.start("alice", "rpcerr")
		synctest.Wait()
		if g := f.mustGet("alice", id); g.Status != mcp.TaskFailed || !strings.Contains(string(g.Error), `"code":-32602`) || !strings.Contains(string(g.Error), "no such file") {
			t.Errorf("a protocol error: %s", g.Error)
		}
	})
}

// TestCancel: tasks/cancel acks with an empty result, cancels the body's
// context, and the task stays cancelled whatever the body returns after;
// cancelling a finished task is acked and changes nothing.
func TestCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, nil)
		sawCancel := make(chan error, 1)
		f.bodies["wait"] = func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			sawCancel <- ctx.Err()
			return mcp.TextResult("too late"), nil
		}
		f.bodies["quick"] = func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			return mcp.TextResult("quick"), nil
		}
		id := f.start("alice", "wait")
		b, err := f.call("alice", mcp.MethodCancelTask, `"taskId":"`+id+`"`)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"tasks","version":"1"}},"resultType":"complete"}` {
			t.Errorf("cancel ack %s", b)
		}
		synctest.Wait()
		if err := <-sawCancel; !errors.Is(err, context.Canceled) {
			t.Errorf("the body's context: %v", err)
		}
		if g := f.mustGet("alice", id); g.Status != mcp.TaskCancelled || g.ToolResult != nil {
			t.Errorf("after cancel: %+v", g)
		}

		id = f.start("alice", "quick")
		synctest.Wait()
		if _, err := f.call("alice", mcp.MethodCancelTask, `"taskId":"`+id+`"`); err != nil {
			t.Fatal(err)
		}
		if g := f.mustGet("alice", id); g.Status != mcp.TaskCompleted {
			t.Errorf("a cancel changed a finished task: %+v", g)
		}
	})
}

// TestAsk: a body that asks parks the task in input_required with the
// questions; answers may come in parts (tasks/get shows what is still
// open); answers to nothing asked or answered already are dropped; an
// answer that is not an object, or to a task not waiting, is refused with
// -32602 and changes nothing; once every question is answered the body
// resumes with the answers.
func TestAsk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, nil)
		got := make(chan mcp.InputResponses, 1)
		f.bodies["ask"] = func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			answers, err := run.Ask(ctx, mcp.InputRequests{
				"a": mcp.NewElicitFormRequest("first?", mcp.ElicitRequestedSchema{}),
				"b": mcp.NewElicitFormRequest("second?", mcp.ElicitRequestedSchema{}),
			})
			if err != nil {
				return nil, err
			}
			got <- answers
			return mcp.TextResult("answered"), nil
		}
		f.bodies["quick"] = func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			return mcp.TextResult("q"), nil
		}
		id := f.start("alice", "ask")
		synctest.Wait()
		g := f.mustGet("alice", id)
		if g.Status != mcp.TaskInputRequired || len(g.InputRequests) != 2 || g.InputRequests["a"] == nil {
			t.Fatalf("waiting task: %+v", g)
		}
		update := func(members string) error {
			_, err := f.call("alice", mcp.MethodUpdateTask, `"taskId":"`+id+`",`+members)
			return err
		}
		accept := `{"action":"accept","content":{}}`
		wantCode(t, update(`"inputResponses":{"a":5}`), jsonrpc.CodeInvalidParams) // an open question's answer must be an object
		// Answers to nothing asked are dropped, as the protocol's rule for
		// inputResponses says: acked, and nothing changes.
		if err := update(`"inputResponses":{"c":` + accept + `}`); err != nil {
			t.Fatal(err)
		}
		if g := f.mustGet("alice", id); len(g.InputRequests) != 2 {
			t.Errorf("an unasked answer changed the task: %+v", g)
		}
		if err := update(`"inputResponses":{"a":` + accept + `}`); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if g := f.mustGet("alice", id); g.Status != mcp.TaskInputRequired || len(g.InputRequests) != 1 || g.InputRequests["b"] == nil {
			t.Errorf("after a partial answer: %+v", g)
		}
		// A second answer to "a" does not replace the first.
		if err := update(`"inputResponses":{"a":{"action":"decline"}}`); err != nil {
			t.Fatal(err)
		}
		if err := update(`"inputResponses":{"b":` + accept + `}`); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		answers := <-got
		if len(answers) != 2 || string(answers["a"]) != accept {
			t.Errorf("answers %v", answers)
		}
		if g := f.mustGet("alice", id); g.Status != mcp.TaskCompleted || g.InputRequests != nil {
			t.Errorf("after the answers: %+v", g)
		}
		wantCode(t, update(`"inputResponses":{"b":`+accept+`}`), jsonrpc.CodeInvalidParams) // not waiting
	})
}

// TestIsolation: another principal's tasks/get, tasks/update and
// tasks/cancel, an unknown id and an expired task all get the one
// -32602; a client that did not declare the extension gets -32021.
func TestIsolation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
		clock := func() time.Time { return now }
		f := newFixture(t, &tasks.Options{TTL: time.Minute, Now: clock})
		f.bodies["quick"] = func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			return mcp.TextResult("q"), nil
		}
		id := f.start("alice", "quick")
		synctest.Wait()
		var messages []string
		for _, c := range []struct{ who, method, members string }{
			{"mallory", mcp.MethodGetTask, `"taskId":"` + id + `"`},
			{"mallory", mcp.MethodCancelTask, `"taskId":"` + id + `"`},
			{"mallory", mcp.MethodUpdateTask, `"taskId":"` + id + `","inputResponses":{}`},
			{"alice", mcp.MethodGetTask, `"taskId":"no-such-task"`},
			{"alice", mcp.MethodCancelTask, `"taskId":"no-such-task"`},
		} {
			_, err := f.call(c.who, c.method, c.members)
			messages = append(messages, wantCode(t, err, jsonrpc.CodeInvalidParams).Message)
		}
		for _, m := range messages[1:] {
			if m != messages[0] {
				t.Errorf("refusals differ: %q vs %q", m, messages[0])
			}
		}
		_, err := f.callAs("alice", false, mcp.MethodGetTask, `"taskId":"`+id+`"`)
		wantCode(t, err, -32021)
		_, err = f.callAs("alice", false, mcp.MethodCallTool, `"name":"quick"`) // Declared says no: no task
		wantCode(t, err, -32021)

		now = now.Add(time.Minute - time.Millisecond)
		f.mustGet("alice", id) // readable until its ttlMs has passed
		now = now.Add(time.Millisecond)
		_, err = f.get("alice", id)
		if e := wantCode(t, err, jsonrpc.CodeInvalidParams); e.Message != messages[0] {
			t.Errorf("an expired task: %q", e.Message)
		}
	})
}

// TestStoreBound: one principal cannot hold more tasks than the store
// allows; the error names the limit, and another principal is not
// affected.
func TestStoreBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := tasks.NewMemoryStore(&tasks.MemoryStoreOptions{PerPrincipal: 2})
		f := newFixture(t, &tasks.Options{Store: store})
		block := make(chan struct{})
		f.bodies["wait"] = func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			select {
			case <-block:
			case <-ctx.Done():
			}
			return mcp.TextResult("x"), nil
		}
		f.start("alice", "wait")
		f.start("alice", "wait")
		_, err := f.call("alice", mcp.MethodCallTool, `"name":"wait"`)
		if e := wantCode(t, err, jsonrpc.CodeInvalidRequest); !strings.Contains(e.Message, "limit is 2") {
			t.Errorf("refusal %q", e.Message)
		}
		f.start("bob", "wait")
		close(block)
		synctest.Wait()
	})
}

// TestProgress: Run.Progress is the statusMessage of a working task, and
// changes nothing once the task was cancelled.
func TestProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, nil)
		next := make(chan struct{})
		f.bodies["p"] = func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			run.Progress(ctx, 1, 3, "")
			<-next
			run.Progress(ctx, 2, 3, "late")
			<-next
			return nil, ctx.Err()
		}
		id := f.start("alice", "p")
		synctest.Wait()
		if g := f.mustGet("alice", id); g.StatusMessage != "1 of 3" {
			t.Errorf("statusMessage %q", g.StatusMessage)
		}
		if _, err := f.call("alice", mcp.MethodCancelTask, `"taskId":"`+id+`"`); err != nil {
			t.Fatal(err)
		}
		next <- struct{}{}
		synctest.Wait()
		if g := f.mustGet("alice", id); g.Status != mcp.TaskCancelled || g.StatusMessage != "1 of 3" {
			t.Errorf("after a cancel: %q (%s)", g.StatusMessage, g.Status)
		}
		close(next)
	})
}

// TestResultType: a completed task's result is a complete 2026-07-28
// CallToolResult, resultType included (the TypeScript tasks client
// validates it as one), whatever resultType the body set; a task stored
// before results carried it is served with it added, its content intact.
func TestResultType(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, nil)
		f.bodies["done"] = func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			return mcp.TextResult("ok"), nil
		}
		f.bodies["odd"] = func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			res := mcp.TextResult("odd")
			res.ResultType = mcp.ResultTypeInputRequired
			return res, nil
		}
		for name, want := range map[string]string{
			"done": `{"resultType":"complete","content":[{"type":"text","text":"ok"}]}`,
			"odd":  `{"resultType":"complete","content":[{"type":"text","text":"odd"}]}`,
		} {
			id := f.start("alice", name)
			synctest.Wait()
			if g := f.mustGet("alice", id); string(g.ToolResult) != want {
				t.Errorf("%s: result %s, want %s", name, g.ToolResult, want)
			}
			if r, err := f.store.Get(context.Background(), id); err != nil || string(r.Result) != want {
				t.Errorf("%s: stored %s (%v), want %s", name, r.Result, err, want)
			}
		}

		now := time.Now().UTC()
		for i, c := range []struct{ stored, want string }{
			{`{"content":[{"type":"text","text":"old"}],"isError":true}`, `{"resultType":"complete","content":[{"type":"text","text":"old"}],"isError":true}`},
			{` { "content":[] }`, `{"resultType":"complete","content":[]}`}, // served compact
			{`{}`, `{"resultType":"complete"}`},
			{`{"_meta":{"x":1},"resultType":"complete","content":[]}`, `{"_meta":{"x":1},"resultType":"complete","content":[]}`},
		} {
			stored, want := c.stored, c.want
			id := "old-" + strconv.Itoa(i)
			if err := f.store.Create(context.Background(), &tasks.Record{ID: id, Principal: "", Status: mcp.TaskCompleted, Created: now, Updated: now, Result: json.RawMessage(stored)}); err != nil {
				t.Fatal(err)
			}
			g := f.mustGet("", id)
			if string(g.ToolResult) != want {
				t.Errorf("stored %s: served %s, want %s", stored, g.ToolResult, want)
			}
			var res mcp.CallToolResult
			if err := json.Unmarshal(g.ToolResult, &res); err != nil || res.ResultType != mcp.ResultTypeComplete {
				t.Errorf("served %s: %v", g.ToolResult, err)
			}
		}
	})
}
