package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"

	mgmcp "github.com/mark3labs/mcp-go/mcp"
	mgserver "github.com/mark3labs/mcp-go/server"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// The SDKs the harness serves, in the order of the table. ceiling is a bare
// net/http handler, no SDK: the most this machine serves over the same
// loopback with the same driver.
const (
	sdkCeiling = "ceiling"
	sdkParley  = "parley"
	sdkGosdk   = "gosdk"
	sdkMcpgo   = "mcpgo"
)

// sdks are the servers of every run, ceiling first: the ratios are to it.
var sdks = []string{sdkCeiling, sdkParley, sdkGosdk, sdkMcpgo}

// The two ways a client reaches the server.
const (
	// modeStateless is a 2026-07-28 client: each POST stands alone.
	modeStateless = "stateless"
	// modeSession is a 2025-11-25 client: each connection opens a session
	// (initialize, notifications/initialized) once and calls on it.
	modeSession = "session"
	// modeMany is a server configured for the scale curve of idle
	// sessions: modeSession with Parley's session limits lifted (others
	// have none), so that ten thousand sessions from one address fit.
	modeMany = "many"
	// modeListen is a server configured for the scale curve of listen
	// streams: 2026-07-28 stateless, with a resource clients may subscribe
	// to, Parley's listen streams per caller unbounded, and /debug/publish.
	// The ceiling is a bare streaming response held open.
	modeListen = "listen"
)

// serveModes are the server configurations of the serve subcommand.
var serveModes = []string{modeStateless, modeSession, modeMany, modeListen}

// echoArgs is the echo tool's typed input on every SDK: one required
// string.
type echoArgs struct {
	Name string `json:"name" jsonschema:"what to echo"`
}

// endpoint is the path every server answers MCP on.
const endpoint = "/mcp"

// heapPath is the debug endpoint of the serve subcommand: the server
// process's live heap after a collection, which the idle-session
// measurement reads before and after opening its sessions.
const heapPath = "/debug/heap"

// serverFor is the http.Handler of sdk, configured for mode the way a
// production user of that SDK would configure a scalable server (see
// README.md, "Serving under load"), and for modeListen the function that
// publishes a change of a resource to the streams subscribed to it (nil
// for the ceiling, which has nothing to publish).
func serverFor(sdk, mode string) (http.Handler, func(uri string), error) {
	if mode == modeListen {
		return listenServer(sdk)
	}
	switch sdk {
	case sdkCeiling:
		return ceilingHandler(), nil, nil
	case sdkParley:
		h, err := parleyHandler(mode == modeMany)
		return h, nil, err
	case sdkGosdk:
		return gosdkHandler(mode == modeStateless), nil, nil
	case sdkMcpgo:
		return mcpgoHandler(mode == modeStateless), nil, nil
	}
	return nil, nil, fmt.Errorf("unknown -sdk %q (want one of %v)", sdk, sdks)
}

// parleyHandler is mcpserver's Streamable HTTP handler with default
// options: a 2026-07-28 request is served statelessly, a 2025-11-25 client
// gets a session on the same endpoint. many lifts the limits on sessions
// (how many, how many per caller, how long idle) for the scale curve.
func parleyHandler(many bool) (http.Handler, error) {
	s := mcpserver.MustNew(mcp.Implementation{Name: "load", Version: "1.0.0"}, &mcpserver.Options{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	err := mcpserver.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, c *mcpserver.Call, a echoArgs) (string, error) {
		return a.Name, nil
	})
	if err != nil {
		return nil, err
	}
	if many {
		return s.HTTPHandler(&streamhttp.HandlerOptions{Sessions: &streamhttp.SessionOptions{
			MaxSessions: 1 << 20, MaxSessionsPerCaller: -1, IdleTimeout: -1,
		}}), nil
	}
	return s.HTTPHandler(nil), nil
}

// gosdkHandler is the official SDK's StreamableHTTPHandler. Stateless, it
// is told to answer with JSON (Stateless and JSONResponse, what its docs
// point a horizontally scaled server to); for sessions it keeps its
// defaults (stateful, event-stream answers), which a 2025-11-25 client
// needs for anything sent back over the session.
func gosdkHandler(stateless bool) http.Handler {
	s := gomcp.NewServer(&gomcp.Implementation{Name: "load", Version: "1.0.0"}, nil)
	gomcp.AddTool(s, &gomcp.Tool{Name: "echo"}, func(ctx context.Context, req *gomcp.CallToolRequest, a echoArgs) (*gomcp.CallToolResult, any, error) {
		return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: a.Name}}}, nil, nil
	})
	var opts *gomcp.StreamableHTTPOptions
	if stateless {
		opts = &gomcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}
	}
	return gomcp.NewStreamableHTTPHandler(func(*http.Request) *gomcp.Server { return s }, opts)
}

