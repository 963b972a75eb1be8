package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strconv"
	"time"

	mgmcp "github.com/mark3labs/mcp-go/mcp"
	mgserver "github.com/mark3labs/mcp-go/server"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

// quiet is the logger of every server the scale curves start: a log line
// per stream or per notification would measure the logger.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// publishPath is the debug endpoint of a listen server that publishes a
// change of one resource n times and answers what that cost, measured in
// the server's process: ?uri=…&n=….
const publishPath = "/debug/publish"

// publishReport is what publishPath answers: per publish.
type publishReport struct {
	NS     float64 `json:"ns"`
	Allocs float64 `json:"allocs"`
}

func publishHandler(publish func(uri string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		uri := r.URL.Query().Get("uri")
		n, err := strconv.Atoi(r.URL.Query().Get("n"))
		if err != nil || n < 1 || uri == "" {
			http.Error(w, "want ?uri=…&n=…", http.StatusBadRequest)
			return
		}
		runtime.GC()
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		start := time.Now()
		for range n {
			publish(uri)
		}
		el := time.Since(start)
		runtime.ReadMemStats(&b)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(publishReport{
			NS:     float64(el.Nanoseconds()) / float64(n),
			Allocs: float64(b.Mallocs-a.Mallocs) / float64(n),
		})
	}
}

// hotURI is the resource the driver's one drained stream subscribes to,
// and the one published.
const hotURI = "res://hot"

// itemURI is the resource the i-th idle stream subscribes to: each its
// own, so that a publish of hotURI matches one stream among them all.
func itemURI(i int) string { return "res://item/" + strconv.Itoa(i) }

// listenServer is sdk's server for the listen-stream curve.
func listenServer(sdk string) (http.Handler, func(uri string), error) {
	switch sdk {
	case sdkCeiling:
		return bareStreamHandler(), nil, nil
	case sdkParley:
		s := mcpserver.MustNew(mcp.Implementation{Name: "load", Version: "1.0.0"}, &mcpserver.Options{
			Logger: quiet, MaxListenStreamsPerCaller: -1, MaxListenStreams: -1,
		})
		err := s.AddResource(&mcp.Resource{URI: hotURI, Name: "hot"}, func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: uri, Text: "hot"}}}, nil
		})
		if err != nil {
			return nil, nil, err
		}
		low := s.LowLevel()
		return s.HTTPHandler(nil), low.NotifyResourceUpdated, nil
	case sdkGosdk:
		s := gomcp.NewServer(&gomcp.Implementation{Name: "load", Version: "1.0.0"}, &gomcp.ServerOptions{
			Logger:             quiet,
			SubscribeHandler:   func(context.Context, *gomcp.SubscribeRequest) error { return nil },
			UnsubscribeHandler: func(context.Context, *gomcp.UnsubscribeRequest) error { return nil },
		})
		s.AddResource(&gomcp.Resource{URI: hotURI, Name: "hot"}, func(ctx context.Context, req *gomcp.ReadResourceRequest) (*gomcp.ReadResourceResult, error) {
			return &gomcp.ReadResourceResult{Contents: []*gomcp.ResourceContents{{URI: hotURI, Text: "hot"}}}, nil
		})
		h := gomcp.NewStreamableHTTPHandler(func(*http.Request) *gomcp.Server { return s }, &gomcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: quiet})
		publish := func(uri string) {
			s.ResourceUpdated(context.Background(), &gomcp.ResourceUpdatedNotificationParams{URI: uri})
		}
		return h, publish, nil
	case sdkMcpgo:
		s := mgserver.NewMCPServer("load", "1.0.0", mgserver.WithResourceCapabilities(true, true))
		s.AddResource(mgmcp.NewResource(hotURI, "hot"), func(ctx context.Context, req mgmcp.ReadResourceRequest) ([]mgmcp.ResourceContents, error) {
			return []mgmcp.ResourceContents{mgmcp.TextResourceContents{URI: hotURI, Text: "hot"}}, nil
		})
		// mcp-go records each stream's resource subscriptions in its
		// session, but has no call that publishes a resource's change to
		// the sessions subscribed to it (its broadcast leaves
		// notifications/resources/updated out): an application finds them
		// itself. So there is no publish to measure.
		h := mgserver.NewStreamableHTTPServer(s, mgserver.WithStateLess(true), mgserver.WithStreamableHTTPLogger(quiet))
		return h, nil, nil
	}
	return nil, nil, fmt.Errorf("unknown -sdk %q (want one of %v)", sdk, sdks)
}

// bareStreamHandler is the ceiling of the listen curve: a net/http
// handler that answers a POST with an event stream, writes and flushes one
// event (the request's id copied into an acknowledgement), and holds the
// response open until the client goes: what any streaming response costs
// net/http, with nothing of MCP.
func bareStreamHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		id, _ := rawID(body)
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		var b bytes.Buffer
		b.WriteString(`event: message` + "\n" + `data: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":`)
		b.Write(id)
		b.WriteString("}}}\n\n")
		w.Write(b.Bytes())
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
	})
}
