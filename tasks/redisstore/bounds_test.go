package redisstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/parley-mcp/parley/internal/redistest"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/tasks"
	"github.com/parley-mcp/parley/tasks/redisstore"
)

// finish is an update that completes the task.
func finish(r *tasks.Record) error {
	r.Status, r.Result = mcp.TaskCompleted, json.RawMessage(`{"content":[]}`)
	return nil
}

// TestOpenAndFinished: only open tasks count against MaxOpenPerCaller, per
// caller; the bound survives the expiry of the caller's oldest task (its
// set lives as long as the longest-lived task in it), and an expired task
// gives its share back; finished tasks beyond MaxFinishedPerCaller are
// forgotten, the one finished longest ago first.
func TestOpenAndFinished(t *testing.T) {
	rs := redistest.Start(t)
	rdb := rs.Client(t)
	clk := &clock{now: t0}
	s := redisstore.New(rdb, &redisstore.Options{Now: clk.Now, MaxOpenPerCaller: 2, MaxFinishedPerCaller: 2})
	ctx := context.Background()
	create := func(id string, expires time.Time) error { return s.Create(ctx, record(id, "c", expires)) }
	pexpiretime := func(key string) time.Time {
		return time.UnixMilli(int64(rdb.PExpireTime(ctx, redisstore.DefaultPrefix+key).Val() / time.Millisecond)).UTC()
	}

	if err := create("o1", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := create("o2", t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := create("o3", t0.Add(time.Hour)); !errors.Is(err, tasks.ErrStoreFull) || !strings.Contains(err.Error(), "the limit is 2") {
		t.Fatalf("a third open task: %v", err)
	}
	if err := s.Create(ctx, record("x1", "another caller", t0.Add(time.Hour))); err != nil {
		t.Fatalf("another caller: %v", err)
	}
	if got, want := pexpiretime("open:c"), t0.Add(2*time.Minute); !got.Equal(want) {
		t.Errorf("the open set expires at %v, want %v (its longest-lived task's expiry)", got, want)
	}
	clk.add(time.Minute) // o1 expires
	if err := create("o3", t0.Add(time.Hour)); err != nil {
		t.Fatalf("after the oldest task expired: %v", err)
	}
	if err := create("o4", t0.Add(time.Hour)); !errors.Is(err, tasks.ErrStoreFull) {
		t.Fatalf("the bound did not survive the oldest task's expiry: %v", err)
	}
	if _, err := s.Update(ctx, "o2", finish); err != nil {
		t.Fatal(err)
	}
	if err := create("o4", t0.Add(time.Hour)); err != nil {
		t.Fatalf("a finished task still counts as open: %v", err)
	}
	clk.add(time.Second)
	if _, err := s.Update(ctx, "o3", finish); err != nil {
		t.Fatal(err)
	}
	clk.add(time.Second)
	if _, err := s.Update(ctx, "o4", finish); err != nil { // the third finished: o2, finished first, goes
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "o2"); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("the task finished longest ago is still there: %v", err)
	}
	for _, id := range []string{"o3", "o4"} {
		if r, err := s.Get(ctx, id); err != nil || r.Status != mcp.TaskCompleted {
			t.Errorf("%s: %v %v", id, r, err)
		}
	}
	if n := rdb.Exists(ctx, redisstore.DefaultPrefix+"task:o2").Val(); n != 0 {
		t.Error("the forgotten task's key is still in Redis")
	}
	if got, want := pexpiretime("finished:c"), t0.Add(time.Hour); !got.Equal(want) {
		t.Errorf("the finished set expires at %v, want %v", got, want)
	}
}

// TestAnswersPerCaller: the answers held by one caller's waiting tasks
// are bounded (ErrAnswersFull naming the limit, the task unchanged); a
// last answer is not held; a task that got its answers, or whose key Redis
// expired, gives its share back.
func TestAnswersPerCaller(t *testing.T) {
	rs := redistest.Start(t)
	rdb := rs.Client(t)
	s := redisstore.New(rdb, &redisstore.Options{MaxAnswerBytesPerCaller: 300})
	ctx := context.Background()
	for _, id := range []string{"a1", "a2", "a3", "a4"} {
		r := record(id, "d", time.Now().Add(time.Hour))
		r.Status = mcp.TaskInputRequired
		r.Pending = mcp.InputRequests{
			"x": mcp.NewElicitFormRequest("x?", mcp.ElicitRequestedSchema{}),
			"y": mcp.NewElicitFormRequest("y?", mcp.ElicitRequestedSchema{}),
		}
		if err := s.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	answer := func(key string, n int) func(*tasks.Record) error {
		return func(r *tasks.Record) error {
			if r.Answers == nil {
				r.Answers = mcp.InputResponses{}
			}
			r.Answers[key] = json.RawMessage(`{"v":"` + strings.Repeat("x", n-8) + `"}`) // n bytes
			return nil
		}
	}
	if _, err := s.Update(ctx, "a1", answer("x", 200)); err != nil {
		t.Fatal(err)
	}
	_, err := s.Update(ctx, "a2", answer("x", 101))
	if !errors.Is(err, tasks.ErrAnswersFull) || !strings.Contains(err.Error(), "the limit is 300 bytes") {
		t.Fatalf("over the caller's bound: %v", err)
	}
	if r, _ := s.Get(ctx, "a2"); len(r.Answers) != 0 {
		t.Errorf("a refused update was kept: %v", r.Answers)
	}
	if _, err := s.Update(ctx, "a2", answer("x", 100)); err != nil {
		t.Fatalf("at the bound: %v", err)
	}
	// a1's last answer: not held, and a1 holds nothing more from now on.
	if _, err := s.Update(ctx, "a1", answer("y", 200)); err != nil {
		t.Fatalf("a last answer: %v", err)
	}
	if _, err := s.Update(ctx, "a3", answer("x", 200)); err != nil {
		t.Fatalf("after a task got every answer: %v", err)
	}
	// a3's key expires in Redis (deleted here): its 200 bytes are free.
	rdb.Del(ctx, redisstore.DefaultPrefix+"task:a3")
	if _, err := s.Update(ctx, "a4", answer("x", 200)); err != nil {
		t.Fatalf("after a holding task expired: %v", err)
	}
	if _, err := s.Update(ctx, "a2", answer("y", 50)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, "a4", answer("y", 50)); err != nil {
		t.Fatal(err)
	}
	if n := rdb.Exists(ctx, redisstore.DefaultPrefix+"answers:d").Val(); n != 0 {
		t.Error("the answers of a caller whose tasks hold none are still counted")
	}
}

// TestRecordBeforeCaller: a record written before records named their
// caller is counted under its principal, as it was then.
func TestRecordBeforeCaller(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	created := time.Now().UTC().Truncate(time.Millisecond)
	old := `{"id":"old2","principal":"p-hash","status":"working","created":"` + created.Format(time.RFC3339Nano) +
		`","updated":"` + created.Format(time.RFC3339Nano) + `","expires":"` + created.Add(time.Hour).Format(time.RFC3339Nano) + `"}`
	if err := rs.Client(t).Set(ctx, redisstore.DefaultPrefix+"task:old2", old, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	r, err := redisstore.New(rs.Client(t), nil).Get(ctx, "old2")
	if err != nil || r.Caller != "p-hash" {
		t.Errorf("an old record reads as %+v (%v), want Caller p-hash", r, err)
	}
}

// TestResubscription: after the subscription to task changes is lost and
// taken up again, Watch says so (f("")), so that the manager re-reads its
// tasks and no change published meanwhile is missed.
func TestResubscription(t *testing.T) {
	rs := redistest.Start(t)
	rdb := rs.Client(t)
	s := redisstore.New(rdb, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	heard := make(chan string, 16)
	go s.Watch(ctx, func(id string) { heard <- id })
	if id := testwait.Recv(t, heard, "Watch to say it listens"); id != "" {
		t.Fatalf("first word %q, want \"\"", id)
	}
	if err := rdb.ClientKillByFilter(ctx, "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	if id := testwait.Recv(t, heard, "Watch to say it listens again after the subscription was lost"); id != "" {
		t.Fatalf("word %q after the subscription was lost, want \"\"", id)
	}
	for deadline := time.Now().Add(testwait.FailAfter); ; time.Sleep(5 * time.Millisecond) {
		if err := s.Notify(ctx, "t9"); err != nil {
			t.Fatal(err)
		}
		select {
		case id := <-heard:
			if id != "t9" {
				t.Fatalf("word %q, want t9", id)
			}
			return
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no word after the subscription was taken up again")
		}
	}
}
