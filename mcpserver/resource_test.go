package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

// textContents is a read result of one text.
func textContents(uri, text string) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: text}}}
}

// readText returns the text of a read result's one content.
func readText(t *testing.T, res *mcp.ReadResourceResult) string {
	t.Helper()
	if res == nil || len(res.Contents) != 1 {
		t.Fatalf("read result = %+v, want one content", res)
	}
	tc, ok := res.Contents[0].(*mcp.TextResourceContents)
	if !ok {
		t.Fatalf("content is %T", res.Contents[0])
	}
	return tc.URI + " " + tc.Text
}

type tableVars struct {
	DB    string `json:"db" jsonschema:"the database"`
	Table string `json:"table"`
}

func TestResourceStaticRead(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	readme := mcp.Resource{URI: "file:///README.md", Name: "readme", MIMEType: "text/markdown", Description: "The readme."}
	mustOK(t, s.AddResource(&readme, func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
		return textContents(uri, "# Hello"), nil
	}))
	mustOK(t, s.AddResource(&mcp.Resource{URI: "file:///fails", Name: "fails"}, func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
		return nil, errors.New("disk on fire")
	}))
	mustOK(t, s.AddResource(&mcp.Resource{URI: "file:///nil", Name: "nil"}, func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
		return nil, nil
	}))
	mustOK(t, s.AddResource(&mcp.Resource{URI: "file:///panics", Name: "panics"}, func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
		panic("bad")
	}))
	sess := connect(t, s, nil)

	list, err := sess.ListResources(ctx, "")
	mustOK(t, err)
	if len(list.Resources) != 4 || list.Resources[0].URI != readme.URI || list.Resources[0].MIMEType != "text/markdown" || list.Resources[0].Description != "The readme." {
		t.Errorf("resources = %+v", list.Resources)
	}
	res, err := sess.ReadResource(ctx, "file:///README.md")
	mustOK(t, err)
	if got := readText(t, res); got != "file:///README.md # Hello" {
		t.Errorf("read = %q", got)
	}
	for _, uri := range []string{"file:///fails", "file:///nil", "file:///panics"} {
		_, err = sess.ReadResource(ctx, uri)
		wantRPCError(t, err, jsonrpc.CodeInternalError, "Internal error")
	}
	// Replacing keeps one entry under the URI.
	mustOK(t, s.AddResource(&mcp.Resource{URI: "file:///README.md", Name: "readme2"}, func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
		return textContents(uri, "# v2"), nil
	}))
	res, err = sess.ReadResource(ctx, "file:///README.md")
	mustOK(t, err)
	if got := readText(t, res); got != "file:///README.md # v2" {
		t.Errorf("read after replace = %q", got)
	}
	list, err = sess.ListResources(ctx, "")
	mustOK(t, err)
	if len(list.Resources) != 4 || list.Resources[0].Name != "readme2" {
		t.Errorf("resources after replace = %+v", list.Resources)
	}
}

func TestResourceNotFound(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	mustOK(t, s.AddResource(&mcp.Resource{URI: "file:///a", Name: "a"}, func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
		return textContents(uri, "a"), nil
	}))
	mustOK(t, mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "db://{db}/tables/{table}", Name: "table"},
		func(ctx context.Context, c *mcpserver.Call, v tableVars) (*mcp.ReadResourceResult, error) {
			return textContents("db://"+v.DB, v.Table), nil
		}))
	sess := connect(t, s, nil)
	for _, uri := range []string{"file:///b", "db://orders", "other://x"} {
		_, err := sess.ReadResource(ctx, uri)
		e := wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Resource not found: "+uri)
		wantJSON(t, "data", e.Data, fmt.Sprintf(`{"uri":%q}`, uri))
	}
	s.RemoveResources("file:///a", "db://{db}/tables/{table}")
	for _, uri := range []string{"file:///a", "db://orders/tables/users"} {
		_, err := sess.ReadResource(ctx, uri)
		wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Resource not found: "+uri)
	}
}

