// Command provision-lowlevel is the Provisioner of the multi-round-trip
// documentation in its low-level form: the same tool as ./examples/provision,
// written against the low-level server package, where the handler builds
// its InputRequiredResult and reads the answer itself. ./examples/provision
// is the same program on the high-level mcpserver package, where the
// question is declared and the SDK drives the rounds.
//
// The "provision" tool creates a database called by its "name" argument,
// but it needs to know the region first. On the first call there is no
// answer yet, so instead of a CallToolResult it returns an
// InputRequiredResult: a form elicitation asking for the region, and a
// requestState. The client's loop shows the form to its Elicit callback
// (here: one that always picks eu-west-1), sends the call again with the
// answer and the state, and the tool now completes. Nothing ever flows
// from the server to the client except results: every leg is an ordinary
// request.
//
// The handler reads the answer with the typed, validating accessors only:
// InputResponses.Elicit checks its shape, Accepted tells an accepted form
// from a declined or cancelled one (which ends the call with a tool error,
// never a new question), and DecodeContent decodes the form into a struct.
// No client input reaches a type assertion.
//
//	go run ./examples/provision-lowlevel                   # server and client in one process
//	go run ./examples/provision-lowlevel -transport stdio  # the server as a child process
//	go run ./examples/provision-lowlevel -transport http   # the server on 127.0.0.1, over Streamable HTTP
//
// The last line printed is the tool's result.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
	"github.com/parley-mcp/parley/transport/stdio"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

func main() {
	mode := flag.String("transport", "memory", "how the client reaches the server: memory, stdio or http")
	serve := flag.Bool("serve-stdio", false, "be the server, on stdin and stdout (what -transport stdio starts)")
	flag.Parse()
	ctx := context.Background()
	if *serve {
		if err := newProvisioner().ServeConn(ctx, stdio.ServerConn(nil)); err != nil {
			fmt.Fprintln(os.Stderr, "provision-lowlevel server:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(ctx, os.Stdout, *mode, selfAsServer); err != nil {
		fmt.Fprintln(os.Stderr, "provision-lowlevel:", err)
		var usage usageError
		if errors.As(err, &usage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// selfAsServer is the command that runs this program as the stdio server.
func selfAsServer() (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return exec.Command(exe, "-serve-stdio"), nil
}

type usageError struct{ error }

// run provisions the "orders" database over the transport named by mode,
// printing each round and, last, the result. serverCommand makes the
// command of the stdio server.
func run(ctx context.Context, w io.Writer, mode string, serverCommand func() (*exec.Cmd, error)) error {
	t, stop, err := dial(ctx, mode, serverCommand)
	if err != nil {
		return err
	}
	defer stop()

	c := client.New(mcp.Implementation{Name: "provision-client", Version: "1.0.0"}, &client.Options{
		// The callback stands in for a form shown to the user.
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			form, ok := p.(*mcp.ElicitRequestFormParams)
			if !ok {
				return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
			}
			if _, asks := form.RequestedSchema.Properties["region"]; !asks {
				return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
			}
			fmt.Fprintln(w, `  the user picks "eu-west-1"`)
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "eu-west-1"}}, nil
		},
		// The hook sees every round before the client answers it.
		Loop: &client.LoopOptions{OnRound: func(ctx context.Context, p *client.Pending) error {
			for _, key := range p.InputRequests.Keys() {
				fmt.Fprintf(w, "round %d: the server asks %s\n", p.Round, describe(p.InputRequests[key]))
			}
			if !p.NeedsInput() {
				fmt.Fprintf(w, "round %d: the server is not ready yet\n", p.Round)
			}
			return nil
		}},
	})
	sess, err := c.Connect(ctx, t)
	if err != nil {
		return err
	}
	defer sess.Close()
	fmt.Fprintf(w, "connected over %s, protocol %s\n", mode, sess.ProtocolVersion())

	res, err := sess.CallTool(ctx, "provision", map[string]string{"name": "orders"})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("the tool failed: %s", resultText(res))
	}
	fmt.Fprintln(w, resultText(res))
	return sess.Close()
}

// dial returns the transport to a provisioner reached by mode, and what
// stops the server afterwards.
func dial(ctx context.Context, mode string, serverCommand func() (*exec.Cmd, error)) (transport.Transport, func(), error) {
	switch mode {
	case "memory":
		clientEnd, serverEnd := transport.NewMemoryPipe()
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			newProvisioner().ServeConn(ctx, serverEnd)
		}()
		return transport.NewMemoryTransport(clientEnd), func() { cancel(); <-done }, nil
	case "stdio":
		cmd, err := serverCommand()
		if err != nil {
			return nil, nil, err
		}
		// The session's Close ends the process.
		return stdio.NewCommandTransport(cmd, &stdio.CommandOptions{Stderr: os.Stderr}), func() {}, nil
	case "http":
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, err
		}
		s := newProvisioner()
		mux := http.NewServeMux()
		h := streamhttp.NewHandler(s, nil)
		mux.Handle("/mcp", h)
		// ReadHeaderTimeout and IdleTimeout bound peers that trickle their
		// headers or hold idle connections. ReadTimeout and WriteTimeout stay
		// zero: they bound whole requests and responses, and would cut
		// subscriptions/listen streams; the MCP handler bounds each request's
		// body and each write itself (streamhttp.HandlerOptions.BodyTimeout,
		// WriteTimeout).
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
		go srv.Serve(ln)
		stop := func() {
			// The MCP handler first: it ends the listen streams that would
			// keep srv.Shutdown waiting.
			if err := errors.Join(h.Shutdown(ctx), srv.Shutdown(ctx)); err != nil {
				fmt.Fprintln(os.Stderr, "provision-lowlevel: shutting down:", err)
			}
		}
		return streamhttp.NewClientTransport("http://"+ln.Addr().String()+"/mcp", nil), stop, nil
	}
	return nil, nil, usageError{fmt.Errorf("unknown transport %q (want memory, stdio or http)", mode)}
}

