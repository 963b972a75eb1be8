package client_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// The multi-round-trip tests talk to mrtrServer, a low-level server whose
// tools, prompts and resources all run the same flows (mrtrFlow), so that
// every flow is checked on all three carriers. The server is stateless
// across rounds, as 2026-07-28 requires: everything it learnt in earlier
// rounds travels in requestState.

// mrtrCarriers are the three methods that may answer input_required, each
// with a way to run a flow through the automatic loop and return its text.
var mrtrCarriers = []struct {
	method string
	run    func(ctx context.Context, s *client.Session, flow string) (string, error)
}{
	{mcp.MethodCallTool, func(ctx context.Context, s *client.Session, flow string) (string, error) {
		res, err := s.CallTool(ctx, flow, map[string]any{"name": "orders"})
		if err != nil {
			return "", err
		}
		if res.IsError {
			return "", fmt.Errorf("tool error: %s", text(res))
		}
		return text(res), nil
	}},
	{mcp.MethodGetPrompt, func(ctx context.Context, s *client.Session, flow string) (string, error) {
		res, err := s.GetPrompt(ctx, flow, map[string]string{"name": "orders"})
		if err != nil {
			return "", err
		}
		if len(res.Messages) != 1 {
			return "", fmt.Errorf("%d messages", len(res.Messages))
		}
		t, ok := res.Messages[0].Content.(*mcp.TextContent)
		if !ok {
			return "", fmt.Errorf("content %T", res.Messages[0].Content)
		}
		return t.Text, nil
	}},
	{mcp.MethodReadResource, func(ctx context.Context, s *client.Session, flow string) (string, error) {
		res, err := s.ReadResource(ctx, "mrtr:///"+flow+"?name=orders")
		if err != nil {
			return "", err
		}
		if len(res.Contents) != 1 {
			return "", fmt.Errorf("%d contents", len(res.Contents))
		}
		t, ok := res.Contents[0].(*mcp.TextResourceContents)
		if !ok {
			return "", fmt.Errorf("contents %T", res.Contents[0])
		}
		return t.Text, nil
	}},
}

// twoState is the state of the second round of the "two" flow: it carries
// the first answer, and is full of what a careless client would mangle.
const twoState = "two:2 \"quoted\" back\\slash tab\t é ✓ 🚀 <&> "

func regionForm(message string) *mcp.ElicitRequest {
	return mcp.NewElicitFormRequest(message, mcp.ElicitRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{"region": &mcp.StringSchema{Title: "Region"}},
		Required:   []string{"region"},
	})
}

// mrtrFlow runs one round of a flow for subject, given the round's
// responses and state. It returns the final text, or what the client must
// give first. The flows:
//
//   - "one": asks for a region (key "region", state "one-v1"), then answers
//     "<subject> in <region>", or "declined"/"cancelled";
//   - "two": asks "first" (state "two:1"), then "second" (state twoState
//     plus the first answer), then answers "first=<a> second=<b>". It
//     fails if the last round still carries the first answer: responses
//     are per round, never accumulated;
//   - "batch": asks an elicitation ("who"), a sampling ("llm") and the
//     roots ("roots") in one round (state "batch-1"), then answers with all
//     three;
//   - "stateless": like "one" but sends no requestState, and fails if the
//     retry carries one;
//   - "sample": asks for a sampling only (to check the capability gate).
func mrtrFlow(flow, subject string, in mcp.InputResponses, state string) (string, *mcp.InputRequiredResult, error) {
	wantState := func(want string) error {
		if state != want {
			return wire.InvalidParams("Invalid params: requestState %q, want %q", state, want)
		}
		return nil
	}
	switch flow {
	case "one", "stateless":
		first := &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"region": regionForm("Which region should " + subject + " live in?")}}
		if flow == "one" {
			first.RequestState = "one-v1"
		}
		if !in.Has("region") {
			return "", first, nil
		}
		if err := wantState(first.RequestState); err != nil {
			return "", nil, err
		}
		ans, err := in.Elicit("region")
		if err != nil {
			return "", nil, wire.InvalidParams("Invalid params: %v", err)
		}
		switch ans.Action {
		case mcp.ActionDecline:
			return "declined", nil, nil
		case mcp.ActionCancel:
			return "cancelled", nil, nil
		}
		return fmt.Sprintf("%s in %v", subject, ans.Content["region"]), nil, nil
	case "two":
		switch {
		case in.Has("second"):
			if in.Has("first") {
				return "", nil, wire.InvalidParams("Invalid params: the answers of round 1 came again")
			}
			a, ok := strings.CutPrefix(state, twoState)
			if !ok {
				return "", nil, wantState(twoState + "…")
			}
			b, err := in.Elicit("second")
			if err != nil {
				return "", nil, wire.InvalidParams("Invalid params: %v", err)
			}
			return fmt.Sprintf("first=%s second=%v", a, b.Content["region"]), nil, nil
		case in.Has("first"):
			if err := wantState("two:1"); err != nil {
				return "", nil, err
			}
			a, err := in.Elicit("first")
			if err != nil {
				return "", nil, wire.InvalidParams("Invalid params: %v", err)
			}
			return "", &mcp.InputRequiredResult{
				InputRequests: mcp.InputRequests{"second": regionForm("And the backup region?")},
				RequestState:  fmt.Sprintf("%s%v", twoState, a.Content["region"]),
			}, nil
		}
		return "", &mcp.InputRequiredResult{
			InputRequests: mcp.InputRequests{"first": regionForm("Which region first?")},
			RequestState:  "two:1",
		}, nil
	case "batch":
		if !in.Has("who") && !in.Has("llm") && !in.Has("roots") {
			return "", &mcp.InputRequiredResult{
				InputRequests: mcp.InputRequests{
					"who": regionForm("Who is asking?"),
					"llm": mcp.NewCreateMessageRequest(mcp.CreateMessageRequestParams{
						Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.SamplingContent{&mcp.TextContent{Text: "Name a region."}}}},
						MaxTokens: 10,
					}),
					"roots": mcp.NewListRootsRequest(),
				},
				RequestState: "batch-1",
			}, nil
		}
		if err := wantState("batch-1"); err != nil {
			return "", nil, err
		}
		who, err := in.Elicit("who")
		if err != nil {
			return "", nil, wire.InvalidParams("Invalid params: %v", err)
		}
		llm, err := in.Sample("llm")
		if err != nil {
			return "", nil, wire.InvalidParams("Invalid params: %v", err)
		}
		roots, err := in.Roots("roots")
		if err != nil {
			return "", nil, wire.InvalidParams("Invalid params: %v", err)
		}
		var uris []string
		for _, r := range roots.Roots {
			uris = append(uris, r.URI)
		}
		return fmt.Sprintf("who=%v llm=%s roots=%s", who.Content["region"], llm.Text(), strings.Join(uris, ",")), nil, nil
	case "sample":
		if in.Has("llm") {
			return "sampled", nil, nil
		}
		return "", &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{
			"llm": mcp.NewCreateMessageRequest(mcp.CreateMessageRequestParams{MaxTokens: 1}),
		}}, nil
	}
	return "", nil, wire.InvalidParams("Invalid params: no flow %q", flow)
}

