package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
	"github.com/parley-mcp/parley/transport/stdio"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// The tasks extension (io.modelcontextprotocol/tasks) between Parley and
// the extension's own TypeScript package, @modelcontextprotocol/ext-tasks
// (ts/package-lock.json pins it), both ways, over Streamable HTTP and
// stdio:
//
//   - TestParleyClientAgainstTypeScriptTasksServer: Parley's client against
//     ts/tasks-server.mjs, a TypeScript SDK server that checks every tasks
//     message against ext-tasks' schemas;
//   - TestTypeScriptTasksClientAgainstParley (tasks_server_test.go): the
//     ext-tasks client against a Parley server with task tools.
//
// Each runs the flows complete, tool error, failure, cancel, input needed
// mid-task, multi-round-trip rounds before the task, unknown id, another
// principal's id (HTTP only: stdio has no credentials, and a second stdio
// client is a second server process, to which every id is unknown), and
// checks from the server's record that the client kept the poll interval.

// tasksPollInterval is the pollIntervalMs both servers suggest.
const tasksPollInterval = 200 * time.Millisecond

// The bearer tokens of the two principals of the HTTP flows.
const (
	aliceToken = "alice-token"
	bobToken   = "bob-token"
)

// pollEvent is one line of a server's record of a task: its creation, or a
// tasks/get of it.
type pollEvent struct {
	task, what string
	at         time.Time
}

// readPollLog reads a server's record of its tasks, "<taskId>
// created|get <unix ms>" a line, in the order written.
func readPollLog(t *testing.T, path string) []pollEvent {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []pollEvent
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 {
			t.Fatalf("poll log line %q", sc.Text())
		}
		ms, err := strconv.ParseInt(fields[2], 10, 64)
		if err != nil {
			t.Fatalf("poll log line %q: %v", sc.Text(), err)
		}
		out = append(out, pollEvent{fields[0], fields[1], time.UnixMilli(ms)})
	}
	return out
}

// checkPacing checks the tasks created in events: each was polled at
// least minGets times, and never sooner than half the interval after the
// last word about it (its creation or the previous poll). The client
// counts the interval from the answer, which the server sends after it
// records the request, so a correct client's gaps as recorded are a full
// interval or more whatever the load on the machine; half is the margin
// for the clock's millisecond resolution and nothing else, and a client
// that polls at once is caught all the same.
func checkPacing(t *testing.T, events []pollEvent, minGets int) {
	t.Helper()
	last := map[string]time.Time{}
	gets := map[string]int{}
	var order []string
	for _, e := range events {
		switch e.what {
		case "created":
			last[e.task] = e.at
			order = append(order, e.task)
		case "get":
			prev, ok := last[e.task]
			if !ok {
				continue // a task created before events begin
			}
			gets[e.task]++
			if gap := e.at.Sub(prev); gap < tasksPollInterval/2 {
				t.Errorf("task %s: poll %d came %v after the last word about it; the interval is %v", e.task, gets[e.task], gap, tasksPollInterval)
			}
			last[e.task] = e.at
		}
	}
	if len(order) == 0 {
		t.Error("the server recorded no task")
	}
	for _, id := range order {
		if gets[id] < minGets {
			t.Errorf("task %s was polled %d times, want at least %d", id, gets[id], minGets)
		}
	}
}

// startTasksServer starts ts/tasks-server.mjs over HTTP with its record in
// log, and returns its URL; it exits when the test ends.
func startTasksServer(t *testing.T, log string) string {
	t.Helper()
	cmd := nodeCommand(t, "tasks-server.mjs", "http", log)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Logf("tasks-server.mjs: %v", err)
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("tasks-server.mjs did not start: %v", err)
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok {
		t.Fatalf("tasks-server.mjs printed %q", line)
	}
	go io.Copy(io.Discard, stdout)
	return url
}

// tasksClient is a Parley client that declares the tasks extension and
// answers a form asking for a name with "Ada", counting the questions.
func tasksClient(asked *atomic.Int32) *client.Client {
	return client.New(mcp.Implementation{Name: "parley-interop", Version: "1.0.0"}, &client.Options{
		Logger:     slog.New(slog.DiscardHandler),
		Extensions: map[string]json.RawMessage{mcp.ExtensionTasks: nil},
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
	})
}

