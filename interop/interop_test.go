package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/transport"
	"github.com/parley-mcp/parley/transport/stdio"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// TestParleyClientAgainstTypeScriptServers: Parley's client in automatic
// mode (ProtocolVersion "") reaches each kind of 2025-generation server the
// TypeScript SDK v2 builds, over the transport it serves: it probes
// server/discover, reads the refusal as a legacy server's (a 400 with
// -32000 "Server not initialized" from the sessionful server, a 400 with
// -32000 about the protocol version from the stateless one, -32601 on
// stdio), initializes, and calls a tool whose answer comes from the
// elicitation the server sends back. The stateless server cannot ask (the
// SDK serves each POST with a fresh server, so the client's answer never
// reaches the one that asked): there the tool answers without asking.
func TestParleyClientAgainstTypeScriptServers(t *testing.T) {
	needNode(t)
	for _, tc := range []struct {
		name      string
		transport func(t *testing.T) transport.Transport
		tool      string
		want      string
		asks      int32
	}{
		{"http/stateful", func(t *testing.T) transport.Transport {
			return streamhttp.NewClientTransport(startHTTPServer(t, "stateful"), nil)
		}, "ask", "accept:Ada", 1},
		{"http/stateless", func(t *testing.T) transport.Transport {
			return streamhttp.NewClientTransport(startHTTPServer(t, "stateless"), nil)
		}, "greet", "hello", 0},
		{"stdio/legacy-only", func(t *testing.T) transport.Transport {
			return stdio.NewCommandTransport(nodeCommand(t, "server-stdio.mjs"), &stdio.CommandOptions{Stderr: testWriter{t}})
		}, "ask", "accept:Ada", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked atomic.Int32
			c := client.New(mcp.Implementation{Name: "parley-interop", Version: "1.0.0"}, &client.Options{
				Logger: slog.New(slog.DiscardHandler),
				Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
					asked.Add(1)
					if _, ok := p.(*mcp.ElicitRequestFormParams); !ok {
						return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
					}
					return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "Ada"}}, nil
				},
			})
			ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
			defer cancel()
			sess, err := c.Connect(ctx, tc.transport(t))
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer sess.Close()
			if got := sess.ProtocolVersion(); got != mcp.Version20251125 {
				t.Errorf("ProtocolVersion() = %q, want %q (a legacy session)", got, mcp.Version20251125)
			}
			if info := sess.ServerInfo(); info == nil || info.Name == "" {
				t.Errorf("ServerInfo() = %+v", info)
			}
			res, err := sess.CallTool(ctx, tc.tool, nil)
			if err != nil {
				t.Fatalf("CallTool %s: %v", tc.tool, err)
			}
			if got := text(res); got != tc.want || res.IsError {
				t.Errorf("CallTool %s = %q (isError %v), want %q", tc.tool, got, res.IsError, tc.want)
			}
			if n := asked.Load(); n != tc.asks {
				t.Errorf("the server asked %d times, want %d", n, tc.asks)
			}
		})
	}
}

// TestTypeScriptClientAgainstParley: the TypeScript SDK v2 client, in its
// default legacy mode (initialize) and in its automatic mode (which probes
// server/discover and speaks 2026-07-28 when it is answered), calls a
// Parley tool that elicits, over Streamable HTTP and stdio. The legacy
// client is asked with elicitation/create during the call; the automatic
// one with an input_required result that it answers by calling again.
func TestTypeScriptClientAgainstParley(t *testing.T) {
	needNode(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s, err := newParleyServer()
	if err != nil {
		t.Fatal(err)
	}
	httpSrv := httptest.NewServer(s.HTTPHandler(nil))
	t.Cleanup(httpSrv.Close)
	for _, mode := range []string{"legacy", "auto"} {
		want := string(mcp.Version20251125)
		if mode == "auto" {
			want = string(mcp.LatestVersion)
		}
		for _, kind := range []string{"http", "stdio"} {
			t.Run(mode+"/"+kind, func(t *testing.T) {
				target := []string{httpSrv.URL}
				if kind == "stdio" {
					target = []string{self}
				}
				cmd := nodeCommand(t, "client.mjs", append([]string{mode, kind}, target...)...)
				cmd.Env = append(os.Environ(), serveEnv+"=stdio")
				out, err := cmd.Output()
				if err != nil {
					var exit *exec.ExitError
					if errors.As(err, &exit) {
						t.Fatalf("client.mjs %s %s: %v", mode, kind, err)
					}
					t.Fatal(err)
				}
				checkClientReport(t, out, want, "")
			})
		}
	}
}

// checkClientReport checks what client.mjs printed after calling Parley's
// "ask" tool once (via says how it reached Parley, for the messages): the
// tool's answer to the accepted form, one question asked, and the
// protocol version the client spoke.
func checkClientReport(t *testing.T, out []byte, version, via string) {
	t.Helper()
	var got struct {
		ProtocolVersion string `json:"protocolVersion"`
		Text            string `json:"text"`
		Asked           int    `json:"asked"`
		IsError         bool   `json:"isError"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client.mjs printed %q: %v", out, err)
	}
	if got.Text != "accept:Ada" || got.IsError {
		t.Errorf("the tool answered %q (isError %v)%s, want %q", got.Text, got.IsError, via, "accept:Ada")
	}
	if got.Asked != 1 {
		t.Errorf("the client was asked %d times, want 1", got.Asked)
	}
	if got.ProtocolVersion != version {
		t.Errorf("the client speaks %q%s, want %q", got.ProtocolVersion, via, version)
	}
}

// Name is the form Parley's "ask" tool shows.
type Name struct {
	Name string `json:"name" jsonschema:"your name"`
}

// newParleyServer returns the Parley server the TypeScript client calls:
// one tool, "ask", that asks for a name and answers "accept:<name>", as
// the TypeScript servers' tool does. It speaks versions, or every version
// Parley serves when none is given.
func newParleyServer(versions ...mcp.ProtocolVersion) (*mcpserver.Server, error) {
	s, err := mcpserver.New(mcp.Implementation{Name: "parley-interop", Version: "1.0.0"}, &mcpserver.Options{Logger: slog.New(slog.DiscardHandler), SupportedVersions: versions})
	if err != nil {
		return nil, err
	}
	name := mcpserver.Elicit[Name]("name", func(struct{}, *mcpserver.Call) string { return "What is your name?" })
	err = mcpserver.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks the person at the host for a name."},
		func(ctx context.Context, call *mcpserver.Call, _ struct{}) (string, error) {
			return "accept:" + name.Get(call).Name, nil
		}, name)
	return s, err
}

// serveStdio serves newParleyServer on the process's stdin and stdout,
// until stdin closes: the test binary's other life, as the TypeScript
// client's stdio server. It returns the process's exit code.
func serveStdio() int {
	s, err := newParleyServer()
	if err == nil {
		err = s.ServeConn(context.Background(), stdio.ServerConn(nil))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "parley stdio server:", err)
		return 1
	}
	return 0
}

// text returns the text blocks of a result.
func text(res *mcp.CallToolResult) string {
	var out string
	for _, b := range res.Content {
		if t, ok := b.(*mcp.TextContent); ok {
			out += t.Text
		}
	}
	return out
}
