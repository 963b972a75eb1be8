package redisstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/parley-mcp/parley/internal/redistest"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/tasks"
	"github.com/parley-mcp/parley/tasks/redisstore"
)

// t0 is the injected clocks' start: ahead of the real time, which Redis
// uses for PXAT, so that nothing the tests write has expired for Redis.
var t0 = time.Now().UTC().Truncate(time.Second).Add(24 * time.Hour)

// clock is an injected clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func record(id, principal string, expires time.Time) *tasks.Record {
	return &tasks.Record{ID: id, Principal: principal, Caller: principal, Status: mcp.TaskWorking, Created: t0, Updated: t0, Expires: expires}
}

// TestStore: what a Store promises, against a real Redis: a record reads
// back as written (every field), an update applies atomically and is
// kept, an unknown id and an expired task are ErrNotFound from exactly
// their expiry, and an id is never stored twice.
func TestStore(t *testing.T) {
	rs := redistest.Start(t)
	clk := &clock{now: t0}
	s := redisstore.New(rs.Client(t), &redisstore.Options{Now: clk.Now})
	ctx := context.Background()
	r := record("t1", "p", t0.Add(time.Hour))
	r.Pending = mcp.InputRequests{"q": mcp.NewElicitFormRequest("q?", mcp.ElicitRequestedSchema{})}
	r.Answers = mcp.InputResponses{"q": json.RawMessage(`{"action":"decline"}`)}
	r.Owner, r.LeaseUntil, r.StatusMessage = "a", t0.Add(time.Minute), "half"
	r.Result, r.Error = json.RawMessage(`{"content":[]}`), json.RawMessage(`{"code":1,"message":"m"}`)
	if err := s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(r)
	if b, _ := json.Marshal(got); string(b) != string(want) {
		t.Errorf("read back\n%s\nwant\n%s", b, want)
	}
	if err := s.Create(ctx, record("t1", "p", t0.Add(time.Hour))); err == nil {
		t.Error("a second record with one id was stored")
	}
	up, err := s.Update(ctx, "t1", func(r *tasks.Record) error { r.Status = mcp.TaskCompleted; return nil })
	if err != nil || up.Status != mcp.TaskCompleted {
		t.Fatalf("update: %+v %v", up, err)
	}
	refuse := errors.New("no")
	if _, err := s.Update(ctx, "t1", func(r *tasks.Record) error { r.Status = mcp.TaskFailed; return refuse }); err != refuse {
		t.Errorf("f's error came back as %v", err)
	}
	if got, _ := s.Get(ctx, "t1"); got.Status != mcp.TaskCompleted {
		t.Errorf("a refused update was kept: %s", got.Status)
	}
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	if _, err := s.Update(ctx, "nope", func(*tasks.Record) error { return nil }); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("updating an unknown id: %v", err)
	}
	clk.add(time.Hour - time.Nanosecond)
	if _, err := s.Get(ctx, "t1"); err != nil {
		t.Errorf("a nanosecond before expiry: %v", err)
	}
	clk.add(time.Nanosecond)
	if _, err := s.Get(ctx, "t1"); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("at expiry: %v", err)
	}
	if _, err := s.Update(ctx, "t1", func(*tasks.Record) error { return nil }); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("updating at expiry: %v", err)
	}
	// Redis forgets the key by itself, at the expiry rounded up to a ms.
	if pt := rs.Client(t).PExpireTime(ctx, "parley:tasks:task:t1").Val(); pt != time.Duration(t0.Add(time.Hour).UnixMilli())*time.Millisecond {
		t.Errorf("PEXPIRETIME %v", pt)
	}
}

