//go:build unix

package stdio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/parley-mcp/parley/transport"
)

// legacyMode is a child mode handled here rather than in runChild: a server
// that gives up on a server/discover probe as its first request, the way a
// 2025-11-25 server may, and echoes anything else. The test binary runs this
// init before TestMain, so child(legacyMode) works like any other mode.
const legacyMode = "legacy"

func init() {
	if os.Getenv(childEnv) == legacyMode {
		os.Exit(runLegacyChild())
	}
}

func runLegacyChild() int {
	ctx := context.Background()
	conn := ServerConn(nil)
	for first := true; ; first = false {
		msg, err := conn.Read(ctx)
		if err == io.EOF {
			return 0
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "child read:", err)
			return 101
		}
		reply := msg
		if first && bytes.Contains(msg, []byte(`"server/discover"`)) {
			reply = []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`)
		}
		if err := conn.Write(ctx, reply); err != nil {
			fmt.Fprintln(os.Stderr, "child write:", err)
			return 100
		}
		if !bytes.Equal(reply, msg) {
			return 1 // exit after the one line, as such a server may
		}
	}
}

// connCmd returns the command behind a connection from a CommandTransport.
func connCmd(t *testing.T, c transport.Conn) *exec.Cmd {
	t.Helper()
	cc, ok := c.(*commandConn)
	if !ok {
		t.Fatalf("connection is a %T, not a *commandConn", c)
	}
	return cc.cmd
}

// exited reports whether the server behind c has exited. (Reading its
// cmd.ProcessState before Close would race with the Wait that sets it.)
func exited(c transport.Conn) bool {
	select {
	case <-c.(*commandConn).exited:
		return true
	default:
		return false
	}
}

// echoes checks that c echoes a few messages.
func echoes(t *testing.T, c transport.Conn, tag string) {
	t.Helper()
	for i := range 3 {
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"tag":%q}}`, i, tag)
		if err := c.Write(background(), []byte(msg)); err != nil {
			t.Fatalf("%s: Write: %v", tag, err)
		}
		if got := mustRead(t, c); got != msg {
			t.Fatalf("%s: echo = %q, want %q", tag, got, msg)
		}
	}
}

// readEOF checks that c reaches io.EOF within failAfter.
func readEOF(t *testing.T, c transport.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(background(), failAfter)
	defer cancel()
	for {
		msg, err := c.Read(ctx)
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("Read = %v, want io.EOF", err)
		}
		t.Logf("Read %q before EOF", msg)
	}
}

// TestCommandRespawn is the client's fallback to a legacy server: the first
// process exits after the server/discover probe, and connecting again runs
// the same command afresh.
func TestCommandRespawn(t *testing.T) {
	cmd := child(legacyMode)
	tr := NewCommandTransport(cmd, nil)

	conn1, err := tr.Connect(background())
	if err != nil {
		t.Fatalf("first Connect: %v", err)
	}
	defer conn1.Close()
	if connCmd(t, conn1) != cmd {
		t.Fatal("first Connect did not start cmd itself")
	}
	if err := conn1.Write(background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"server/discover"}`)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if got := mustRead(t, conn1); !strings.Contains(got, `"Method not found"`) {
		t.Fatalf("probe answer = %q", got)
	}
	readEOF(t, conn1) // the first server is gone

	conn2, err := tr.Connect(background())
	if err != nil {
		t.Fatalf("second Connect: %v", err)
	}
	defer conn2.Close()
	cmd2 := connCmd(t, conn2)
	if cmd2 == cmd {
		t.Fatal("second Connect reused cmd")
	}
	if cmd2.Process.Pid == cmd.Process.Pid {
		t.Fatalf("both connections run pid %d", cmd.Process.Pid)
	}
	echoes(t, conn2, "before")

	// Closing the first connection reaps the first server, and only it.
	err = conn1.Close()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("first Close = %v, want exit status 1", err)
	}
	assertReaped(t, cmd)
	if exited(conn2) {
		t.Fatal("closing the first connection ended the second server")
	}
	echoes(t, conn2, "after")

	if err := conn2.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	assertReaped(t, cmd2)
	if !cmd2.ProcessState.Success() {
		t.Fatalf("second server ended with %v", cmd2.ProcessState)
	}
	if cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("cmd.ProcessState = %v, no longer the first server's", cmd.ProcessState)
	}
}

// TestCommandRespawnIndependent runs several servers from one transport at
// the same time: messages do not cross, and closing one leaves the others.
func TestCommandRespawnIndependent(t *testing.T) {
	tr := NewCommandTransport(child("echo"), nil)
	conns := make([]transport.Conn, 3)
	cmds := make([]*exec.Cmd, len(conns))
	for i := range conns {
		c, err := tr.Connect(background())
		if err != nil {
			t.Fatalf("Connect %d: %v", i, err)
		}
		t.Cleanup(func() { c.Close() })
		conns[i], cmds[i] = c, connCmd(t, c)
	}
	// Interleave the writes, then read each connection's echo back.
	for i, c := range conns {
		if err := c.Write(background(), fmt.Appendf(nil, `{"conn":%d}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range conns {
		if got, want := mustRead(t, c), fmt.Sprintf(`{"conn":%d}`, i); got != want {
			t.Fatalf("conn %d read %q, want %q", i, got, want)
		}
	}
	if err := conns[1].Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	assertReaped(t, cmds[1])
	for _, i := range []int{0, 2} {
		if exited(conns[i]) {
			t.Fatalf("closing conn 1 ended server %d", i)
		}
		echoes(t, conns[i], fmt.Sprint("conn ", i))
	}
	for _, i := range []int{0, 2} {
		if err := conns[i].Close(); err != nil {
			t.Fatalf("Close %d: %v", i, err)
		}
		assertReaped(t, cmds[i])
	}
}

