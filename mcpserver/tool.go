package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/parley-mcp/parley/apps"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/tasks"
)

// ToolHandler is the body of a typed tool. It receives the arguments
// decoded into In, after they were validated against the tool's input
// schema, and returns Out:
//
//   - a string: the result is that text;
//   - a struct (or pointer to one), map or slice: the result carries it as
//     structuredContent, with its JSON as text for older clients; for a
//     struct type the tool advertises an output schema inferred from it;
//   - a *mcp.CallToolResult: sent as it is;
//   - a mcp.CallToolOutcome or *mcp.InputRequiredResult: the hand-built
//     form of a multi-round-trip tool (not allowed with questions).
//
// An error that is a *jsonrpc.Error is sent as a protocol error; any other
// error becomes an isError result carrying its text, so that the model
// that called the tool can see what went wrong.
type ToolHandler[In, Out any] func(ctx context.Context, call *Call, in In) (Out, error)

// toolEntry is one registered tool.
type toolEntry struct {
	tool mcp.Tool
	app  *apps.ToolMeta // the tool's _meta.ui, if it has one (apps.go)
	call func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error)
}

// AddTool registers a typed tool, or replaces the tool of the same name
// (which keeps its place in tools/list). t describes the tool; its
// InputSchema and OutputSchema are inferred from In and Out when empty
// (see the package documentation for the struct-tag dialect), and a
// hand-written InputSchema is used to validate the arguments instead.
//
// questions are what the tool must ask the person at the host before its
// body can run (see [Elicit], [Sample], [ListRoots]): the server asks them,
// over as many rounds as their dependencies need, and runs the body once,
// when every one is answered. The questions they depend on are declared
// with them. The body reads only declared questions: reading another ends
// the call with an isError result naming it. A tool that declares
// questions cannot also build an InputRequiredResult itself: one whose Out
// can hold one is refused here.
//
// Clients listening with subscriptions/listen are told the tool list
// changed.
func AddTool[In, Out any](s *Server, t *mcp.Tool, h ToolHandler[In, Out], questions ...Dependency) error {
	return addTool(s, t, taskNever, nil, h, questions)
}

// TaskMode says whether a tool registered with [AddTaskTool] runs as a
// task of the tasks extension (io.modelcontextprotocol/tasks).
type TaskMode int

const (
	taskNever TaskMode = iota
	// TaskOptional runs the tool as a task for a client that declared the
	// extension, and at once, as an ordinary call, for one that did not.
	TaskOptional
	// TaskRequired runs the tool only as a task: a client that did not
	// declare the extension gets -32021 naming it.
	TaskRequired
)

// AddTaskTool registers a tool like [AddTool] whose body runs as a task:
// the tools/call is answered at once with the task (resultType "task"),
// which the client polls with tasks/get until the body's result is there.
// The body's ctx ends when the client sends tasks/cancel, or when the
// task expires. Declared questions are asked first, in ordinary rounds,
// before the task starts; a body that must ask while it runs calls
// [Call.Ask] (in a task and out of one alike). The server serves the
// extension from the first task tool on (Options.Tasks configures it). A
// task body cannot return an InputRequiredResult.
//
// How the body ends decides the task's status, by the rule of every
// tool ([ToolHandler]):
//
//   - a result completes the task;
//   - an error that is a *jsonrpc.Error (package jsonrpc/wire builds
//     them) fails it: tasks/get shows that error;
//   - any other error completes the task too, with an isError result
//     carrying the error's text, which the model that called the tool
//     reads. To fail the task, return a *jsonrpc.Error.
func AddTaskTool[In, Out any](s *Server, t *mcp.Tool, mode TaskMode, h ToolHandler[In, Out], questions ...Dependency) error {
	if mode != TaskOptional && mode != TaskRequired {
		return fmt.Errorf("mcpserver: AddTaskTool: mode %d is neither TaskOptional nor TaskRequired", mode)
	}
	return AddTaskToolWith(s, t, &TaskToolOptions{Mode: mode}, h, questions...)
}

// TaskToolOptions configure one task tool ([AddTaskToolWith]). Nil means
// defaults.
type TaskToolOptions struct {
	// Mode is TaskOptional (the default) or TaskRequired.
	Mode TaskMode
	// PollInterval is how long clients are asked to wait between polls
	// of this tool's tasks (pollIntervalMs): a tool that takes an hour
	// need not be polled every second. Zero means the server's
	// (tasks.Options.PollInterval).
	PollInterval time.Duration
}

