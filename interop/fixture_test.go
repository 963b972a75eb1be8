package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/transport/stdio"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// The fixture is the Parley server the clients people run today are
// tested against (TestTypeScriptV1Client*, TestInspectorCLI*): one
// mcpserver.Server with a tool, prompt or resource for each flow a host
// uses. Every answer names what the server received, so that a client's
// report shows what crossed the wire both ways.
//
//	greet {name}        "Hello, <name>!"
//	weather {city}      structured output (a struct: structuredContent and an outputSchema)
//	fail                an isError result
//	ask                 elicits a name (decline allowed): "<action>:<name>"
//	preferences         elicits a form whose every field has a default: "<action>:<content as JSON>"
//	sample {prompt}     asks the client's model: "<model>:<text>"
//	roots               asks for the client's roots: their URIs, comma-separated
//	progress            reports progress 1, 2 and 3 of 3, then answers "done"
//	log                 logs at debug, info, warning and error (logger "fixture"), then answers "logged"
//	wait {id}           reports progress once, then waits until it is cancelled (or answers
//	                    "never cancelled" after twice fixtureWait)
//	cancelled {id}      "cancelled" once the wait of that id was cancelled (or "still waiting" after fixtureWait)
//	touch {uri}         sends notifications/resources/updated for uri
//	toggle              adds the tool "extra", or removes it (the tool list changes)
//	reconnect           progress 1, closes its event stream (2025-11-25 over HTTP), progress 2, then
//	                    answers "closed:<whether the stream was closed>"
//
// The prompt "greeting" {name, language} has completions for language;
// the resources are fixture://readme, fixture://counter (subscribe to it,
// then touch it) and the template fixture://items/{id}, whose id has
// completions. Lists are paginated by fixturePageSize, so a client must
// follow nextCursor to see everything.
type fixture struct {
	srv *mcpserver.Server

	mu      sync.Mutex
	waits   map[string]chan struct{} // wait id -> closed when that wait was cancelled
	toggled bool                     // toggle has added "extra"
}

// fixturePageSize is the fixture's page size: smaller than every list.
const fixturePageSize = 2

// fixtureWait bounds how long "cancelled" waits to hear of a cancellation:
// long enough for a loaded machine, short enough to fail well within the
// 60 s a client program may run.
const fixtureWait = 10 * time.Second

// fixtureTools are the fixture's tools, in tools/list order.
var fixtureTools = []string{"greet", "weather", "fail", "ask", "preferences", "sample", "roots", "progress", "log", "wait", "cancelled", "touch", "toggle", "reconnect"}

// The fixture's argument and answer types.
type (
	// GreetArgs are greet's arguments.
	GreetArgs struct {
		Name string `json:"name" jsonschema:"who to greet"`
	}
	// WeatherArgs are weather's arguments.
	WeatherArgs struct {
		City string `json:"city" jsonschema:"the city"`
	}
	// Forecast is weather's structured output.
	Forecast struct {
		City        string  `json:"city"`
		Celsius     float64 `json:"celsius"`
		Conditions  string  `json:"conditions"`
		Humidity    int     `json:"humidity"`
		Advisory    string  `json:"advisory,omitempty"`
		Description string  `json:"description"`
	}
	// Preferences is the form of preferences: every field has a default.
	Preferences struct {
		Language string `json:"language,omitempty" mcp:"enum=english,enum=french,default=french"`
		Units    string `json:"units,omitempty" mcp:"default=metric"`
		Count    int    `json:"count,omitempty" mcp:"minimum=1,maximum=9,default=3"`
		Beta     bool   `json:"beta,omitempty" mcp:"default=true"`
	}
	// SampleArgs are sample's arguments.
	SampleArgs struct {
		Prompt string `json:"prompt"`
	}
	// WaitArgs are the arguments of wait and cancelled.
	WaitArgs struct {
		ID string `json:"id"`
	}
	// TouchArgs are touch's arguments.
	TouchArgs struct {
		URI string `json:"uri"`
	}
	// GreetingArgs are the greeting prompt's arguments.
	GreetingArgs struct {
		Name     string `json:"name" jsonschema:"who to greet"`
		Language string `json:"language,omitempty" jsonschema:"the language" mcp:"default=english"`
	}
	// ItemVars are the variables of fixture://items/{id}.
	ItemVars struct {
		ID string `json:"id"`
	}
)

