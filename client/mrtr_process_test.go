package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport/stdio"
)

// The two-process test re-executes the test binary in a role, chosen by
// mrtrRoleEnv, before any test runs:
//
//   - "server": mrtrServer on stdin and stdout;
//   - "resume": a fresh client that reads the Pending in the file named by
//     mrtrPendingEnv, answers it with its own callback, continues the call
//     against a server process of its own, and prints the result.
const (
	mrtrRoleEnv    = "PARLEY_MRTR_TEST_ROLE"
	mrtrPendingEnv = "PARLEY_MRTR_TEST_PENDING"
)

func init() {
	switch os.Getenv(mrtrRoleEnv) {
	case "":
		return
	case "server":
		if err := mrtrServer().ServeConn(context.Background(), stdio.ServerConn(nil)); err != nil {
			fmt.Fprintln(os.Stderr, "mrtr server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case "resume":
		if err := resume(os.Getenv(mrtrPendingEnv)); err != nil {
			fmt.Fprintln(os.Stderr, "resume:", err)
			os.Exit(1)
		}
		os.Exit(0)
	default:
		fmt.Fprintln(os.Stderr, "unknown role", os.Getenv(mrtrRoleEnv))
		os.Exit(2)
	}
}

// mrtrServerCommand returns the command that runs a server process.
func mrtrServerCommand(exe string) *exec.Cmd {
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = childEnv(mrtrRoleEnv + "=server")
	return cmd
}

func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, mrtrRoleEnv+"=") && !strings.HasPrefix(kv, mrtrPendingEnv+"=") {
			env = append(env, kv)
		}
	}
	// Under -race a child would sleep a second at exit otherwise.
	env = append(env, "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	return append(env, extra...)
}

// resume is process B: it has never seen the call, only the file.
func resume(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var p client.Pending
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := mrtrServerCommand(exe)
	c := client.New(mcp.Implementation{Name: "worker-b", Version: "1"}, &client.Options{
		Logger: quiet(),
		Elicit: func(ctx context.Context, req mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			fmt.Printf("asked: %s\n", req.(*mcp.ElicitRequestFormParams).Message)
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "eu-west-1"}}, nil
		},
	})
	ctx := context.Background()
	sess, err := c.Connect(ctx, stdio.NewCommandTransport(cmd, &stdio.CommandOptions{Stderr: os.Stderr}))
	if err != nil {
		return err
	}
	defer sess.Close()
	fmt.Printf("server pid %d\n", cmd.Process.Pid)
	in, err := sess.Fulfil(ctx, &p)
	if err != nil {
		return err
	}
	res, next, err := sess.Continue(ctx, &p, in)
	if err != nil {
		return err
	}
	if next != nil {
		return fmt.Errorf("the server asks again: %+v", next)
	}
	fmt.Println(text(res.(*mcp.CallToolResult)))
	return sess.Close()
}

// A call begun in one process is finished in another: process A begins it
// and writes the Pending to a file; process B, a fresh client with its own
// callback, reads the file and continues the call against a server process
// that never saw round 1.
func TestResumeInAnotherProcess(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("cannot find the test binary: %v", err)
	}
	ctx := context.Background()

	// Process A: declares elicitation but cannot answer it itself.
	serverA := mrtrServerCommand(exe)
	stderr := new(syncBuffer)
	a := newClient(&client.Options{Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}})
	sess, err := a.Connect(ctx, stdio.NewCommandTransport(serverA, &stdio.CommandOptions{Stderr: stderr}))
	if err != nil {
		t.Fatalf("Connect: %v (server stderr: %s)", err, stderr)
	}
	call := mustToolCall(t, "one", map[string]string{"name": "orders"})
	res, p, err := sess.Begin(ctx, call)
	if err != nil || p == nil {
		sess.Close()
		t.Fatalf("Begin = %v, %+v, %v", res, p, err)
	}
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/pending.json"
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := sess.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if !serverA.ProcessState.Success() {
		t.Fatalf("server A ended with %v", serverA.ProcessState)
	}

	// Process B.
	b := exec.Command(exe, "-test.run=^$")
	b.Env = childEnv(mrtrRoleEnv+"=resume", mrtrPendingEnv+"="+path)
	var stdout, berr syncBuffer
	b.Stdout, b.Stderr = &stdout, &berr
	if err := b.Run(); err != nil {
		t.Fatalf("process B: %v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &berr)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("process B printed %q", lines)
	}
	// Round 2 was served by another server process than round 1.
	if pid, ok := strings.CutPrefix(lines[0], "server pid "); !ok || pid == strconv.Itoa(serverA.Process.Pid) {
		t.Errorf("process B used server %q, process A used pid %d", lines[0], serverA.Process.Pid)
	}
	if lines[1] != "asked: Which region should orders live in?" {
		t.Errorf("process B was asked %q", lines[1])
	}
	if lines[2] != "orders in eu-west-1" {
		t.Errorf("process B's result %q, want %q", lines[2], "orders in eu-west-1")
	}
}
