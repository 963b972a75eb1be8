package mcpserver_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

type writeArgs struct {
	Topic    string `json:"topic" jsonschema:"what to write about"`
	Audience string `json:"audience,omitempty" jsonschema:"who reads it"`
	Plain    string // no tag: named by its Go name, required
	Skipped  string `json:"-"`
	//lint:ignore U1000 an unexported field, present to show it is not an argument
	internal string
}

// userSays is a prompt result of one user message.
func userSays(text string) *mcp.GetPromptResult {
	return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(text)}}}
}

// promptText returns the text of a prompt result's one message.
func promptText(t *testing.T, res *mcp.GetPromptResult) string {
	t.Helper()
	if res == nil || len(res.Messages) != 1 {
		t.Fatalf("prompt result = %+v, want one message", res)
	}
	tc, ok := res.Messages[0].Content.(*mcp.TextContent)
	if !ok {
		t.Fatalf("message content is %T", res.Messages[0].Content)
	}
	return tc.Text
}

func TestPromptArgumentsFromStruct(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddPrompt(s, &mcp.Prompt{Name: "write", Description: "Write a post."},
		func(ctx context.Context, c *mcpserver.Call, a writeArgs) (*mcp.GetPromptResult, error) {
			return userSays(fmt.Sprintf("topic=%s audience=%s plain=%s skipped=%s", a.Topic, a.Audience, a.Plain, a.Skipped)), nil
		}))
	sess := connect(t, s, nil)
	list, err := sess.ListPrompts(ctx, "")
	mustOK(t, err)
	if len(list.Prompts) != 1 {
		t.Fatalf("prompts = %+v", list.Prompts)
	}
	p := list.Prompts[0]
	if p.Name != "write" || p.Description != "Write a post." {
		t.Errorf("prompt = %+v", p)
	}
	want := []mcp.PromptArgument{
		{Name: "topic", Description: "what to write about", Required: true},
		{Name: "audience", Description: "who reads it"},
		{Name: "Plain", Required: true},
	}
	if !slices.Equal(p.Arguments, want) {
		t.Errorf("arguments = %+v\nwant        %+v", p.Arguments, want)
	}

	res, err := sess.GetPrompt(ctx, "write", map[string]string{"topic": "Go", "Plain": "yes", "Skipped": "no", "extra": "ignored"})
	mustOK(t, err)
	if got := promptText(t, res); got != "topic=Go audience= plain=yes skipped=" {
		t.Errorf("text = %q", got)
	}

	_, err = sess.GetPrompt(ctx, "write", map[string]string{"Plain": "yes"})
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, `Invalid params: prompt "write" needs the argument "topic"`)
	_, err = sess.GetPrompt(ctx, "write", map[string]string{"topic": "Go"})
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, `Invalid params: prompt "write" needs the argument "Plain"`)
	// An empty string is given, not missing.
	res, err = sess.GetPrompt(ctx, "write", map[string]string{"topic": "", "Plain": ""})
	mustOK(t, err)
	if got := promptText(t, res); got != "topic= audience= plain= skipped=" {
		t.Errorf("text = %q", got)
	}
}

func TestPromptDeclaredArgumentsAndMap(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	declared := []mcp.PromptArgument{{Name: "lang", Title: "Language", Required: true}, {Name: "style"}}
	mustOK(t, mcpserver.AddPrompt(s, &mcp.Prompt{Name: "review", Arguments: declared},
		func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.GetPromptResult, error) {
			keys := make([]string, 0, len(a))
			for k, v := range a {
				keys = append(keys, k+"="+v)
			}
			slices.Sort(keys)
			return userSays(strings.Join(keys, " ")), nil
		}))
	sess := connect(t, s, nil)
	list, err := sess.ListPrompts(ctx, "")
	mustOK(t, err)
	if !slices.Equal(list.Prompts[0].Arguments, declared) {
		t.Errorf("arguments = %+v, want the declared ones", list.Prompts[0].Arguments)
	}
	res, err := sess.GetPrompt(ctx, "review", map[string]string{"lang": "go", "x": "y"})
	mustOK(t, err)
	if got := promptText(t, res); got != "lang=go x=y" {
		t.Errorf("text = %q", got)
	}
	_, err = sess.GetPrompt(ctx, "review", map[string]string{"style": "terse"})
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, `Invalid params: prompt "review" needs the argument "lang"`)
}