// TestCommandRespawnConcurrent connects from many goroutines at once; run
// it under -race.
func TestCommandRespawnConcurrent(t *testing.T) {
	cmd := child("echo")
	tr := NewCommandTransport(cmd, nil)
	const n = 8
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		pids     = map[int]bool{}
		original atomic.Int32
	)
	for i := range n {
		wg.Go(func() {
			c, err := tr.Connect(background())
			if err != nil {
				t.Errorf("Connect: %v", err)
				return
			}
			defer c.Close()
			msg := fmt.Sprintf(`{"g":%d}`, i)
			if err := c.Write(background(), []byte(msg)); err != nil {
				t.Errorf("Write: %v", err)
				return
			}
			if got, err := c.Read(background()); err != nil || string(got) != msg {
				t.Errorf("Read = %q, %v; want %q", got, err, msg)
			}
			cc := c.(*commandConn).cmd
			if cc == cmd {
				original.Add(1)
			}
			mu.Lock()
			pids[cc.Process.Pid] = true
			mu.Unlock()
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
	wg.Wait()
	if len(pids) != n {
		t.Errorf("%d connections ran %d distinct processes", n, len(pids))
	}
	if got := original.Load(); got != 1 {
		t.Errorf("%d connections ran cmd itself, want 1", got)
	}
}

// TestCommandRespawnContext: copies of a CommandContext command run under
// the same context, but are killed rather than handed to cmd.Cancel.
func TestCommandRespawnContext(t *testing.T) {
	ctx, cancel := context.WithCancel(background())
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = child("echo").Env
	var cancels atomic.Int32
	cmd.Cancel = func() error {
		cancels.Add(1)
		return cmd.Process.Signal(syscall.SIGTERM)
	}
	tr := NewCommandTransport(cmd, nil)
	conn1, err := tr.Connect(background())
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer conn1.Close()
	conn2, err := tr.Connect(background())
	if err != nil {
		t.Fatalf("second Connect: %v", err)
	}
	defer conn2.Close()
	cmd2 := connCmd(t, conn2)
	echoes(t, conn1, "conn1")
	echoes(t, conn2, "conn2")

	cancel()
	readEOF(t, conn1)
	readEOF(t, conn2)
	var ee *exec.ExitError
	if err := conn1.Close(); !errors.As(err, &ee) {
		t.Fatalf("first Close = %v, want an exec.ExitError", err)
	}
	if err := conn2.Close(); !errors.As(err, &ee) {
		t.Fatalf("second Close = %v, want an exec.ExitError", err)
	}
	assertReaped(t, cmd)
	assertReaped(t, cmd2)
	if ws := waitStatus(cmd); !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("first server ended with %v, want cmd.Cancel's SIGTERM", cmd.ProcessState)
	}
	if ws := waitStatus(cmd2); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("second server ended with %v, want SIGKILL", cmd2.ProcessState)
	}
	if got := cancels.Load(); got != 1 {
		t.Errorf("cmd.Cancel called %d times, want once (for cmd only)", got)
	}

	// The context is over: no more servers.
	if c, err := tr.Connect(background()); !errors.Is(err, context.Canceled) {
		if err == nil {
			c.Close()
		}
		t.Fatalf("Connect after the context ended = %v, want context.Canceled", err)
	}
}

