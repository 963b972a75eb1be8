package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/tasks"
)

// Bounds on what one caller's tasks hold (issue 30 §1), and the promises
// of issue 30 §5 that no test held.

// waiter is a body that works until its context ends, and reports that
// context on started.
func waiter(started chan<- context.Context) tasks.Body {
	return func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
		if started != nil {
			started <- ctx
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
}

// drain lets every task of the default TTL expire, which ends the bodies.
func drain() {
	time.Sleep(2 * time.Hour)
	synctest.Wait()
}

// startFrom calls the tool name from the client at addr, unauthenticated,
// and returns the new task's id, or the error.
func (f *fixture) startFrom(addr, name string) (string, error) {
	b, err := f.callFrom(addr, "", mcp.MethodCallTool, `"name":"`+name+`"`)
	if err != nil {
		return "", err
	}
	var c mcp.CreateTaskResult
	if err := json.Unmarshal(b, &c); err != nil || c.TaskID == "" {
		f.t.Fatalf("tools/call answered %s (%v)", b, err)
	}
	return c.TaskID, nil
}

// TestUnauthenticatedCallers: without authentication the store's bound
// is per client address, not one for all: a client at its bound is
// refused with an error naming the limit, and a client at another address
// is not. The task itself is bound to no one: its id is what protects it,
// so another unauthenticated client that has the id reads and cancels it
// (the documented choice, design record 037), while an authenticated
// principal does not.
func TestUnauthenticatedCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := tasks.NewMemoryStore(&tasks.MemoryStoreOptions{MaxOpenPerCaller: 2})
		f := newFixture(t, &tasks.Options{Store: store})
		f.bodies["wait"] = waiter(nil)
		var ids []string
		for range 2 {
			id, err := f.startFrom("192.0.2.1", "wait")
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		_, err := f.startFrom("192.0.2.1", "wait")
		if e := wantCode(t, err, jsonrpc.CodeInvalidRequest); !strings.Contains(e.Message, "the limit is 2") {
			t.Errorf("refusal %q", e.Message)
		}
		if _, err := f.startFrom("198.51.100.7", "wait"); err != nil {
			t.Errorf("another address was refused: %v", err)
		}
		if _, err := f.callFrom("198.51.100.7", "", mcp.MethodGetTask, `"taskId":"`+ids[0]+`"`); err != nil {
			t.Errorf("an unauthenticated task is not served by its id alone: %v", err)
		}
		_, err = f.callFrom("192.0.2.1", "mallory", mcp.MethodGetTask, `"taskId":"`+ids[0]+`"`)
		wantCode(t, err, jsonrpc.CodeInvalidParams)
		if _, err := f.callFrom("198.51.100.7", "", mcp.MethodCancelTask, `"taskId":"`+ids[0]+`"`); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if _, err := f.startFrom("192.0.2.1", "wait"); err != nil {
			t.Errorf("a cancelled task still counts against its caller: %v", err)
		}
		drain()
	})
}

// TestFinishedTasks: only open tasks count against MaxOpenPerCaller, so
// finished ones never lock their caller out; the finished tasks kept per
// caller are bounded by MaxFinishedPerCaller, beyond which the one that
// finished longest ago is forgotten.
func TestFinishedTasks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := tasks.NewMemoryStore(&tasks.MemoryStoreOptions{MaxOpenPerCaller: 2, MaxFinishedPerCaller: 3})
		f := newFixture(t, &tasks.Options{Store: store})
		f.bodies["quick"] = func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			return mcp.TextResult("q"), nil
		}
		var ids []string
		for i := range 4 {
			id, err := f.startFrom("192.0.2.1", "quick")
			if err != nil {
				t.Fatalf("task %d: %v", i, err)
			}
			ids = append(ids, id)
			synctest.Wait()
			time.Sleep(time.Second) // each finishes a second after the one before
		}
		_, err := f.callFrom("192.0.2.1", "", mcp.MethodGetTask, `"taskId":"`+ids[0]+`"`)
		wantCode(t, err, jsonrpc.CodeInvalidParams) // finished first: forgotten for the fourth
		for _, id := range ids[1:] {
			if g := f.mustGet("", id); g.Status != mcp.TaskCompleted {
				t.Errorf("task %s: %s", id, g.Status)
			}
		}
		if n := store.Len(); n != 3 {
			t.Errorf("the store holds %d tasks, want 3", n)
		}
	})
}

