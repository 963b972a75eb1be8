package redisstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/redistest"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/tasks"
	"github.com/parley-mcp/parley/tasks/redisstore"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// dying is a store that stops answering when its instance dies.
type dying struct {
	*redisstore.Store
	dead atomic.Bool
}

var errDead = errors.New("this instance is dead")

func (d *dying) Create(ctx context.Context, r *tasks.Record) error {
	if d.dead.Load() {
		return errDead
	}
	return d.Store.Create(ctx, r)
}

func (d *dying) Get(ctx context.Context, id string) (*tasks.Record, error) {
	if d.dead.Load() {
		return nil, errDead
	}
	return d.Store.Get(ctx, id)
}

func (d *dying) Update(ctx context.Context, id string, f func(*tasks.Record) error) (*tasks.Record, error) {
	if d.dead.Load() {
		return nil, errDead
	}
	return d.Store.Update(ctx, id, f)
}

// httpInstance is an mcpserver over HTTP with a "job" task tool that
// asks one question; it returns the instance's URL.
func httpInstance(t *testing.T, st tasks.Store) (url string, stop func()) {
	t.Helper()
	s, err := mcpserver.New(mcp.Implementation{Name: "fleet", Version: "1"}, &mcpserver.Options{
		Tasks: &tasks.Options{Store: st, Lease: 2 * time.Second, PollInterval: 10 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	type none struct{}
	err = mcpserver.AddTaskTool(s, &mcp.Tool{Name: "job"}, mcpserver.TaskRequired, func(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
		answers, err := tasks.FromContext(ctx).Ask(ctx, mcp.InputRequests{"go": mcp.NewElicitFormRequest("go?", mcp.ElicitRequestedSchema{})})
		if err != nil {
			return "", err
		}
		if r, err := answers.Elicit("go"); err != nil || !r.Accepted() {
			return "stopped", nil
		}
		return "done", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.HTTPHandler(nil))
	t.Cleanup(hs.Close)
	return hs.URL, hs.Close
}

func fleetClient(t *testing.T, url string) *client.Session {
	t.Helper()
	c := client.New(mcp.Implementation{Name: "c", Version: "1"}, &client.Options{
		Extensions: map[string]json.RawMessage{mcp.ExtensionTasks: nil},
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{}}, nil
		},
	})
	sess, err := c.Connect(context.Background(), streamhttp.NewClientTransport(url, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

// TestTaskOutlivesItsInstance: over HTTP, a task started at instance a is
// answered and completed through instance b; a task whose instance dies is
// reported by b, to a client that takes it up by id, as failed with the
// lost-instance error once its lease has run out, rather than working for
// ever.
func TestTaskOutlivesItsInstance(t *testing.T) {
	rs := redistest.Start(t)
	sa := &dying{Store: redisstore.New(rs.Client(t), nil)}
	urlA, stopA := httpInstance(t, sa)
	urlB, _ := httpInstance(t, redisstore.New(rs.Client(t), nil))
	atA, atB := fleetClient(t, urlA), fleetClient(t, urlB)
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()

	_, task, err := atA.StartTool(ctx, "job", nil)
	if err != nil || task == nil {
		t.Fatalf("StartTool: %v %v", task, err)
	}
	res, err := atB.Task(task.ID).Wait(ctx)
	if err != nil || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "done" {
		t.Fatalf("a task of a, answered through b: %+v %v", res, err)
	}

	_, task, err = atA.StartTool(ctx, "job", nil)
	if err != nil || task == nil {
		t.Fatalf("StartTool: %v %v", task, err)
	}
	stopA()
	sa.dead.Store(true)
	g, err := atB.Task(task.ID).Status(ctx)
	if err != nil || g.Status.Terminal() {
		t.Fatalf("right after a died, within the lease: %+v %v", g, err)
	}
	// Wait answers the task's question at b (accepted: its lease has not
	// run out) and then sees it fail.
	_, err = atB.Task(task.ID).Wait(ctx)
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInternalError || rpc.Message != tasks.LostMessage {
		t.Fatalf("the task of a dead instance: %v", err)
	}
}
