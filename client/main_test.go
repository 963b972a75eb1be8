package client_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/parley-mcp/parley/internal/leakcheck"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
	"github.com/parley-mcp/parley/transport/stdio"
)

// serverEnv makes the test binary an MCP server on its stdin and stdout
// instead of running tests; its value picks the behaviour (see
// runStdioServer). The stdio tests start the binary this way.
const serverEnv = "PARLEY_CLIENT_TEST_SERVER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(serverEnv); mode != "" {
		os.Exit(runStdioServer(mode))
	}
	os.Exit(leakcheck.Main(m))
}

// runStdioServer serves the fixture over stdio until stdin closes, and
// returns the exit status. On top of the fixture's tools it has:
//
//   - "notify": publishes a tool-list change to the listen streams;
//   - "slow": reports progress 0 once it runs, then waits for its context
//     to end;
//   - "slow-ended": waits until a "slow" call has ended, then answers.
//
// In mode "crash" it exits with status 3 as soon as a tools/call arrives.
// In mode "legacy-only" it behaves as many 2025-11-25 servers do: a first
// message other than initialize makes it exit with status 1.
func runStdioServer(mode string) int {
	s := fixture(nil)
	slowEnded := make(chan struct{})
	var once sync.Once
	s.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			p, ok := req.Params.(*mcp.CallToolRequestParams)
			if !ok {
				return next(ctx, req)
			}
			if mode == "crash" {
				os.Exit(3)
			}
			switch p.Name {
			case "notify":
				s.NotifyToolListChanged()
				return mcp.TextResult("notified"), nil
			case "slow":
				defer once.Do(func() { close(slowEnded) })
				if err := req.Progress(ctx, 0, 0, "started"); err != nil {
					return nil, err
				}
				<-ctx.Done()
				return nil, ctx.Err()
			case "slow-ended":
				select {
				case <-slowEnded:
					return mcp.TextResult("it ended"), nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return next(ctx, req)
		}
	})
	var conn transport.Conn = stdio.ServerConn(nil)
	if mode == "legacy-only" {
		conn = &exitUnlessInitialize{Conn: conn}
	}
	if err := s.ServeConn(context.Background(), conn); err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
		return 1
	}
	return 0
}

// exitUnlessInitialize ends the process when the first message it reads is
// not an initialize request.
type exitUnlessInitialize struct {
	transport.Conn
	seen bool
}

func (c *exitUnlessInitialize) Read(ctx context.Context) ([]byte, error) {
	msg, err := c.Conn.Read(ctx)
	if err == nil && !c.seen {
		c.seen = true
		if !bytes.Contains(msg, []byte(`"method":"initialize"`)) {
			fmt.Fprintln(os.Stderr, "test server: expected initialize first; exiting")
			os.Exit(1)
		}
	}
	return msg, err
}
