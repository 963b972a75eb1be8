package stdio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/parley-mcp/parley/transport"
)

// Default shutdown timeouts of a [CommandTransport] connection.
const (
	// DefaultCloseTimeout is how long Close waits for the server to exit
	// after closing its stdin, before sending SIGTERM.
	DefaultCloseTimeout = 5 * time.Second
	// DefaultTerminateTimeout is how long Close waits for the server to exit
	// after SIGTERM, before sending SIGKILL.
	DefaultTerminateTimeout = 5 * time.Second
)

// CommandOptions configures a [CommandTransport]. A nil *CommandOptions means
// defaults; so does the zero value of any field.
type CommandOptions struct {
	// MaxMessageSize is the largest message, in bytes, accepted from the
	// server; see [Options]. Default: [DefaultMaxMessageSize].
	MaxMessageSize int
	// Stderr receives the server's standard error, where MCP servers write
	// their logs. When nil, the command's own Stderr is used if it is set,
	// and os.Stderr otherwise. If it is not an *os.File, package exec copies
	// into it from a goroutine, and Close waits for that copy to finish, but
	// no longer than cmd.WaitDelay once the server has exited. Every process
	// the transport starts writes to the same Stderr, each through its own
	// goroutine, so a writer shared by connections that are open at the same
	// time must be safe for concurrent use.
	Stderr io.Writer
	// CloseTimeout is how long Close waits for the server to exit after
	// closing its stdin. Zero or negative means [DefaultCloseTimeout].
	CloseTimeout time.Duration
	// TerminateTimeout is how long Close waits for the server to exit after
	// sending it SIGTERM, before it sends SIGKILL. Zero or negative means
	// [DefaultTerminateTimeout].
	TerminateTimeout time.Duration
}

// CommandTransport is a [transport.Transport] that runs an MCP server as a
// subprocess and talks to it over the subprocess's stdin and stdout.
type CommandTransport struct {
	cmd  *exec.Cmd
	opts CommandOptions

	mu      sync.Mutex
	claimed bool     // a Connect has taken cmd itself
	tmpl    exec.Cmd // cmd's settings, copied before that Connect changed them
}

// NewCommandTransport returns a transport that starts cmd when Connect is
// called. cmd must not have been started and must leave Stdin and Stdout
// unset: the transport connects them. The transport owns cmd from now on;
// after Close, cmd.ProcessState describes how the server ended.
//
// Connect may be called more than once, each call starting a server process
// of its own: the first call starts cmd, and every later call starts a
// fresh copy of it. That is how a client falls back to a legacy server that
// exits on a request it does not understand: it connects again and starts
// over. cmd itself describes the first process only; see Connect for what
// the copies share with it.
//
// Connect's context only bounds the start itself. To tie the server's
// lifetime to a context, build cmd with [exec.CommandContext] (and then Close
// reports the resulting kill as the server's exit error).
//
// If cmd.WaitDelay is zero it is set to the TerminateTimeout, so that a
// grandchild holding on to the server's stderr cannot make Close hang.
func NewCommandTransport(cmd *exec.Cmd, opts *CommandOptions) *CommandTransport {
	t := &CommandTransport{cmd: cmd}
	if opts != nil {
		t.opts = *opts
	}
	if t.opts.CloseTimeout <= 0 {
		t.opts.CloseTimeout = DefaultCloseTimeout
	}
	if t.opts.TerminateTimeout <= 0 {
		t.opts.TerminateTimeout = DefaultTerminateTimeout
	}
	return t
}