// AddTaskToolWith is [AddTaskTool] with options for this tool.
func AddTaskToolWith[In, Out any](s *Server, t *mcp.Tool, opts *TaskToolOptions, h ToolHandler[In, Out], questions ...Dependency) error {
	mode, task := TaskOptional, &tasks.StartOptions{}
	if opts != nil {
		if opts.Mode != taskNever {
			mode = opts.Mode
		}
		task.PollInterval = opts.PollInterval
	}
	if mode != TaskOptional && mode != TaskRequired {
		return fmt.Errorf("mcpserver: AddTaskTool: mode %d is neither TaskOptional nor TaskRequired", mode)
	}
	if t != nil && canReturnInputRequired(reflect.TypeFor[Out]()) {
		return fmt.Errorf("mcpserver: task tool %q returns %s, which can hold an InputRequiredResult; a task asks through Call.Ask or tasks.Run.Ask", t.Name, reflect.TypeFor[Out]())
	}
	if err := s.enableTasks(); err != nil {
		return err
	}
	return addTool(s, t, mode, task, h, questions)
}

func addTool[In, Out any](s *Server, t *mcp.Tool, mode TaskMode, task *tasks.StartOptions, h ToolHandler[In, Out], questions []Dependency) error {
	if t == nil || h == nil {
		return errors.New("mcpserver: AddTool needs a tool and a handler")
	}
	if err := checkToolName(t.Name); err != nil {
		return err
	}
	owner := fmt.Sprintf("tool %q", t.Name)
	inType, outType := reflect.TypeFor[In](), reflect.TypeFor[Out]()
	pl, err := newPlan(owner, inType, questions)
	if err != nil {
		return err
	}
	if pl != nil && canReturnInputRequired(outType) {
		return fmt.Errorf("mcpserver: %s declares questions and its handler returns %s, which can hold an InputRequiredResult; "+
			"a call has one inputResponses/requestState channel, so the rounds are driven either by declared questions or by the handler, not both",
			owner, outType)
	}
	in, err := newInputSchema(t.InputSchema, inType)
	if err != nil {
		return fmt.Errorf("mcpserver: %s: %w", owner, err)
	}
	def := *t
	def.InputSchema = in.raw
	if st := structuredType(outType); len(def.OutputSchema) == 0 && hasOutputSchema(st) {
		os, err := schemaFor(st, false)
		if err != nil {
			return fmt.Errorf("mcpserver: %s: cannot infer an output schema: %w", owner, err)
		}
		if def.OutputSchema, err = json.Marshal(os); err != nil {
			return err
		}
	}
	e := &toolEntry{tool: def, app: toolApp(&def)}
	e.call = func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		args, err := decodeArguments[In](in, p.Arguments)
		if err != nil {
			var amb *ambiguousArgumentsError
			if errors.As(err, &amb) {
				return nil, wire.InvalidParams("Invalid params: tool %q: %v", t.Name, amb)
			}
			return mcp.ErrorResult(fmt.Sprintf("Tool %q: %v", t.Name, err)), nil
		}
		c := s.newCall(ctx, req, owner)
		if ir, err := prepare(ctx, c, pl, args, p); err != nil {
			return toolQuestionError(t.Name, err)
		} else if ir != nil {
			return ir, nil
		}
		if mode != taskNever {
			if req.ProtocolVersion().SupportsInputRequired() && tasks.Declared(req) {
				return s.tasks.StartWith(ctx, req, task, func(ctx context.Context, _ *tasks.Run) (*mcp.CallToolResult, error) {
					o, err := runTool(ctx, s, owner, t.Name, h, c, args, pl != nil)
					if err != nil {
						return nil, err
					}
					r, ok := o.(*mcp.CallToolResult)
					if !ok {
						return nil, fmt.Errorf("mcpserver: task tool %q returned %T", t.Name, o)
					}
					return r, nil
				})
			}
			if mode == TaskRequired {
				return nil, tasks.RequiredError()
			}
		}
		return runTool(ctx, s, owner, t.Name, h, c, args, pl != nil)
	}
	s.mu.Lock()
	s.tools.put(def.Name, e)
	s.mu.Unlock()
	s.installOnce("tools", func() {
		s.low.HandleListTools(s.listTools)
		s.low.HandleCallTool(s.callTool)
	})
	s.low.NotifyToolListChanged()
	return nil
}

// runTool runs a tool's body and turns what it returned into the call's
// result. A function rather than a closure: the closure would cost every
// call an allocation.
func runTool[In, Out any](ctx context.Context, s *Server, owner, name string, h ToolHandler[In, Out], c *Call, args In, asks bool) (mcp.CallToolOutcome, error) {
	var out Out
	err := s.guard(ctx, owner, func() error {
		var herr error
		out, herr = h(ctx, c, args)
		return herr
	})
	if err != nil {
		return toolError(name, err)
	}
	if text, ok := any(out).(string); ok {
		// toolOutcome's first case, without boxing out for it.
		return mcp.TextResult(text), nil
	}
	return toolOutcome(name, any(out), asks)
}

