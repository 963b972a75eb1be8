package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

type greetArgs struct {
	Name  string `json:"name" jsonschema:"who to greet"`
	Times int    `json:"times,omitempty"`
}

type greeting struct {
	Greeting string `json:"greeting"`
	Count    int    `json:"count,omitempty"`
}

func greetBody(ctx context.Context, c *mcpserver.Call, a greetArgs) (string, error) {
	return "Hello, " + a.Name + "!", nil
}

// addGreet registers the "greet" tool, which says hello to its name
// argument.
func addGreet(t *testing.T, s *mcpserver.Server) {
	t.Helper()
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "greet", Description: "Say hello."}, greetBody))
}

// callRaw sends one tools/call round with arguments exactly as given.
func callRaw(t *testing.T, ctx context.Context, sessCall func(context.Context, *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error), name, args string) *mcp.CallToolResult {
	t.Helper()
	p := &mcp.CallToolRequestParams{Name: name}
	if args != "" {
		p.Arguments = json.RawMessage(args)
	}
	out, err := sessCall(ctx, p)
	mustOK(t, err)
	res, ok := out.(*mcp.CallToolResult)
	if !ok {
		t.Fatalf("tools/call answered %T, want *mcp.CallToolResult", out)
	}
	return res
}

func TestToolSchemaInference(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "greet", Title: "Greeter"},
		func(ctx context.Context, c *mcpserver.Call, a greetArgs) (greeting, error) {
			return greeting{Greeting: "Hello, " + a.Name}, nil
		}))
	sess := connect(t, s, nil)
	list, err := sess.ListTools(ctx, "")
	mustOK(t, err)
	if len(list.Tools) != 1 {
		t.Fatalf("tools = %+v, want one", list.Tools)
	}
	tool := list.Tools[0]
	if tool.Name != "greet" || tool.Title != "Greeter" {
		t.Errorf("tool = %q %q, want greet Greeter", tool.Name, tool.Title)
	}
	wantJSON(t, "inputSchema", tool.InputSchema, `{
		"type": "object",
		"properties": {
			"name": {"type": "string", "description": "who to greet"},
			"times": {"type": "integer"}
		},
		"required": ["name"],
		"additionalProperties": false
	}`)
	wantJSON(t, "outputSchema", tool.OutputSchema, `{
		"type": "object",
		"properties": {
			"greeting": {"type": "string"},
			"count": {"type": "integer"}
		},
		"required": ["greeting"],
		"additionalProperties": false
	}`)
}

