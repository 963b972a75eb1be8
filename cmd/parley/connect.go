package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
	"github.com/parley-mcp/parley/transport/stdio"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// app is one run of parley: where it reads and writes, its flags, and the
// session it opened.
type app struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// tty is the terminal forms are shown on; nil when there is none
	// (stdin or stderr is not a terminal).
	tty *terminal
	// width is the width of the terminal stdout is, 0 when it is none:
	// text wraps at it (up to maxWrap), tables fit in it.
	width int
	opts  *options

	// dial, when set, replaces the transport the flags name (tests).
	dial func(ctx context.Context) (transport.Transport, error)
	// configDir, when set, replaces os.UserConfigDir for the token cache.
	configDir string
	// openURL, when set, replaces the browser for --open (tests).
	openURL func(url string) error

	sess    *client.Session
	closers []func()

	answersOnce sync.Once
	answers     map[string]any
	answersErr  error

	// What happened to the server's questions, for the exit code.
	refused    atomic.Bool
	unanswered atomic.Bool

	outcome  outcome // how the questions went, for the last messages (messages.go)
	progress progressLine
	formMu   sync.Mutex // one form on the terminal at a time
}

// terminal is where forms are drawn and read.
type terminal struct {
	in  io.Reader
	out io.Writer
}

// usageError is a mistake on the command line (or in a file it names).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return &usageError{fmt.Errorf(format, args...)} }

// connectError is a failure to open the session.
type connectError struct{ err error }

func (e *connectError) Error() string { return e.err.Error() }
func (e *connectError) Unwrap() error { return e.err }

// errToolError ends a tools call whose result is an error; the result has
// been printed.
var errToolError = errors.New("the tool reported an error")

// exitCode classifies the outcome of a command.
func (a *app) exitCode(ctx context.Context, err error) int {
	var (
		usage    *usageError
		rpcErr   *jsonrpc.Error
		invalid  *client.InvalidResponseError
		rounds   *client.RoundsExceededError
		transErr *jsonrpc.TransportError
	)
	switch {
	case a.unanswered.Load():
		return exitUnanswered
	case a.refused.Load():
		// Whatever the server made of it: a script learns that the
		// person (or --refuse) said no.
		return exitRefused
	case err == nil:
		return exitOK
	case errors.As(err, &usage):
		return exitUsage
	case errors.Is(err, errToolError):
		return exitToolError
	case ctx.Err() != nil:
		return exitInterrupted
	case errors.As(err, &transErr):
		// The transport failed to deliver the request, or the HTTP
		// server refused it: a 4xx that answers the request is the
		// server's word on it; the rest (a 5xx, a 401 that login did not
		// cure, no answer at all) is a connection that does not work.
		var status *transport.HTTPStatusError
		if errors.As(err, &status) && status.StatusCode >= 400 && status.StatusCode < 500 &&
			status.StatusCode != 401 && status.StatusCode != 403 && status.StatusCode != 429 {
			return exitProtocol
		}
		return exitConnection
	case errors.As(err, &rpcErr), errors.As(err, &invalid), errors.As(err, &rounds),
		errors.Is(err, client.ErrUnsupportedVersion), errors.Is(err, client.ErrInputRequired), skillsRefused(err):
		return exitProtocol
	}
	if card := (*cardError)(nil); errors.As(err, &card) {
		return card.exitCode()
	}
	return exitConnection
}

// session opens the session the flags name, once.
func (a *app) session(ctx context.Context) (*client.Session, error) {
	if a.sess != nil {
		return a.sess, nil
	}
	t, err := a.transport()
	if err != nil {
		return nil, err
	}
	var level mcp.LoggingLevel
	if a.opts.logLevel != "" {
		if level, err = mcp.ParseLoggingLevel(a.opts.logLevel); err != nil {
			return nil, usagef("--log-level: %v", err)
		}
	}
	c := client.New(mcp.Implementation{Name: "parley", Title: "Parley CLI", Version: version()}, &client.Options{
		// Everything parley can answer: forms and URLs, sampling, roots.
		Capabilities: &mcp.ClientCapabilities{
			Elicitation: &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}},
			Sampling:    &mcp.SamplingCapability{},
			Roots:       &mcp.RootsCapability{},
		},
		Elicit:          a.elicit,
		Sample:          a.sample,
		ListRoots:       a.listRoots,
		ProtocolVersion: mcp.ProtocolVersion(a.opts.protocol),
		LogLevel:        level,
		OnLog:           a.onLog,
		OnProgress:      a.onProgress,
		RequestTimeout:  -1, // a person answering a form takes the time they take
		Extensions:      sessionExtensions(ctx),
	})
	sess, err := a.connect(ctx, c, t)
	if err != nil {
		return nil, &connectError{err}
	}
	a.sess = sess
	a.closers = append(a.closers, func() { sess.Close() })
	return sess, nil
}

// transport builds the transport to the server the flags name.
func (a *app) transport() (transport.Transport, error) {
	if a.dial != nil {
		return a.dial(context.Background())
	}
	switch {
	case a.opts.url != "":
		hc, err := a.oauthClient()
		if err != nil {
			return nil, err
		}
		return streamhttp.NewClientTransport(a.opts.url, &streamhttp.ClientOptions{HTTPClient: hc}), nil
	case len(a.opts.command) > 0:
		cmd := exec.Command(a.opts.command[0], a.opts.command[1:]...)
		return stdio.NewCommandTransport(cmd, &stdio.CommandOptions{Stderr: a.stderr}), nil
	}
	return nil, usagef("no server: give its URL, or its command after --")
}

func (a *app) close() {
	a.progress.done(a.stderr)
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
}

// version is parley's module version, as go install recorded it.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// open opens url for the person, with --open: only a URL that a browser
// opens as a page, which a server's URL (an elicitation, a login) need not
// be (see openable).
func (a *app) open(url string) error {
	if err := openable(url); err != nil {
		return err
	}
	if a.openURL != nil {
		return a.openURL(url)
	}
	if err := openBrowser(url); err != nil {
		return fmt.Errorf("could not open a browser: %w", err)
	}
	return nil
}

// openBrowser opens url in the user's browser.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}

// tokenPath is where OAuth registrations and tokens are cached.
func (a *app) tokenPath() (string, error) {
	dir := a.configDir
	if dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return "", err
		}
		dir = base
	}
	return filepath.Join(dir, "parley", "tokens.json"), nil
}
