package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode"

	"github.com/parley-mcp/parley/apps"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/transport"
)

func TestPeerText(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, é, 日本":            "plain text, é, 日本",
		"two\nlines\tand a tab":        "two\nlines\tand a tab",
		"crlf\r\nkept":                 "crlf\r\nkept",
		"over\rwrite":                  `over\rwrite`,
		"\x1b]52;c;aGk=\x07":           `\x1b]52;c;aGk=\x07`,
		"\x1b]0;title\x1b\\":           `\x1b]0;title\x1b\`,
		"\x1b[2J\x1b[H":                `\x1b[2J\x1b[H`,
		"nul\x00 del\x7f":              `nul\x00 del\x7f`,
		"c1 \u009b31m csi":             `c1 \u009b31m csi`,
		"bidi \u202eevil\u202c":        `bidi \u202eevil\u202c`,
		"isolate \u2066x\u2069 \u200f": `isolate \u2066x\u2069 \u200f`,
		"bad \x9b utf-8 \xff":          `bad \x9b utf-8 \xff`,
	} {
		if got := peerText(in); got != want {
			t.Errorf("peerText(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := peerLine("a\nb\tc\r\nd\x1b"), `a b c  d\x1b`; got != want {
		t.Errorf("peerLine = %q, want %q", got, want)
	}
}

// The control sequences a hostile server puts in its text: OSC 52 (write
// the clipboard), a window title, clear screen and home, a C1 CSI, a
// right-to-left override, and a bare carriage return.
const hostile = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;pwned\x07\x1b[2J\x1b[H\u009b31m\u202eevil\rX"

// hostileServer puts hostile in every text a server sends that parley
// prints: its identity and instructions, names and descriptions of tools,
// prompts, resources and templates, results, prompts' messages, resource
// text, log and progress messages, completions, an error it answers with,
// and a form's question.
func hostileServer(t *testing.T) func(context.Context) (transport.Transport, error) {
	t.Helper()
	s, err := newHostile()
	if err != nil {
		t.Fatal(err)
	}
	return func(context.Context) (transport.Transport, error) { return s.InMemoryTransport(), nil }
}

// newHostile is the server of hostileServer; the terminal tests run it
// over stdio (PARLEY_TEST_ROLE=hostile).
func newHostile() (*mcpserver.Server, error) {
	s, err := mcpserver.New(mcp.Implementation{Name: "evil" + hostile, Title: hostile, Version: "1" + hostile},
		&mcpserver.Options{Instructions: "Instructions " + hostile})
	if err != nil {
		return nil, err
	}
	model := mcpserver.Sample("model", func(none, *mcpserver.Call) mcp.CreateMessageRequestParams {
		return mcp.CreateMessageRequestParams{
			SystemPrompt: "System " + hostile,
			Messages:     []mcp.SamplingMessage{{Role: "user", Content: mcp.SamplingContent{&mcp.TextContent{Text: "Sampling " + hostile}}}},
			MaxTokens:    10,
		}
	})
	return s, errors.Join(
		mcpserver.AddView(s, &mcpserver.View{URI: "ui://evil/view.html", Name: "evil",
			UI: apps.ResourceMeta{Domain: "d" + hostile, CSP: &apps.CSP{ConnectDomains: []string{"https://x" + hostile}}}}, "<p>view</p>"),
		mcpserver.AddTool(s, &mcp.Tool{Name: "visit"},
			func(_ context.Context, c *mcpserver.Call, _ none) (mcp.CallToolOutcome, error) {
				if !c.InputResponses().Has("v") {
					return &mcp.InputRequiredResult{
						InputRequests: mcp.InputRequests{"v": mcp.NewElicitURLRequest("Visit "+hostile, "https://example.com/"+hostile)},
						RequestState:  "visit-v1",
					}, nil
				}
				return mcp.TextResult("visited"), nil
			}),
		mcpserver.AddTool(s, &mcp.Tool{Name: "sample"},
			func(context.Context, *mcpserver.Call, none) (string, error) { return "sampled", nil }, model),
		mcpserver.AddTool(s, &mcp.Tool{Name: "clip", Description: "Description " + hostile},
			func(ctx context.Context, c *mcpserver.Call, _ none) (*mcp.CallToolResult, error) {
				c.Progress(ctx, 1, 2, "progress "+hostile)
				c.Log(ctx, mcp.LoggingLevel("info"), "logger"+hostile, "log "+hostile)
				return &mcp.CallToolResult{Content: []mcp.ContentBlock{
					&mcp.TextContent{Text: "result " + hostile},
					&mcp.ResourceLink{URI: "note://x" + hostile, Name: "link" + hostile, MIMEType: "text/plain" + hostile},
					&mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{URI: "note://y" + hostile, Text: "embedded " + hostile}},
				}}, nil
			}),
		mcpserver.AddTool(s, &mcp.Tool{Name: "structured"},
			func(context.Context, *mcpserver.Call, none) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{StructuredContent: map[string]any{"k": "structured " + hostile}}, nil
			}),
		mcpserver.AddTool(s, &mcp.Tool{Name: "fails"},
			func(context.Context, *mcpserver.Call, none) (string, error) {
				return "", errors.New("tool error " + hostile)
			}),
		mcpserver.AddTool(s, &mcp.Tool{Name: "asks"},
			func(_ context.Context, c *mcpserver.Call, _ none) (mcp.CallToolOutcome, error) {
				if !c.InputResponses().Has("q") {
					return &mcp.InputRequiredResult{
						InputRequests: mcp.InputRequests{"q": mcp.NewElicitFormRequest("Question "+hostile, mcp.ElicitRequestedSchema{
							Properties: map[string]mcp.PrimitiveSchemaDefinition{
								"f":           &mcp.StringSchema{},
								"g" + hostile: &mcp.StringSchema{Format: hostile},
							},
							Required: []string{"f"},
						})},
						RequestState: "asks-v1",
					}, nil
				}
				return mcp.TextResult("answered"), nil
			}),
		mcpserver.AddPrompt(s, &mcp.Prompt{Name: "p", Description: "Prompt " + hostile,
			Arguments: []mcp.PromptArgument{{Name: "a" + hostile}, {Name: "b"}}},
			func(context.Context, *mcpserver.Call, map[string]string) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Description: "Got " + hostile, Messages: []mcp.PromptMessage{
					{Role: "user", Content: &mcp.TextContent{Text: "message " + hostile}},
				}}, nil
			}),
		s.AddResource(&mcp.Resource{URI: "note://r", Name: "r" + hostile, MIMEType: "text/plain", Description: "Resource " + hostile},
			func(_ context.Context, uri string) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: uri, Text: "text " + hostile}}}, nil
			}),
		s.AddResource(&mcp.Resource{URI: "note://gone", Name: "gone"},
			func(context.Context, string) (*mcp.ReadResourceResult, error) {
				return nil, &jsonrpc.Error{Code: -32002, Message: "Gone " + hostile}
			}),
		mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "note://t/{id}", Name: "t" + hostile, Description: "Template " + hostile},
			func(context.Context, *mcpserver.Call, map[string]string) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{}, nil
			}),
		func() error {
			s.CompletePromptArgument("p", "b", func(context.Context, *mcpserver.Call, string, map[string]string) ([]string, error) {
				return []string{"completion " + hostile}, nil
			})
			return nil
		}(),
	)
}

// rawControl reports the first control character, C1 control or
// bidirectional control in s that a terminal would act on (line feeds and
// tabs are text).
func rawControl(s string) (rune, bool) {
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || unicode.IsControl(r) && r != '\n' && r != '\t' || unicode.Is(unicode.Bidi_Control, r) {
			return r, true
		}
	}
	return 0, false
}

// TestPeerTextEverywhere: whatever a server sends, every command prints
// its text with the control characters made visible, on stdout and on
// stderr.
func TestPeerTextEverywhere(t *testing.T) {
	dial := hostileServer(t)
	for _, args := range [][]string{
		{"info"},
		{"tools", "list"},
		{"--log-level", "info", "tools", "call", "clip"},
		{"tools", "call", "structured"},
		{"tools", "call", "fails"},
		{"tools", "call", "asks"},
		{"--answer", "f=x", "--answer", "nosuch=1", "tools", "call", "asks"}, // the form's field names, listed
		{"prompts", "list"},
		{"prompts", "get", "p"},
		{"resources", "list"},
		{"resources", "read", "note://r"},
		{"resources", "read", "note://gone"},
		{"resources", "templates"},
		{"complete", "prompt", "p", "b=x"},
		{"apps", "view", "ui://evil/view.html"},
	} {
		t.Run(strings.Join(args[:min(len(args), 3)], " "), func(t *testing.T) {
			r := runApp(t, &app{dial: dial}, append([]string{"--out", t.TempDir()}, args...)...)
			for name, out := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
				if c, ok := rawControl(out); ok {
					t.Errorf("%s holds %U:\n%q", name, c, out)
				}
			}
			// Made visible by peerText, or escaped as JSON (structured
			// content).
			if !strings.Contains(r.stdout+r.stderr, `\x1b]52;c;`) && !strings.Contains(r.stdout, `\u001b]52;c;`) {
				t.Errorf("the server's text is not shown (made visible):\nstdout %q\nstderr %q", r.stdout, r.stderr)
			}
		})
	}
}

// --json prints the server's text exactly: decoded, it is what was sent.
func TestJSONKeepsPeerTextExact(t *testing.T) {
	r := runApp(t, &app{dial: hostileServer(t)}, "--json", "tools", "call", "clip")
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res.Content) == 0 || res.Content[0].Text != "result "+hostile {
		t.Fatalf("exit %d, %v, stdout %q", r.code, err, r.stdout)
	}
}

// TestPeerTextInHintsAndCells: a string field's format, the server's
// word, is made visible in the form's hint; a tab in a table cell stays in
// its cell.
func TestPeerTextInHintsAndCells(t *testing.T) {
	if c, ok := rawControl(stringHint(&mcp.StringSchema{Format: hostile})); ok {
		t.Errorf("the hint of a hostile format holds %U", c)
	}
	if got := tableCells([]string{"a\tb", "c\nd"}); len(got) != 2 || got[0] != "a b" || got[1] != "c d" {
		t.Errorf("tableCells = %q, want two cells, \"a b\" and \"c d\"", got)
	}
}