func TestToolArgumentValidation(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	ran := new(counter)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "greet"}, func(ctx context.Context, c *mcpserver.Call, a greetArgs) (string, error) {
		ran.add("greet")
		return fmt.Sprintf("Hello, %s x%d", a.Name, a.Times), nil
	}))
	sess := connect(t, s, nil)

	for _, tc := range []struct {
		name, args, want string
	}{
		{"missing required", `{}`, `Tool "greet": invalid arguments: required: missing properties: ["name"]`},
		{"no arguments", ``, `Tool "greet": invalid arguments: required: missing properties: ["name"]`},
		{"wrong type", `{"name":5}`, `Tool "greet": invalid arguments: validating /properties/name: type: 5 has type "integer", want "string"`},
		{"not an integer", `{"name":"a","times":1.5}`, `Tool "greet": invalid arguments: validating /properties/times: type: 1.5 has type "number", want "integer"`},
		// Member names are case-sensitive: "Name" is not "name".
		{"case differs", `{"Name":"Ada"}`, `Tool "greet": invalid arguments: unexpected additional properties ["Name"]`},
		{"unknown member", `{"name":"Ada","colour":"red"}`, `Tool "greet": invalid arguments: unexpected additional properties ["colour"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := callRaw(t, ctx, sess.CallToolRound, "greet", tc.args)
			wantText(t, res, true, tc.want)
		})
	}
	t.Run("duplicate member", func(t *testing.T) {
		_, err := sess.CallToolRound(ctx, &mcp.CallToolRequestParams{Name: "greet", Arguments: json.RawMessage(`{"name":"Ada","name":"Eve"}`)})
		e := wantRPCError(t, err, jsonrpc.CodeInvalidParams, "")
		wantContains(t, "message", e.Message, `tool "greet": arguments are ambiguous`, `"name" and "name"`, `same name`)
	})
	if n := ran.get("greet"); n != 0 {
		t.Errorf("the body ran %d times on arguments that do not fit", n)
	}
	res := callRaw(t, ctx, sess.CallToolRound, "greet", `{"name":"Ada","times":2}`)
	wantText(t, res, false, "Hello, Ada x2")
}

// A permissive hand-written schema lets other members through; the value
// the body receives must still be read with the same case-sensitive rules
// as the validated one, and arguments other decoders would read otherwise
// (names equal under case folding, duplicates) are refused outright.
func TestToolArgumentsDecodeExactly(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{
		Name:        "echo",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`),
	}, func(ctx context.Context, c *mcpserver.Call, a greetArgs) (string, error) {
		return "name=" + a.Name, nil
	}))
	sess := connect(t, s, nil)
	wantText(t, callRaw(t, ctx, sess.CallToolRound, "echo", `{"Name":"Eve"}`), false, "name=")
	for _, args := range []string{`{"name":"Ada","NAME":"Eve"}`, `{"name":"Ada","name":"Eve"}`} {
		_, err := sess.CallToolRound(ctx, &mcp.CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(args)})
		wantRPCError(t, err, jsonrpc.CodeInvalidParams, "")
	}
}

func TestToolHandWrittenInputSchema(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	schema := `{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":10}},"required":["n"]}`
	type countArgs struct {
		N int `json:"n"`
	}
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "count", InputSchema: json.RawMessage(schema)},
		func(ctx context.Context, c *mcpserver.Call, a countArgs) (string, error) {
			return strings.Repeat("*", a.N), nil
		}))
	sess := connect(t, s, nil)
	list, err := sess.ListTools(ctx, "")
	mustOK(t, err)
	if got := string(list.Tools[0].InputSchema); got != schema {
		t.Errorf("advertised inputSchema = %s, want the hand-written %s", got, schema)
	}
	if len(list.Tools[0].OutputSchema) != 0 {
		t.Errorf("a string tool advertises an outputSchema: %s", list.Tools[0].OutputSchema)
	}
	res, err := sess.CallTool(ctx, "count", map[string]any{"n": 0})
	mustOK(t, err)
	if !res.IsError {
		t.Fatalf("n=0 passed a minimum of 1: %q", onlyText(t, res))
	}
	wantContains(t, "text", onlyText(t, res), `Tool "count": invalid arguments:`, "/properties/n", "minimum")
	res, err = sess.CallTool(ctx, "count", map[string]any{"n": 3})
	mustOK(t, err)
	wantText(t, res, false, "***")
}

func TestToolRegistrationErrors(t *testing.T) {
	s, _ := newServer(t, nil)
	for _, tc := range []struct {
		name string
		add  func() error
		want string
	}{
		{"nil tool", func() error { return mcpserver.AddTool(s, nil, greetBody) }, "needs a tool and a handler"},
		{"nil handler", func() error {
			return mcpserver.AddTool[greetArgs, string](s, &mcp.Tool{Name: "x"}, nil)
		}, "needs a tool and a handler"},
		{"schema not an object", func() error {
			return mcpserver.AddTool(s, &mcp.Tool{Name: "x", InputSchema: json.RawMessage(`{"type":"string"}`)}, greetBody)
		}, `tool "x": inputSchema must have "type": "object"`},
		{"schema not JSON", func() error {
			return mcpserver.AddTool(s, &mcp.Tool{Name: "x", InputSchema: json.RawMessage(`{"type":`)}, greetBody)
		}, `tool "x": inputSchema is not a JSON Schema`},
		{"arguments not a struct", func() error {
			return mcpserver.AddTool(s, &mcp.Tool{Name: "x"}, func(ctx context.Context, c *mcpserver.Call, n int) (string, error) { return "", nil })
		}, `tool "x": cannot infer an input schema: int is not a struct`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.add()
			if err == nil {
				t.Fatal("registered")
			}
			wantContains(t, "error", err.Error(), tc.want)
		})
	}
	// Nothing above was registered.
	sess := connect(t, s, nil)
	if _, err := sess.ListTools(context.Background(), ""); err == nil {
		t.Error("tools/list served though no tool was registered")
	} else {
		wantRPCError(t, err, jsonrpc.CodeMethodNotFound, "")
	}
}

