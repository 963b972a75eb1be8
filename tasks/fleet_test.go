package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/tasks"
)

// Two instances share one store, as a fleet shares Redis: tasks started on
// one are read, answered and cancelled at the other.

const lease = 3 * time.Second

// partition is a Store that can be cut off from its instance, as a store
// is for an instance that died or lost its network. It hides the store's
// Notifier, so the instance behind it hears of changes only through its
// lease renewals.
type partition struct {
	tasks.Store
	cut atomic.Bool
}

var errCut = errors.New("partitioned")

func (p *partition) Create(ctx context.Context, r *tasks.Record) error {
	if p.cut.Load() {
		return errCut
	}
	return p.Store.Create(ctx, r)
}

func (p *partition) Get(ctx context.Context, id string) (*tasks.Record, error) {
	if p.cut.Load() {
		return nil, errCut
	}
	return p.Store.Get(ctx, id)
}

func (p *partition) Update(ctx context.Context, id string, f func(*tasks.Record) error) (*tasks.Record, error) {
	if p.cut.Load() {
		return nil, errCut
	}
	return p.Store.Update(ctx, id, f)
}

// pair returns instance a (on store sa) and instance b (on the shared
// store itself), with leases.
func pair(t *testing.T, shared *tasks.MemoryStore, sa tasks.Store) (a, b *fixture) {
	a = newFixture(t, &tasks.Options{Store: sa, Lease: lease, Instance: "a"})
	b = newFixture(t, &tasks.Options{Store: shared, Lease: lease, Instance: "b"})
	return a, b
}

// asker is a body that asks one question and completes with its answer's
// action; started reports its context, so the test sees it end.
func asker(started chan<- context.Context) tasks.Body {
	return func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
		started <- ctx
		answers, err := run.Ask(ctx, mcp.InputRequests{"go": mcp.NewElicitFormRequest("go?", mcp.ElicitRequestedSchema{})})
		if err != nil {
			return nil, err
		}
		var r struct{ Action string }
		json.Unmarshal(answers["go"], &r)
		return mcp.TextResult(r.Action), nil
	}
}

// TestLeaseLapses: when the instance running a task stops renewing its
// lease, the task stays working until exactly the lease's end and is
// failed, with an error that says why, by the first instance that reads it
// after; an update is then refused and a cancel is a no-op.
func TestLeaseLapses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := tasks.NewMemoryStore(nil)
		cutA := &partition{Store: shared}
		a, b := pair(t, shared, cutA)
		a.bodies["hang"] = func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		id := a.start("alice", "hang")
		// While a renews, its lease outlives many lease periods.
		time.Sleep(5 * lease)
		if g := b.mustGet("alice", id); g.Status != mcp.TaskWorking {
			t.Fatalf("a renewing instance's task: %+v", g)
		}
		// a renews at every multiple of lease/3, now among them (Wait lets
		// that renewal finish); from its last renewal the lease runs for
		// lease.
		synctest.Wait()
		cutA.cut.Store(true)
		lastRenewal := time.Now()
		time.Sleep(lease - time.Nanosecond)
		if g := b.mustGet("alice", id); g.Status != mcp.TaskWorking {
			t.Fatalf("a nanosecond before the lease ends (renewed at %v): %+v", lastRenewal, g)
		}
		time.Sleep(time.Nanosecond)
		g := b.mustGet("alice", id)
		if g.Status != mcp.TaskFailed {
			t.Fatalf("at the lease's end: %+v", g)
		}
		var e jsonrpc.Error
		if err := json.Unmarshal(g.Error, &e); err != nil || e.Code != jsonrpc.CodeInternalError || e.Message != tasks.LostMessage {
			t.Errorf("a lost task's error: %s", g.Error)
		}
		_, err := b.call("alice", mcp.MethodUpdateTask, `"taskId":"`+id+`","inputResponses":{}`)
		wantCode(t, err, jsonrpc.CodeInvalidParams)
		if _, err := b.call("alice", mcp.MethodCancelTask, `"taskId":"`+id+`"`); err != nil {
			t.Errorf("cancelling a lost task: %v", err)
		}
		if g := b.mustGet("alice", id); g.Status != mcp.TaskFailed {
			t.Errorf("a lost task changed after a cancel: %+v", g)
		}
		// a, reconnected, learns at its next renewal that its task ended,
		// and stops the body.
		cutA.cut.Store(false)
		time.Sleep(lease / 3)
		synctest.Wait()
		if g := a.mustGet("alice", id); g.Status != mcp.TaskFailed {
			t.Errorf("the failure was overwritten: %+v", g)
		}
	})
}

