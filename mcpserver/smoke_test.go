package mcpserver_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

type provisionArgs struct {
	Name string `json:"name" jsonschema:"the database to create"`
}

type regionForm struct {
	Region string `json:"region" jsonschema:"where the database lives, such as eu-west-1"`
}

var regionQ = mcpserver.Elicit[regionForm]("region", func(a provisionArgs, _ *mcpserver.Call) string {
	return "Which region should " + a.Name + " live in?"
})

func TestSmokeProvision(t *testing.T) {
	ctx := context.Background()
	s := mcpserver.MustNew(mcp.Implementation{Name: "p", Version: "1"}, nil)
	err := mcpserver.AddTool(s, &mcp.Tool{Name: "provision"}, func(ctx context.Context, c *mcpserver.Call, a provisionArgs) (string, error) {
		return fmt.Sprintf("Provisioned '%s' in %s.", a.Name, regionQ.Get(c).Region), nil
	}, regionQ)
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(mcp.Implementation{Name: "c", Version: "1"}, &client.Options{
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "eu-west-1"}}, nil
		},
	})
	sess, err := c.Connect(ctx, s.InMemoryTransport())
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, "provision", map[string]any{"name": "orders"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res.Content[0])
	res, err = sess.CallTool(ctx, "provision", map[string]any{"Name": "orders"})
	t.Logf("%+v %v", res.Content[0], err)
}
