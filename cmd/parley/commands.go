package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
)

func noArgs(args []string) error {
	if len(args) > 0 {
		return usagef("unexpected arguments: %s", strings.Join(args, " "))
	}
	return nil
}

func runInfo(ctx context.Context, a *app, args []string) error {
	if err := noArgs(args); err != nil {
		return err
	}
	sess, err := a.session(ctx)
	if err != nil {
		return err
	}
	d, err := sess.Discover(ctx)
	if err != nil {
		return err
	}
	return a.printInfo(sess, d)
}

// collect gathers every item of a paginated list.
func collect[T any](seq func(yield func(*T, error) bool)) ([]T, error) {
	var out []T
	for item, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, *item)
	}
	return out, nil
}

func runToolsList(ctx context.Context, a *app, args []string) error {
	if err := noArgs(args); err != nil {
		return err
	}
	sess, err := a.session(ctx)
	if err != nil {
		return err
	}
	tools, err := collect(sess.Tools(ctx))
	if err != nil {
		return err
	}
	return a.printTools(tools)
}

func runToolsCall(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		return usagef("tools call needs the tool's name")
	}
	name, pairs := args[0], args[1:]
	base, err := a.jsonArgs()
	if err != nil {
		return err
	}
	sess, err := a.session(ctx)
	if err != nil {
		return err
	}
	var types map[string]string
	if len(pairs) > 0 {
		// The pairs are typed by the tool's input schema: find the tool.
		tools, err := collect(sess.Tools(ctx))
		if err != nil {
			return err
		}
		for _, t := range tools {
			if t.Name == name {
				types = schemaTypes(t.InputSchema)
			}
		}
	}
	arguments, err := typedArgs(pairs, types, base)
	if err != nil {
		return &usageError{err}
	}
	res, err := sess.CallTool(ctx, name, arguments)
	a.progress.done(a.stderr)
	if err != nil {
		return noSuchTool(ctx, sess, name, err)
	}
	if err := a.printToolResult(name, res); err != nil {
		return err
	}
	if res.IsError {
		return &toolFailedError{name}
	}
	return nil
}

// noSuchToolError is a call the server refused because it has no tool of
// that name; it names the closest one it has.
type noSuchToolError struct {
	name, closest string
	err           error // the server's answer
}

func (e *noSuchToolError) Error() string {
	if e.closest != "" {
		return fmt.Sprintf("the server has no tool %q; did you mean %q?", e.name, e.closest)
	}
	return fmt.Sprintf("the server has no tool %q (parley tools list lists its tools)", e.name)
}

func (e *noSuchToolError) Unwrap() error { return e.err }

// noSuchTool turns the server's refusal of a call into a noSuchToolError
// when the tool is not among those it lists; any other error is returned
// as it is.
func noSuchTool(ctx context.Context, sess *client.Session, name string, err error) error {
	var (
		rpcErr   *jsonrpc.Error
		transErr *jsonrpc.TransportError
	)
	// An unknown tool is invalid params (-32602); any other refusal is
	// not worth listing every tool for.
	if !errors.As(err, &rpcErr) || errors.As(err, &transErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		return err
	}
	tools, lerr := collect(sess.Tools(ctx))
	if lerr != nil {
		return err
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		if t.Name == name {
			return err // it exists: the server refused the call for another reason
		}
		names[i] = t.Name
	}
	return &noSuchToolError{name: name, closest: didYouMean(name, names), err: err}
}

// jsonArgs returns the arguments of --json, or nil.
func (a *app) jsonArgs() (map[string]any, error) {
	if a.opts.jsonArgs == "" {
		return nil, nil
	}
	m, err := readJSONArgs(a.opts.jsonArgs, a.stdin)
	if err != nil {
		return nil, &usageError{err}
	}
	return m, nil
}

func runPromptsList(ctx context.Context, a *app, args []string) error {
	if err := noArgs(args); err != nil {
		return err
	}
	sess, err := a.session(ctx)
	if err != nil {
		return err
	}
	prompts, err := collect(sess.Prompts(ctx))
	if err != nil {
		return err
	}
	return a.printPrompts(prompts)
}

