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
	"syscall"
	"testing"
	"time"

	"github.com/parley-mcp/parley/transport"
)

// short shutdown timeouts for tests that expect the server to need a signal.
const short = 200 * time.Millisecond

// child returns a command that re-runs this test binary in the given mode.
func child(mode string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	// GORACE: under -race a child exiting 0 would otherwise sleep a second.
	cmd.Env = append(os.Environ(), childEnv+"="+mode, "GORACE=atexit_sleep_ms=0")
	return cmd
}

// connectChild starts a child and registers a Close at cleanup.
func connectChild(t *testing.T, mode string, opts *CommandOptions) (*exec.Cmd, transport.Conn) {
	t.Helper()
	cmd := child(mode)
	conn, err := NewCommandTransport(cmd, opts).Connect(background())
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return cmd, conn
}

// assertReaped checks that the child has been waited for and no longer
// exists, not even as a zombie.
func assertReaped(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if cmd.ProcessState == nil {
		t.Fatal("cmd.ProcessState is nil after Close: child not waited for")
	}
	if err := syscall.Kill(cmd.Process.Pid, 0); err != syscall.ESRCH {
		t.Fatalf("kill(%d, 0) = %v after Close, want ESRCH", cmd.Process.Pid, err)
	}
}

func waitStatus(cmd *exec.Cmd) syscall.WaitStatus {
	return cmd.ProcessState.Sys().(syscall.WaitStatus)
}

func TestCommandRoundTrip(t *testing.T) {
	cmd, conn := connectChild(t, "echo", nil)
	for i := range 20 {
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)
		if err := conn.Write(background(), []byte(msg)); err != nil {
			t.Fatalf("Write: %v", err)
		}
		if got := mustRead(t, conn); got != msg {
			t.Fatalf("echo = %q, want %q", got, msg)
		}
	}
	// The well-behaved path: stdin closed, server exits 0, Close is nil.
	if err := conn.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	assertReaped(t, cmd)
	if !cmd.ProcessState.Success() {
		t.Fatalf("child ended with %v", cmd.ProcessState)
	}
	if err := conn.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := conn.Read(background()); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("Read after Close = %v", err)
	}
	if err := conn.Write(background(), []byte("{}")); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("Write after Close = %v", err)
	}
}

func TestCommandCloseExitStatus(t *testing.T) {
	cmd, conn := connectChild(t, "echo-exit2", nil)
	err := conn.Close()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("Close = %v, want an exec.ExitError with status 2", err)
	}
	var te *TerminatedError
	if errors.As(err, &te) {
		t.Fatalf("Close = %v: a plain exit is not a TerminatedError", err)
	}
	assertReaped(t, cmd)
}

// waitReady reads the child's "ready" message, sent once its signal handling
// is in place.
func waitReady(t *testing.T, conn transport.Conn) {
	t.Helper()
	if got := mustRead(t, conn); got != "ready" {
		t.Fatalf("child said %q, want ready", got)
	}
}

func TestCommandShutdownSIGTERM(t *testing.T) {
	cmd, conn := connectChild(t, "ignore-eof", &CommandOptions{CloseTimeout: short, TerminateTimeout: failAfter})
	waitReady(t, conn)
	err := conn.Close()
	var te *TerminatedError
	if !errors.As(err, &te) || te.Signal != syscall.SIGTERM {
		t.Fatalf("Close = %v, want a TerminatedError for SIGTERM", err)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("Close = %v, does not wrap the exec.ExitError", err)
	}
	assertReaped(t, cmd)
	if ws := waitStatus(cmd); !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("child ended with %v, want death by SIGTERM", cmd.ProcessState)
	}
	if err2 := conn.Close(); err2 != err {
		t.Fatalf("second Close = %v, want %v", err2, err)
	}
}

func TestCommandShutdownSIGTERMCaught(t *testing.T) {
	cmd, conn := connectChild(t, "catch-term", &CommandOptions{CloseTimeout: short, TerminateTimeout: failAfter})
	waitReady(t, conn)
	err := conn.Close()
	var te *TerminatedError
	if !errors.As(err, &te) || te.Signal != syscall.SIGTERM || te.Err != nil {
		t.Fatalf("Close = %#v, want a TerminatedError for SIGTERM with nil Err", err)
	}
	assertReaped(t, cmd)
	if !cmd.ProcessState.Success() {
		t.Fatalf("child ended with %v", cmd.ProcessState)
	}
}

func TestCommandShutdownSIGKILL(t *testing.T) {
	cmd, conn := connectChild(t, "ignore-term", &CommandOptions{CloseTimeout: short, TerminateTimeout: short})
	waitReady(t, conn)
	err := conn.Close()
	var te *TerminatedError
	if !errors.As(err, &te) || te.Signal != os.Kill {
		t.Fatalf("Close = %v, want a TerminatedError for SIGKILL", err)
	}
	assertReaped(t, cmd)
	if ws := waitStatus(cmd); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want death by SIGKILL", cmd.ProcessState)
	}
}