// TestParleyClientAgainstTypeScriptTasksServer: Parley's client, declaring
// the extension, calls the tools of ts/tasks-server.mjs, whose every task
// message parses with ext-tasks' schemas (a message of Parley's that does
// not is answered with an error naming the schema's complaint).
func TestParleyClientAgainstTypeScriptTasksServer(t *testing.T) {
	needNode(t)
	for _, kind := range []string{"http", "stdio"} {
		t.Run(kind, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "polls.log")
			var url string
			if kind == "http" {
				url = startTasksServer(t, log)
			}
			dial := func(t *testing.T, token string, asked *atomic.Int32) *client.Session {
				t.Helper()
				var tr transport.Transport
				if kind == "http" {
					tr = streamhttp.NewClientTransport(url, &streamhttp.ClientOptions{Header: http.Header{"Authorization": {"Bearer " + token}}})
				} else {
					tr = stdio.NewCommandTransport(nodeCommand(t, "tasks-server.mjs", "stdio", log), &stdio.CommandOptions{Stderr: testWriter{t}})
				}
				ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
				defer cancel()
				sess, err := tasksClient(asked).Connect(ctx, tr)
				if err != nil {
					t.Fatalf("Connect: %v", err)
				}
				t.Cleanup(func() { sess.Close() })
				if v := sess.ProtocolVersion(); v != mcp.LatestVersion {
					t.Fatalf("ProtocolVersion() = %q, want %q", v, mcp.LatestVersion)
				}
				if _, ok := sess.ServerExtension(mcp.ExtensionTasks); !ok {
					t.Fatalf("the server does not declare %s", mcp.ExtensionTasks)
				}
				return sess
			}
			var asked atomic.Int32
			sess := dial(t, aliceToken, &asked)
			ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
			defer cancel()

			// call calls tool as a task and checks the server's record of it:
			// polled at least three times (the server finishes a task's
			// work on its third tasks/get), never sooner than the interval.
			call := func(t *testing.T, tool string) (*mcp.CallToolResult, error) {
				t.Helper()
				before := len(readPollLog(t, log))
				res, err := sess.CallTool(ctx, tool, nil)
				checkPacing(t, readPollLog(t, log)[before:], 3)
				return res, err
			}
			t.Run("complete", func(t *testing.T) {
				res, err := call(t, "complete")
				if err != nil || res.IsError || text(res) != "done" {
					t.Fatalf("CallTool: %v %v", res, err)
				}
			})
			t.Run("tool-error", func(t *testing.T) {
				res, err := call(t, "tool_error")
				if err != nil || !res.IsError || text(res) != "the tool failed" {
					t.Fatalf("CallTool: %v %v", res, err)
				}
			})
			t.Run("failure", func(t *testing.T) {
				_, err := call(t, "fail")
				var rpcErr *jsonrpc.Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || rpcErr.Message != "Invalid params: bad input" {
					t.Fatalf("CallTool: %v, want the task's -32602", err)
				}
			})
			t.Run("input-mid-task", func(t *testing.T) {
				asked.Store(0)
				res, err := call(t, "ask_mid")
				if err != nil || text(res) != "hello Ada" {
					t.Fatalf("CallTool: %v %v", res, err)
				}
				if n := asked.Load(); n != 1 {
					t.Errorf("the person was asked %d times, want once (the server showed the answered question again)", n)
				}
			})
			t.Run("rounds-before-task", func(t *testing.T) {
				asked.Store(0)
				res, err := call(t, "ask_first")
				if err != nil || text(res) != "hello Ada" {
					t.Fatalf("CallTool: %v %v", res, err)
				}
				if n := asked.Load(); n != 1 {
					t.Errorf("the person was asked %d times, want once", n)
				}
			})
			t.Run("cancel", func(t *testing.T) {
				// By hand: StartTool, Cancel, and Wait reports the end.
				_, task, err := sess.StartTool(ctx, "wait", nil)
				if err != nil || task == nil {
					t.Fatalf("StartTool: %v %v", task, err)
				}
				if err := task.Cancel(ctx); err != nil {
					t.Fatal(err)
				}
				if _, err := task.Wait(ctx); !errors.Is(err, client.ErrTaskCancelled) {
					t.Errorf("Wait after Cancel: %v, want ErrTaskCancelled", err)
				}
				// By the caller giving up: CallTool cancels the task.
				before := len(readPollLog(t, log))
				short, stop := context.WithTimeout(ctx, 3*tasksPollInterval)
				defer stop()
				if _, err := sess.CallTool(short, "wait", nil); !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("CallTool past its deadline: %v", err)
				}
				var id string
				for _, e := range readPollLog(t, log)[before:] {
					if e.what == "created" {
						id = e.task
					}
				}
				g, err := sess.Task(id).Status(ctx)
				if err != nil || g.Status != mcp.TaskCancelled {
					t.Errorf("the task CallTool gave up on (%q): %+v %v, want cancelled", id, g, err)
				}
			})
			t.Run("unknown-id", func(t *testing.T) {
				_, err := sess.Task("no-such-task").Status(ctx)
				var rpcErr *jsonrpc.Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
					t.Fatalf("Status of an unknown id: %v, want -32602", err)
				}
			})
			if kind != "http" {
				return
			}
			t.Run("another-principal", func(t *testing.T) {
				_, task, err := sess.StartTool(ctx, "wait", nil)
				if err != nil || task == nil {
					t.Fatalf("StartTool: %v %v", task, err)
				}
				bob := dial(t, bobToken, new(atomic.Int32))
				var rpcErr *jsonrpc.Error
				if _, err := bob.Task(task.ID).Status(ctx); !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
					t.Errorf("another principal's Status: %v, want -32602", err)
				}
				if err := bob.Task(task.ID).Cancel(ctx); !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
					t.Errorf("another principal's Cancel: %v, want -32602", err)
				}
				if g, err := task.Status(ctx); err != nil || g.Status != mcp.TaskWorking {
					t.Errorf("the owner's Status: %+v %v, want working", g, err)
				}
				if err := task.Cancel(ctx); err != nil {
					t.Error(err)
				}
			})
		})
	}
}
