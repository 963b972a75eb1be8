package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/tasks"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// Tasks mode (-tasks N): N tasks of the job tool created through -url,
// each then polled, answered or cancelled at an instance picked at random
// from -instances (NAME=URL,...); with -kill NAME=PID, instance NAME is
// killed (SIGKILL) once every task waits for its answer, and the rest goes
// to the others. Every task must end as it should: completed, or
// cancelled where it was cancelled, or failed with tasks.LostMessage exactly
// when its instance was the one killed (a task of the killed instance that
// was cancelled before its lease ran out may end cancelled). The last line is
//
//	tasks: <n> created, <c> completed, <x> cancelled, <l> lost with their instance, <s> stuck, <w> wrong
//
// and the exit status is 1 unless stuck and wrong are 0 (and, with -kill,
// some task was lost with its instance).

// taskOutcome is what became of one task.
type taskOutcome int

const (
	outCompleted taskOutcome = iota
	outCancelled
	outLost
	outStuck
	outWrong
)

type fleetTask struct {
	id, owner string
	n         int
	cancel    bool // cancelled at another instance instead of answered
}

func taskClient() *client.Client {
	return client.New(mcp.Implementation{Name: "fleet-tasks", Version: "1.0.0"}, &client.Options{
		Extensions: map[string]json.RawMessage{mcp.ExtensionTasks: nil},
	})
}

func runTasks(ctx context.Context, url string, instances []string, n int, kill string) error {
	var sessions []*client.Session
	var names []string
	for _, spec := range instances {
		name, u, ok := strings.Cut(spec, "=")
		if !ok {
			return fmt.Errorf("-instances: %q is not NAME=URL", spec)
		}
		sess, err := taskClient().Connect(ctx, streamhttp.NewClientTransport(u, nil))
		if err != nil {
			return fmt.Errorf("connecting to %s: %w", u, err)
		}
		defer sess.Close()
		sessions = append(sessions, sess)
		names = append(names, name)
	}
	lb, err := taskClient().Connect(ctx, streamhttp.NewClientTransport(url, nil))
	if err != nil {
		return err
	}
	defer lb.Close()

	// Create through the load balancer; learn each task's instance from
	// its question, read at a random instance.
	list := make([]*fleetTask, n)
	for i := range list {
		res, task, err := lb.StartTool(ctx, "job", map[string]int{"n": i})
		if err != nil {
			return fmt.Errorf("creating task %d: %w", i, err)
		}
		if task == nil {
			return fmt.Errorf("job %d answered at once (%v), not with a task", i, res)
		}
		list[i] = &fleetTask{id: task.ID, n: i, cancel: i%5 == 4}
	}
	deadline := time.Now().Add(30 * time.Second)
	for i, ft := range list {
		for ft.owner == "" {
			j := rand.IntN(len(sessions))
			g, err := sessions[j].Task(ft.id).Status(ctx)
			if err != nil {
				return fmt.Errorf("task %d at %s: %w", i, names[j], err)
			}
			if g.Status == mcp.TaskInputRequired {
				if q, ok := g.InputRequests["go"].(*mcp.ElicitRequest); ok {
					if form, ok := q.Params.(*mcp.ElicitRequestFormParams); ok {
						ft.owner, _, _ = strings.Cut(strings.TrimPrefix(form.Message, "instance "), ":")
					}
				}
				if ft.owner == "" {
					return fmt.Errorf("task %d asks %v", i, g.InputRequests)
				}
				continue
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("task %d is %s, not asking, after 30s", i, g.Status)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	owners := map[string]int{}
	for _, ft := range list {
		owners[ft.owner]++
	}
	fmt.Fprintf(os.Stderr, "tasks: %d created, waiting on %v\n", n, owners)

	// The sessions that still reach a live instance.
	live := sessions
	victim := ""
	if kill != "" {
		name, pidText, ok := strings.Cut(kill, "=")
		var pid int
		if _, err := fmt.Sscan(pidText, &pid); !ok || err != nil {
			return fmt.Errorf("-kill %q: want NAME=PID", kill)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return fmt.Errorf("killing %s: %w", name, err)
		}
		victim = name
		fmt.Fprintf(os.Stderr, "tasks: killed %s with %d tasks in flight\n", name, owners[name])
		live = nil
		for i := range sessions {
			if names[i] != name {
				live = append(live, sessions[i])
			}
		}
		if len(live) == 0 {
			return errors.New("-kill names the only instance")
		}
	}

	// Answer or cancel each at a live instance.
	for i, ft := range list {
		sess := live[rand.IntN(len(live))]
		t := sess.Task(ft.id)
		if ft.cancel {
			err = t.Cancel(ctx)
		} else {
			err = t.Respond(ctx, map[string]mcp.InputResponse{"go": &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"ok": true}}})
		}
		// A dead instance's task may already be failed: refused, and
		// judged below.
		if err != nil && ft.owner != victim {
			return fmt.Errorf("task %d: %w", i, err)
		}
	}

	counts := map[taskOutcome]int{}
	deadline = time.Now().Add(60 * time.Second)
	for i, ft := range list {
		o := settle(ctx, live, ft, victim, deadline)
		if o == outStuck || o == outWrong {
			fmt.Fprintf(os.Stderr, "tasks: task %d (owner %s) is %s\n", i, ft.owner, map[taskOutcome]string{outStuck: "stuck", outWrong: "wrong"}[o])
		}
		counts[o]++
	}
	fmt.Printf("tasks: %d created, %d completed, %d cancelled, %d lost with their instance, %d stuck, %d wrong\n",
		n, counts[outCompleted], counts[outCancelled], counts[outLost], counts[outStuck], counts[outWrong])
	if counts[outStuck] > 0 || counts[outWrong] > 0 {
		return errors.New("tasks were stuck or ended wrongly")
	}
	if victim != "" && counts[outLost] == 0 {
		return fmt.Errorf("no task was lost with the killed instance, which ran %d", owners[victim])
	}
	return nil
}

// settle polls ft at live instances until it ends, and judges its end.
func settle(ctx context.Context, live []*client.Session, ft *fleetTask, victim string, deadline time.Time) taskOutcome {
	for time.Now().Before(deadline) {
		g, err := live[rand.IntN(len(live))].Task(ft.id).Status(ctx)
		if err != nil {
			fmt.Fprintf(os.Stderr, "tasks: polling %s: %v\n", ft.id, err)
			return outWrong
		}
		res, done, err := client.TaskResult(g)
		if !done {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		var rpc *jsonrpc.Error
		switch {
		case ft.owner == victim && errors.As(err, &rpc) && rpc.Message == tasks.LostMessage:
			return outLost
		case ft.owner == victim && ft.cancel && errors.Is(err, client.ErrTaskCancelled):
			return outCancelled // cancelled at a live instance before its lease ran out
		case ft.owner == victim:
			fmt.Fprintf(os.Stderr, "tasks: job %d of the killed instance ended %s (%v)\n", ft.n, g.Status, err)
			return outWrong
		case ft.cancel && errors.Is(err, client.ErrTaskCancelled):
			return outCancelled
		case !ft.cancel && err == nil && len(res.Content) == 1:
			if text, ok := res.Content[0].(*mcp.TextContent); ok && text.Text == fmt.Sprintf("job %d done", ft.n) {
				return outCompleted
			}
		}
		fmt.Fprintf(os.Stderr, "tasks: job %d ended %s: %+v %v\n", ft.n, g.Status, res, err)
		return outWrong
	}
	return outStuck
}