func TestPromptErrors(t *testing.T) {
	ctx := context.Background()
	s, logs := newServer(t, nil)
	mustOK(t, mcpserver.AddPrompt(s, &mcp.Prompt{Name: "fails"}, func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.GetPromptResult, error) {
		return nil, errors.New("template store password is hunter2")
	}))
	mustOK(t, mcpserver.AddPrompt(s, &mcp.Prompt{Name: "refuses"}, func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.GetPromptResult, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: bad lang"}
	}))
	mustOK(t, mcpserver.AddPrompt(s, &mcp.Prompt{Name: "panics"}, func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.GetPromptResult, error) {
		panic("boom")
	}))
	mustOK(t, mcpserver.AddPrompt(s, &mcp.Prompt{Name: "nil"}, func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.GetPromptResult, error) {
		return nil, nil
	}))
	mustOK(t, mcpserver.AddPrompt(s, &mcp.Prompt{Name: "ok"}, func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.GetPromptResult, error) {
		return userSays("fine"), nil
	}))
	sess := connect(t, s, nil)
	_, err := sess.GetPrompt(ctx, "fails", nil)
	e := wantRPCError(t, err, jsonrpc.CodeInternalError, "Internal error")
	if strings.Contains(e.Error(), "hunter2") {
		t.Error("the handler's error reached the client")
	}
	_, err = sess.GetPrompt(ctx, "refuses", nil)
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Invalid params: bad lang")
	_, err = sess.GetPrompt(ctx, "panics", nil)
	wantRPCError(t, err, jsonrpc.CodeInternalError, "Internal error")
	_, err = sess.GetPrompt(ctx, "nil", nil)
	wantRPCError(t, err, jsonrpc.CodeInternalError, "Internal error")
	_, err = sess.GetPrompt(ctx, "missing", nil)
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, `Invalid params: unknown prompt "missing"`)
	res, err := sess.GetPrompt(ctx, "ok", nil)
	mustOK(t, err)
	if promptText(t, res) != "fine" {
		t.Error("the server stopped serving prompts")
	}
	wantContains(t, "log", logs.String(), `owner="prompt \"panics\""`, "hunter2")

	s.RemovePrompts("ok")
	_, err = sess.GetPrompt(ctx, "ok", nil)
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, `Invalid params: unknown prompt "ok"`)
}