// Connect starts the command and returns a connection to it. Reads return
// what the server writes to its stdout; Writes go to its stdin. When the
// server exits on its own, Read returns its remaining output and then
// io.EOF, and Close must still be called to release the connection.
//
// Close shuts the server down and reaps it: it closes the server's stdin,
// waits up to CloseTimeout for it to exit, then sends SIGTERM and waits up to
// TerminateTimeout, then sends SIGKILL and waits for the process to die (on
// systems without SIGTERM it goes straight to SIGKILL). Close's result:
//
//   - nil when the server exited with status 0 without being signalled;
//   - an error wrapping the error from [exec.Cmd.Wait], usually an
//     [*exec.ExitError], when it exited unsuccessfully without being
//     signalled by Close (a non-zero status after stdin closed, a crash, an
//     outside kill);
//   - a [*TerminatedError] when Close had to signal it, whatever its exit
//     status then was.
//
// Every call to Close returns the same result, after the shutdown is over.
// Should even SIGKILL be undeliverable (say, to a setuid server), Close
// returns that error without waiting; the process is still reaped whenever
// it ends.
//
// Connect may be called again, also while earlier connections are open.
// The first call starts cmd itself (a call that fails at once because its
// context is done does not count); every later one starts a new process from
// a copy of cmd's settings as they were before that first call: Path, Args, Env, Dir, ExtraFiles,
// SysProcAttr, WaitDelay, Stderr, and the context of [exec.CommandContext].
// Each connection owns its process, with its own stdin and stdout pipes, and
// closing one connection does not affect another. Caveats for the copies:
//
//   - The same ExtraFiles are passed to every process, so they must stay
//     open for as long as Connect may be called.
//   - A command made with exec.CommandContext starts its copies under the
//     same context, and once that context is done Connect fails. But cmd's
//     Cancel function cannot be copied: it refers to cmd (the one set by
//     CommandContext kills cmd.Process). When the context ends, a copy is
//     therefore killed with [os.Process.Kill], whatever cmd.Cancel does.
//   - Only cmd records its process; the state of a later process is
//     reported by its connection's Close alone.
func (t *CommandTransport) Connect(ctx context.Context) (transport.Conn, error) {
	if t.cmd == nil {
		return nil, errors.New("stdio: CommandTransport has no command")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := t.command()
	if cmd.Stdin != nil {
		return nil, errors.New("stdio: exec.Cmd.Stdin already set")
	}
	if cmd.Stdout != nil {
		return nil, errors.New("stdio: exec.Cmd.Stdout already set")
	}
	// Our own pipes rather than cmd.StdinPipe/StdoutPipe: Wait closes those
	// as soon as the process exits, losing output we have not read yet,
	// whereas these stay ours until Close. Both are close-on-exec, so the
	// child holds only its ends.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdio: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("stdio: %w", err)
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	if t.opts.Stderr != nil {
		cmd.Stderr = t.opts.Stderr
	} else if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = t.opts.TerminateTimeout
	}
	err = cmd.Start()
	// The child has its copies of these ends now (or failed to start).
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("stdio: starting server: %w", err)
	}

	c := &commandConn{
		conn:             newConn(outR, inW, &Options{MaxMessageSize: t.opts.MaxMessageSize}, true),
		cmd:              cmd,
		stdin:            inW,
		stdout:           outR,
		closeTimeout:     t.opts.CloseTimeout,
		terminateTimeout: t.opts.TerminateTimeout,
		exited:           make(chan struct{}),
	}
	// The one and only Wait: it reaps the child whenever it exits.
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	// Read from the start, so that output keeps flowing (and is drained
	// after Close) even if nobody is reading.
	c.startReader()
	return c, nil
}

// command returns the command for a Connect to start: cmd itself the first
// time, and a fresh copy of its original settings after that.
func (t *CommandTransport) command() *exec.Cmd {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.claimed {
		t.claimed = true
		// A copy by value, taken before Connect sets cmd's fields and starts
		// it, keeps what only exec.Command and CommandContext can set: the
		// context and the result of the executable's look-up.
		t.tmpl = *t.cmd
		return t.cmd
	}
	cmd := new(exec.Cmd)
	*cmd = t.tmpl
	// Nothing of the template may be shared with a command that package
	// exec or the caller might modify.
	cmd.Args = slices.Clone(cmd.Args)
	cmd.Env = slices.Clone(cmd.Env)
	cmd.ExtraFiles = slices.Clone(cmd.ExtraFiles)
	if cmd.SysProcAttr != nil {
		// Shallow: pointers in it, such as Linux's Credential and PidFD,
		// are shared, as they would be by any caller reusing them.
		attr := *cmd.SysProcAttr
		cmd.SysProcAttr = &attr
	}
	if cmd.Cancel != nil {
		// The original Cancel acts on the original command, whatever it
		// does; the default one would kill t.cmd.Process. Kill this one.
		cmd.Cancel = func() error { return cmd.Process.Kill() }
	}
	return cmd
}