// newFixture builds the fixture, serving every version Parley serves.
func newFixture() (*fixture, error) {
	f := &fixture{waits: map[string]chan struct{}{}}
	s, err := mcpserver.New(mcp.Implementation{Name: "parley-fixture", Title: "Parley interop fixture", Version: "1.0.0"}, &mcpserver.Options{
		Instructions: "Parley's interop fixture: a tool, prompt or resource for each flow.",
		Logger:       slog.New(slog.DiscardHandler),
		PageSize:     fixturePageSize,
	})
	if err != nil {
		return nil, err
	}
	f.srv = s
	name := mcpserver.Elicit[Name]("name", func(struct{}, *mcpserver.Call) string { return "What is your name?" }).AllowDecline()
	prefs := mcpserver.Elicit[Preferences]("preferences", func(struct{}, *mcpserver.Call) string { return "Your preferences?" }).AllowDecline()
	model := mcpserver.Sample("model", func(a SampleArgs, _ *mcpserver.Call) mcp.CreateMessageRequestParams {
		return mcp.CreateMessageRequestParams{
			Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.SamplingContent{mcp.NewTextContent(a.Prompt)}}},
			MaxTokens: 50,
		}
	})
	roots := mcpserver.ListRoots("roots")
	err = errors.Join(
		mcpserver.AddTool(s, &mcp.Tool{Name: "greet", Description: "Says hello."},
			func(_ context.Context, _ *mcpserver.Call, a GreetArgs) (string, error) {
				return "Hello, " + a.Name + "!", nil
			}),
		mcpserver.AddTool(s, &mcp.Tool{Name: "weather", Description: "Today's weather, as structured output."},
			func(_ context.Context, _ *mcpserver.Call, a WeatherArgs) (Forecast, error) {
				return Forecast{City: a.City, Celsius: 21.5, Conditions: "sunny", Humidity: 40, Description: "Sunny in " + a.City}, nil
			}),
		mcpserver.AddTool(s, &mcp.Tool{Name: "fail", Description: "Fails."},
			func(context.Context, *mcpserver.Call, struct{}) (string, error) {
				return "", errors.New("the tool failed on purpose")
			}),
		mcpserver.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks for a name."},
			func(_ context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
				o := name.Outcome(c)
				return string(o.Action) + ":" + o.Content.Name, nil
			}, name),
		mcpserver.AddTool(s, &mcp.Tool{Name: "preferences", Description: "Asks for preferences, every one with a default."},
			func(_ context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
				o := prefs.Outcome(c)
				b, err := json.Marshal(o.Content)
				return string(o.Action) + ":" + string(b), err
			}, prefs),
		mcpserver.AddTool(s, &mcp.Tool{Name: "sample", Description: "Asks the client's model."},
			func(_ context.Context, c *mcpserver.Call, _ SampleArgs) (string, error) {
				r := model.Get(c)
				return r.Model + ":" + r.Text(), nil
			}, model),
		mcpserver.AddTool(s, &mcp.Tool{Name: "roots", Description: "Lists the client's roots."},
			func(_ context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
				var uris []string
				for _, r := range roots.Get(c) {
					uris = append(uris, r.URI)
				}
				return strings.Join(uris, ","), nil
			}, roots),
		mcpserver.AddTool(s, &mcp.Tool{Name: "progress", Description: "Reports progress three times."},
			func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
				for i, msg := range []string{"one", "two", "three"} {
					if err := c.Progress(ctx, float64(i+1), 3, msg); err != nil {
						return "", err
					}
				}
				return "done", nil
			}),
		mcpserver.AddTool(s, &mcp.Tool{Name: "log", Description: "Logs at four levels."},
			func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
				for _, l := range []mcp.LoggingLevel{mcp.LevelDebug, mcp.LevelInfo, mcp.LevelWarning, mcp.LevelError} {
					if err := c.Log(ctx, l, "fixture", map[string]any{"level": string(l)}); err != nil {
						return "", err
					}
				}
				return "logged", nil
			}),
		mcpserver.AddTool(s, &mcp.Tool{Name: "wait", Description: "Waits until it is cancelled."}, f.wait),
		mcpserver.AddTool(s, &mcp.Tool{Name: "cancelled", Description: "Says whether a wait was cancelled."}, f.cancelled),
		mcpserver.AddTool(s, &mcp.Tool{Name: "touch", Description: "Announces that a resource changed."},
			func(_ context.Context, _ *mcpserver.Call, a TouchArgs) (string, error) {
				s.LowLevel().NotifyResourceUpdated(a.URI)
				return "touched " + a.URI, nil
			}),
		mcpserver.AddTool(s, &mcp.Tool{Name: "toggle", Description: "Adds or removes the tool extra."}, f.toggle),
		mcpserver.AddTool(s, &mcp.Tool{Name: "reconnect", Description: "Closes its event stream halfway (2025-11-25 over HTTP)."},
			func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
				if err := c.Progress(ctx, 1, 2, "before"); err != nil {
					return "", err
				}
				closed := streamhttp.CloseEventStream(ctx)
				if err := c.Progress(ctx, 2, 2, "after"); err != nil {
					return "", err
				}
				return fmt.Sprintf("closed:%v", closed), nil
			}),

		mcpserver.AddPrompt(s, &mcp.Prompt{Name: "greeting", Description: "A greeting in a language."},
			func(_ context.Context, _ *mcpserver.Call, a GreetingArgs) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
					{Role: mcp.RoleUser, Content: mcp.NewTextContent("Greet " + a.Name + " in " + a.Language + ".")},
				}}, nil
			}),
		s.AddResource(&mcp.Resource{URI: "fixture://readme", Name: "readme", MIMEType: "text/plain"},
			func(context.Context, string) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
					&mcp.TextResourceContents{URI: "fixture://readme", MIMEType: "text/plain", Text: "Read me."},
				}}, nil
			}),
		s.AddResource(&mcp.Resource{URI: "fixture://counter", Name: "counter", MIMEType: "text/plain"},
			func(context.Context, string) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
					&mcp.TextResourceContents{URI: "fixture://counter", MIMEType: "text/plain", Text: "1"},
				}}, nil
			}),
		mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "fixture://items/{id}", Name: "item", MIMEType: "text/plain"},
			func(_ context.Context, _ *mcpserver.Call, v ItemVars) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
					&mcp.TextResourceContents{URI: "fixture://items/" + v.ID, MIMEType: "text/plain", Text: "item " + v.ID},
				}}, nil
			}),
	)
	if err != nil {
		return nil, err
	}
	s.CompletePromptArgument("greeting", "language", prefixes("english", "french", "german"))
	s.CompleteTemplateVariable("fixture://items/{id}", "id", prefixes("apple", "apricot", "banana"))
	return f, nil
}