// TestExpiryGivesShareBack: an expired task gives its caller's share of
// the store back, and its body's context ends (nobody can read what it
// would return).
func TestExpiryGivesShareBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := tasks.NewMemoryStore(&tasks.MemoryStoreOptions{MaxOpenPerCaller: 1})
		f := newFixture(t, &tasks.Options{Store: store, TTL: time.Minute})
		started := make(chan context.Context, 2)
		f.bodies["wait"] = waiter(started)
		id, err := f.startFrom("192.0.2.1", "wait")
		if err != nil {
			t.Fatal(err)
		}
		body := <-started
		if _, err := f.startFrom("192.0.2.1", "wait"); err == nil {
			t.Fatal("a second open task was allowed")
		}
		time.Sleep(time.Minute - time.Nanosecond)
		synctest.Wait()
		if body.Err() != nil {
			t.Fatal("the body ended before its task expired")
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if !errors.Is(body.Err(), context.DeadlineExceeded) {
			t.Errorf("the body of an expired task: %v", body.Err())
		}
		if _, err := f.startFrom("192.0.2.1", "wait"); err != nil {
			t.Errorf("after its task expired the caller is refused: %v", err)
		}
		<-started
		_, err = f.get("", id)
		wantCode(t, err, jsonrpc.CodeInvalidParams)
		if n := store.Len(); n != 1 {
			t.Errorf("the store holds %d tasks, want 1 (the expired one dropped)", n)
		}
		drain()
	})
}

