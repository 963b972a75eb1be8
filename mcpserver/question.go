package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
)

// Dependency is a question a tool, prompt or resource template declares:
// something only the client can give (a person's answer, a sampled
// completion, the client's roots), which the server must have before the
// body runs. Make one with [Elicit], [Sample] or [ListRoots], usually as a
// package-level variable, and pass it to [AddTool], [AddPrompt] or
// [AddResourceTemplate].
//
// A question may depend on other questions (the after arguments of its
// constructor): it is asked only once they are answered, and its message
// may use their answers. Questions that do not depend on each other are
// asked together, in one round. A question can only depend on questions
// made before it, so dependencies never form a cycle.
//
// Declaring a question declares what it depends on: the registration asks
// them too, and its function may read them. A function or a message that
// reads a question neither declared nor depended on does not get a zero
// value: the call ends with an answer naming the question (an isError
// result from a tool, -32603 from a prompt or resource template) and the
// server logs where it was read.
type Dependency interface {
	// Key is the question's key in inputRequests and inputResponses: the
	// name its author gave it, the same on every instance of the server.
	Key() string
	base() *question
}

// question is the untyped core of every kind of question.
type question struct {
	key    string
	method string // what it asks: mcp.MethodElicit, MethodCreateMessage or MethodListRoots
	after  []*question
	// inType is the argument type its render function reads; nil when it
	// reads none, or takes any.
	inType reflect.Type
	// render builds the request as it goes on the wire, from the call's
	// arguments and the answers of the questions it depends on.
	render func(in any, c *Call) (mcp.InputRequest, error)
	// consume checks a fresh answer and returns what is recorded of it
	// together with the typed answer, decoded once.
	consume func(raw json.RawMessage) (*record, *answer, error)
	// restore turns a record into the typed answer; false when the record
	// does not fit the question as it is now.
	restore func(r *record) (*answer, bool)
	// allowDecline: a declined or cancelled elicitation reaches the body
	// instead of ending the call.
	allowDecline bool
	// err is a construction error, reported when the question is
	// registered.
	err error
}

func (q *question) base() *question { return q }

// Key returns the question's wire key.
func (q *question) Key() string { return q.key }

// newQuestion checks what every kind of question needs.
func newQuestion(key, method string, after []Dependency) *question {
	q := &question{key: key, method: method}
	if key == "" {
		q.err = errors.New("a question needs a non-empty key")
	}
	for _, d := range after {
		if d == nil || d.base() == nil {
			q.err = fmt.Errorf("question %q depends on a nil question", key)
			continue
		}
		q.after = append(q.after, d.base())
	}
	return q
}

// inTypeOf returns the type a render function's arguments have, or nil
// for the empty interface (which takes any registration's arguments).
func inTypeOf[In any]() reflect.Type {
	t := reflect.TypeFor[In]()
	if t.Kind() == reflect.Interface && t.NumMethod() == 0 {
		return nil
	}
	return t
}

// plan is the questions of one registration, in an order in which every
// question comes after those it depends on.
type plan struct {
	owner string
	order []*question
}