func TestResourceTemplates(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "db://{db}/tables/{table}", Name: "table", MIMEType: "application/json"},
		func(ctx context.Context, c *mcpserver.Call, v tableVars) (*mcp.ReadResourceResult, error) {
			return textContents(fmt.Sprintf("db://%s/tables/%s", v.DB, v.Table), "db="+v.DB+" table="+v.Table), nil
		}))
	// A broader template registered later: the first match wins.
	mustOK(t, mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "db://{path}", Name: "any"},
		func(ctx context.Context, c *mcpserver.Call, v map[string]string) (*mcp.ReadResourceResult, error) {
			return textContents(c.ResourceURI(), "path="+v["path"]), nil
		}))
	// A static resource wins over every template.
	mustOK(t, s.AddResource(&mcp.Resource{URI: "db://orders/tables/special", Name: "special"}, func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
		return textContents(uri, "static"), nil
	}))
	sess := connect(t, s, nil)

	list, err := sess.ListResourceTemplates(ctx, "")
	mustOK(t, err)
	raw, err := json.Marshal(list.ResourceTemplates)
	mustOK(t, err)
	wantJSON(t, "templates", raw, `[
		{"uriTemplate":"db://{db}/tables/{table}","name":"table","mimeType":"application/json"},
		{"uriTemplate":"db://{path}","name":"any"}
	]`)
	resources, err := sess.ListResources(ctx, "")
	mustOK(t, err)
	if len(resources.Resources) != 1 {
		t.Errorf("templates appear among resources: %+v", resources.Resources)
	}

	for uri, want := range map[string]string{
		"db://orders/tables/users":   "db://orders/tables/users db=orders table=users",
		"db://orders/tables/special": "db://orders/tables/special static",
		"db://inventory":             "db://inventory path=inventory",
	} {
		res, err := sess.ReadResource(ctx, uri)
		mustOK(t, err)
		if got := readText(t, res); got != want {
			t.Errorf("read %s = %q, want %q", uri, got, want)
		}
	}

	// Replacing a template keeps its place: the specific one still wins.
	mustOK(t, mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "db://{db}/tables/{table}", Name: "table-v2"},
		func(ctx context.Context, c *mcpserver.Call, v tableVars) (*mcp.ReadResourceResult, error) {
			return textContents("db://"+v.DB, "v2 "+v.Table), nil
		}))
	res, err := sess.ReadResource(ctx, "db://orders/tables/users")
	mustOK(t, err)
	if got := readText(t, res); got != "db://orders v2 users" {
		t.Errorf("after replace: %q", got)
	}
}

func TestResourceTemplateErrors(t *testing.T) {
	ctx := context.Background()
	s, logs := newServer(t, nil)
	mustOK(t, mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "fail://{id}", Name: "fail"},
		func(ctx context.Context, c *mcpserver.Call, v map[string]string) (*mcp.ReadResourceResult, error) {
			return nil, errors.New("secret " + v["id"])
		}))
	mustOK(t, mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "gone://{id}", Name: "gone"},
		func(ctx context.Context, c *mcpserver.Call, v map[string]string) (*mcp.ReadResourceResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Resource not found: gone://" + v["id"]}
		}))
	mustOK(t, mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "nil://{id}", Name: "nil"},
		func(ctx context.Context, c *mcpserver.Call, v map[string]string) (*mcp.ReadResourceResult, error) {
			return nil, nil
		}))
	mustOK(t, mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "panic://{id}", Name: "panic"},
		func(ctx context.Context, c *mcpserver.Call, v map[string]string) (*mcp.ReadResourceResult, error) {
			panic("template panic " + v["id"])
		}))
	sess := connect(t, s, nil)
	_, err := sess.ReadResource(ctx, "fail://1")
	wantRPCError(t, err, jsonrpc.CodeInternalError, "Internal error")
	_, err = sess.ReadResource(ctx, "gone://2")
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Resource not found: gone://2")
	_, err = sess.ReadResource(ctx, "nil://3")
	wantRPCError(t, err, jsonrpc.CodeInternalError, "Internal error")
	_, err = sess.ReadResource(ctx, "panic://4")
	wantRPCError(t, err, jsonrpc.CodeInternalError, "Internal error")
	wantContains(t, "log", logs.String(), `owner="resource template \"panic://{id}\""`, "template panic 4")
}