// describe says what an input request asks, for the round log.
func describe(r mcp.InputRequest) string {
	if e, ok := r.(*mcp.ElicitRequest); ok {
		switch p := e.Params.(type) {
		case *mcp.ElicitRequestFormParams:
			return fmt.Sprintf("%q", p.Message)
		case *mcp.ElicitRequestURLParams:
			return fmt.Sprintf("%q (open %s)", p.Message, p.URL)
		}
	}
	return "for " + r.Method()
}

func resultText(r *mcp.CallToolResult) string {
	var parts []string
	for _, b := range r.Content {
		if t, ok := b.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// The provisioner's state, as its handler writes and reads it. On the wire
// it is an encrypted, authenticated token bound to this call (see
// requeststate.MustProtect in newProvisioner): the client holds it between
// rounds and could otherwise alter it or replay it onto another call.
const provisionState = "provision-v1"

var provisionTool = mcp.Tool{
	Name:        "provision",
	Description: "Create a database; asks which region it should live in.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
}

// newProvisioner returns the low-level server with the provision tool.
func newProvisioner() *server.Server {
	s := server.New(mcp.Implementation{Name: "provisioner", Version: "1.0.0"}, &server.Options{
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	// Seal every requestState and verify every echo, under a key made at
	// start-up: enough for one server process (memory, stdio, one HTTP
	// listener). Several instances would share keys instead; see
	// ./examples/resume.
	requeststate.MustProtect(s, nil)
	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		return &mcp.ListToolsResult{Tools: []mcp.Tool{provisionTool}}, nil
	})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if p.Name != provisionTool.Name {
			return nil, wire.InvalidParams("Unknown tool: %s", p.Name)
		}
		var args struct {
			Name string `json:"name"`
		}
		if err := p.DecodeArguments(&args); err != nil || args.Name == "" {
			return nil, wire.InvalidParams("Invalid params: provision needs a name")
		}
		ask := &mcp.InputRequiredResult{
			InputRequests: mcp.InputRequests{
				"region": mcp.NewElicitFormRequest("Which region should "+args.Name+" live in?", mcp.ElicitRequestedSchema{
					Properties: map[string]mcp.PrimitiveSchemaDefinition{
						"region": &mcp.StringSchema{Title: "Region", Description: "Where the database lives, such as eu-west-1"},
					},
					Required: []string{"region"},
				}),
			},
			RequestState: provisionState,
		}
		// First call: no answer yet, so ask instead of answering.
		if !p.InputResponses.Has("region") {
			return ask, nil
		}
		if p.RequestState != provisionState {
			return nil, wire.InvalidParams("Invalid params: unknown requestState")
		}
		// The answer, read with the typed accessor: it fails on an answer
		// that is not an elicitation result (no action, a bad action, form
		// values of the wrong kinds).
		answer, err := p.InputResponses.Elicit("region")
		if err != nil {
			return nil, wire.InvalidParams("Invalid params: %v", err)
		}
		// Declined or cancelled: the user said no, so the call ends with a
		// tool error the model can read. Asking again would ignore them.
		if !answer.Accepted() {
			return mcp.ErrorResult(fmt.Sprintf("Provisioning '%s' stopped: no region was chosen (%s).", args.Name, answer.Action)), nil
		}
		// Accepted: decode the form into its struct; a region that is not a
		// string fails here rather than in a type assertion.
		var form struct {
			Region string `json:"region"`
		}
		if err := answer.DecodeContent(&form); err != nil {
			return nil, wire.InvalidParams("Invalid params: the region form: %v", err)
		}
		if form.Region == "" {
			return ask, nil // accepted, but empty: ask again
		}
		return mcp.TextResult(fmt.Sprintf("Provisioned '%s' in %s.", args.Name, form.Region)), nil
	})
	return s
}