func TestToolNameValidation(t *testing.T) {
	s, _ := newServer(t, nil)
	for _, name := range []string{"a", "get_weather", "v1.tools-list", "ABC_xyz.0-9", strings.Repeat("n", 128)} {
		if err := mcpserver.AddTool(s, &mcp.Tool{Name: name}, greetBody); err != nil {
			t.Errorf("AddTool(%q): %v", name, err)
		}
	}
	for _, tc := range []struct{ name, want string }{
		{"", "must be 1 to 128 characters long"},
		{strings.Repeat("n", 129), "must be 1 to 128 characters long"},
		{"has space", "may only hold A-Z, a-z, 0-9, '_', '-' and '.'"},
		{"slash/name", "may only hold"},
		{"colon:name", "may only hold"},
		{"naïve", "may only hold"},
	} {
		err := mcpserver.AddTool(s, &mcp.Tool{Name: tc.name}, greetBody)
		if err == nil {
			t.Errorf("AddTool(%q) registered", tc.name)
			continue
		}
		wantContains(t, "error", err.Error(), fmt.Sprintf("tool name %q", tc.name), tc.want)
	}
}

func TestToolOutputs(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	add := func(err error) { t.Helper(); mustOK(t, err) }
	add(mcpserver.AddTool(s, &mcp.Tool{Name: "text"}, greetBody))
	add(mcpserver.AddTool(s, &mcp.Tool{Name: "struct"}, func(ctx context.Context, c *mcpserver.Call, a greetArgs) (greeting, error) {
		return greeting{Greeting: "Hello, " + a.Name, Count: a.Times}, nil
	}))
	add(mcpserver.AddTool(s, &mcp.Tool{Name: "pointer"}, func(ctx context.Context, c *mcpserver.Call, a greetArgs) (*greeting, error) {
		return &greeting{Greeting: "Hi, " + a.Name}, nil
	}))
	add(mcpserver.AddTool(s, &mcp.Tool{Name: "map"}, func(ctx context.Context, c *mcpserver.Call, a greetArgs) (map[string]int, error) {
		return map[string]int{a.Name: a.Times}, nil
	}))
	add(mcpserver.AddTool(s, &mcp.Tool{Name: "result"}, func(ctx context.Context, c *mcpserver.Call, a greetArgs) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{
			Content:           []mcp.ContentBlock{&mcp.TextContent{Text: "one"}, &mcp.TextContent{Text: "two"}},
			StructuredContent: map[string]any{"hand": "made"},
		}, nil
	}))
	add(mcpserver.AddTool(s, &mcp.Tool{Name: "nil-pointer"}, func(ctx context.Context, c *mcpserver.Call, a greetArgs) (*greeting, error) {
		return nil, nil
	}))
	add(mcpserver.AddTool(s, &mcp.Tool{Name: "nil-result"}, func(ctx context.Context, c *mcpserver.Call, a greetArgs) (*mcp.CallToolResult, error) {
		return nil, nil
	}))
	sess := connect(t, s, nil)
	args := map[string]any{"name": "Ada", "times": 2}

	res, err := sess.CallTool(ctx, "text", args)
	mustOK(t, err)
	wantText(t, res, false, "Hello, Ada!")
	if res.StructuredContent != nil {
		t.Errorf("a text result carries structuredContent %v", res.StructuredContent)
	}

	res, err = sess.CallTool(ctx, "struct", args)
	mustOK(t, err)
	wantText(t, res, false, `{"greeting":"Hello, Ada","count":2}`)
	var g greeting
	if ok, err := res.DecodeStructuredContent(&g); !ok || err != nil {
		t.Fatalf("structuredContent: %v %v", ok, err)
	}
	if g != (greeting{"Hello, Ada", 2}) {
		t.Errorf("structuredContent = %+v", g)
	}

	res, err = sess.CallTool(ctx, "pointer", args)
	mustOK(t, err)
	wantText(t, res, false, `{"greeting":"Hi, Ada"}`)
	wantJSON(t, "structuredContent", res.StructuredContent.(json.RawMessage), `{"greeting":"Hi, Ada"}`)

	res, err = sess.CallTool(ctx, "map", args)
	mustOK(t, err)
	wantText(t, res, false, `{"Ada":2}`)
	wantJSON(t, "structuredContent", res.StructuredContent.(json.RawMessage), `{"Ada":2}`)

	res, err = sess.CallTool(ctx, "result", args)
	mustOK(t, err)
	if len(res.Content) != 2 || res.Content[1].(*mcp.TextContent).Text != "two" {
		t.Errorf("content = %+v, want the hand-built two blocks", res.Content)
	}
	wantJSON(t, "structuredContent", res.StructuredContent.(json.RawMessage), `{"hand":"made"}`)

	for _, name := range []string{"nil-pointer", "nil-result"} {
		_, err = sess.CallTool(ctx, name, args)
		wantRPCError(t, err, jsonrpc.CodeInternalError, "Internal error")
	}

	// Output schemas: inferred for struct results (and pointers to them),
	// not for text, maps or hand-built results.
	list, err := sess.ListTools(ctx, "")
	mustOK(t, err)
	wantOut := `{"type":"object","properties":{"greeting":{"type":"string"},"count":{"type":"integer"}},"required":["greeting"],"additionalProperties":false}`
	for _, tool := range list.Tools {
		switch tool.Name {
		case "struct", "pointer", "nil-pointer":
			if len(tool.OutputSchema) == 0 {
				t.Errorf("tool %q has no outputSchema", tool.Name)
				continue
			}
			wantJSON(t, tool.Name+" outputSchema", tool.OutputSchema, wantOut)
		default:
			if len(tool.OutputSchema) != 0 {
				t.Errorf("tool %q advertises an outputSchema: %s", tool.Name, tool.OutputSchema)
			}
		}
	}
}

