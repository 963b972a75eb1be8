package mcpserver_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

// The arguments of the example tools.
type ProvisionArgs struct {
	Name string `json:"name" jsonschema:"the database to create"`
}

// Region is the form the provision tool shows.
type Region struct {
	Region string `json:"region" jsonschema:"where the database lives, such as eu-west-1"`
}

// A tool that declares one question: the server asks it, seals the state,
// and runs the body once the answer is in.
func ExampleAddTool_question() {
	ctx := context.Background()
	s := mcpserver.MustNew(mcp.Implementation{Name: "provisioner", Version: "1.0.0"}, nil)

	region := mcpserver.Elicit[Region]("region", func(a ProvisionArgs, _ *mcpserver.Call) string {
		return "Which region should " + a.Name + " live in?"
	})
	err := mcpserver.AddTool(s, &mcp.Tool{Name: "provision", Description: "Create a database."},
		func(ctx context.Context, call *mcpserver.Call, a ProvisionArgs) (string, error) {
			return fmt.Sprintf("Provisioned '%s' in %s.", a.Name, region.Get(call).Region), nil
		}, region)
	if err != nil {
		log.Fatal(err)
	}

	c := client.New(mcp.Implementation{Name: "host", Version: "1.0.0"}, &client.Options{
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			form, ok := p.(*mcp.ElicitRequestFormParams)
			if !ok {
				return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
			}
			fmt.Println("asked:", form.Message)
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "eu-west-1"}}, nil
		},
	})
	sess, err := c.Connect(ctx, s.InMemoryTransport())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, "provision", map[string]any{"name": "orders"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(text(res))
	// Output:
	// asked: Which region should orders live in?
	// Provisioned 'orders' in eu-west-1.
}

// Arguments that do not fit the inferred schema never reach the body: the
// caller gets an isError result naming the member and the rule.
func ExampleAddTool_validation() {
	ctx := context.Background()
	s := mcpserver.MustNew(mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	type GreetArgs struct {
		Name string `json:"name" jsonschema:"who to greet"`
	}
	err := mcpserver.AddTool(s, &mcp.Tool{Name: "greet"},
		func(ctx context.Context, call *mcpserver.Call, a GreetArgs) (string, error) {
			return "Hello, " + a.Name + "!", nil
		})
	if err != nil {
		log.Fatal(err)
	}
	sess, err := client.New(mcp.Implementation{Name: "host", Version: "1.0.0"}, nil).Connect(ctx, s.InMemoryTransport())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	for _, args := range []map[string]any{{"name": "Ada"}, {"Name": "Ada"}, {"name": 7}} {
		res, err := sess.CallTool(ctx, "greet", args)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.IsError, text(res))
	}
	// Output:
	// false Hello, Ada!
	// true Tool "greet": invalid arguments: unexpected additional properties ["Name"]
	// true Tool "greet": invalid arguments: validating /properties/name: type: 7 has type "integer", want "string"
}

// text returns the text blocks of a result, whatever else it holds.
func text(res *mcp.CallToolResult) string {
	var out string
	for _, b := range res.Content {
		if t, ok := b.(*mcp.TextContent); ok {
			out += t.Text
		}
	}
	return out
}

// The mcp struct tag constrains a member beyond its type: the constraint
// is advertised in the input schema, checked before the body runs, and a
// default fills a member the caller left out.
func ExampleAddTool_constraints() {
	ctx := context.Background()
	s := mcpserver.MustNew(mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	type ForecastArgs struct {
		City  string `json:"city" mcp:"minLength=1,maxLength=80"`
		Units string `json:"units,omitempty" mcp:"enum=celsius,enum=fahrenheit,default=celsius"`
		Days  int    `json:"days,omitempty" mcp:"minimum=1,maximum=14,default=3"`
	}
	err := mcpserver.AddTool(s, &mcp.Tool{Name: "forecast"},
		func(ctx context.Context, call *mcpserver.Call, a ForecastArgs) (string, error) {
			return fmt.Sprintf("%d days of %s in %s", a.Days, a.Units, a.City), nil
		})
	if err != nil {
		log.Fatal(err)
	}
	sess, err := client.New(mcp.Implementation{Name: "host", Version: "1.0.0"}, nil).Connect(ctx, s.InMemoryTransport())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	for _, args := range []map[string]any{{"city": "Oslo"}, {"city": "Oslo", "units": "kelvin"}, {"city": "Oslo", "days": 30}} {
		res, err := sess.CallTool(ctx, "forecast", args)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.IsError, text(res))
	}
	// Output:
	// false 3 days of celsius in Oslo
	// true Tool "forecast": invalid arguments: validating /properties/units: enum: kelvin does not equal any of: [celsius fahrenheit]
	// true Tool "forecast": invalid arguments: validating /properties/days: maximum: 30 is greater than 14
}

// Template variables arrive percent-decoded, so a simple {name} can carry
// "../" encoded as "..%2F". Such values are refused before the function
// runs; a {+path} variable may hold slashes, but not dot segments or a
// leading slash, unless its field's mcp tag allows them.
func ExampleAddResourceTemplate() {
	ctx := context.Background()
	s := mcpserver.MustNew(mcp.Implementation{Name: "notes", Version: "1.0.0"}, nil)
	type NoteVars struct {
		Name string `json:"name" mcp:"maxLength=64"`
	}
	err := mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "notes:///{name}", Name: "note"},
		func(ctx context.Context, call *mcpserver.Call, v NoteVars) (*mcp.ReadResourceResult, error) {
			text := "the note " + v.Name
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
				&mcp.TextResourceContents{URI: call.ResourceURI(), MIMEType: "text/plain", Text: text}}}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	type FileVars struct {
		Path string `json:"path"`
	}
	err = mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "files:///{+path}", Name: "file"},
		func(ctx context.Context, call *mcpserver.Call, v FileVars) (*mcp.ReadResourceResult, error) {
			text := "the file " + v.Path
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
				&mcp.TextResourceContents{URI: call.ResourceURI(), MIMEType: "text/plain", Text: text}}}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	sess, err := client.New(mcp.Implementation{Name: "host", Version: "1.0.0"}, nil).Connect(ctx, s.InMemoryTransport())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	for _, uri := range []string{
		"notes:///my%20plan", "notes:///..%2F..%2Fetc%2Fpasswd", "notes:///a%00b",
		"files:///docs/a.txt", "files:///docs/../../etc/passwd", "files:////etc/passwd",
	} {
		res, err := sess.ReadResource(ctx, uri)
		var rpcErr *jsonrpc.Error
		switch {
		case errors.As(err, &rpcErr):
			fmt.Println(rpcErr.Code, rpcErr.Message)
		case err != nil:
			log.Fatal(err)
		default:
			for _, c := range res.Contents {
				if tc, ok := c.(*mcp.TextResourceContents); ok {
					fmt.Println(tc.Text)
				}
			}
		}
	}
	// Output:
	// the note my plan
	// -32602 Invalid params: resource template "notes:///{name}": variable "name": holds a '/'
	// -32602 Invalid params: resource template "notes:///{name}": variable "name": holds a control character
	// the file docs/a.txt
	// -32602 Invalid params: resource template "files:///{+path}": variable "path": holds a "." or ".." segment
	// -32602 Invalid params: resource template "files:///{+path}": variable "path": starts with a '/'
}