func TestResourceRegistrationErrors(t *testing.T) {
	s, _ := newServer(t, nil)
	read := func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) { return nil, nil }
	body := func(ctx context.Context, c *mcpserver.Call, v tableVars) (*mcp.ReadResourceResult, error) {
		return nil, nil
	}
	for _, tc := range []struct {
		name string
		add  func() error
		want string
	}{
		{"nil resource", func() error { return s.AddResource(nil, read) }, "AddResource needs a resource with a URI and a name"},
		{"no uri", func() error { return s.AddResource(&mcp.Resource{Name: "x"}, read) }, "AddResource needs"},
		{"no name", func() error { return s.AddResource(&mcp.Resource{URI: "file:///x"}, read) }, "AddResource needs"},
		{"no handler", func() error { return s.AddResource(&mcp.Resource{URI: "file:///x", Name: "x"}, nil) }, "AddResource needs"},
		{"nil template", func() error { return mcpserver.AddResourceTemplate(s, nil, body) }, "AddResourceTemplate needs a template"},
		{"template without name", func() error {
			return mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "db://{db}/{table}"}, body)
		}, "AddResourceTemplate needs"},
		{"bad template", func() error {
			return mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "db://{db", Name: "x"}, body)
		}, `resource template "db://{db"`},
		{"field without a variable", func() error {
			return mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "db://{db}", Name: "x"}, body)
		}, `resource template "db://{db}" has no variable "table" for field Table`},
		{"wrong result", func() error {
			return mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "db://{db}/{table}", Name: "x"},
				func(ctx context.Context, c *mcpserver.Call, v tableVars) (string, error) { return "", nil })
		}, "returns string; a resource template returns *mcp.ReadResourceResult or mcp.ReadResourceOutcome"},
		{"questions with an outcome", func() error {
			return mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "db://{db}/{table}", Name: "x"},
				func(ctx context.Context, c *mcpserver.Call, v tableVars) (mcp.ReadResourceOutcome, error) {
					return nil, nil
				},
				mcpserver.ListRoots("r"))
		}, `resource template "db://{db}/{table}" declares questions and returns mcp.ReadResourceOutcome`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.add()
			if err == nil {
				t.Fatal("registered")
			}
			wantContains(t, "error", err.Error(), tc.want)
		})
	}
}

func TestResourceTemplateQuestions(t *testing.T) {
	ctx := context.Background()
	type reason struct {
		Why string `json:"why"`
	}
	why := mcpserver.Elicit[reason]("why", func(v tableVars, _ *mcpserver.Call) string {
		return "Why read " + v.DB + "." + v.Table + "?"
	})
	roots := mcpserver.ListRoots("roots")
	s, _ := newServer(t, nil)
	runs := new(counter)
	mustOK(t, mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "db://{db}/tables/{table}", Name: "table"},
		func(ctx context.Context, c *mcpserver.Call, v tableVars) (*mcp.ReadResourceResult, error) {
			runs.add("body")
			return textContents("db://"+v.DB+"/tables/"+v.Table, fmt.Sprintf("%s because %s (%d roots)", v.Table, why.Get(c).Why, len(roots.Get(c)))), nil
		}, why, roots))
	el := &elicitor{answer: func(string) *mcp.ElicitResult { return accept(map[string]any{"why": "audit"}) }}
	rounds := new(roundLog)
	sess := connect(t, s, &client.Options{
		Elicit: el.elicit,
		ListRoots: func(ctx context.Context) (*mcp.ListRootsResult, error) {
			return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///a"}}}, nil
		},
		Loop: &client.LoopOptions{OnRound: rounds.onRound},
	})
	res, err := sess.ReadResource(ctx, "db://orders/tables/users")
	mustOK(t, err)
	if got := readText(t, res); got != "db://orders/tables/users users because audit (1 roots)" {
		t.Errorf("read = %q", got)
	}
	if rounds.String() != "roots+why" || el.times("Why read orders.users?") != 1 || runs.get("body") != 1 {
		t.Errorf("rounds %s; asked %q; body ran %d", rounds, el.asked, runs.get("body"))
	}

	_, p, err := sess.Begin(ctx, client.ResourceCall("db://orders/tables/users"))
	mustOK(t, err)
	if p == nil {
		t.Fatal("completed")
	}
	_, _, err = sess.Continue(ctx, p, responses(t, map[string]mcp.InputResponse{
		"why":   &mcp.ElicitResult{Action: mcp.ActionCancel},
		"roots": &mcp.ListRootsResult{},
	}))
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, `Invalid params: the user cancelled question "why" of resource template "db://{db}/tables/{table}"`)

	// State issued for one URI is refused for another.
	other := *p
	other.Call = *client.ResourceCall("db://orders/tables/payments")
	_, _, err = sess.Continue(ctx, &other, nil)
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Invalid or expired requestState")
}

