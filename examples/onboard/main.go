// Command onboard shows a tool that needs three things from the client at
// once (a person's answer, a completion from the host's model and the
// client's roots) and gets them all in a single round.
//
// The server's "onboard" tool (mcpserver.AddTool) declares three
// questions: an Elicit form for the project's owner, a Sample request for a
// one-line welcome message, and ListRoots for the folders the user has
// open. None depends on another, so the server asks all three in the same
// InputRequiredResult; the client's loop runs its three callbacks
// (concurrently), sends the call again with the three answers, and the
// tool's body runs once, with every answer typed. The OnRound hook prints
// each round and what it asks; the program checks that there was exactly
// one, holding all three requests, and prints the tool's result last.
//
// Server and client run in one process, over s.InMemoryTransport().
//
//	go run ./examples/onboard
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

type onboardArgs struct {
	Project string `json:"project" jsonschema:"the project to onboard"`
}

type ownerForm struct {
	Owner string `json:"owner" jsonschema:"who owns the project"`
}

// Three independent questions: none is after another, so they share a round.
var (
	owner = mcpserver.Elicit[ownerForm]("owner", func(a onboardArgs, _ *mcpserver.Call) string {
		return "Who owns " + a.Project + "?"
	})
	welcome = mcpserver.Sample("welcome", func(a onboardArgs, _ *mcpserver.Call) mcp.CreateMessageRequestParams {
		return mcp.CreateMessageRequestParams{
			SystemPrompt: "You write short, friendly onboarding messages.",
			Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.SamplingContent{
				&mcp.TextContent{Text: "Write a one-line welcome to the " + a.Project + " project."},
			}}},
			MaxTokens: 60,
		}
	})
	roots = mcpserver.ListRoots("roots")
)

func newServer() (*mcpserver.Server, error) {
	s, err := mcpserver.New(mcp.Implementation{Name: "onboard-server", Version: "1.0.0"}, &mcpserver.Options{
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return nil, err
	}
	err = mcpserver.AddTool(s, &mcp.Tool{Name: "onboard", Description: "Set up a project for its owner."},
		func(ctx context.Context, c *mcpserver.Call, a onboardArgs) (string, error) {
			var folders []string
			for _, r := range roots.Get(c) {
				folders = append(folders, r.URI)
			}
			if len(folders) == 0 {
				return "", errors.New("no folder is open: open the project's folder and try again")
			}
			return fmt.Sprintf("Onboarded %s for %s in %s. %s",
				a.Project, owner.Get(c).Owner, strings.Join(folders, ", "), welcome.Get(c).Text()), nil
		}, owner, welcome, roots)
	return s, err
}

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "onboard:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	s, err := newServer()
	if err != nil {
		return err
	}
	var (
		mu     sync.Mutex // the callbacks of one round run concurrently
		rounds []int      // how many requests each round held
	)
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf(format, args...)
	}
	c := client.New(mcp.Implementation{Name: "onboard-client", Version: "1.0.0"}, &client.Options{
		// A form for the owner is filled in; a URL, or a form the client
		// does not know, is declined.
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			switch p := p.(type) {
			case *mcp.ElicitRequestFormParams:
				if _, ok := p.RequestedSchema.Properties["owner"]; ok {
					say("  elicit: %q -> the user enters \"Ada\"\n", p.Message)
					return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"owner": "Ada"}}, nil
				}
				say("  elicit: an unknown form %q: declined\n", p.Message)
			case *mcp.ElicitRequestURLParams:
				say("  elicit: a URL to open (%s): declined\n", p.URL)
			}
			return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
		},
		// The host's model, stood in for by a fixed reply.
		Sample: func(ctx context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
			say("  sample: %d message(s), at most %d tokens -> the model replies\n", len(p.Messages), p.MaxTokens)
			return &mcp.CreateMessageResult{
				Role:       mcp.RoleAssistant,
				Content:    mcp.SamplingContent{&mcp.TextContent{Text: "Welcome aboard: the orders team is glad you are here!"}},
				Model:      "example-model",
				StopReason: mcp.StopReasonEndTurn,
			}, nil
		},
		// The folders the user has open.
		ListRoots: func(ctx context.Context) (*mcp.ListRootsResult, error) {
			say("  roots: -> file:///home/ada/src/orders\n")
			return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///home/ada/src/orders", Name: "orders"}}}, nil
		},
		Loop: &client.LoopOptions{OnRound: func(ctx context.Context, p *client.Pending) error {
			var asks []string
			for _, key := range p.InputRequests.Keys() {
				asks = append(asks, key+" ("+p.InputRequests[key].Method()+")")
			}
			say("round %d: the server asks %d things: %s\n", p.Round, len(asks), strings.Join(asks, ", "))
			mu.Lock()
			rounds = append(rounds, len(asks))
			mu.Unlock()
			return nil
		}},
	})
	sess, err := c.Connect(ctx, s.InMemoryTransport())
	if err != nil {
		return err
	}
	defer sess.Close()

	res, err := sess.CallTool(ctx, "onboard", map[string]string{"project": "orders"})
	if err != nil {
		return err
	}
	if len(rounds) != 1 || rounds[0] != 3 {
		return fmt.Errorf("want one round of three requests, got rounds of %v", rounds)
	}
	fmt.Println("the client got the elicitation, the sampling request and the roots request in one round")
	if res.IsError {
		return fmt.Errorf("the tool failed: %s", resultText(res))
	}
	fmt.Println(resultText(res))
	return sess.Close()
}

func resultText(r *mcp.CallToolResult) string {
	var parts []string
	for _, b := range r.Content {
		if t, ok := b.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}