// mcpgoHandler is mark3labs/mcp-go's StreamableHTTPServer with a typed
// tool (schema inferred from echoArgs, arguments validated against it, as
// the other SDKs do). Stateless is WithStateLess; for sessions it keeps
// its default session manager, which mints session IDs without keeping a
// table of them (no sticky sessions needed). A 2026-07-28 request is
// sessionless either way.
func mcpgoHandler(stateless bool) http.Handler {
	s := mgserver.NewMCPServer("load", "1.0.0", mgserver.WithInputSchemaValidation())
	s.AddTool(mgmcp.NewTool("echo", mgmcp.WithInputSchema[echoArgs]()),
		mgmcp.NewTypedToolHandler(func(ctx context.Context, req mgmcp.CallToolRequest, a echoArgs) (*mgmcp.CallToolResult, error) {
			return mgmcp.NewToolResultText(a.Name), nil
		}))
	var opts []mgserver.StreamableHTTPOption
	opts = append(opts, mgserver.WithStreamableHTTPLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if stateless {
		opts = append(opts, mgserver.WithStateLess(true))
	}
	return mgserver.NewStreamableHTTPServer(s, opts...)
}

// The ceiling's fixed answers, around the request's id. They are the bytes
// Parley answers (its tools/call result carries serverInfo in _meta on
// 2026-07-28), so that the ceiling writes no fewer bytes than an SDK.
var (
	ceilingCall       = []byte(`,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"load","version":"1.0.0"}},"resultType":"complete","content":[{"type":"text","text":"` + echoText + `"}]}}`)
	ceilingInitialize = []byte(`,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"load","version":"1.0.0"}}}`)
)

// ceilingHandler reads the body and writes a fixed, correct answer: the
// request's id copied into a constant tools/call result (or, for the
// session driver, a constant initialize result and a fixed session ID, and
// 202 for a notification). It parses nothing but the id, so it is the
// floor under any server's cost per request.
func ceilingHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id, ok := rawID(body)
		if !ok {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		answer := ceilingCall
		if bytes.Contains(body, []byte(`"method":"initialize"`)) {
			answer = ceilingInitialize
			w.Header().Set("Mcp-Session-Id", "ceiling")
		}
		out := make([]byte, 0, len(`{"jsonrpc":"2.0","id":`)+len(id)+len(answer))
		out = append(out, `{"jsonrpc":"2.0","id":`...)
		out = append(out, id...)
		out = append(out, answer...)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		w.Write(out)
	})
}

// rawID is the bytes of a request's "id" value, which the driver writes
// as a number right after "jsonrpc"; a notification has none.
func rawID(body []byte) ([]byte, bool) {
	i := bytes.Index(body, []byte(`"id":`))
	if i < 0 {
		return nil, false
	}
	rest := body[i+len(`"id":`):]
	end := bytes.IndexAny(rest, ",}")
	if end <= 0 {
		return nil, false
	}
	return rest[:end], true
}

// heapHandler answers the process's HeapInuse and StackInuse after a
// collection, in bytes, and its goroutines, as JSON: what the idle-session
// measurement reads. Stacks count because a session may hold a goroutine.
// Mallocs and TotalAlloc (counted since the process started) let the
// scale curves read what a number of calls allocated on the server.
func heapHandler(w http.ResponseWriter, r *http.Request) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(heapReport{
		HeapInuse: ms.HeapInuse, StackInuse: ms.StackInuse, Goroutines: runtime.NumGoroutine(),
		Mallocs: ms.Mallocs, TotalAlloc: ms.TotalAlloc,
	})
}

// heapReport is what heapPath answers.
type heapReport struct {
	HeapInuse  uint64 `json:"heapInuse"`
	StackInuse uint64 `json:"stackInuse"`
	Goroutines int    `json:"goroutines"`
	Mallocs    uint64 `json:"mallocs"`
	TotalAlloc uint64 `json:"totalAlloc"`
}

// serve is the serve subcommand: it listens on addr, prints the URL of the
// MCP endpoint on the first line of stdout (the harness reads it), and
// serves sdk's handler for mode there, and heapPath beside it, until
// killed.
func serve(sdk, mode, addr string) error {
	if !slices.Contains(serveModes, mode) {
		return fmt.Errorf("unknown -mode %q", mode)
	}
	h, publish, err := serverFor(sdk, mode)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(endpoint, h)
	mux.HandleFunc(heapPath, heapHandler)
	if publish != nil {
		mux.HandleFunc(publishPath, publishHandler(publish))
	}
	fmt.Fprintf(os.Stdout, "http://%s%s\n", ln.Addr(), endpoint)
	return (&http.Server{Handler: mux}).Serve(ln)
}