func TestResourceTemplateHandBuiltInputRequired(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	seen := make(chan string, 4)
	mustOK(t, mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "vault://{key}", Name: "vault"},
		func(ctx context.Context, c *mcpserver.Call, v map[string]string) (mcp.ReadResourceOutcome, error) {
			seen <- fmt.Sprintf("responses=%v state=%q", sortedKeys(c.InputResponses()), c.RequestState())
			if c.RequestState() == "" {
				return &mcp.InputRequiredResult{
					InputRequests: mcp.InputRequests{"pin": mcp.NewElicitFormRequest("PIN for "+v["key"]+"?", mcp.ElicitRequestedSchema{
						Properties: map[string]mcp.PrimitiveSchemaDefinition{"pin": &mcp.StringSchema{}},
					})},
					RequestState: "vault:" + v["key"],
				}, nil
			}
			r, err := c.InputResponses().Elicit("pin")
			if err != nil {
				return nil, err
			}
			return textContents("vault://"+v["key"], fmt.Sprintf("%s pin=%v", c.RequestState(), r.Content["pin"])), nil
		}))
	sess := connect(t, s, &client.Options{Elicit: (&elicitor{answer: func(string) *mcp.ElicitResult {
		return accept(map[string]any{"pin": "1234"})
	}}).elicit})
	_, p, err := sess.Begin(ctx, client.ResourceCall("vault://alpha"))
	mustOK(t, err)
	if p == nil {
		t.Fatal("completed")
	}
	if got := testwait.Recv(t, seen, "the handler's first round"); got != `responses=[] state=""` {
		t.Errorf("first round saw %s", got)
	}
	if got := formMessage(t, p.InputRequests, "pin"); got != "PIN for alpha?" {
		t.Errorf("message = %q", got)
	}
	if strings.Contains(p.RequestState, "vault") {
		t.Errorf("requestState on the wire = %q, want it sealed", p.RequestState)
	}
	res, next, err := sess.Continue(ctx, p, responses(t, map[string]mcp.InputResponse{"pin": accept(map[string]any{"pin": "0000"})}))
	mustOK(t, err)
	if next != nil {
		t.Fatal("asked again")
	}
	if got := readText(t, res.(*mcp.ReadResourceResult)); got != "vault://alpha vault:alpha pin=0000" {
		t.Errorf("read = %q", got)
	}
	if got := testwait.Recv(t, seen, "the handler's retry"); got != `responses=[pin] state="vault:alpha"` {
		t.Errorf("retry saw %s", got)
	}
	res2, err := sess.ReadResource(ctx, "vault://beta")
	mustOK(t, err)
	if got := readText(t, res2); got != "vault://beta vault:beta pin=1234" {
		t.Errorf("automatic loop: %q", got)
	}
}

// A static resource takes no part in multi-round-trip reads: even a
// requestState sent with its URI must verify, and the handler never sees
// one.
func TestResourceStaticRefusesForgedState(t *testing.T) {
	s, _ := newServer(t, nil)
	mustOK(t, s.AddResource(&mcp.Resource{URI: "file:///a", Name: "a"}, func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
		return textContents(uri, "a"), nil
	}))
	sess := connect(t, s, nil)
	_, err := sess.ReadResourceRound(context.Background(), &mcp.ReadResourceRequestParams{URI: "file:///a", RequestState: "made-up"})
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Invalid or expired requestState")
}
