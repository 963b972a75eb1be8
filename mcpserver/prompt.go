package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/parley-mcp/parley/internal/jsontext"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// PromptHandler is the body of a prompt. In is map[string]string or a
// struct of string fields (the prompt's arguments); Out is
// *mcp.GetPromptResult, or mcp.GetPromptOutcome for a prompt that builds
// its InputRequiredResult by hand.
type PromptHandler[In, Out any] func(ctx context.Context, call *Call, in In) (Out, error)

type promptEntry struct {
	prompt mcp.Prompt
	get    func(ctx context.Context, req *server.Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error)
}

var (
	promptResultType  = reflect.TypeFor[*mcp.GetPromptResult]()
	promptOutcomeType = reflect.TypeFor[mcp.GetPromptOutcome]()
)

// AddPrompt registers a prompt, or replaces the prompt of the same name.
// When p declares no Arguments and In is a struct, the arguments are
// derived from In's fields (a field's mcp tag title is the argument's
// title). A prompts/get that lacks a required argument, or sends it as
// null, is refused with an invalid-params error naming it, and so is an
// argument that breaks its field's mcp tag (enum, minLength, maxLength,
// pattern); an absent argument takes its field's default.
//
// questions are asked before the body runs, exactly as for a tool (see
// [AddTool]); a prompt that declares them returns *mcp.GetPromptResult, and
// one that returns mcp.GetPromptOutcome (to build its own
// InputRequiredResult) cannot declare them. A declined question, or an
// answer that does not fit, fails the request with an invalid-params
// error naming the question.
func AddPrompt[In, Out any](s *Server, p *mcp.Prompt, h PromptHandler[In, Out], questions ...Dependency) error {
	if p == nil || h == nil || p.Name == "" {
		return errors.New("mcpserver: AddPrompt needs a named prompt and a handler")
	}
	owner := fmt.Sprintf("prompt %q", p.Name)
	outType := reflect.TypeFor[Out]()
	if outType != promptResultType && outType != promptOutcomeType {
		return fmt.Errorf("mcpserver: %s returns %s; a prompt returns *mcp.GetPromptResult or mcp.GetPromptOutcome", owner, outType)
	}
	inType := reflect.TypeFor[In]()
	args, err := newStringArgs(inType, false)
	if err != nil {
		return fmt.Errorf("mcpserver: %s: %w", owner, err)
	}
	pl, err := newPlan(owner, inType, questions)
	if err != nil {
		return err
	}
	if pl != nil && outType == promptOutcomeType {
		return fmt.Errorf("mcpserver: %s declares questions and returns mcp.GetPromptOutcome, which can hold an InputRequiredResult; "+
			"a request has one inputResponses/requestState channel: return *mcp.GetPromptResult", owner)
	}
	def := *p
	if len(def.Arguments) == 0 {
		for _, f := range args.fields {
			def.Arguments = append(def.Arguments, mcp.PromptArgument{Name: f.name, Title: f.title, Description: f.description, Required: f.required})
		}
	}
	e := &promptEntry{prompt: def}
	e.get = func(ctx context.Context, req *server.Request, gp *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
		if a, b, ok := caseTwins(gp.Arguments); ok {
			return nil, wire.InvalidParams("Invalid params: prompt %q: arguments %q and %q have names equal under case folding, "+
				"which some decoders (Go's encoding/json among them) read as one", p.Name, a, b)
		}
		for _, a := range def.Arguments {
			if _, ok := gp.Arguments[a.Name]; a.Required && !ok {
				return nil, wire.InvalidParams("Invalid params: prompt %q needs the argument %q", p.Name, a.Name)
			}
		}
		if err := args.check(gp.Arguments); err != nil {
			return nil, wire.InvalidParams("Invalid params: prompt %q: argument %v", p.Name, err)
		}
		v := args.decode(gp.Arguments)
		in := v.Interface().(In)
		c := s.newCall(ctx, req, owner)
		if ir, err := prepare(ctx, c, pl, in, gp); err != nil {
			return nil, requestQuestionError(err)
		} else if ir != nil {
			return ir, nil
		}
		var out Out
		err := s.guard(ctx, owner, func() (err error) { out, err = h(ctx, c, in); return })
		if err != nil {
			return nil, requestError(err)
		}
		return promptOutcome(owner, any(out))
	}
	s.mu.Lock()
	s.prompts.put(def.Name, e)
	s.mu.Unlock()
	s.installOnce("prompts", func() {
		s.low.HandleListPrompts(s.listPrompts)
		s.low.HandleGetPrompt(s.getPrompt)
	})
	s.low.NotifyPromptListChanged()
	return nil
}

func promptOutcome(owner string, out any) (mcp.GetPromptOutcome, error) {
	o, _ := out.(mcp.GetPromptOutcome)
	if o == nil || reflect.ValueOf(o).IsNil() {
		return nil, fmt.Errorf("mcpserver: %s returned a nil result and no error", owner)
	}
	return o, nil
}

// requestQuestionError reports a question that ended a prompts/get or
// resources/read, which have no isError result: an invalid-params error
// that names the question (or, for a message that reads a question it does
// not depend on, requestError's internal error).
func requestQuestionError(err error) error {
	var qe *QuestionError
	if errors.As(err, &qe) {
		return wire.InvalidParams("Invalid params: %s", qe.Error())
	}
	return requestError(err)
}

// requestError is what a prompt, resource template or completion function's
// error becomes: a question it read without declaring it is an internal
// error saying so (those results have no isError); any other error goes
// to the protocol as it is.
func requestError(err error) error {
	if u := asUndeclared(err); u != nil {
		return undeclaredRPCError(u)
	}
	return err
}

// RemovePrompts removes the named prompts and, if any was registered,
// tells listening clients the prompt list changed.
func (s *Server) RemovePrompts(names ...string) {
	s.mu.Lock()
	removed := s.prompts.remove(names...)
	s.mu.Unlock()
	if removed {
		s.low.NotifyPromptListChanged()
	}
}

func (s *Server) listPrompts(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListPromptsResult, error) {
	prompts, next, err := listPage(s, &s.prompts, p.Cursor, func(e *promptEntry) mcp.Prompt { return e.prompt })
	if err != nil {
		return nil, err
	}
	return &mcp.ListPromptsResult{Prompts: prompts, NextCursor: next}, nil
}

func (s *Server) getPrompt(ctx context.Context, req *server.Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
	s.mu.RLock()
	e, ok := s.prompts.get(p.Name)
	s.mu.RUnlock()
	if !ok {
		return nil, wire.InvalidParams("Invalid params: unknown prompt %q", p.Name)
	}
	req.Route = p.Name
	return e.get(ctx, req, p)
}

// caseTwins finds two argument names equal under case folding, as tool
// arguments are refused for (see decodeArguments). Exact duplicates never
// reach a prompt: the protocol layer decodes prompt arguments into a map,
// which every reader then shares.
func caseTwins(args map[string]string) (a, b string, ok bool) {
	if len(args) < 2 {
		return "", "", false
	}
	seen := make(map[string]string, len(args))
	for name := range args {
		f := jsontext.FoldName(name)
		if other, dup := seen[f]; dup {
			return min(name, other), max(name, other), true
		}
		seen[f] = name
	}
	return "", "", false
}