// TestCommandRespawnStderr: the copies write to the command's own Stderr.
func TestCommandRespawnStderr(t *testing.T) {
	var stderr syncBuf
	cmd := child("stderr")
	cmd.Stderr = &stderr
	tr := NewCommandTransport(cmd, nil)
	for i := range 2 {
		c, err := tr.Connect(background())
		if err != nil {
			t.Fatalf("Connect %d: %v", i, err)
		}
		echoes(t, c, fmt.Sprint("conn ", i))
		if err := c.Close(); err != nil {
			t.Fatalf("Close %d: %v", i, err)
		}
	}
	if got, want := stderr.String(), strings.Repeat("log line from child\n", 2); got != want {
		t.Fatalf("stderr = %q, want %q", got, want)
	}
}

// TestCommandConnectCancelledKeepsCommand: a Connect that fails on its
// context before starting anything leaves cmd for the next one.
func TestCommandConnectCancelledKeepsCommand(t *testing.T) {
	cmd := child("echo")
	tr := NewCommandTransport(cmd, nil)
	ctx, cancel := context.WithCancel(background())
	cancel()
	if _, err := tr.Connect(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Connect with cancelled ctx = %v", err)
	}
	c, err := tr.Connect(background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if connCmd(t, c) != cmd {
		t.Fatal("Connect after a cancelled one did not start cmd itself")
	}
}

// TestCommandCopySettings checks the copy a later Connect starts from: the
// original settings, before the first Connect changed them, sharing nothing
// mutable with cmd.
func TestCommandCopySettings(t *testing.T) {
	extra, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-x")
	cmd.Env = []string{"A=1", "B=2"}
	cmd.Dir = t.TempDir()
	cmd.ExtraFiles = []*os.File{extra}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	tr := NewCommandTransport(cmd, nil)
	if tr.command() != cmd {
		t.Fatal("the first command is not cmd itself")
	}
	// What the first Connect does to cmd must not reach the copies.
	cmd.Stdout, cmd.Stderr, cmd.WaitDelay = io.Discard, io.Discard, time.Second

	c1, c2 := tr.command(), tr.command()
	if c1 == cmd || c2 == cmd || c1 == c2 {
		t.Fatal("later commands are not fresh copies")
	}
	for _, c := range []*exec.Cmd{c1, c2} {
		if c.Path != cmd.Path || c.Dir != cmd.Dir ||
			!reflect.DeepEqual(c.Args, cmd.Args) || !reflect.DeepEqual(c.Env, cmd.Env) ||
			!reflect.DeepEqual(c.ExtraFiles, cmd.ExtraFiles) || !reflect.DeepEqual(c.SysProcAttr, cmd.SysProcAttr) {
			t.Fatalf("copy %+v differs from cmd %+v", c, cmd)
		}
		if c.Stdin != nil || c.Stdout != nil || c.Stderr != nil || c.WaitDelay != 0 || c.Cancel != nil {
			t.Fatalf("copy %+v has settings cmd did not start with", c)
		}
		if c.Process != nil || c.ProcessState != nil {
			t.Fatal("copy carries process state")
		}
	}
	c1.Args[0], c1.Env[0], c1.ExtraFiles[0] = "changed", "A=changed", nil
	c1.SysProcAttr.Setpgid = false
	if c2.Args[0] == "changed" || c2.Env[0] == "A=changed" || c2.ExtraFiles[0] == nil || !c2.SysProcAttr.Setpgid ||
		cmd.Args[0] == "changed" || cmd.Env[0] == "A=changed" || cmd.ExtraFiles[0] == nil || !cmd.SysProcAttr.Setpgid {
		t.Fatal("copies share settings with each other or with cmd")
	}
}

// syncBuf is a bytes.Buffer safe for concurrent use.
type syncBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