func TestToolHandWrittenOutputSchemaKept(t *testing.T) {
	s, _ := newServer(t, nil)
	out := `{"type":"object","properties":{"greeting":{"type":"string","minLength":1}}}`
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "g", OutputSchema: json.RawMessage(out)},
		func(ctx context.Context, c *mcpserver.Call, a greetArgs) (greeting, error) { return greeting{}, nil }))
	sess := connect(t, s, nil)
	list, err := sess.ListTools(context.Background(), "")
	mustOK(t, err)
	if got := string(list.Tools[0].OutputSchema); got != out {
		t.Errorf("outputSchema = %s, want the hand-written %s", got, out)
	}
}

func TestToolFreeFormArguments(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "map"}, func(ctx context.Context, c *mcpserver.Call, a map[string]any) (string, error) {
		return fmt.Sprintf("%d:%v", len(a), a["k"]), nil
	}))
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "raw"}, func(ctx context.Context, c *mcpserver.Call, a json.RawMessage) (string, error) {
		return string(a), nil
	}))
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "any"}, func(ctx context.Context, c *mcpserver.Call, a any) (string, error) {
		return fmt.Sprintf("%T", a), nil
	}))
	sess := connect(t, s, nil)
	list, err := sess.ListTools(ctx, "")
	mustOK(t, err)
	for _, tool := range list.Tools {
		wantJSON(t, tool.Name+" inputSchema", tool.InputSchema, `{"type":"object"}`)
	}
	wantText(t, callRaw(t, ctx, sess.CallToolRound, "map", `{"k":"v","n":1}`), false, "2:v")
	wantText(t, callRaw(t, ctx, sess.CallToolRound, "raw", `{"k":[1,2]}`), false, `{"k":[1,2]}`)
	wantText(t, callRaw(t, ctx, sess.CallToolRound, "raw", ``), false, `{}`)
	wantText(t, callRaw(t, ctx, sess.CallToolRound, "any", `{"k":1}`), false, "map[string]interface {}")
}

