// Command config shows a resource template that asks for confirmation
// before it is read: resources/read takes part in multi-round-trip
// requests exactly as tools/call does.
//
// The server's config://{env} template (mcpserver.AddResourceTemplate)
// serves the configuration of an environment, with its secrets. Before it
// hands them out it declares an Elicit question whose form has one boolean
// field, "confirm". The first resources/read of config://production is
// answered with an InputRequiredResult holding that form; the client's
// Elicit callback ticks the box, the client's loop reads the resource again
// with the answer, and the template's body runs and returns the contents,
// which the program prints. An unticked box is read as a refusal (the body
// answers invalid params); a declined or cancelled form fails the read
// with an invalid-params error naming the question.
//
// Server and client run in one process, over s.InMemoryTransport().
//
//	go run ./examples/config
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/server"
)

// configVars are the template's variables, by name.
type configVars struct {
	Env string `json:"env"`
}

// confirmForm is the form the question shows: one checkbox.
type confirmForm struct {
	Confirm bool `json:"confirm" jsonschema:"reveal the secrets of this environment"`
}

var confirm = mcpserver.Elicit[confirmForm]("confirm", func(v configVars, _ *mcpserver.Call) string {
	return "The configuration of " + v.Env + " holds secrets. Show it?"
})

// configs are the environments' configurations.
var configs = map[string]string{
	"staging":    "db_host = db.staging.internal\ndb_password_ref = vault:staging/db\n",
	"production": "db_host = db.prod.internal\ndb_password_ref = vault:production/db\n",
}

func newServer() (*mcpserver.Server, error) {
	s, err := mcpserver.New(mcp.Implementation{Name: "config-server", Version: "1.0.0"}, &mcpserver.Options{
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return nil, err
	}
	err = mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "config://{env}", Name: "config", MIMEType: "text/plain"},
		func(ctx context.Context, c *mcpserver.Call, v configVars) (*mcp.ReadResourceResult, error) {
			if !confirm.Get(c).Confirm {
				return nil, wire.InvalidParams("Invalid params: showing the configuration of %s was not confirmed", v.Env)
			}
			text, ok := configs[v.Env]
			if !ok {
				return nil, server.ResourceNotFound("config://" + v.Env)
			}
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
				&mcp.TextResourceContents{URI: "config://" + v.Env, MIMEType: "text/plain", Text: text},
			}}, nil
		}, confirm)
	return s, err
}

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "config:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	s, err := newServer()
	if err != nil {
		return err
	}
	c := client.New(mcp.Implementation{Name: "config-client", Version: "1.0.0"}, &client.Options{
		// The callback stands in for a confirmation dialog. It ticks a
		// form that asks to confirm; a URL to open, or a form it does not
		// know, it declines.
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			switch p := p.(type) {
			case *mcp.ElicitRequestFormParams:
				if _, ok := p.RequestedSchema.Properties["confirm"]; ok {
					fmt.Printf("  the dialog says %q; the user confirms\n", p.Message)
					return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"confirm": true}}, nil
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

	const uri = "config://production"
	res, err := sess.ReadResource(ctx, uri)
	if err != nil {
		return err
	}
	for _, rc := range res.Contents {
		switch rc := rc.(type) {
		case *mcp.TextResourceContents:
			fmt.Printf("%s (%s):\n%s", rc.URI, rc.MIMEType, rc.Text)
		default:
			fmt.Printf("%s: %T\n", rc.ResourceURI(), rc)
		}
	}
	return sess.Close()
}
