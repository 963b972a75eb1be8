// Command everything-server is the server the official MCP conformance
// suite (github.com/modelcontextprotocol/conformance) tests Parley against.
// It exposes every tool, prompt, resource, resource template and completion
// the suite's server scenarios name, built on Parley's high-level server
// package, mcpserver: typed tools, prompts and resources registered on an
// mcpserver.Server, which seals every requestState it issues.
//
//	go run ./conformance/everything-server                 # http://127.0.0.1:3001/mcp
//	go run ./conformance/everything-server -addr :8080     # another address
//	go run ./conformance/everything-server -stdio          # stdio instead of HTTP
//
// The fixtures are split by area: tools.go, resources.go, prompts.go and
// mrtr.go (the multi-round-trip fixtures: tools and a prompt that declare
// the questions they need, or that build their *mcp.InputRequiredResult by
// hand where a scenario needs exact control). conformance/run.sh builds and
// runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport/stdio"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:3001", "address to serve HTTP on; the MCP endpoint is /mcp")
	useStdio := flag.Bool("stdio", false, "serve on stdin/stdout instead of HTTP")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	f, err := newFixture()
	if err != nil {
		log.Fatal(err)
	}
	if *useStdio {
		err = f.srv.ServeConn(ctx, stdio.ServerConn(nil))
	} else {
		err = serveHTTP(ctx, f.srv, *addr)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
}

// serveHTTP serves the MCP endpoint at /mcp until ctx ends, then shuts down
// gracefully: open subscriptions/listen streams get their final result,
// and legacy sessions end.
func serveHTTP(ctx context.Context, s *mcpserver.Server, addr string) error {
	mux := http.NewServeMux()
	// One endpoint for both generations: 2026-07-28 requests are served
	// statelessly, 2025-11-25 clients get sessions.
	h := s.HTTPHandler(nil)
	mux.Handle("/mcp", h)

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	// ReadHeaderTimeout and IdleTimeout bound peers that trickle their
	// headers or hold idle connections. ReadTimeout and WriteTimeout stay
	// zero: they bound whole requests and responses, and would cut
	// subscriptions/listen streams; the MCP handler bounds each request's
	// body and each write itself (streamhttp.HandlerOptions.BodyTimeout,
	// WriteTimeout).
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	// The readiness line: run.sh and people read the bound address here.
	fmt.Fprintf(os.Stderr, "everything-server: serving MCP on http://%s/mcp\n", ln.Addr())

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// The MCP handler first: it ends the listen streams and legacy
	// sessions that would keep hs.Shutdown waiting, and refuses new
	// requests while the ones in progress finish.
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return errors.Join(h.Shutdown(shutCtx), hs.Shutdown(shutCtx))
}

// fixture is the everything-server: one mcpserver.Server plus the little
// state the fixtures keep (whether the trigger tools have added their list
// entries).
type fixture struct {
	srv *mcpserver.Server

	mu            sync.Mutex // serializes the trigger tools' toggles
	dynamicTool   bool       // test_trigger_tool_change toggles it
	dynamicPrompt bool       // test_trigger_prompt_change toggles it
}

// newFixture builds the server. mcpserver seals requestState under a key
// made at start-up (requeststate.ProcessLocal): one process serves the
// whole suite, so no key needs sharing.
func newFixture() (*fixture, error) {
	f := &fixture{
		srv: mcpserver.MustNew(mcp.Implementation{
			Name:    "parley-everything-server",
			Title:   "Parley everything server",
			Version: "0.1.0",
		}, &mcpserver.Options{
			Instructions: "Conformance fixture: every tool, prompt and resource the MCP conformance suite names.",
			PageSize:     -1, // every list in one page
			// The tools that build their InputRequiredResult by hand
			// (test_elicitation_sep1330_enums, test_streaming_elicitation)
			// serve 2025-11-25 sessions through the bridge; the
			// dependency-form tools ask over the back-channel by themselves.
			Bridge: &server.BridgeOptions{},
		}),
	}
	for _, register := range []func() error{f.registerTools, f.registerPrompts, f.registerResources, f.registerCompletion, f.registerSkills} {
		if err := register(); err != nil {
			return nil, err
		}
	}
	return f, nil
}