// TerminatedError is what Close returns when the server did not exit within
// CloseTimeout after its stdin was closed and Close had to signal it. Its
// presence means the server ignored the request to exit; it is not otherwise
// a failure of the shutdown, which always completes. Recognise it with
// errors.As.
type TerminatedError struct {
	// Signal is the last signal Close sent: syscall.SIGTERM, or os.Kill
	// (SIGKILL) when the server outlived TerminateTimeout too.
	Signal os.Signal
	// Err is the error from [exec.Cmd.Wait]: typically an [*exec.ExitError]
	// for death by the signal, or nil if the server caught SIGTERM and
	// exited with status 0.
	Err error
}

// Error says how the server was stopped.
func (e *TerminatedError) Error() string {
	name := "SIGKILL"
	if e.Signal == syscall.SIGTERM {
		name = "SIGTERM"
	}
	s := "stdio: server did not exit when its stdin was closed; sent " + name
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns Err.
func (e *TerminatedError) Unwrap() error { return e.Err }

// commandConn is the connection to a server process.
type commandConn struct {
	*conn
	cmd              *exec.Cmd
	stdin, stdout    *os.File // our ends of the child's stdin and stdout
	closeTimeout     time.Duration
	terminateTimeout time.Duration

	exited  chan struct{} // closed once cmd.Wait has returned
	waitErr error         // set before exited closes

	closeOnce sync.Once
	closeErr  error
}

// Close shuts the server down; see CommandTransport.Connect.
func (c *commandConn) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.shutdown() })
	return c.closeErr
}

func (c *commandConn) shutdown() error {
	c.markClosed() // Reads and Writes fail from now on; output is drained.
	c.stdin.Close()
	var sig os.Signal // the last signal sent, if any
	var killErr error
	if !c.waitExit(c.closeTimeout) {
		err := c.cmd.Process.Signal(syscall.SIGTERM)
		switch {
		case err == nil:
			sig = syscall.SIGTERM
			if !c.waitExit(c.terminateTimeout) {
				sig, killErr = c.kill(sig)
			}
		case errors.Is(err, os.ErrProcessDone):
			// It exited just in time; no signal was sent.
		default:
			// No SIGTERM on this system (Windows): straight to SIGKILL.
			sig, killErr = c.kill(nil)
		}
	}
	c.stdout.Close() // ends the read loop, even if a grandchild holds stdout
	if killErr != nil {
		// The reaper goroutine keeps waiting and will reap the process if it
		// ever dies, but we cannot wait for that here.
		return fmt.Errorf("stdio: cannot kill server: %w", killErr)
	}
	// Closing stdout ends the read loop at once where pipes are pollable
	// (Unix). Elsewhere a stuck read must not hold Close up forever: the
	// loop then exits when that read returns.
	waitChan(c.readDone, c.closeTimeout)
	err := c.waitErr
	if errors.Is(err, exec.ErrWaitDelay) {
		// Exited 0; only a grandchild kept stderr open for too long.
		err = nil
	}
	if sig != nil {
		return &TerminatedError{Signal: sig, Err: err}
	}
	if err != nil {
		return fmt.Errorf("stdio: server exited: %w", err)
	}
	return nil
}

// kill sends SIGKILL and waits for the process to be reaped. It returns the
// last signal sent: os.Kill, or prev when the process had already exited. It
// fails only if the signal cannot be delivered, and then does not wait.
func (c *commandConn) kill(prev os.Signal) (os.Signal, error) {
	err := c.cmd.Process.Kill()
	switch {
	case err == nil:
		<-c.exited
		return os.Kill, nil
	case errors.Is(err, os.ErrProcessDone):
		<-c.exited
		return prev, nil
	}
	select {
	case <-c.exited: // it died anyway
		return prev, nil
	default:
		return os.Kill, err
	}
}

// waitExit reports whether the process exits within d.
func (c *commandConn) waitExit(d time.Duration) bool { return waitChan(c.exited, d) }

// waitChan reports whether ch closes within d.
func waitChan(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
