package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport/stdio"
)

// The test binary plays two more parts, chosen by PARLEY_TEST_ROLE, so
// that the terminal tests run real processes without building any:
// "parley" is the command itself, "fixture" the fixture server on stdio.
func TestMain(m *testing.M) {
	switch os.Getenv("PARLEY_TEST_ROLE") {
	case "parley":
		main()
		return
	case "fixture", "hostile":
		newServer := newFixture
		if os.Getenv("PARLEY_TEST_ROLE") == "hostile" {
			newServer = newHostile // peertext_test.go
		}
		s, err := newServer()
		if err == nil {
			err = s.ServeConn(context.Background(), stdio.ServerConn(nil))
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "fixture:", err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// signupForm is the form the signup tool asks for: one field of every kind
// a form may hold.
type signupForm struct {
	Age        int      `json:"age"`
	Email      string   `json:"email"`
	Name       string   `json:"name"`
	Plan       string   `json:"plan"`
	Color      string   `json:"color,omitempty"`
	Newsletter bool     `json:"newsletter,omitempty"`
	Score      float64  `json:"score,omitempty"`
	Tags       []string `json:"tags,omitempty"`
	Toppings   []string `json:"toppings,omitempty"`
}

func ptr[T any](v T) *T { return &v }

var signupSchema = mcp.ElicitRequestedSchema{
	Properties: map[string]mcp.PrimitiveSchemaDefinition{
		"age":        &mcp.NumberSchema{Type: mcp.TypeInteger, Title: "Age", Minimum: ptr(18.0), Maximum: ptr(130.0)},
		"email":      &mcp.StringSchema{Title: "Email", Format: mcp.FormatEmail},
		"name":       &mcp.StringSchema{Title: "Name", MinLength: ptr(2), MaxLength: ptr(20)},
		"plan":       &mcp.TitledSingleSelectEnumSchema{Title: "Plan", OneOf: []mcp.EnumOption{{Const: "basic", Title: "Basic plan"}, {Const: "pro", Title: "Pro plan"}}},
		"color":      &mcp.UntitledSingleSelectEnumSchema{Title: "Color", Enum: []string{"red", "green", "blue"}},
		"newsletter": &mcp.BooleanSchema{Title: "Newsletter", Default: ptr(false)},
		"score":      &mcp.NumberSchema{Type: mcp.TypeNumber, Title: "Score", Minimum: ptr(0.0), Maximum: ptr(10.0), Default: ptr(5.0)},
		"tags":       &mcp.UntitledMultiSelectEnumSchema{Title: "Tags", Items: mcp.UntitledEnumItems{Enum: []string{"alpha", "beta"}}},
		"toppings":   &mcp.TitledMultiSelectEnumSchema{Title: "Toppings", Items: mcp.TitledEnumItems{AnyOf: []mcp.EnumOption{{Const: "ham", Title: "Ham"}, {Const: "egg", Title: "Egg"}}}},
	},
	Required: []string{"age", "email", "name", "plan"},
}

// A 1x1 PNG and a few bytes of WAV: enough to be saved and named.
var (
	pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde")
	wavBytes = []byte("RIFF$\x00\x00\x00WAVEfmt ")
)

type addArgs struct {
	A   int  `json:"a" jsonschema:"the first number"`
	B   int  `json:"b" jsonschema:"the second number"`
	Neg bool `json:"neg,omitempty" jsonschema:"negate the sum"`
}

type echoArgs struct {
	Items []string       `json:"items"`
	Opts  map[string]any `json:"opts,omitempty"`
}

type askArgs struct {
	Question string `json:"question"`
}

type none struct{}

// serveFixtureHTTP serves the fixture over Streamable HTTP until the test
// ends and returns its URL.
func serveFixtureHTTP(t *testing.T) string {
	t.Helper()
	s, err := newFixture()
	if err != nil {
		t.Fatal(err)
	}
	h := s.HTTPHandler(nil)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Shutdown(context.Background())
		srv.Close()
	})
	return srv.URL
}

// newFixture is the server the tests talk to: a tool, prompt and resource
// of each kind parley shows, and tools that ask every kind of question.
func newFixture() (*mcpserver.Server, error) {
	s, err := mcpserver.New(mcp.Implementation{Name: "fixture", Title: "Parley CLI fixture", Version: "1.0.0"},
		&mcpserver.Options{
			Instructions: "A fixture for parley's tests: every kind of tool, prompt, resource and question.",
			// The hand-built signup tool asks legacy sessions through the
			// bridge.
			Bridge: &server.BridgeOptions{},
		})
	if err != nil {
		return nil, err
	}
	model := mcpserver.Sample("model", func(in askArgs, _ *mcpserver.Call) mcp.CreateMessageRequestParams {
		return mcp.CreateMessageRequestParams{
			Messages:  []mcp.SamplingMessage{{Role: "user", Content: mcp.SamplingContent{&mcp.TextContent{Text: in.Question}}}},
			MaxTokens: 100,
		}
	})
	roots := mcpserver.ListRoots("roots")
	return s, errors.Join(
		mcpserver.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers"},
			func(_ context.Context, _ *mcpserver.Call, in addArgs) (string, error) {
				sum := in.A + in.B
				if in.Neg {
					sum = -sum
				}
				return fmt.Sprint(sum), nil
			}),
		mcpserver.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes a list and an object"},
			func(_ context.Context, _ *mcpserver.Call, in echoArgs) (string, error) {
				b, err := json.Marshal(in)
				return string(b), err
			}),
		mcpserver.AddTool(s, &mcp.Tool{Name: "media", Description: "Returns text, an image, audio, a link and a resource"},
			func(context.Context, *mcpserver.Call, none) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.ContentBlock{
					&mcp.TextContent{Text: "Here is everything:"},
					&mcp.ImageContent{Data: pngBytes, MIMEType: "image/png"},
					&mcp.AudioContent{Data: wavBytes, MIMEType: "audio/wav"},
					&mcp.ResourceLink{URI: "note://readme", Name: "readme", MIMEType: "text/plain"},
					&mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{URI: "note://inline", MIMEType: "text/plain", Text: "inline text"}},
				}}, nil
			}),
		mcpserver.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails"},
			func(context.Context, *mcpserver.Call, none) (string, error) {
				return "", errors.New("this tool always fails")
			}),
		// Built by hand: mcpserver.Elicit infers its form from a struct,
		// which cannot hold the multi-selects.
		mcpserver.AddTool(s, &mcp.Tool{Name: "signup", Description: "Asks for a form with every kind of field"},
			func(ctx context.Context, c *mcpserver.Call, _ none) (mcp.CallToolOutcome, error) {
				if !c.InputResponses().Has("signup") {
					return &mcp.InputRequiredResult{
						InputRequests: mcp.InputRequests{"signup": mcp.NewElicitFormRequest("Sign up for the newsletter service", signupSchema)},
						RequestState:  "signup-v1",
					}, nil
				}
				ans, err := c.InputResponses().Elicit("signup")
				if err != nil {
					return mcp.ErrorResult("unreadable answer: " + err.Error()), nil
				}
				if !ans.Accepted() {
					return mcp.ErrorResult("signup stopped: the form was answered with " + string(ans.Action)), nil
				}
				var form signupForm
				if err := ans.DecodeContent(&form); err != nil {
					return mcp.ErrorResult("the answer does not fit the form: " + err.Error()), nil
				}
				c.Progress(ctx, 1, 2, "checking")
				c.Log(ctx, mcp.LoggingLevel("info"), "signup", "signed up "+form.Name)
				c.Progress(ctx, 2, 2, "done")
				b, err := json.Marshal(form)
				if err != nil {
					return nil, err
				}
				return mcp.TextResult("signed up: " + string(b)), nil
			}),
		mcpserver.AddTool(s, &mcp.Tool{Name: "visit", Description: "Asks the person to open a URL"},
			func(_ context.Context, c *mcpserver.Call, _ none) (mcp.CallToolOutcome, error) {
				if !c.InputResponses().Has("visit") {
					return &mcp.InputRequiredResult{
						InputRequests: mcp.InputRequests{"visit": mcp.NewElicitURLRequest("Connect your account", "https://example.com/connect")},
						RequestState:  "visit-v1",
					}, nil
				}
				ans, err := c.InputResponses().Elicit("visit")
				if err != nil {
					return mcp.ErrorResult("unreadable answer: " + err.Error()), nil
				}
				return mcp.TextResult("visit: " + string(ans.Action)), nil
			}),
		mcpserver.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks the client's model a question"},
			func(_ context.Context, c *mcpserver.Call, in askArgs) (string, error) {
				var texts []string
				for _, b := range model.Get(c).Content {
					if t, ok := b.(*mcp.TextContent); ok {
						texts = append(texts, t.Text)
					}
				}
				return "the model says: " + strings.Join(texts, " "), nil
			}, model),
		mcpserver.AddTool(s, &mcp.Tool{Name: "roots", Description: "Lists the client's roots"},
			func(_ context.Context, c *mcpserver.Call, _ none) (string, error) {
				var names []string
				for _, r := range roots.Get(c) {
					names = append(names, r.Name)
				}
				return "roots: " + strings.Join(names, ", "), nil
			}, roots),
		mcpserver.AddPrompt(s, &mcp.Prompt{Name: "greet", Description: "Greets someone",
			Arguments: []mcp.PromptArgument{{Name: "name", Description: "who to greet", Required: true}}},
			func(_ context.Context, _ *mcpserver.Call, in map[string]string) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Description: "A greeting", Messages: []mcp.PromptMessage{
					{Role: "user", Content: &mcp.TextContent{Text: "Say hello to " + in["name"] + "."}},
					{Role: "assistant", Content: &mcp.ImageContent{Data: pngBytes, MIMEType: "image/png"}},
				}}, nil
			}),
		s.AddResource(&mcp.Resource{URI: "note://readme", Name: "readme", MIMEType: "text/plain", Description: "A text note"},
			func(_ context.Context, uri string) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: "Read me first.\n"}}}, nil
			}),
		s.AddResource(&mcp.Resource{URI: "note://logo.png", Name: "logo", MIMEType: "image/png", Description: "A picture"},
			func(_ context.Context, uri string) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.BlobResourceContents{URI: uri, MIMEType: "image/png", Blob: pngBytes}}}, nil
			}),
		mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "note://day/{day}", Name: "day", MIMEType: "text/plain", Description: "A note per day"},
			func(_ context.Context, c *mcpserver.Call, in map[string]string) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: c.ResourceURI(), Text: "Notes of " + in["day"]}}}, nil
			}),
		func() error {
			s.CompletePromptArgument("greet", "name", func(_ context.Context, _ *mcpserver.Call, value string, _ map[string]string) ([]string, error) {
				var out []string
				for _, n := range []string{"Ada", "Alan", "Grace"} {
					if strings.HasPrefix(n, value) {
						out = append(out, n)
					}
				}
				return out, nil
			})
			return nil
		}(),
	)
}