// prefixes completes with the candidates that start with what was typed.
func prefixes(candidates ...string) mcpserver.CompleteFunc {
	return func(_ context.Context, _ *mcpserver.Call, value string, _ map[string]string) ([]string, error) {
		var out []string
		for _, c := range candidates {
			if strings.HasPrefix(c, value) {
				out = append(out, c)
			}
		}
		return out, nil
	}
}

// waitChan returns the channel closed when the wait of id is cancelled.
func (f *fixture) waitChan(id string) chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch, ok := f.waits[id]
	if !ok {
		ch = make(chan struct{})
		f.waits[id] = ch
	}
	return ch
}

// wait reports progress, so that the client knows the call is running,
// and waits for its context to end: the server cancels it when the client
// sends notifications/cancelled (or, under 2026-07-28 over HTTP, closes
// the request's stream). A server that never cancels it must not hold the
// test (and the server's shutdown) for ever: after twice fixtureWait it
// answers "never cancelled".
func (f *fixture) wait(ctx context.Context, c *mcpserver.Call, a WaitArgs) (string, error) {
	ch := f.waitChan(a.ID)
	if err := c.Progress(ctx, 1, 0, "waiting"); err != nil {
		return "", err
	}
	timer := time.NewTimer(2 * fixtureWait)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		close(ch)
		return "", ctx.Err()
	case <-timer.C:
		return "never cancelled", nil
	}
}

// cancelled answers "cancelled" once the wait of a.ID has been cancelled.
func (f *fixture) cancelled(ctx context.Context, _ *mcpserver.Call, a WaitArgs) (string, error) {
	timer := time.NewTimer(fixtureWait)
	defer timer.Stop()
	select {
	case <-f.waitChan(a.ID):
		return "cancelled", nil
	case <-timer.C:
		return "still waiting", nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// toggle adds the tool "extra" or removes it; mcpserver announces the
// change to the clients that listen for it.
func (f *fixture) toggle(context.Context, *mcpserver.Call, struct{}) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.toggled = !f.toggled
	if !f.toggled {
		f.srv.RemoveTools("extra")
		return "removed extra", nil
	}
	err := mcpserver.AddTool(f.srv, &mcp.Tool{Name: "extra", Description: "Exists while toggle has added it."},
		func(context.Context, *mcpserver.Call, struct{}) (string, error) { return "extra", nil })
	return "added extra", err
}

// serveFixtureHTTP serves f over Streamable HTTP on a loopback port and
// returns its URL. When the test ends, the handler's Shutdown ends the
// legacy sessions and listen streams that clients left open, so that
// closing the server does not wait for them.
func serveFixtureHTTP(t *testing.T, f *fixture) string {
	t.Helper()
	h := f.srv.HTTPHandler(nil)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Logf("the fixture's HTTP handler did not shut down: %v", err)
		}
		srv.Close()
	})
	return srv.URL
}

// serveFixtureStdio serves the fixture on the process's stdin and stdout
// until stdin closes. sameRead holds each progress notification back and
// writes it with the next message, in one write, so that the client reads
// them together, as it may whenever the server writes faster than the
// client reads.
func serveFixtureStdio(sameRead bool) int {
	f, err := newFixture()
	if err == nil {
		var w io.Writer = os.Stdout
		if sameRead {
			w = &progressWithNext{w: os.Stdout}
		}
		err = f.srv.ServeConn(context.Background(), stdio.NewConn(os.Stdin, w, nil))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "parley fixture:", err)
		return 1
	}
	return 0
}

// progressWithNext writes progress notifications together with the next
// message that is not one, in one Write.
type progressWithNext struct {
	mu   sync.Mutex
	w    io.Writer
	held []byte
}

func (p *progressWithNext) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.held = append(p.held, b...)
	if bytes.Contains(b, []byte(`"method":"notifications/progress"`)) {
		return len(b), nil
	}
	_, err := p.w.Write(p.held)
	p.held = p.held[:0]
	return len(b), err
}