// TestPerPrincipal: a principal at its limit is refused with
// ErrStoreFull, another principal is not, and an expired task frees its
// share.
func TestPerPrincipal(t *testing.T) {
	rs := redistest.Start(t)
	clk := &clock{now: t0}
	s := redisstore.New(rs.Client(t), &redisstore.Options{Now: clk.Now, PerPrincipal: 3})
	ctx := context.Background()
	for i := range 3 {
		if err := s.Create(ctx, record("a"+strconv.Itoa(i), "burner", t0.Add(time.Duration(i+1)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Create(ctx, record("a3", "burner", t0.Add(time.Hour))); !errors.Is(err, tasks.ErrStoreFull) {
		t.Fatalf("over the limit: %v", err)
	}
	if err := s.Create(ctx, record("b0", "someone else", t0.Add(time.Hour))); err != nil {
		t.Fatalf("another principal: %v", err)
	}
	clk.add(time.Minute - time.Millisecond)
	if err := s.Create(ctx, record("a3", "burner", t0.Add(time.Hour))); !errors.Is(err, tasks.ErrStoreFull) {
		t.Fatalf("before the first task expired: %v", err)
	}
	clk.add(time.Millisecond)
	if err := s.Create(ctx, record("a3", "burner", t0.Add(time.Hour))); err != nil {
		t.Fatalf("once the first task expired: %v", err)
	}
}

// TestConcurrentUpdates: updates racing from many clients are all kept
// (WATCH retries the losers).
func TestConcurrentUpdates(t *testing.T) {
	rs := redistest.Start(t)
	s := redisstore.New(rs.Client(t), &redisstore.Options{MaxRetries: 1000})
	ctx := context.Background()
	if err := s.Create(ctx, record("c", "p", time.Now().Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			_, err := s.Update(ctx, "c", func(r *tasks.Record) error {
				k, _ := strconv.Atoi(r.StatusMessage)
				r.StatusMessage = strconv.Itoa(k + 1)
				return nil
			})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if r, _ := s.Get(ctx, "c"); r.StatusMessage != strconv.Itoa(n) {
		t.Errorf("%s of %d updates kept", r.StatusMessage, n)
	}
}

// TestFailsClosed: without Redis every call fails with an error that is
// neither "not found" nor "full", and the manager answers -32603.
func TestFailsClosed(t *testing.T) {
	rs := redistest.Start(t)
	s := redisstore.New(rs.Client(t), nil)
	a := newInstance(t, s, nil)
	rs.Stop()
	ctx := context.Background()
	for what, err := range map[string]error{
		"create": s.Create(ctx, record("x", "", time.Now().Add(time.Hour))),
		"get":    second(s.Get(ctx, "x")),
		"update": second(s.Update(ctx, "x", func(*tasks.Record) error { return nil })),
		"notify": s.Notify(ctx, "x"),
	} {
		if err == nil || errors.Is(err, tasks.ErrNotFound) || errors.Is(err, tasks.ErrStoreFull) {
			t.Errorf("%s without Redis: %v", what, err)
		}
	}
	_, err := a.call(mcp.MethodCallTool, `"name":"hang"`)
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != jsonrpc.CodeInternalError {
		t.Errorf("tools/call without Redis: %v", err)
	}
	_, err = a.call(mcp.MethodGetTask, `"taskId":"x"`)
	if !errors.As(err, &e) || e.Code != jsonrpc.CodeInternalError {
		t.Errorf("tasks/get without Redis: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

// instance is one server of a fleet, with the tasks extension on a
// shared store; its tools are "hang" (waits for cancel) and "ask" (one
// question, completing with the answer's action).
type instance struct {
	t       *testing.T
	s       *server.Server
	started chan context.Context
}

func newInstance(t *testing.T, st tasks.Store, opts *tasks.Options) *instance {
	in := &instance{t: t, s: server.New(mcp.Implementation{Name: "fleet", Version: "1"}, nil), started: make(chan context.Context, 4)}
	if opts == nil {
		opts = &tasks.Options{}
	}
	opts.Store = st
	m, err := tasks.Enable(in.s, opts)
	if err != nil {
		t.Fatal(err)
	}
	in.s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return m.Start(ctx, req, func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			in.started <- ctx
			if p.Name == "hang" {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			answers, err := run.Ask(ctx, mcp.InputRequests{"go": mcp.NewElicitFormRequest("go?", mcp.ElicitRequestedSchema{})})
			if err != nil {
				return nil, err
			}
			var a struct{ Action string }
			json.Unmarshal(answers["go"], &a)
			return mcp.TextResult(a.Action), nil
		})
	})
	return in
}

func (in *instance) call(method, members string) (json.RawMessage, error) {
	params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}},` + members + `}`
	res, err := in.s.Handle(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: method, Params: json.RawMessage(params)}, nil)
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

func (in *instance) get(id string) *mcp.GetTaskResult {
	in.t.Helper()
	b, err := in.call(mcp.MethodGetTask, `"taskId":"`+id+`"`)
	if err != nil {
		in.t.Fatal(err)
	}
	var g mcp.GetTaskResult
	if err := json.Unmarshal(b, &g); err != nil {
		in.t.Fatal(err)
	}
	return &g
}

func (in *instance) start(tool string) string {
	in.t.Helper()
	b, err := in.call(mcp.MethodCallTool, `"name":"`+tool+`"`)
	if err != nil {
		in.t.Fatal(err)
	}
	var c mcp.CreateTaskResult
	if err := json.Unmarshal(b, &c); err != nil || c.TaskID == "" {
		in.t.Fatalf("tools/call: %s %v", b, err)
	}
	return c.TaskID
}

// TestAcrossInstances: a task started at a is seen at b, answered at b
// and completed by a; another, cancelled at b, ends a's body. The leases
// are an hour long, so only Redis's word can carry the answer and the
// cancel in the time the test waits.
func TestAcrossInstances(t *testing.T) {
	rs := redistest.Start(t)
	long := &tasks.Options{Lease: time.Hour}
	a := newInstance(t, redisstore.New(rs.Client(t), nil), long)
	b := newInstance(t, redisstore.New(rs.Client(t), nil), &tasks.Options{Lease: time.Hour})

	id := a.start("ask")
	testwait.Recv(t, a.started, "the body to start")
	waitStatus(t, b, id, mcp.TaskInputRequired)
	if _, err := b.call(mcp.MethodUpdateTask, `"taskId":"`+id+`","inputResponses":{"go":{"action":"decline"}}`); err != nil {
		t.Fatal(err)
	}
	g := waitStatus(t, b, id, mcp.TaskCompleted)
	if want := `{"resultType":"complete","content":[{"type":"text","text":"decline"}]}`; string(g.ToolResult) != want {
		t.Errorf("result %s, want %s", g.ToolResult, want)
	}

	id = a.start("hang")
	ctx := testwait.Recv(t, a.started, "the body to start")
	// a listens before b cancels, so that only the word published now can
	// reach it (not a's re-reading when it begins to listen).
	for deadline := time.Now().Add(testwait.FailAfter); ; time.Sleep(5 * time.Millisecond) {
		n := rs.Client(t).PubSubNumSub(context.Background(), redisstore.DefaultPrefix+"changed").Val()
		if n[redisstore.DefaultPrefix+"changed"] > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a never subscribed to task changes")
		}
	}
	if _, err := b.call(mcp.MethodCancelTask, `"taskId":"`+id+`"`); err != nil {
		t.Fatal(err)
	}
	testwait.Recv(t, ctx.Done(), "the body's context to end after a cancel at the other instance")
	if g := a.get(id); g.Status != mcp.TaskCancelled {
		t.Errorf("at a: %+v", g)
	}
}

// TestInstanceDies: a task whose instance stopped renewing is failed by
// the first other instance that reads it after the lease (b's clock runs
// a lease ahead of a's: the instance that stopped is a, frozen).
func TestInstanceDies(t *testing.T) {
	rs := redistest.Start(t)
	const lease = 30 * time.Second
	a := newInstance(t, redisstore.New(rs.Client(t), nil), &tasks.Options{Lease: lease})
	later := func() time.Time { return time.Now().Add(lease) }
	b := newInstance(t, redisstore.New(rs.Client(t), &redisstore.Options{Now: later}), &tasks.Options{Lease: lease, Now: later})
	id := a.start("hang")
	ctx := testwait.Recv(t, a.started, "the body to start")
	g := b.get(id)
	var e jsonrpc.Error
	if g.Status != mcp.TaskFailed || json.Unmarshal(g.Error, &e) != nil || e.Message != tasks.LostMessage {
		t.Fatalf("at b, a lease later: %+v %s", g, g.Error)
	}
	// a learns of it at its next renewal, half a minute away; a cancel at
	// a ends the body now, and must not turn the failure into a cancel.
	if _, err := a.call(mcp.MethodCancelTask, `"taskId":"`+id+`"`); err != nil {
		t.Fatal(err)
	}
	testwait.Recv(t, ctx.Done(), "a's body to end")
	if g := a.get(id); g.Status != mcp.TaskFailed {
		t.Errorf("a cancel overwrote the failure: %+v", g)
	}
}

func waitStatus(t *testing.T, in *instance, id string, want mcp.TaskStatus) *mcp.GetTaskResult {
	t.Helper()
	deadline := time.Now().Add(testwait.FailAfter)
	for {
		g := in.get(id)
		if g.Status == want {
			return g
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %s after %v, want %s", id, g.Status, testwait.FailAfter, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestStoredBeforeResultType: a completed task written by a version that
// stored results without resultType (this JSON is what it wrote) is served
// with resultType "complete" added, the rest as it was.
func TestStoredBeforeResultType(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	created := time.Now().UTC().Truncate(time.Millisecond)
	old := `{"id":"old1","principal":"","status":"completed","created":"` + created.Format(time.RFC3339Nano) +
		`","updated":"` + created.Format(time.RFC3339Nano) + `","expires":"` + created.Add(time.Hour).Format(time.RFC3339Nano) +
		`","result":{"content":[{"type":"text","text":"from before"}]},"owner":"instance-1"}`
	if err := rs.Client(t).Set(ctx, redisstore.DefaultPrefix+"task:old1", old, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	a := newInstance(t, redisstore.New(rs.Client(t), nil), nil)
	g := a.get("old1")
	if want := `{"resultType":"complete","content":[{"type":"text","text":"from before"}]}`; g.Status != mcp.TaskCompleted || string(g.ToolResult) != want {
		t.Errorf("served %s %s, want %s", g.Status, g.ToolResult, want)
	}
}