// mrtrServer serves the flows as tools (argument "name"), prompts
// (argument "name") and resources (mrtr:///<flow>?name=<subject>).
func mrtrServer() *server.Server {
	s := newServer(nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		var args struct {
			Name string `json:"name"`
		}
		if err := p.DecodeArguments(&args); err != nil {
			return nil, wire.InvalidParams("Invalid params: %v", err)
		}
		out, ir, err := mrtrFlow(p.Name, args.Name, p.InputResponses, p.RequestState)
		if err != nil || ir != nil {
			return ir, err
		}
		return mcp.TextResult(out), nil
	})
	s.HandleGetPrompt(func(ctx context.Context, req *server.Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
		out, ir, err := mrtrFlow(p.Name, p.Arguments["name"], p.InputResponses, p.RequestState)
		if err != nil || ir != nil {
			return ir, err
		}
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: out}}}}, nil
	})
	s.HandleReadResource(func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		rest, ok := strings.CutPrefix(p.URI, "mrtr:///")
		if !ok {
			return nil, server.ResourceNotFound(p.URI)
		}
		flow, subject, _ := strings.Cut(rest, "?name=")
		out, ir, err := mrtrFlow(flow, subject, p.InputResponses, p.RequestState)
		if err != nil || ir != nil {
			return ir, err
		}
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: p.URI, Text: out}}}, nil
	})
	return s
}

// answerRegions returns an Elicit callback that accepts every form with
// the next of regions for its "region" field (the last one once they run
// out), and records the messages it was shown.
func answerRegions(shown *[]string, regions ...string) client.ElicitFunc {
	var mu sync.Mutex
	i := 0
	return func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
		form, ok := p.(*mcp.ElicitRequestFormParams)
		if !ok {
			return nil, fmt.Errorf("params %T, want a form", p)
		}
		mu.Lock()
		defer mu.Unlock()
		if shown != nil {
			*shown = append(*shown, form.Message)
		}
		r := regions[min(i, len(regions)-1)]
		i++
		return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": r}}, nil
	}
}

func sampleText(s string) client.SampleFunc {
	return func(ctx context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
		return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: mcp.SamplingContent{&mcp.TextContent{Text: s}}, Model: "test-model"}, nil
	}
}

func listRoots(uris ...string) client.ListRootsFunc {
	return func(ctx context.Context) (*mcp.ListRootsResult, error) {
		r := &mcp.ListRootsResult{Roots: []mcp.Root{}}
		for _, u := range uris {
			r.Roots = append(r.Roots, mcp.Root{URI: u})
		}
		return r, nil
	}
}

// gate lets n callbacks through only once all n have arrived, so callbacks
// that each pass a gate prove they run at the same time: a client that ran
// them one after another would leave the first waiting for ever. In a
// synctest bubble the wait is bounded by a timer that fires at once when
// nothing else can happen.
type gate struct {
	n, arrived int
	mu         sync.Mutex
	all        chan struct{}
}

func newGate(n int) *gate { return &gate{n: n, all: make(chan struct{})} }

var errNotConcurrent = errors.New("the other callbacks of the round did not start")

func (g *gate) pass(ctx context.Context) error {
	g.mu.Lock()
	g.arrived++
	if g.arrived == g.n {
		close(g.all)
	}
	g.mu.Unlock()
	select {
	case <-g.all:
		return nil
	case <-time.After(time.Minute):
		return errNotConcurrent
	case <-ctx.Done():
		return ctx.Err()
	}
}

// gatedOptions returns client options whose three callbacks each pass g
// before answering the "batch" flow.
func gatedOptions(g *gate) *client.Options {
	elicit, sample, roots := answerRegions(nil, "Ada"), sampleText("eu-west-1"), listRoots("file:///a", "file:///b")
	return &client.Options{
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			if err := g.pass(ctx); err != nil {
				return nil, err
			}
			return elicit(ctx, p)
		},
		Sample: func(ctx context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
			if err := g.pass(ctx); err != nil {
				return nil, err
			}
			return sample(ctx, p)
		},
		ListRoots: func(ctx context.Context) (*mcp.ListRootsResult, error) {
			if err := g.pass(ctx); err != nil {
				return nil, err
			}
			return roots(ctx)
		},
	}
}