func TestCommandCrash(t *testing.T) {
	cmd, conn := connectChild(t, "crash", nil)
	// Output written before the crash is still delivered, then EOF.
	if got := mustRead(t, conn); got != `{"last":true}` {
		t.Fatalf("Read = %q", got)
	}
	for range 2 {
		if _, err := conn.Read(background()); err != io.EOF {
			t.Fatalf("Read after crash = %v, want io.EOF", err)
		}
	}
	// Writing to a dead server fails (once the kernel has closed its stdin,
	// which can lag the EOF on its stdout a little) rather than blocking.
	deadline := time.Now().Add(failAfter)
	for conn.Write(background(), []byte("{}")) == nil {
		if time.Now().After(deadline) {
			t.Fatal("Write to a dead server keeps succeeding")
		}
		time.Sleep(time.Millisecond)
	}
	err := conn.Close()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("Close = %v, want exit status 3", err)
	}
	assertReaped(t, cmd)
}

func TestCommandStderr(t *testing.T) {
	var stderr bytes.Buffer
	cmd, conn := connectChild(t, "stderr", &CommandOptions{Stderr: &stderr})
	if err := conn.Write(background(), []byte(`{"x":1}`)); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, conn); got != `{"x":1}` {
		t.Fatalf("Read = %q: stderr leaked into the message stream?", got)
	}
	if err := conn.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	assertReaped(t, cmd)
	// After Close the copy into stderr is complete.
	if got := stderr.String(); got != "log line from child\n" {
		t.Fatalf("stderr = %q", got)
	}
}

func TestCommandDrainsOutputAfterClose(t *testing.T) {
	// The child writes much more than a pipe buffer before it looks at its
	// stdin. Nobody reads; Close must keep draining so the child gets to its
	// stdin EOF and exits by itself.
	cmd, conn := connectChild(t, "flood", &CommandOptions{CloseTimeout: failAfter, TerminateTimeout: short})
	if err := conn.Close(); err != nil {
		t.Fatalf("Close = %v, want nil (child exits on stdin EOF)", err)
	}
	assertReaped(t, cmd)
}

func TestCommandCloseUnblocksRead(t *testing.T) {
	cmd, conn := connectChild(t, "echo", nil)
	errc := make(chan error, 1)
	go func() {
		_, err := conn.Read(background())
		errc <- err
	}()
	if err := conn.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, transport.ErrClosed) {
			t.Fatalf("Read after Close = %v, want ErrClosed", err)
		}
	case <-time.After(failAfter):
		t.Fatal("Close did not unblock Read")
	}
	assertReaped(t, cmd)
	select {
	case <-conn.(*commandConn).readDone:
	default:
		t.Fatal("read goroutine still running after Close")
	}
}

func TestCommandReadCancel(t *testing.T) {
	_, conn := connectChild(t, "echo", nil)
	ctx, cancel := context.WithTimeout(background(), 20*time.Millisecond)
	defer cancel()
	if _, err := conn.Read(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Read = %v, want DeadlineExceeded", err)
	}
	if err := conn.Write(background(), []byte(`"hi"`)); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, conn); got != `"hi"` {
		t.Fatalf("Read = %q", got)
	}
}

func TestCommandConnectErrors(t *testing.T) {
	if _, err := NewCommandTransport(exec.Command("/nonexistent/parley-server"), nil).Connect(background()); err == nil {
		t.Error("Connect to a missing binary succeeded")
	}
	cmd := child("echo")
	cmd.Stdout = io.Discard
	if _, err := NewCommandTransport(cmd, nil).Connect(background()); err == nil {
		t.Error("Connect with Stdout already set succeeded")
	}
	ctx, cancel := context.WithCancel(background())
	cancel()
	cmd = child("echo")
	if _, err := NewCommandTransport(cmd, nil).Connect(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Connect with cancelled ctx = %v", err)
	}
	if cmd.Process != nil {
		t.Error("Connect with cancelled ctx started the process")
	}
}

func TestCommandMaxMessageSize(t *testing.T) {
	_, conn := connectChild(t, "echo", &CommandOptions{MaxMessageSize: 10})
	for _, m := range []string{`"0123456789"`, `"ok"`} {
		if err := conn.Write(background(), []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Read(background()); !errors.Is(err, transport.ErrMessageTooLarge) {
		t.Fatalf("Read = %v, want ErrMessageTooLarge", err)
	}
	if got := mustRead(t, conn); got != `"ok"` {
		t.Fatalf("Read = %q", got)
	}
}