func TestToolReplaceKeepsOrder(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	for _, name := range []string{"a", "b", "c"} {
		mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: name, Description: "v1"}, greetBody))
	}
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "b", Description: "v2"},
		func(ctx context.Context, c *mcpserver.Call, a greetArgs) (string, error) {
			return "replaced " + a.Name, nil
		}))
	sess := connect(t, s, nil)
	list, err := sess.ListTools(ctx, "")
	mustOK(t, err)
	var got []string
	for _, tool := range list.Tools {
		got = append(got, tool.Name+"/"+tool.Description)
	}
	if g := strings.Join(got, " "); g != "a/v1 b/v2 c/v1" {
		t.Errorf("tools = %s, want a/v1 b/v2 c/v1", g)
	}
	res, err := sess.CallTool(ctx, "b", map[string]any{"name": "Ada"})
	mustOK(t, err)
	wantText(t, res, false, "replaced Ada")
}

func TestRemoveTools(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	for _, name := range []string{"a", "b", "c", "d"} {
		mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: name}, greetBody))
	}
	s.RemoveTools("b", "d", "never-registered")
	sess := connect(t, s, nil)
	list, err := sess.ListTools(ctx, "")
	mustOK(t, err)
	if len(list.Tools) != 2 || list.Tools[0].Name != "a" || list.Tools[1].Name != "c" {
		t.Errorf("tools = %+v, want a, c", list.Tools)
	}
	_, err = sess.CallTool(ctx, "b", map[string]any{"name": "Ada"})
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Unknown tool: b")
	// Registering the name again puts it at the end.
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "b"}, greetBody))
	list, err = sess.ListTools(ctx, "")
	mustOK(t, err)
	if len(list.Tools) != 3 || list.Tools[2].Name != "b" {
		t.Errorf("tools = %+v, want a, c, b", list.Tools)
	}
	res, err := sess.CallTool(ctx, "b", map[string]any{"name": "Ada"})
	mustOK(t, err)
	wantText(t, res, false, "Hello, Ada!")
}

func TestToolUnknown(t *testing.T) {
	s, _ := newServer(t, nil)
	addGreet(t, s)
	sess := connect(t, s, nil)
	_, err := sess.CallTool(context.Background(), "nope", nil)
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Unknown tool: nope")
}