func runPromptsGet(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		return usagef("prompts get needs the prompt's name")
	}
	base, err := a.jsonArgs()
	if err != nil {
		return err
	}
	pargs, err := stringArgs(args[1:], base)
	if err != nil {
		return &usageError{err}
	}
	sess, err := a.session(ctx)
	if err != nil {
		return err
	}
	res, err := sess.GetPrompt(ctx, args[0], pargs)
	a.progress.done(a.stderr)
	if err != nil {
		return err
	}
	return a.printPrompt(args[0], res)
}

func runResourcesList(ctx context.Context, a *app, args []string) error {
	if err := noArgs(args); err != nil {
		return err
	}
	sess, err := a.session(ctx)
	if err != nil {
		return err
	}
	rs, err := collect(sess.Resources(ctx))
	if err != nil {
		return err
	}
	return a.printResources(rs)
}

func runResourcesRead(ctx context.Context, a *app, args []string) error {
	if len(args) != 1 {
		return usagef("resources read needs one URI")
	}
	sess, err := a.session(ctx)
	if err != nil {
		return err
	}
	res, err := sess.ReadResource(ctx, args[0])
	a.progress.done(a.stderr)
	if err != nil {
		return err
	}
	return a.printResourceContents(res)
}

func runResourcesTemplates(ctx context.Context, a *app, args []string) error {
	if err := noArgs(args); err != nil {
		return err
	}
	sess, err := a.session(ctx)
	if err != nil {
		return err
	}
	ts, err := collect(sess.ResourceTemplates(ctx))
	if err != nil {
		return err
	}
	return a.printTemplates(ts)
}

func runComplete(ctx context.Context, a *app, args []string) error {
	if len(args) < 3 {
		return usagef("complete needs: prompt NAME|resource TEMPLATE ARG=PARTIAL")
	}
	p := &mcp.CompleteRequestParams{}
	switch args[0] {
	case "prompt":
		p.Ref = &mcp.PromptReference{Name: args[1]}
	case "resource", "template":
		p.Ref = &mcp.ResourceTemplateReference{URI: args[1]}
	default:
		return usagef("complete: %q is not prompt or resource", args[0])
	}
	name, value, ok := strings.Cut(args[2], "=")
	if !ok {
		return usagef("complete: %q: want ARG=PARTIAL", args[2])
	}
	p.Argument = mcp.CompleteArgument{Name: name, Value: value}
	if len(args) > 3 {
		c, err := stringArgs(args[3:], nil)
		if err != nil {
			return &usageError{err}
		}
		p.Context = &mcp.CompleteContext{Arguments: c}
	}
	sess, err := a.session(ctx)
	if err != nil {
		return err
	}
	res, err := sess.Complete(ctx, p)
	if err != nil {
		return err
	}
	return a.printCompletion(res)
}

func runListen(ctx context.Context, a *app, args []string) error {
	sess, err := a.session(ctx)
	if err != nil {
		return err
	}
	filter := mcp.SubscriptionFilter{ToolsListChanged: true, PromptsListChanged: true, ResourcesListChanged: true, ResourceSubscriptions: args}
	sub, err := sess.Listen(ctx, filter)
	if err != nil {
		return err
	}
	defer sub.Close()
	fmt.Fprintf(a.stderr, "listening for %s (ctrl+c ends)\n", peerLine(describeFilter(sub.Granted)))
	for {
		select {
		case <-ctx.Done():
			return nil // interrupted: the way listening ends
		case ev, ok := <-sub.Events():
			if !ok {
				if err := sub.Err(); err != nil && !errors.Is(err, client.ErrListenEnded) && ctx.Err() == nil {
					return err
				}
				return nil
			}
			if err := a.printEvent(ev); err != nil {
				return err
			}
		}
	}
}

func describeFilter(f mcp.SubscriptionFilter) string {
	var parts []string
	if f.ToolsListChanged {
		parts = append(parts, "tools")
	}
	if f.PromptsListChanged {
		parts = append(parts, "prompts")
	}
	if f.ResourcesListChanged {
		parts = append(parts, "resources")
	}
	s := "nothing"
	if len(parts) > 0 {
		s = "changes to the lists of " + strings.Join(parts, ", ")
	}
	if len(f.ResourceSubscriptions) > 0 {
		s += " and updates of " + strings.Join(f.ResourceSubscriptions, ", ")
	}
	return s
}