func TestPromptRegistrationErrors(t *testing.T) {
	s, _ := newServer(t, nil)
	ok := func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.GetPromptResult, error) {
		return nil, nil
	}
	type withInt struct {
		N int `json:"n"`
	}
	for _, tc := range []struct {
		name string
		add  func() error
		want string
	}{
		{"nil prompt", func() error { return mcpserver.AddPrompt(s, nil, ok) }, "needs a named prompt and a handler"},
		{"no name", func() error { return mcpserver.AddPrompt(s, &mcp.Prompt{}, ok) }, "needs a named prompt and a handler"},
		{"wrong result", func() error {
			return mcpserver.AddPrompt(s, &mcp.Prompt{Name: "p"}, func(ctx context.Context, c *mcpserver.Call, a map[string]string) (string, error) { return "", nil })
		}, `prompt "p" returns string; a prompt returns *mcp.GetPromptResult or mcp.GetPromptOutcome`},
		{"non-string argument", func() error {
			return mcpserver.AddPrompt(s, &mcp.Prompt{Name: "p"}, func(ctx context.Context, c *mcpserver.Call, a withInt) (*mcp.GetPromptResult, error) { return nil, nil })
		}, `prompt "p": field N of mcpserver_test.withInt is a int: prompt arguments and template variables are strings`},
		{"arguments not a struct", func() error {
			return mcpserver.AddPrompt(s, &mcp.Prompt{Name: "p"}, func(ctx context.Context, c *mcpserver.Call, a map[string]any) (*mcp.GetPromptResult, error) {
				return nil, nil
			})
		}, `want map[string]string or a struct of string fields`},
		{"questions with an outcome", func() error {
			return mcpserver.AddPrompt(s, &mcp.Prompt{Name: "p"}, func(ctx context.Context, c *mcpserver.Call, a map[string]string) (mcp.GetPromptOutcome, error) {
				return nil, nil
			},
				mcpserver.ListRoots("r"))
		}, `prompt "p" declares questions and returns mcp.GetPromptOutcome`},
		{"question of other arguments", func() error {
			return mcpserver.AddPrompt(s, &mcp.Prompt{Name: "p"}, ok, regionQuestion())
		}, `question "region" renders from arguments of type mcpserver_test.dbArgs, but the registration's arguments are map[string]string`},
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

type toneField struct {
	Tone string `json:"tone"`
}

func TestPromptQuestions(t *testing.T) {
	ctx := context.Background()
	tone := mcpserver.Elicit[toneField]("tone", func(a writeArgs, _ *mcpserver.Call) string {
		return "Which tone for " + a.Topic + "?"
	})
	length := mcpserver.Elicit[struct {
		Words int `json:"words"`
	}]("length", func(a writeArgs, c *mcpserver.Call) string {
		return "How many words, in a " + tone.Get(c).Tone + " tone?"
	}, tone)
	s, _ := newServer(t, nil)
	runs := new(counter)
	mustOK(t, mcpserver.AddPrompt(s, &mcp.Prompt{Name: "write"}, func(ctx context.Context, c *mcpserver.Call, a writeArgs) (*mcp.GetPromptResult, error) {
		runs.add("body")
		return userSays(fmt.Sprintf("Write %d words on %s, %s.", length.Get(c).Words, a.Topic, tone.Get(c).Tone)), nil
	}, length))
	el := &elicitor{answer: func(m string) *mcp.ElicitResult {
		if strings.HasPrefix(m, "Which tone") {
			return accept(map[string]any{"tone": "dry"})
		}
		return accept(map[string]any{"words": 300})
	}}
	rounds := new(roundLog)
	sess := connect(t, s, &client.Options{Elicit: el.elicit, Loop: &client.LoopOptions{OnRound: rounds.onRound}})
	args := map[string]string{"topic": "Go", "Plain": "x"}
	res, err := sess.GetPrompt(ctx, "write", args)
	mustOK(t, err)
	if got := promptText(t, res); got != "Write 300 words on Go, dry." {
		t.Errorf("text = %q", got)
	}
	if got := rounds.String(); got != "tone | length" {
		t.Errorf("rounds = %s", got)
	}
	if el.times("Which tone for Go?") != 1 || el.times("How many words, in a dry tone?") != 1 || runs.get("body") != 1 {
		t.Errorf("asked %q; body ran %d times", el.asked, runs.get("body"))
	}

	// The first round by hand: sealed state, nothing run.
	_, p, err := sess.Begin(ctx, client.PromptCall("write", args))
	mustOK(t, err)
	if p == nil {
		t.Fatal("the first round completed")
	}
	wantKeys(t, p.InputRequests, "tone")
	if p.RequestState == "" || strings.Contains(p.RequestState, "{") {
		t.Errorf("requestState = %q", p.RequestState)
	}
	// A decline fails the request with invalid params naming the question.
	_, _, err = sess.Continue(ctx, p, responses(t, map[string]mcp.InputResponse{"tone": &mcp.ElicitResult{Action: mcp.ActionDecline}}))
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, `Invalid params: the user declined question "tone" of prompt "write"`)
	// So does an answer that does not fit.
	_, _, err = sess.Continue(ctx, p, responses(t, map[string]mcp.InputResponse{"tone": accept(map[string]any{"tone": 7})}))
	e := wantRPCError(t, err, jsonrpc.CodeInvalidParams, "")
	wantContains(t, "message", e.Message, `Invalid params: question "tone" of prompt "write": the accepted content does not match the requested schema`)
	// And forged state is refused.
	forged := *p
	forged.RequestState += "x"
	_, _, err = sess.Continue(ctx, &forged, nil)
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Invalid or expired requestState")

	// A client without elicitation gets -32021.
	bare := connect(t, s, &client.Options{Capabilities: &mcp.ClientCapabilities{}})
	_, err = bare.GetPrompt(ctx, "write", args)
	wantRPCError(t, err, mcp.CodeMissingRequiredClientCapability,
		`Missing required client capability: elicitation (needed by question "tone" of prompt "write")`)
}