// TestLeaseLapsesOnUpdate: the first instance to touch a lapsed task with
// tasks/update (not tasks/get) fails it too, and refuses the answer.
func TestLeaseLapsesOnUpdate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := tasks.NewMemoryStore(nil)
		cutA := &partition{Store: shared}
		a, b := pair(t, shared, cutA)
		started := make(chan context.Context, 1)
		a.bodies["ask"] = asker(started)
		id := a.start("alice", "ask")
		<-started
		synctest.Wait()
		cutA.cut.Store(true)
		time.Sleep(2 * lease)
		_, err := b.call("alice", mcp.MethodUpdateTask, `"taskId":"`+id+`","inputResponses":{"go":{"action":"accept","content":{}}}`)
		if e := wantCode(t, err, jsonrpc.CodeInvalidParams); e.Message == "" {
			t.Error("no message")
		}
		if g := b.mustGet("alice", id); g.Status != mcp.TaskFailed {
			t.Errorf("after an update of a lapsed task: %+v", g)
		}
		// a, reconnected, stops the body at its next renewal.
		cutA.cut.Store(false)
		time.Sleep(lease / 3)
		synctest.Wait()
	})
}

// asking runs f, in a bubble, twice: with the instances a and b sharing a
// store that carries word between them, and with a's word cut (a
// partition), so that only its lease renewals see what b did. Before f,
// a has started a task whose body asks a question; started is the body's
// context, and a listens for word.
func asking(t *testing.T, f func(t *testing.T, word bool, a, b *fixture, id string, started context.Context)) {
	for _, word := range []bool{true, false} {
		name := map[bool]string{true: "word", false: "renewal"}[word]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				shared := tasks.NewMemoryStore(nil)
				var sa tasks.Store = shared
				if !word {
					sa = &partition{Store: shared}
				}
				a, b := pair(t, shared, sa)
				started := make(chan context.Context, 1)
				a.bodies["ask"] = asker(started)
				id := a.start("alice", "ask")
				ctx := <-started
				synctest.Wait() // the body waits for its answer; a listens for word
				f(t, word, a, b, id, ctx)
			})
		})
	}
}

// TestAnsweredElsewhere: an answer given at another instance reaches the
// body: at once when the store carries word between instances, and by
// the next renewal (lease/3) when it does not.
func TestAnsweredElsewhere(t *testing.T) {
	asking(t, func(t *testing.T, word bool, a, b *fixture, id string, _ context.Context) {
		if g := b.mustGet("alice", id); g.Status != mcp.TaskInputRequired {
			t.Fatalf("at b: %+v", g)
		}
		if _, err := b.call("alice", mcp.MethodUpdateTask, `"taskId":"`+id+`","inputResponses":{"go":{"action":"decline"}}`); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		g := b.mustGet("alice", id)
		if word != (g.Status == mcp.TaskCompleted) {
			t.Fatalf("with word %v, at once: %+v", word, g)
		}
		time.Sleep(lease / 3)
		synctest.Wait()
		if g := b.mustGet("alice", id); g.Status != mcp.TaskCompleted || string(g.ToolResult) == "" {
			t.Fatalf("after a renewal: %+v", g)
		}
	})
}

// TestCancelledElsewhere: tasks/cancel at another instance ends the body's
// context: at once with word, by the next renewal without.
func TestCancelledElsewhere(t *testing.T) {
	asking(t, func(t *testing.T, word bool, a, b *fixture, id string, ctx context.Context) {
		if _, err := b.call("alice", mcp.MethodCancelTask, `"taskId":"`+id+`"`); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if word != (ctx.Err() != nil) {
			t.Fatalf("with word %v, the body's context at once: %v", word, ctx.Err())
		}
		time.Sleep(lease / 3)
		synctest.Wait()
		if ctx.Err() == nil {
			t.Fatal("the body still runs after a renewal")
		}
		if g := a.mustGet("alice", id); g.Status != mcp.TaskCancelled {
			t.Errorf("at a: %+v", g)
		}
	})
}

// gated is a shared store whose watch starts only when the test opens
// the gate: word sent before then reaches nobody.
type gated struct {
	*tasks.MemoryStore
	gate chan struct{}
}

func (g *gated) Watch(ctx context.Context, f func(string)) error {
	<-g.gate
	return g.MemoryStore.Watch(ctx, f)
}

// TestWordBeforeWatching: a cancel whose word was sent before the running
// instance listened reaches the body as soon as it listens (the watch
// says so, and the manager re-reads its tasks), with no lease renewals to
// fall back on.
func TestWordBeforeWatching(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := tasks.NewMemoryStore(nil)
		g := &gated{MemoryStore: shared, gate: make(chan struct{})}
		a := newFixture(t, &tasks.Options{Store: g, Lease: -1, TTL: -1}) // no expiry either: nothing but word ends the body
		b := newFixture(t, &tasks.Options{Store: shared, Lease: -1})
		started := make(chan context.Context, 1)
		a.bodies["ask"] = asker(started)
		id := a.start("alice", "ask")
		ctx := <-started
		if _, err := b.call("alice", mcp.MethodCancelTask, `"taskId":"`+id+`"`); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if ctx.Err() != nil {
			t.Fatal("the body ended with no word and no lease: the test proves nothing")
		}
		close(g.gate)
		synctest.Wait()
		if ctx.Err() == nil {
			t.Fatal("the body runs on after its instance began to listen")
		}
	})
}