func TestToolErrors(t *testing.T) {
	ctx := context.Background()
	s, logs := newServer(t, nil)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "fails"}, func(ctx context.Context, c *mcpserver.Call, a greetArgs) (string, error) {
		return "ignored", errors.New("the database is read-only")
	}))
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "refuses"}, func(ctx context.Context, c *mcpserver.Call, a greetArgs) (greeting, error) {
		return greeting{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: no such account " + a.Name}
	}))
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "refuses-wrapped"}, func(ctx context.Context, c *mcpserver.Call, a greetArgs) (string, error) {
		return "", fmt.Errorf("looking up: %w", &jsonrpc.Error{Code: -32099, Message: "Quota exceeded"})
	}))
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "panics"}, func(ctx context.Context, c *mcpserver.Call, a greetArgs) (string, error) {
		panic("secret detail " + a.Name)
	}))
	addGreet(t, s)
	sess := connect(t, s, nil)
	args := map[string]any{"name": "Ada"}

	res, err := sess.CallTool(ctx, "fails", args)
	mustOK(t, err)
	wantText(t, res, true, "the database is read-only")

	_, err = sess.CallTool(ctx, "refuses", args)
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Invalid params: no such account Ada")
	_, err = sess.CallTool(ctx, "refuses-wrapped", args)
	wantRPCError(t, err, -32099, "Quota exceeded")

	for range 2 {
		_, err = sess.CallTool(ctx, "panics", args)
		e := wantRPCError(t, err, jsonrpc.CodeInternalError, "Internal error")
		if strings.Contains(e.Error(), "secret") {
			t.Errorf("the panic's value reached the client: %v", e)
		}
		// The server keeps serving the same session.
		res, err = sess.CallTool(ctx, "greet", args)
		mustOK(t, err)
		wantText(t, res, false, "Hello, Ada!")
	}
	wantContains(t, "log", logs.String(), "handler panicked", `owner="tool \"panics\""`, "secret detail Ada", "stack=")
}

// A tool that builds its InputRequiredResult by hand, with no questions,
// may return it through an Out of mcp.CallToolOutcome, of
// *mcp.InputRequiredResult, or of any.
func TestToolHandBuiltOutcomeTypes(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	ask := &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"ok": mcp.NewListRootsRequest()}, RequestState: "s"}
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "outcome"}, func(ctx context.Context, c *mcpserver.Call, a struct{}) (mcp.CallToolOutcome, error) {
		return ask, nil
	}))
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "ir"}, func(ctx context.Context, c *mcpserver.Call, a struct{}) (*mcp.InputRequiredResult, error) {
		return ask, nil
	}))
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "any"}, func(ctx context.Context, c *mcpserver.Call, a struct{}) (any, error) {
		return ask, nil
	}))
	sess := connect(t, s, &client.Options{ListRoots: func(ctx context.Context) (*mcp.ListRootsResult, error) { return &mcp.ListRootsResult{}, nil }})
	for _, name := range []string{"outcome", "ir", "any"} {
		out, err := sess.CallToolRound(ctx, &mcp.CallToolRequestParams{Name: name})
		mustOK(t, err)
		ir, ok := out.(*mcp.InputRequiredResult)
		if !ok {
			t.Errorf("%s answered %T, want an InputRequiredResult", name, out)
			continue
		}
		wantKeys(t, ir.InputRequests, "ok")
		if ir.RequestState == "" || ir.RequestState == "s" {
			t.Errorf("%s: requestState on the wire = %q, want it sealed", name, ir.RequestState)
		}
	}
	if ask.RequestState != "s" {
		t.Errorf("the handler's value was written into: requestState %q", ask.RequestState)
	}
}

// A hand-built tool may return an empty state: it is sealed, and the
// retry's Call reports it present, which RequestState alone cannot.
func TestToolHandBuiltEmptyState(t *testing.T) {
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "empty"}, func(ctx context.Context, c *mcpserver.Call, a struct{}) (mcp.CallToolOutcome, error) {
		state, present := c.LookupRequestState()
		if !present {
			return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"ok": mcp.NewListRootsRequest()}, ForceRequestState: true}, nil
		}
		return mcp.TextResult(fmt.Sprintf("state=%q present=%v", state, present)), nil
	}))
	sess := connect(t, s, &client.Options{ListRoots: func(ctx context.Context) (*mcp.ListRootsResult, error) { return &mcp.ListRootsResult{}, nil }})
	call, err := client.ToolCall("empty", nil)
	mustOK(t, err)
	p := begin(t, sess, call)
	if st, ok := p.LookupRequestState(); !ok || st == "" {
		t.Fatalf("the empty plaintext went out as %q (present %v), not sealed", st, ok)
	}
	res, err := sess.CallTool(context.Background(), "empty", nil)
	mustOK(t, err)
	wantText(t, res, false, `state="" present=true`)
}