func TestPromptHandBuiltInputRequired(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	seen := make(chan string, 4)
	mustOK(t, mcpserver.AddPrompt(s, &mcp.Prompt{Name: "greet"}, func(ctx context.Context, c *mcpserver.Call, a map[string]string) (mcp.GetPromptOutcome, error) {
		seen <- fmt.Sprintf("responses=%v state=%q", sortedKeys(c.InputResponses()), c.RequestState())
		if c.RequestState() == "" {
			return &mcp.InputRequiredResult{
				InputRequests: mcp.InputRequests{"who": mcp.NewElicitFormRequest("Who?", mcp.ElicitRequestedSchema{
					Properties: map[string]mcp.PrimitiveSchemaDefinition{"name": &mcp.StringSchema{}},
				})},
				RequestState: "greet-1",
			}, nil
		}
		r, err := c.InputResponses().Elicit("who")
		if err != nil {
			return nil, err
		}
		return userSays(fmt.Sprintf("Hello, %v (%s, %s)", r.Content["name"], c.RequestState(), a["lang"])), nil
	}))
	sess := connect(t, s, &client.Options{Elicit: (&elicitor{answer: func(string) *mcp.ElicitResult {
		return accept(map[string]any{"name": "Ada"})
	}}).elicit})

	_, p, err := sess.Begin(ctx, client.PromptCall("greet", map[string]string{"lang": "en"}))
	mustOK(t, err)
	if p == nil {
		t.Fatal("completed")
	}
	if got := testwait.Recv(t, seen, "the handler's first round"); got != `responses=[] state=""` {
		t.Errorf("first round saw %s", got)
	}
	if p.RequestState == "greet-1" || strings.Contains(p.RequestState, "greet") {
		t.Errorf("requestState on the wire = %q, want it sealed", p.RequestState)
	}
	res, next, err := sess.Continue(ctx, p, responses(t, map[string]mcp.InputResponse{
		"who":   accept(map[string]any{"name": "Ada"}),
		"other": accept(map[string]any{"name": "Eve"}),
	}))
	mustOK(t, err)
	if next != nil {
		t.Fatal("asked again")
	}
	if got := promptText(t, res.(*mcp.GetPromptResult)); got != "Hello, Ada (greet-1, en)" {
		t.Errorf("text = %q", got)
	}
	if got := testwait.Recv(t, seen, "the handler's retry"); got != `responses=[who] state="greet-1"` {
		t.Errorf("retry saw %s", got)
	}
	res2, err := sess.GetPrompt(ctx, "greet", map[string]string{"lang": "fr"})
	mustOK(t, err)
	if got := promptText(t, res2); got != "Hello, Ada (greet-1, fr)" {
		t.Errorf("automatic loop: %q", got)
	}
}

// A required argument sent as JSON null is refused as a missing one is,
// before the body runs; an optional one sent as null is absent ("").
func TestPromptNullArgumentIsMissing(t *testing.T) {
	s, _ := newServer(t, nil)
	ran := 0
	mustOK(t, mcpserver.AddPrompt(s, &mcp.Prompt{Name: "write"},
		func(ctx context.Context, c *mcpserver.Call, a writeArgs) (*mcp.GetPromptResult, error) {
			ran++
			return userSays(fmt.Sprintf("topic=%q audience=%q", a.Topic, a.Audience)), nil
		}))
	declared := []mcp.PromptArgument{{Name: "lang", Required: true}}
	mustOK(t, mcpserver.AddPrompt(s, &mcp.Prompt{Name: "review", Arguments: declared},
		func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.GetPromptResult, error) {
			ran++
			_, has := a["lang"]
			return userSays(fmt.Sprint("has lang: ", has)), nil
		}))
	_, err := rawRequest(t, s, mcp.MethodGetPrompt, map[string]any{"name": "write", "arguments": map[string]any{"topic": nil, "Plain": "p"}})
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, `Invalid params: prompt "write" needs the argument "topic"`)
	_, err = rawRequest(t, s, mcp.MethodGetPrompt, map[string]any{"name": "review", "arguments": map[string]any{"lang": nil}})
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, `Invalid params: prompt "review" needs the argument "lang"`)
	if ran != 0 {
		t.Fatalf("the body ran %d times on a null required argument", ran)
	}
	res, err := rawRequest(t, s, mcp.MethodGetPrompt, map[string]any{"name": "write", "arguments": map[string]any{"topic": "go", "audience": nil, "Plain": "p"}})
	mustOK(t, err)
	if got := promptText(t, res.(*mcp.GetPromptResult)); got != `topic="go" audience=""` {
		t.Errorf("text = %s", got)
	}
}
