// Command report runs a long tool as a task of the tasks extension
// (io.modelcontextprotocol/tasks): the server answers the call at once with
// a task, the tool asks the person halfway whether to include last year's
// figures, and the client, which declared the extension, polls the task,
// answers the question through its ordinary Elicit callback and prints the
// report when the task completes. The person's answer is scripted here;
// a host would show a form.
//
//	go run ./examples/report
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/tasks"
)

type reportArgs struct {
	Quarter string `json:"quarter" jsonschema:"the quarter to report on, such as 2026-Q3"`
}

var includeSchema = mcp.ElicitRequestedSchema{
	Properties: map[string]mcp.PrimitiveSchemaDefinition{
		"include": &mcp.BooleanSchema{Description: "Compare with last year's figures?"},
	},
	Required: []string{"include"},
}

// buildReport is the tool's body: it works, asks halfway, and works on.
func buildReport(ctx context.Context, c *mcpserver.Call, in reportArgs) (string, error) {
	if err := work(ctx, 20*time.Millisecond); err != nil {
		return "", err // the client cancelled the task
	}
	// c.AskAll asks in a task (the task waits for the answer) and on a
	// legacy session (its back-channel); in an ordinary 2026-07-28 call
	// nothing can ask mid-body, and the report is built without the
	// comparison.
	compare := false
	answers, err := c.AskAll(ctx, mcp.InputRequests{
		"include": mcp.NewElicitFormRequest("Include last year's figures in the "+in.Quarter+" report?", includeSchema),
	})
	switch {
	case errors.Is(err, server.ErrNoBackChannel):
	case err != nil:
		return "", err
	default:
		// Every answer a person can give: accepted (with a valid form),
		// declined, cancelled, or something malformed.
		var form struct {
			Include bool `json:"include"`
		}
		if r, err := answers.Elicit("include"); err == nil && r.Accepted() && r.DecodeContent(&form) == nil {
			compare = form.Include
		}
	}
	if err := work(ctx, 20*time.Millisecond); err != nil {
		return "", err
	}
	if compare {
		return fmt.Sprintf("Report %s: revenue 4.2M (last year 3.9M, +7.7%%).", in.Quarter), nil
	}
	return fmt.Sprintf("Report %s: revenue 4.2M.", in.Quarter), nil
}

// work stands for the long part of the job.
func work(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// newServer returns the server with the quarterly_report task tool.
// main_test.go tests it with package mcptest.
func newServer() (*mcpserver.Server, error) {
	s, err := mcpserver.New(mcp.Implementation{Name: "reports", Version: "1.0.0"},
		&mcpserver.Options{Tasks: &tasks.Options{PollInterval: 10 * time.Millisecond}})
	if err != nil {
		return nil, err
	}
	err = mcpserver.AddTaskTool(s, &mcp.Tool{Name: "quarterly_report", Description: "Builds a quarterly report"},
		mcpserver.TaskOptional, buildReport)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func main() {
	ctx := context.Background()
	s, err := newServer()
	if err != nil {
		log.Fatal(err)
	}

	c := client.New(mcp.Implementation{Name: "report-client", Version: "1.0.0"}, &client.Options{
		Extensions: map[string]json.RawMessage{mcp.ExtensionTasks: nil},
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			form, ok := p.(*mcp.ElicitRequestFormParams)
			if !ok {
				return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
			}
			fmt.Println("asked:", form.Message)
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"include": true}}, nil
		},
	})
	sess, err := c.Connect(ctx, s.InMemoryTransport())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()

	res, err := sess.CallTool(ctx, "quarterly_report", map[string]any{"quarter": "2026-Q3"})
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range res.Content {
		if t, ok := b.(*mcp.TextContent); ok {
			fmt.Println(t.Text)
		}
	}
}