// newPlan checks a registration's questions: each is well made, reads
// the registration's argument type, has a key of its own, and depends on
// nothing circular. Questions that the declared ones depend on join the
// plan without being listed. No questions: a nil plan.
func newPlan(owner string, in reflect.Type, deps []Dependency) (*plan, error) {
	if len(deps) == 0 {
		return nil, nil
	}
	p := &plan{owner: owner}
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[*question]int{}
	keys := map[string]*question{}
	var visit func(q *question, path []string) error
	visit = func(q *question, path []string) error {
		switch state[q] {
		case done:
			return nil
		case visiting:
			return fmt.Errorf("mcpserver: %s: questions depend on each other in a cycle: %v", owner, append(path, q.key))
		}
		if q.err != nil {
			return fmt.Errorf("mcpserver: %s: %w", owner, q.err)
		}
		if other, ok := keys[q.key]; ok && other != q {
			return fmt.Errorf("mcpserver: %s: two questions have the key %q", owner, q.key)
		}
		keys[q.key] = q
		if q.inType != nil && q.inType != in {
			return fmt.Errorf("mcpserver: %s: question %q renders from arguments of type %s, but the registration's arguments are %s",
				owner, q.key, q.inType, in)
		}
		state[q] = visiting
		for _, d := range q.after {
			if err := visit(d, append(path, q.key)); err != nil {
				return err
			}
		}
		state[q] = done
		p.order = append(p.order, q)
		return nil
	}
	for _, d := range deps {
		if d == nil || d.base() == nil {
			return nil, fmt.Errorf("mcpserver: %s: a declared question is nil", owner)
		}
		if err := visit(d.base(), nil); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// answerOf returns q's answer in c. Reading a question the registration
// did not declare is a programming error, and the function reading it
// must not carry on with a zero value (a region of "", a confirmation of
// false) as if the person had answered: answerOf unwinds the function
// with an *undeclaredError, which the server logs with its stack and
// answers with a message naming the question and what to change (see
// Server.guard and plan.resolve). Nothing else of the panic reaches the
// client, and the server keeps serving.
func answerOf(c *Call, q *question) *answer {
	if c == nil {
		panic(&undeclaredError{key: q.key})
	}
	a := c.answerFor(q)
	if a == nil {
		u := &undeclaredError{owner: c.owner, key: q.key}
		if c.rendering != nil {
			u.reader = c.rendering.key
		}
		panic(u)
	}
	return a
}

// undeclaredError is a function reading a question its registration does
// not declare: a tool's body, a question's message reading a question it
// does not depend on, or a function that cannot ask at all (a completion).
// A tool answers it with an isError result, a prompt or resource template
// with -32603; both carry the message, which names the question and says
// how to declare it.
type undeclaredError struct {
	owner  string // the registration, as Call.owner names it; "" for a nil Call
	key    string // the question read
	reader string // the question whose message read it; "" for the function
}

func (u *undeclaredError) Error() string {
	switch {
	case u.owner == "":
		return fmt.Sprintf("question %q was read with a nil *mcpserver.Call: pass the Call the function received", u.key)
	case u.reader != "":
		return fmt.Sprintf("the message of question %q of %s reads question %q without depending on it: "+
			"pass %q among the after arguments of the constructor of %q", u.reader, u.owner, u.key, u.key, u.reader)
	}
	switch register := registerFunc(u.owner); register {
	case "":
		return fmt.Sprintf("%s reads question %q, but it cannot ask questions: only tools, prompts and resource templates declare them",
			u.owner, u.key)
	default:
		return fmt.Sprintf("%s reads question %q, which it does not declare: pass the question to %s "+
			"(or to the after arguments of a question it declares)", u.owner, u.key, register)
	}
}

// registerFunc names the function that registers what owner names.
func registerFunc(owner string) string {
	for _, r := range [...]struct{ prefix, fn string }{
		{"tool ", "AddTool"}, {"prompt ", "AddPrompt"}, {"resource template ", "AddResourceTemplate"},
	} {
		if strings.HasPrefix(owner, r.prefix) {
			return r.fn
		}
	}
	return ""
}

// asUndeclared returns the *undeclaredError that err is, or that a
// recovered panic in err carries; nil for any other error.
func asUndeclared(err error) *undeclaredError {
	if pe, ok := err.(*panicError); ok {
		u, _ := pe.value.(*undeclaredError)
		return u
	}
	var u *undeclaredError
	errors.As(err, &u)
	return u
}

// logUndeclared logs an undeclared read, with the stack of the function
// that made it, for the developer who must fix it.
func logUndeclared(ctx context.Context, log *slog.Logger, u *undeclaredError, stack []byte) {
	log.LogAttrs(ctx, slog.LevelError, "mcpserver: a question was read that is not declared",
		slog.String("owner", u.owner), slog.String("question", u.key), slog.String("error", u.Error()),
		slog.String("stack", string(stack)))
}

// undeclaredRPCError is how a prompt or a resource template, which have
// no isError result, report an undeclared read: an internal error (the
// client did nothing wrong) whose message says what to fix.
func undeclaredRPCError(u *undeclaredError) *jsonrpc.Error {
	return wire.Internal("Internal error: %s", u.Error())
}

// QuestionError ends a call whose question could not be answered: the
// user declined or cancelled it (Action), or the client's answer does not
// fit it (Err). A tool reports it as an isError result; a prompt or a
// resource template as an invalid-params error.
type QuestionError struct {
	// Owner names the registration, such as `tool "provision"`.
	Owner string
	// Key is the question's key.
	Key string
	// Action is the user's answer when they declined or cancelled.
	Action mcp.ElicitAction
	// Err says what is wrong with the answer, when it does not fit.
	Err error
}

// Error says which question failed and why.
func (e *QuestionError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("question %q of %s: %v", e.Key, e.Owner, e.Err)
	}
	verb := "declined"
	if e.Action == mcp.ActionCancel {
		verb = "cancelled"
	}
	return fmt.Sprintf("the user %s question %q of %s", verb, e.Key, e.Owner)
}

// Unwrap returns e.Err.
func (e *QuestionError) Unwrap() error { return e.Err }

// Errors of answers that do not fit their question; wrapped by
// QuestionError.Err.
var (
	// ErrWrongKind: the answer is not of the kind asked (an elicitation
	// result for a sampling request, say).
	ErrWrongKind = errors.New("the answer is not of the kind asked")
	// ErrSchemaMismatch: an accepted elicitation's content does not match
	// the requested schema.
	ErrSchemaMismatch = errors.New("the accepted content does not match the requested schema")
	// ErrNoContent: an elicitation was accepted without content.
	ErrNoContent = errors.New("the elicitation was accepted with no content")
)
