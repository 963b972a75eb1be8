// Command briefing shows a prompt that asks a question before it renders:
// prompts/get takes part in multi-round-trip requests exactly as tools/call
// does.
//
// The server's "briefing" prompt (mcpserver.AddPrompt) takes a topic, but
// the messages it renders depend on who the briefing is for. It declares
// an Elicit question for the audience, so the first prompts/get is answered
// with an InputRequiredResult holding a form; the client's Elicit callback
// fills it in ("the board"), the client's loop sends prompts/get again with
// the answer, and only then does the prompt's body run and render its
// messages, which the program prints. Had the user declined, prompts/get
// would have failed with an invalid-params error naming the question.
//
// Server and client run in one process, over s.InMemoryTransport().
//
//	go run ./examples/briefing
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

// briefingArgs are the prompt's arguments; prompt arguments are strings.
type briefingArgs struct {
	Topic string `json:"topic" jsonschema:"what the briefing is about"`
}

// audienceForm is the form the question shows.
type audienceForm struct {
	Audience string `json:"audience" jsonschema:"who will read the briefing, such as engineers or the board"`
}

var audience = mcpserver.Elicit[audienceForm]("audience", func(a briefingArgs, _ *mcpserver.Call) string {
	return "Who is the briefing on " + a.Topic + " for?"
})

func newServer() (*mcpserver.Server, error) {
	s, err := mcpserver.New(mcp.Implementation{Name: "briefing-server", Version: "1.0.0"}, &mcpserver.Options{
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return nil, err
	}
	err = mcpserver.AddPrompt(s, &mcp.Prompt{Name: "briefing", Description: "Draft a briefing for a given audience."},
		func(ctx context.Context, c *mcpserver.Call, a briefingArgs) (*mcp.GetPromptResult, error) {
			who := audience.Get(c).Audience
			return &mcp.GetPromptResult{
				Description: "A briefing on " + a.Topic + " for " + who,
				Messages: []mcp.PromptMessage{
					{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: fmt.Sprintf(
						"Write a one-page briefing on %s for %s. Lead with what they must decide.", a.Topic, who)}},
					{Role: mcp.RoleAssistant, Content: &mcp.TextContent{Text: fmt.Sprintf(
						"Understood: a briefing on %s, pitched at %s. What is the deadline?", a.Topic, who)}},
				},
			}, nil
		}, audience)
	return s, err
}

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "briefing:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	s, err := newServer()
	if err != nil {
		return err
	}
	c := client.New(mcp.Implementation{Name: "briefing-client", Version: "1.0.0"}, &client.Options{
		// The callback stands in for a form shown to the user. It fills in
		// a form that asks for an audience; a URL to open, or a form it
		// does not know, it declines.
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			switch p := p.(type) {
			case *mcp.ElicitRequestFormParams:
				if _, ok := p.RequestedSchema.Properties["audience"]; ok {
					fmt.Printf("  the form says %q; the user enters \"the board\"\n", p.Message)
					return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"audience": "the board"}}, nil
				}
				fmt.Printf("  an unknown form %q: declined\n", p.Message)
			case *mcp.ElicitRequestURLParams:
				fmt.Printf("  a URL to open (%s): declined\n", p.URL)
			}
			return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
		},
		Loop: &client.LoopOptions{OnRound: func(ctx context.Context, p *client.Pending) error {
			fmt.Printf("round %d: the server asks for %v\n", p.Round, p.InputRequests.Keys())
			return nil
		}},
	})
	sess, err := c.Connect(ctx, s.InMemoryTransport())
	if err != nil {
		return err
	}
	defer sess.Close()

	res, err := sess.GetPrompt(ctx, "briefing", map[string]string{"topic": "the Q3 database migration"})
	if err != nil {
		return err
	}
	fmt.Println(res.Description + ":")
	for _, m := range res.Messages {
		fmt.Printf("  [%s] %s\n", m.Role, contentText(m.Content))
	}
	return sess.Close()
}

// contentText renders a content block for printing.
func contentText(b mcp.ContentBlock) string {
	if t, ok := b.(*mcp.TextContent); ok {
		return t.Text
	}
	return fmt.Sprintf("(%T)", b)
}