// RemoveTools removes the named tools and, if any was registered, tells
// listening clients the tool list changed.
func (s *Server) RemoveTools(names ...string) {
	s.mu.Lock()
	removed := s.tools.remove(names...)
	s.mu.Unlock()
	if removed {
		s.low.NotifyToolListChanged()
	}
}

func (s *Server) listTools(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
	tools, next, err := listKept(s, &s.tools, p.Cursor, s.toolFilter(req), func(e *toolEntry) mcp.Tool { return e.tool })
	if err != nil {
		return nil, err
	}
	return &mcp.ListToolsResult{Tools: tools, NextCursor: next}, nil
}

func (s *Server) callTool(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	s.mu.RLock()
	e, ok := s.tools.get(p.Name)
	s.mu.RUnlock()
	if !ok {
		return nil, wire.InvalidParams("Unknown tool: %s", p.Name)
	}
	req.Route = p.Name
	return e.call(ctx, req, p)
}

// findTool serves the HTTP handler's Mcp-Param-* checks.
func (s *Server) findTool(ctx context.Context, name string) (*mcp.Tool, bool) {
	s.mu.RLock()
	e, ok := s.tools.get(name)
	s.mu.RUnlock()
	if !ok {
		return nil, false
	}
	return &e.tool, true
}

// toolOutcome turns what a body returned into the call's result.
func toolOutcome(name string, out any, asks bool) (mcp.CallToolOutcome, error) {
	switch v := out.(type) {
	case string:
		return mcp.TextResult(v), nil
	case *mcp.CallToolResult:
		if v == nil {
			return nil, errNilResult(name)
		}
		return v, nil
	case *mcp.InputRequiredResult:
		if v == nil {
			return nil, errNilResult(name)
		}
		if asks {
			return mcp.ErrorResult(fmt.Sprintf("Tool %q returned an InputRequiredResult but declares questions; "+
				"a call has one inputResponses/requestState channel, so the rounds are driven either by declared questions or by the handler, not both", name)), nil
		}
		return v, nil
	case appResult:
		return appOutcome(name, v)
	case nil:
		return nil, errNilResult(name)
	}
	rv := reflect.ValueOf(out)
	if rv.Kind() == reflect.Pointer && rv.IsNil() {
		return nil, errNilResult(name)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: tool %q: encoding its result: %w", name, err)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.ContentBlock{&mcp.TextContent{Text: string(raw)}},
		StructuredContent: json.RawMessage(raw),
	}, nil
}

func errNilResult(name string) error {
	return fmt.Errorf("mcpserver: tool %q returned a nil result and no error", name)
}

// toolError turns a body's error into the call's answer: a protocol error
// stays one; anything else is a tool error the model can read.
func toolError(name string, err error) (mcp.CallToolOutcome, error) {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return nil, err
	}
	return mcp.ErrorResult(err.Error()), nil
}

// canReturnInputRequired reports whether a handler returning t can return
// an InputRequiredResult. The empty interface is left to the runtime
// check: refusing it would refuse every "any" handler.
func canReturnInputRequired(t reflect.Type) bool {
	if t == inputRequiredType {
		return true
	}
	return t.Kind() == reflect.Interface && t.NumMethod() > 0 && inputRequiredType.Implements(t)
}

var inputRequiredType = reflect.TypeFor[*mcp.InputRequiredResult]()

// hasOutputSchema reports whether results of type t get an inferred
// output schema: structs and pointers to structs.
func hasOutputSchema(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && t != reflect.TypeFor[mcp.CallToolResult]() && t != reflect.TypeFor[mcp.InputRequiredResult]()
}

// checkToolName enforces the protocol's tool names: 1 to 128 of A-Z a-z
// 0-9 _ - and ".".
func checkToolName(name string) error {
	if name == "" || len(name) > 128 {
		return fmt.Errorf("mcpserver: tool name %q must be 1 to 128 characters long", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Errorf("mcpserver: tool name %q may only hold A-Z, a-z, 0-9, '_', '-' and '.'", name)
		}
	}
	return nil
}

// toolQuestionError reports a question that ended the call: a declined or
// unfitting answer, or a message reading a question it does not depend
// on, is a tool error the model (and the developer reading the
// transcript) can read; anything else (a missing capability, a failure)
// goes to the protocol.
func toolQuestionError(name string, err error) (mcp.CallToolOutcome, error) {
	var qe *QuestionError
	if errors.As(err, &qe) {
		return mcp.ErrorResult(fmt.Sprintf("Tool %q stopped: %v.", name, qe)), nil
	}
	if u := asUndeclared(err); u != nil {
		return mcp.ErrorResult(u.Error()), nil
	}
	return nil, err
}
