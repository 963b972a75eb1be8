package mcpserver_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

var languages = []string{"go", "gleam", "haskell", "javascript", "python", "rust"}

func completePrefix(ctx context.Context, c *mcpserver.Call, value string, resolved map[string]string) ([]string, error) {
	var out []string
	for _, l := range languages {
		if strings.HasPrefix(l, value) {
			out = append(out, l)
		}
	}
	return out, nil
}

func TestCompletePromptArgument(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddPrompt(s, &mcp.Prompt{Name: "review"}, func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.GetPromptResult, error) {
		return userSays("ok"), nil
	}))
	addGreet(t, s)
	sess := connect(t, s, nil)
	// No completion registered: the server does not serve the method.
	_, err := sess.Complete(ctx, &mcp.CompleteRequestParams{Ref: &mcp.PromptReference{Name: "review"}, Argument: mcp.CompleteArgument{Name: "lang", Value: "g"}})
	wantRPCError(t, err, jsonrpc.CodeMethodNotFound, "Method not found: completion/complete")

	s.CompletePromptArgument("review", "lang", completePrefix)
	s.CompletePromptArgument("review", "style", func(ctx context.Context, c *mcpserver.Call, value string, resolved map[string]string) ([]string, error) {
		return []string{fmt.Sprintf("for %s, starting %q", resolved["lang"], value)}, nil
	})
	sess = connect(t, s, nil)
	if caps := sess.ServerCapabilities(); caps == nil || caps.Completions == nil {
		t.Errorf("completions capability not declared: %+v", caps)
	}
	res, err := sess.Complete(ctx, &mcp.CompleteRequestParams{Ref: &mcp.PromptReference{Name: "review"}, Argument: mcp.CompleteArgument{Name: "lang", Value: "g"}})
	mustOK(t, err)
	if !slices.Equal(res.Completion.Values, []string{"go", "gleam"}) || res.Completion.Total != 2 || res.Completion.HasMore {
		t.Errorf("completion = %+v", res.Completion)
	}
	res, err = sess.Complete(ctx, &mcp.CompleteRequestParams{
		Ref:      &mcp.PromptReference{Name: "review"},
		Argument: mcp.CompleteArgument{Name: "style", Value: "te"},
		Context:  &mcp.CompleteContext{Arguments: map[string]string{"lang": "go"}},
	})
	mustOK(t, err)
	if !slices.Equal(res.Completion.Values, []string{`for go, starting "te"`}) {
		t.Errorf("completion with context = %+v", res.Completion)
	}
	// An argument or prompt without a completion function: no values.
	for _, p := range []*mcp.CompleteRequestParams{
		{Ref: &mcp.PromptReference{Name: "review"}, Argument: mcp.CompleteArgument{Name: "other", Value: "x"}},
		{Ref: &mcp.PromptReference{Name: "nope"}, Argument: mcp.CompleteArgument{Name: "lang", Value: "g"}},
		// A template reference with the prompt's name is another key.
		{Ref: &mcp.ResourceTemplateReference{URI: "review"}, Argument: mcp.CompleteArgument{Name: "lang", Value: "g"}},
	} {
		res, err = sess.Complete(ctx, p)
		mustOK(t, err)
		if len(res.Completion.Values) != 0 || res.Completion.HasMore {
			t.Errorf("completion of %+v = %+v, want none", p.Argument, res.Completion)
		}
	}
}

func TestCompleteTemplateVariable(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "db://{db}/tables/{table}", Name: "table"},
		func(ctx context.Context, c *mcpserver.Call, v tableVars) (*mcp.ReadResourceResult, error) {
			return textContents("db://x", "x"), nil
		}))
	s.CompleteTemplateVariable("db://{db}/tables/{table}", "table", func(ctx context.Context, c *mcpserver.Call, value string, resolved map[string]string) ([]string, error) {
		var out []string
		for i := range 250 {
			out = append(out, fmt.Sprintf("%s_%s%03d", resolved["db"], value, i))
		}
		return out, nil
	})
	s.CompleteTemplateVariable("db://{db}/tables/{table}", "db", func(ctx context.Context, c *mcpserver.Call, value string, resolved map[string]string) ([]string, error) {
		return nil, errors.New("catalog password is hunter2")
	})
	s.CompleteTemplateVariable("db://{db}/tables/{table}", "panics", func(ctx context.Context, c *mcpserver.Call, value string, resolved map[string]string) ([]string, error) {
		panic("completion panic")
	})
	sess := connect(t, s, nil)
	res, err := sess.Complete(ctx, &mcp.CompleteRequestParams{
		Ref:      &mcp.ResourceTemplateReference{URI: "db://{db}/tables/{table}"},
		Argument: mcp.CompleteArgument{Name: "table", Value: "t"},
		Context:  &mcp.CompleteContext{Arguments: map[string]string{"db": "orders"}},
	})
	mustOK(t, err)
	c := res.Completion
	if len(c.Values) != 100 || !c.HasMore || c.Total != 250 {
		t.Fatalf("completion has %d values, hasMore %v, total %d; want 100, true, 250", len(c.Values), c.HasMore, c.Total)
	}
	if c.Values[0] != "orders_t000" || c.Values[99] != "orders_t099" {
		t.Errorf("values run %q .. %q, want the first 100 in order", c.Values[0], c.Values[99])
	}

	_, err = sess.Complete(ctx, &mcp.CompleteRequestParams{Ref: &mcp.ResourceTemplateReference{URI: "db://{db}/tables/{table}"}, Argument: mcp.CompleteArgument{Name: "db"}})
	e := wantRPCError(t, err, jsonrpc.CodeInternalError, "Internal error")
	if strings.Contains(e.Error(), "hunter2") {
		t.Error("the completion's error reached the client")
	}
	_, err = sess.Complete(ctx, &mcp.CompleteRequestParams{Ref: &mcp.ResourceTemplateReference{URI: "db://{db}/tables/{table}"}, Argument: mcp.CompleteArgument{Name: "panics"}})
	wantRPCError(t, err, jsonrpc.CodeInternalError, "Internal error")
}

func TestCompleteExactlyOneHundred(t *testing.T) {
	s, _ := newServer(t, nil)
	s.CompletePromptArgument("p", "a", func(ctx context.Context, c *mcpserver.Call, value string, resolved map[string]string) ([]string, error) {
		out := make([]string, 100)
		for i := range out {
			out[i] = fmt.Sprint(i)
		}
		return out, nil
	})
	sess := connect(t, s, nil)
	res, err := sess.Complete(context.Background(), &mcp.CompleteRequestParams{Ref: &mcp.PromptReference{Name: "p"}, Argument: mcp.CompleteArgument{Name: "a"}})
	mustOK(t, err)
	if len(res.Completion.Values) != 100 || res.Completion.HasMore || res.Completion.Total != 100 {
		t.Errorf("completion = %d values, hasMore %v, total %d", len(res.Completion.Values), res.Completion.HasMore, res.Completion.Total)
	}
}

// A completion/complete without a ref is invalid params.
func TestCompleteWithoutRef(t *testing.T) {
	s, _ := newServer(t, nil)
	s.CompletePromptArgument("p", "a", completePrefix)
	_, err := rawRequest(t, s, mcp.MethodComplete, map[string]any{"argument": map[string]any{"name": "a", "value": ""}})
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Invalid params: completion/complete needs a ref")
}
