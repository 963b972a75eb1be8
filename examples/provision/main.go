// Command provision is the Provisioner of the multi-round-trip
// documentation: a tool that cannot finish without asking the person at the
// host a question, and a client that answers it.
//
// The server is built with the high-level mcpserver package, in dependency
// form: the tool declares what it needs (the region question) next to its
// body, and the SDK does the rest. On the first call the answer is
// missing, so the server replies with an InputRequiredResult asking for the
// region and a sealed requestState; the client's loop shows the form to its
// Elicit callback (here: one that always picks eu-west-1), sends the call
// again with the answer, and only then does the body run, reading the
// answer as a typed struct. A declined or cancelled form ends the call with
// a tool error; an answer that does not fit the form is refused. The body
// never sees any of that. ./examples/provision-lowlevel is the same tool
// written by hand on the low-level server.
//
//	go run ./examples/provision                           # server and client in one process
//	go run ./examples/provision -transport stdio          # the server as a child process
//	go run ./examples/provision -transport http           # the server on 127.0.0.1, over Streamable HTTP
//	go run ./examples/provision -serve-http 127.0.0.1:8080 # only serve it, at http://127.0.0.1:8080/mcp
//
// The last line printed is the tool's result.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/transport"
	"github.com/parley-mcp/parley/transport/stdio"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// The Provisioner: its arguments, its question and its body.

type provisionArgs struct {
	Name string `json:"name" jsonschema:"the database to create"`
}

type regionForm struct {
	Region string `json:"region" jsonschema:"where the database lives, such as eu-west-1"`
}

var region = mcpserver.Elicit[regionForm]("region", func(a provisionArgs, _ *mcpserver.Call) string {
	return "Which region should " + a.Name + " live in?"
})

func addProvision(s *mcpserver.Server) error {
	return mcpserver.AddTool(s, &mcp.Tool{Name: "provision", Description: "Create a database; asks which region it should live in."},
		func(ctx context.Context, c *mcpserver.Call, a provisionArgs) (string, error) {
			return fmt.Sprintf("Provisioned '%s' in %s.", a.Name, region.Get(c).Region), nil
		}, region)
}

// newProvisioner returns the server with the provision tool. Every
// requestState it issues is sealed under a key made at start-up (the
// default): enough for one server process (memory, stdio, one HTTP
// listener). Several instances would share keys instead; see
// ./examples/resume.
func newProvisioner() (*mcpserver.Server, error) {
	s, err := mcpserver.New(mcp.Implementation{Name: "provisioner", Version: "1.0.0"}, &mcpserver.Options{
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return nil, err
	}
	return s, addProvision(s)
}

func main() {
	mode := flag.String("transport", "memory", "how the client reaches the server: memory, stdio or http")
	serveStdio := flag.Bool("serve-stdio", false, "be the server, on stdin and stdout (what -transport stdio starts)")
	serveHTTP := flag.String("serve-http", "", "only serve the provisioner over Streamable HTTP at http://`ADDR`/mcp, until interrupted")
	protocol := flag.String("protocol", "", "pin the client's protocol `VERSION`, such as 2025-11-25 for a legacy session (default: negotiated)")
	flag.Parse()
	ctx := context.Background()
	var err error
	switch {
	case *serveStdio:
		err = serveOnStdio(ctx)
	case *serveHTTP != "":
		err = serveOnHTTP(*serveHTTP)
	default:
		err = run(ctx, os.Stdout, *mode, mcp.ProtocolVersion(*protocol), selfAsServer)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "provision:", err)
		var usage usageError
		if errors.As(err, &usage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// serveOnStdio is the server that -transport stdio starts.
func serveOnStdio(ctx context.Context) error {
	s, err := newProvisioner()
	if err != nil {
		return err
	}
	return s.ServeConn(ctx, stdio.ServerConn(nil))
}

// serveOnHTTP serves the provisioner at http://addr/mcp until SIGINT or
// SIGTERM, then shuts down gracefully: listen streams are ended, requests
// in flight finish.
func serveOnHTTP(addr string) error {
	s, err := newProvisioner()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv, h := newHTTPServer(s)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Printf("serving the provisioner at http://%s/mcp (interrupt to stop)\n", ln.Addr())
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	stop() // a second interrupt kills the process
	fmt.Println("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return shutdown(sctx, srv, h)
}

// shutdown stops the MCP handler, then the HTTP server: the handler ends
// the listen streams and legacy sessions that would otherwise keep the
// server waiting, and refuses new requests while the ones in progress end.
func shutdown(ctx context.Context, srv *http.Server, h *streamhttp.Handler) error {
	return errors.Join(h.Shutdown(ctx), srv.Shutdown(ctx))
}

// newHTTPServer mounts s at /mcp, and returns the server and the MCP
// handler, which shutdown stops first.
func newHTTPServer(s *mcpserver.Server) (*http.Server, *streamhttp.Handler) {
	mux := http.NewServeMux()
	h := s.HTTPHandler(nil)
	mux.Handle("/mcp", h)
	// ReadHeaderTimeout and IdleTimeout bound peers that trickle their
	// headers or hold idle connections. ReadTimeout and WriteTimeout stay
	// zero: they bound whole requests and responses, and would cut
	// subscriptions/listen streams; the MCP handler bounds each request's
	// body and each write itself (streamhttp.HandlerOptions.BodyTimeout,
	// WriteTimeout).
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	return srv, h
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
// printing each round and, last, the result. version pins the protocol
// version ("" negotiates). serverCommand makes the command of the stdio
// server.
//
// The same callback answers the server's question in both generations:
// under 2026-07-28 it comes in a round of the client's loop, on a legacy
// session as a request from the server within the one call.
func run(ctx context.Context, w io.Writer, mode string, version mcp.ProtocolVersion, serverCommand func() (*exec.Cmd, error)) error {
	t, stop, err := dial(mode, serverCommand)
	if err != nil {
		return err
	}
	defer stop()

	c := client.New(mcp.Implementation{Name: "provision-client", Version: "1.0.0"}, &client.Options{
		ProtocolVersion: version,
		// The callback stands in for a form shown to the user. It fills in
		// only a form that asks for a region; anything else it declines.
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			form, ok := p.(*mcp.ElicitRequestFormParams)
			if !ok {
				return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
			}
			if _, asks := form.RequestedSchema.Properties["region"]; !asks {
				return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
			}
			if version.Era() == mcp.EraLegacy { // no rounds: OnRound does not see it
				fmt.Fprintf(w, "over the back-channel, the server asks %q\n", form.Message)
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
func dial(mode string, serverCommand func() (*exec.Cmd, error)) (transport.Transport, func(), error) {
	switch mode {
	case "memory":
		s, err := newProvisioner()
		if err != nil {
			return nil, nil, err
		}
		// The server's end closes with the client's.
		return s.InMemoryTransport(), func() {}, nil
	case "stdio":
		cmd, err := serverCommand()
		if err != nil {
			return nil, nil, err
		}
		// The session's Close ends the process.
		return stdio.NewCommandTransport(cmd, &stdio.CommandOptions{Stderr: os.Stderr}), func() {}, nil
	case "http":
		s, err := newProvisioner()
		if err != nil {
			return nil, nil, err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, err
		}
		srv, h := newHTTPServer(s)
		go srv.Serve(ln)
		stop := func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := shutdown(ctx, srv, h); err != nil {
				fmt.Fprintln(os.Stderr, "provision: shutting down:", err)
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