// TestNegativeTTL: a negative TTL means no limit, as documented: ttlMs is
// null on the wire, and the task is readable, and its body runs, a
// century later.
func TestNegativeTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, &tasks.Options{TTL: -1})
		started := make(chan context.Context, 1)
		f.bodies["wait"] = waiter(started)
		b, err := f.call("alice", mcp.MethodCallTool, `"name":"wait"`)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"ttlMs":null`) {
			t.Errorf("CreateTaskResult %s: want ttlMs null", b)
		}
		var c mcp.CreateTaskResult
		json.Unmarshal(b, &c)
		body := <-started
		time.Sleep(100 * 365 * 24 * time.Hour)
		synctest.Wait()
		if g := f.mustGet("alice", c.TaskID); g.Status != mcp.TaskWorking || g.TTLMs != nil {
			t.Errorf("a century later: %+v", g)
		}
		if body.Err() != nil {
			t.Errorf("the body ended: %v", body.Err())
		}
		if _, err := f.call("alice", mcp.MethodCancelTask, `"taskId":"`+c.TaskID+`"`); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
	})
}

// TestUpdateWhileWorking: tasks/update for a task that works (not waiting
// for input) is refused with -32602 and is not taken as an answer: the
// question the task asks next is still open.
func TestUpdateWhileWorking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, nil)
		next := make(chan struct{})
		f.bodies["later"] = func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			<-next
			_, err := run.Ask(ctx, mcp.InputRequests{"go": mcp.NewElicitFormRequest("go?", mcp.ElicitRequestedSchema{})})
			return nil, err
		}
		id := f.start("alice", "later")
		synctest.Wait()
		_, err := f.call("alice", mcp.MethodUpdateTask, `"taskId":"`+id+`","inputResponses":{"go":{"action":"accept","content":{}}}`)
		if e := wantCode(t, err, jsonrpc.CodeInvalidParams); !strings.Contains(e.Message, "not waiting for input") {
			t.Errorf("refusal %q", e.Message)
		}
		close(next)
		synctest.Wait()
		if g := f.mustGet("alice", id); g.Status != mcp.TaskInputRequired || g.InputRequests["go"] == nil {
			t.Errorf("an update sent while working answered the next question: %+v", g)
		}
		drain()
	})
}

// TestPrincipalHookFails: a principal hook that fails at the task's start
// refuses the tools/call with -32603 and creates no task (not one bound to
// no principal).
func TestPrincipalHookFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := server.New(mcp.Implementation{Name: "tasks", Version: "1"}, nil)
		store := tasks.NewMemoryStore(nil)
		m, err := tasks.Enable(s, &tasks.Options{Store: store, Principal: func(context.Context, *server.Request) (string, error) {
			return "", errors.New("the identity service is down")
		}})
		if err != nil {
			t.Fatal(err)
		}
		ran := false
		s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
			return m.Start(ctx, req, func(context.Context, *tasks.Run) (*mcp.CallToolResult, error) {
				ran = true
				return mcp.TextResult("x"), nil
			})
		})
		f := &fixture{t: t, s: s}
		_, err = f.call("", mcp.MethodCallTool, `"name":"x"`)
		wantCode(t, err, jsonrpc.CodeInternalError)
		synctest.Wait()
		if store.Len() != 0 || ran {
			t.Errorf("a failed principal hook left %d tasks (body ran: %v)", store.Len(), ran)
		}
	})
}

// opaque is a Store that is not a MemoryStore (and hides its Notifier).
type opaque struct{ tasks.Store }

// TestDefaultLease: a store other than the MemoryStore gets the default
// lease of 30 seconds; the MemoryStore gets none.
func TestDefaultLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, c := range []struct {
			name  string
			store func(*tasks.MemoryStore) tasks.Store
			want  time.Duration
		}{
			{"memory", func(m *tasks.MemoryStore) tasks.Store { return m }, 0},
			{"other", func(m *tasks.MemoryStore) tasks.Store { return &opaque{m} }, 30 * time.Second},
		} {
			mem := tasks.NewMemoryStore(nil)
			f := newFixture(t, &tasks.Options{Store: c.store(mem)})
			f.bodies["wait"] = waiter(nil)
			id := f.start("alice", "wait")
			r, err := mem.Get(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.LeaseUntil.Sub(r.Created); r.LeaseUntil.IsZero() && c.want != 0 || !r.LeaseUntil.IsZero() && got != c.want {
				t.Errorf("%s store: lease %v (until %v), want %v", c.name, got, r.LeaseUntil, c.want)
			}
			drain()
		}
	})
}

// vanishing is a store from which a task's entry can disappear (an
// operator deleted the key, say), with or without word of it.
type vanishing struct {
	*tasks.MemoryStore
	mu   sync.Mutex
	gone map[string]bool
}

func (v *vanishing) vanish(id string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.gone[id] = true
}

func (v *vanishing) isGone(id string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.gone[id]
}

func (v *vanishing) Get(ctx context.Context, id string) (*tasks.Record, error) {
	if v.isGone(id) {
		return nil, tasks.ErrNotFound
	}
	return v.MemoryStore.Get(ctx, id)
}

func (v *vanishing) Update(ctx context.Context, id string, f func(*tasks.Record) error) (*tasks.Record, error) {
	if v.isGone(id) {
		return nil, tasks.ErrNotFound
	}
	return v.MemoryStore.Update(ctx, id, f)
}

// TestEntryGone: a task whose stored entry is gone has its body cancelled,
// at the next lease renewal without word, and at once with word.
func TestEntryGone(t *testing.T) {
	t.Run("renewal", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			v := &vanishing{MemoryStore: tasks.NewMemoryStore(nil), gone: map[string]bool{}}
			f := newFixture(t, &tasks.Options{Store: &opaque{v}, Lease: lease, TTL: -1})
			started := make(chan context.Context, 1)
			f.bodies["wait"] = waiter(started)
			id := f.start("alice", "wait")
			body := <-started
			v.vanish(id)
			time.Sleep(lease/3 - time.Nanosecond)
			synctest.Wait()
			if body.Err() != nil {
				t.Fatal("the body ended before a renewal")
			}
			time.Sleep(time.Nanosecond)
			synctest.Wait()
			if body.Err() == nil {
				t.Error("the renewal found the entry gone and left the body running")
			}
		})
	})
	t.Run("word", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			v := &vanishing{MemoryStore: tasks.NewMemoryStore(nil), gone: map[string]bool{}}
			f := newFixture(t, &tasks.Options{Store: v, Lease: -1, TTL: -1})
			started := make(chan context.Context, 1)
			f.bodies["wait"] = waiter(started)
			id := f.start("alice", "wait")
			body := <-started
			v.vanish(id)
			v.Notify(context.Background(), id)
			synctest.Wait()
			if body.Err() == nil {
				t.Error("word of a task whose entry is gone left the body running")
			}
		})
	})
}

// TestAnswerBounds: an answer over MaxAnswerBytes, answers of one task
// over MaxTaskAnswerBytes, and answers of one caller's tasks over the
// store's MaxAnswerBytesPerCaller are refused with an error naming the
// limit, and change nothing; a task that got its answers gives its
// caller's share back.
func TestAnswerBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := tasks.NewMemoryStore(&tasks.MemoryStoreOptions{MaxAnswerBytesPerCaller: 500})
		f := newFixture(t, &tasks.Options{Store: store, MaxAnswerBytes: 200, MaxTaskAnswerBytes: 300})
		f.bodies["two"] = func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			_, err := run.Ask(ctx, mcp.InputRequests{
				"a": mcp.NewElicitFormRequest("a?", mcp.ElicitRequestedSchema{}),
				"b": mcp.NewElicitFormRequest("b?", mcp.ElicitRequestedSchema{}),
			})
			if err != nil {
				return nil, err
			}
			return mcp.TextResult("answered"), nil
		}
		// answer is an accepted elicitation whose JSON is n bytes.
		answer := func(n int) string {
			pre, post := `{"action":"accept","content":{"v":"`, `"}}`
			return pre + strings.Repeat("x", n-len(pre)-len(post)) + post
		}
		update := func(id, members string) error {
			_, err := f.callFrom("192.0.2.1", "", mcp.MethodUpdateTask, `"taskId":"`+id+`","inputResponses":{`+members+`}`)
			return err
		}
		open := func(id string) int {
			return len(f.mustGet("", id).InputRequests)
		}
		var ids []string
		for range 4 {
			id, err := f.startFrom("192.0.2.1", "two")
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		synctest.Wait()

		e := wantCode(t, update(ids[0], `"a":`+answer(201)), jsonrpc.CodeInvalidParams)
		if !strings.Contains(e.Message, "201 bytes") || !strings.Contains(e.Message, "the limit is 200 bytes per answer") {
			t.Errorf("one answer too large: %q", e.Message)
		}
		if err := update(ids[0], `"a":`+answer(200)); err != nil {
			t.Fatalf("an answer at the limit: %v", err)
		}
		e = wantCode(t, update(ids[0], `"b":`+answer(101)), jsonrpc.CodeInvalidParams)
		if !strings.Contains(e.Message, "the limit is 300 bytes per task") {
			t.Errorf("a task's answers too large: %q", e.Message)
		}
		if n := open(ids[0]); n != 1 {
			t.Errorf("after a refused answer %d questions are open, want 1", n)
		}
		if err := update(ids[1], `"a":`+answer(200)); err != nil {
			t.Fatal(err)
		}
		// 400 bytes held while the tasks wait for more; 101 more is over
		// the caller's 500.
		e = wantCode(t, update(ids[2], `"a":`+answer(101)), jsonrpc.CodeInvalidRequest)
		if !strings.Contains(e.Message, "the limit is 500 bytes") {
			t.Errorf("a caller's answers too large: %q", e.Message)
		}
		if n := open(ids[2]); n != 2 {
			t.Errorf("after a refused answer %d questions are open, want 2", n)
		}
		if err := update(ids[2], `"a":`+answer(100)); err != nil {
			t.Fatalf("at the caller's limit: %v", err)
		}
		// Another caller has its own share.
		other, err := f.startFrom("198.51.100.7", "two")
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if _, err := f.callFrom("198.51.100.7", "", mcp.MethodUpdateTask, `"taskId":"`+other+`","inputResponses":{"a":`+answer(200)+`}`); err != nil {
			t.Errorf("another caller: %v", err)
		}
		// A last answer is not held (the body takes it at once), so a
		// caller at its limit still completes its tasks; the task then
		// gives its share back.
		wantCode(t, update(ids[3], `"a":`+answer(200)), jsonrpc.CodeInvalidRequest)
		if err := update(ids[0], `"b":`+answer(100)); err != nil {
			t.Fatalf("a last answer at the caller's limit: %v", err)
		}
		synctest.Wait()
		if g := f.mustGet("", ids[0]); g.Status != mcp.TaskCompleted {
			t.Fatalf("first task: %s", g.Status)
		}
		if err := update(ids[3], `"a":`+answer(200)); err != nil {
			t.Errorf("after a task released its answers: %v", err)
		}
		drain()
	})
}

// TestPollIntervalPerTask: StartWith's PollInterval is the task's
// pollIntervalMs, at its creation and in tasks/get; other tasks keep the
// manager's.
func TestPollIntervalPerTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := server.New(mcp.Implementation{Name: "tasks", Version: "1"}, nil)
		m, err := tasks.Enable(s, &tasks.Options{Principal: who, PollInterval: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
			body := func(context.Context, *tasks.Run) (*mcp.CallToolResult, error) { return mcp.TextResult("x"), nil }
			if p.Name == "slow" {
				return m.StartWith(ctx, req, &tasks.StartOptions{PollInterval: time.Minute}, body)
			}
			return m.Start(ctx, req, body)
		})
		f := &fixture{t: t, s: s}
		for name, want := range map[string]int64{"slow": 60000, "other": 2000} {
			b, err := f.call("alice", mcp.MethodCallTool, `"name":"`+name+`"`)
			if err != nil {
				t.Fatal(err)
			}
			var c mcp.CreateTaskResult
			json.Unmarshal(b, &c)
			synctest.Wait()
			if g := f.mustGet("alice", c.TaskID); c.PollIntervalMs != want || g.PollIntervalMs != want {
				t.Errorf("%s: pollIntervalMs %d at creation, %d in tasks/get, want %d", name, c.PollIntervalMs, g.PollIntervalMs, want)
			}
		}
	})
}
