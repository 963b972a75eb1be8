package mcpserver

import (
	"context"
	"fmt"

	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// CompleteFunc suggests values for a prompt argument or a template
// variable. value is what the user has typed so far; resolved holds the
// arguments or variables already filled in. It returns the suggestions,
// best first; the server sends at most 100 and says whether there are more.
type CompleteFunc func(ctx context.Context, call *Call, value string, resolved map[string]string) ([]string, error)

// maxCompletions is the protocol's limit on the values of one completion.
const maxCompletions = 100

type completionKey struct {
	kind string // "ref/prompt" or "ref/resource"
	name string // the prompt's name or the uriTemplate
	arg  string
}

// CompletePromptArgument registers the completion of one argument of a
// prompt. The server declares the completions capability from the first
// registration on.
func (s *Server) CompletePromptArgument(prompt, argument string, f CompleteFunc) {
	s.addCompletion(completionKey{"ref/prompt", prompt, argument}, f)
}

// CompleteTemplateVariable registers the completion of one variable of a
// resource template, named by its uriTemplate.
func (s *Server) CompleteTemplateVariable(uriTemplate, variable string, f CompleteFunc) {
	s.addCompletion(completionKey{"ref/resource", uriTemplate, variable}, f)
}

func (s *Server) addCompletion(k completionKey, f CompleteFunc) {
	s.mu.Lock()
	s.completions[k] = f
	s.mu.Unlock()
	s.installOnce("completions", func() { s.low.HandleComplete(s.complete) })
}

// complete answers completion/complete. A reference or argument without a
// completion function gets no suggestions, not an error: completion is a
// convenience, and a client may ask about anything it is shown.
func (s *Server) complete(ctx context.Context, req *server.Request, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
	var k completionKey
	switch ref := p.Ref.(type) {
	case *mcp.PromptReference:
		k = completionKey{"ref/prompt", ref.Name, p.Argument.Name}
	case *mcp.ResourceTemplateReference:
		k = completionKey{"ref/resource", ref.URI, p.Argument.Name}
	default:
		return nil, wire.InvalidParams("Invalid params: completion/complete needs a ref")
	}
	s.mu.RLock()
	f := s.completions[k]
	s.mu.RUnlock()
	res := &mcp.CompleteResult{}
	if f == nil {
		return res, nil
	}
	var resolved map[string]string
	if p.Context != nil {
		resolved = p.Context.Arguments
	}
	owner := fmt.Sprintf("completion of %q in %s %q", k.arg, k.kind, k.name)
	c := s.newCall(ctx, req, owner)
	var values []string
	err := s.guard(ctx, owner, func() (err error) { values, err = f(ctx, c, p.Argument.Value, resolved); return })
	if err != nil {
		return nil, requestError(err)
	}
	res.Completion.Total = len(values)
	if len(values) > maxCompletions {
		values, res.Completion.HasMore = values[:maxCompletions], true
	}
	res.Completion.Values = values
	return res, nil
}
