package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/transport"
)

// What parley says when a run ends: the error in words a person reads
// first (not the layers it passed through), the error as JSON for a
// script that asked for --json, and the answers no question used.

// outcome is what the run's last messages need to know of the server's
// questions.
type outcome struct {
	mu sync.Mutex
	// refusal is how the last refused question was refused: "declined",
	// "cancelled", or "refused" (a sampling request).
	refusal string
	// used are the answers (--answer, --answers) a form had a field for;
	// asked are the fields the forms had, in the order they came.
	used  map[string]bool
	asked []string
	// noAnswer is the last question that could not be asked.
	noAnswer *noAnswerError
}

// refuse records that a question was refused, and how.
func (a *app) refuse(how string) {
	a.refused.Store(true)
	a.outcome.mu.Lock()
	a.outcome.refusal = how
	a.outcome.mu.Unlock()
}

// refusalOf is the word for an elicitation's refusing action.
func refusalOf(action string) string {
	if action == "cancel" {
		return "cancelled"
	}
	return "declined"
}

// formAsked records a form's fields, and which answers it used.
func (a *app) formAsked(fields []field, answers map[string]any) {
	a.outcome.mu.Lock()
	defer a.outcome.mu.Unlock()
	if a.outcome.used == nil {
		a.outcome.used = map[string]bool{}
	}
	for _, f := range fields {
		if _, ok := answers[f.name]; ok {
			a.outcome.used[f.name] = true
		}
		if !slices.Contains(a.outcome.asked, f.name) {
			a.outcome.asked = append(a.outcome.asked, f.name)
		}
	}
}

// toolFailedError ends a tools call whose result is an error (isError);
// the result has been printed.
type toolFailedError struct{ name string }

func (e *toolFailedError) Error() string { return fmt.Sprintf("tool %q: %v", e.name, errToolError) }
func (e *toolFailedError) Unwrap() error { return errToolError }

// describe is the line that says what went wrong: err in the words of
// what the person did or can do, where parley knows them better than the
// layers below.
func (a *app) describe(err error) string {
	var (
		transErr *jsonrpc.TransportError
		status   *transport.HTTPStatusError
		pathErr  *fs.PathError
		failed   *toolFailedError
	)
	a.outcome.mu.Lock()
	refusal := a.outcome.refusal
	a.outcome.mu.Unlock()
	switch {
	case errors.As(err, &failed) && refusal != "":
		// The tool stopped because its question was refused: that is
		// what happened, not a failure of the tool.
		return fmt.Sprintf("tool %q stopped: its question was %s", failed.name, refusal)
	case errors.As(err, &transErr) && !errors.As(err, &status) && a.opts.url != "":
		return fmt.Sprintf("cannot reach the server at %s: %s", a.opts.url, networkCause(transErr.Err))
	case errors.As(err, &pathErr) && pathErr.Op == "fork/exec" && len(a.opts.command) > 0:
		return fmt.Sprintf("cannot start the server %s: %v", a.opts.command[0], pathErr.Err)
	}
	return err.Error()
}

// openable refuses to hand the browser (or xdg-open, which would run
// whatever handles the scheme) a URL that is not a web page parley may
// open for a server: https, or http to this machine only, whose traffic
// does not cross a network.
func openable(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("not opened: %q is not a URL", raw)
	case u.Scheme == "https" && u.Host != "":
		return nil
	case u.Scheme == "http" && isLoopback(u.Hostname()):
		return nil
	}
	return fmt.Errorf("not opened: --open opens https URLs, and http ones on this machine only")
}

// isLoopback reports whether host is this machine: localhost or a
// loopback address.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// networkCause says why a request could not be sent, without the layers
// (the POST, the URL, the dial) the error names on its way up.
func networkCause(err error) string {
	var (
		dnsErr *net.DNSError
		opErr  *net.OpError
	)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused (is the server running, and on that port?)"
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return fmt.Sprintf("no such host %q", dnsErr.Name)
	case errors.As(err, &dnsErr):
		return fmt.Sprintf("looking up %q: %s", dnsErr.Name, dnsErr.Err)
	case errors.As(err, &opErr) && opErr.Timeout():
		return "no answer: the connection timed out"
	case errors.As(err, &opErr):
		return opErr.Err.Error()
	case err != nil:
		return err.Error()
	}
	return "the request could not be sent"
}

// errorDoc is the JSON form of a failed run on stdout, with --json: the
// JSON-RPC error object the server answered with (code, message and data,
// exactly), or a message alone when the failure was not the server's
// answer.
type errorDoc struct {
	Error errorObject `json:"error"`
}

type errorObject struct {
	Code    *int64          `json:"code,omitempty"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// writeJSONError prints err as an errorDoc on stdout.
func (a *app) writeJSONError(err error) {
	var (
		rpcErr   *jsonrpc.Error
		transErr *jsonrpc.TransportError
		obj      errorObject
	)
	a.outcome.mu.Lock()
	noAnswer := a.outcome.noAnswer
	a.outcome.mu.Unlock()
	switch {
	case noAnswer != nil:
		// The call's error is only the server's echo of it.
		obj.Message = noAnswer.Error()
	case errors.As(err, &rpcErr) && !errors.As(err, &transErr):
		code := int64(rpcErr.Code)
		obj = errorObject{Code: &code, Message: rpcErr.Message, Data: rpcErr.Data}
	default:
		obj.Message = a.describe(err)
	}
	raw, merr := json.MarshalIndent(errorDoc{obj}, "", "  ")
	if merr != nil { // a server's data that does not encode: the message alone
		raw, _ = json.MarshalIndent(errorDoc{errorObject{Message: obj.Message}}, "", "  ")
	}
	fmt.Fprintf(a.stdout, "%s\n", raw)
}

// warnUnusedAnswers names the answers given on the command line that no
// form had a field for: a misspelt field is not left to pass in silence.
func (a *app) warnUnusedAnswers() {
	if len(a.opts.answers) == 0 && a.opts.answersFile == "" {
		return
	}
	answers, err := a.loadAnswers()
	if err != nil {
		return // said already, or the run ended before any form
	}
	a.outcome.mu.Lock()
	defer a.outcome.mu.Unlock()
	var unused []string
	for name := range answers {
		if !a.outcome.used[name] {
			unused = append(unused, name)
		}
	}
	if len(unused) == 0 {
		return
	}
	sort.Strings(unused)
	msg := fmt.Sprintf("parley: no form asked for %s, so %s not used", quotedList(unused), pluralVerb(len(unused)))
	// The names asked for are the server's form fields: quoted, so that
	// their control characters are escaped.
	var near string
	if len(unused) == 1 {
		near = didYouMean(unused[0], a.outcome.asked)
	}
	switch {
	case len(a.outcome.asked) == 0:
		msg += " (the server asked no question)"
	case near != "":
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	default:
		msg += " (the forms asked for " + quotedList(a.outcome.asked) + ")"
	}
	fmt.Fprintln(a.stderr, msg)
}

func quotedList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

func pluralVerb(n int) string {
	if n == 1 {
		return "its answer was"
	}
	return "their answers were"
}
