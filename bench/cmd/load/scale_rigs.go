package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	mgclient "github.com/mark3labs/mcp-go/client"
	mgtransport "github.com/mark3labs/mcp-go/client/transport"
	mgmcp "github.com/mark3labs/mcp-go/mcp"
	mgserver "github.com/mark3labs/mcp-go/server"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/transport"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// A rig is one SDK's server and client in this process, for the curves
// measured in process (tools, payload): a server with spec.tools typed
// echo tools (the one called is registered last, so that a scan of the
// registry would pay for all of them), and with spec.payload > 0 a tool
// "big" answering that many bytes of text and a resource whose blob is
// that many bytes.
type rigSpec struct {
	tools   int
	payload int
	http    bool // over loopback HTTP with the SDK's own client, 2026-07-28 stateless
}

type rig struct {
	call  func(ctx context.Context) error // tools/call of the last tool, its answer checked
	big   func(ctx context.Context) error // tools/call of "big", its length checked
	read  func(ctx context.Context) error // resources/read of the blob, its length checked
	list  func(ctx context.Context) (tools, pages int, err error)
	url   string // the MCP endpoint, over HTTP
	close func()
}

// textCalls sets call and big from an SDK's call of a tool that answers
// one text: the echo of the last tool checked, the payload's length.
func (r *rig) textCalls(callText func(ctx context.Context, name string) (string, error), last string, payload int) {
	r.call = func(ctx context.Context) error {
		t, err := callText(ctx, last)
		if err == nil && t != echoText {
			err = fmt.Errorf("text %q", t)
		}
		return err
	}
	r.big = func(ctx context.Context) error {
		t, err := callText(ctx, "big")
		if err != nil {
			return err
		}
		return checkLen("big", len(t), payload)
	}
}

// toolName is the name of the i-th registered tool.
func toolName(i int) string { return fmt.Sprintf("tool%05d", i) }

// toolDescription makes each tool's definition about as long as a real
// one's, so that a list's bytes mean something.
func toolDescription(i int) string {
	return fmt.Sprintf("Tool number %d: answers the name it is given, unchanged.", i)
}

const blobURI = "blob://payload"

// scaleArgs are the arguments of every echo call.
var scaleArgs = json.RawMessage(`{"name":"` + echoText + `"}`)

// payloadOf is the text of n bytes every SDK's "big" tool answers and
// whose bytes the blob holds: plain ASCII, so that no SDK escapes it.
func payloadOf(n int) string { return strings.Repeat("abcdefghijklmnop", n/16+1)[:n] }

func newRig(sdk string, spec rigSpec) (*rig, error) {
	switch sdk {
	case sdkParley:
		return parleyRig(spec)
	case sdkGosdk:
		return gosdkRig(spec)
	case sdkMcpgo:
		return mcpgoRig(spec)
	}
	return nil, fmt.Errorf("no rig for %q", sdk)
}

// checkLen fails unless got is want.
func checkLen(what string, got, want int) error {
	if got != want {
		return fmt.Errorf("%s: %d bytes, want %d", what, got, want)
	}
	return nil
}

func parleyRig(spec rigSpec) (*rig, error) {
	s := mcpserver.MustNew(mcp.Implementation{Name: "scale", Version: "1.0.0"}, &mcpserver.Options{Logger: quiet})
	echo := func(ctx context.Context, c *mcpserver.Call, a echoArgs) (string, error) { return a.Name, nil }
	for i := range max(spec.tools, 1) {
		if err := mcpserver.AddTool(s, &mcp.Tool{Name: toolName(i), Description: toolDescription(i)}, echo); err != nil {
			return nil, err
		}
	}
	var text string
	var blob []byte
	if spec.payload > 0 {
		text = payloadOf(spec.payload)
		blob = []byte(text)
		err := mcpserver.AddTool(s, &mcp.Tool{Name: "big"}, func(ctx context.Context, c *mcpserver.Call, a echoArgs) (string, error) {
			return text, nil
		})
		if err != nil {
			return nil, err
		}
		err = s.AddResource(&mcp.Resource{URI: blobURI, Name: "payload", MIMEType: "application/octet-stream"}, func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.BlobResourceContents{URI: uri, MIMEType: "application/octet-stream", Blob: blob}}}, nil
		})
		if err != nil {
			return nil, err
		}
	}
	r := &rig{}
	var t transport.Transport = s.InMemoryTransport()
	var ts *httptest.Server
	if spec.http {
		ts = httptest.NewServer(mux(s.HTTPHandler(&streamhttp.HandlerOptions{Logger: quiet})))
		r.url = ts.URL + endpoint
		t = streamhttp.NewClientTransport(r.url, nil)
	}
	sess, err := client.New(mcp.Implementation{Name: "scale-client", Version: "1.0.0"}, nil).Connect(context.Background(), t)
	if err != nil {
		if ts != nil {
			ts.Close()
		}
		return nil, err
	}
	r.close = func() {
		sess.Close()
		if ts != nil {
			ts.Close()
		}
	}
	last := toolName(max(spec.tools, 1) - 1)
	r.call = func(ctx context.Context) error {
		res, err := sess.CallTool(ctx, last, scaleArgs)
		if err != nil {
			return err
		}
		return parleyText(res, echoText)
	}
	r.big = func(ctx context.Context) error {
		res, err := sess.CallTool(ctx, "big", scaleArgs)
		if err != nil {
			return err
		}
		if len(res.Content) != 1 {
			return fmt.Errorf("big: %d contents", len(res.Content))
		}
		tc, ok := res.Content[0].(*mcp.TextContent)
		if !ok {
			return fmt.Errorf("big: content %T", res.Content[0])
		}
		return checkLen("big", len(tc.Text), spec.payload)
	}
	r.read = func(ctx context.Context) error {
		res, err := sess.ReadResource(ctx, blobURI)
		if err != nil {
			return err
		}
		if len(res.Contents) != 1 {
			return fmt.Errorf("read: %d contents", len(res.Contents))
		}
		b, ok := res.Contents[0].(*mcp.BlobResourceContents)
		if !ok {
			return fmt.Errorf("read: contents %T", res.Contents[0])
		}
		return checkLen("read", len(b.Blob), spec.payload)
	}
	r.list = func(ctx context.Context) (int, int, error) {
		var tools, pages int
		cursor := ""
		for {
			res, err := sess.ListTools(ctx, cursor)
			if err != nil {
				return 0, 0, err
			}
			pages++
			tools += len(res.Tools)
			if cursor = res.NextCursor; cursor == "" {
				return tools, pages, nil
			}
		}
	}
	return r, nil
}

func parleyText(res *mcp.CallToolResult, want string) error {
	if res.IsError || len(res.Content) != 1 {
		return fmt.Errorf("unexpected result %+v", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok || tc.Text != want {
		return fmt.Errorf("unexpected content %+v", res.Content[0])
	}
	return nil
}

func gosdkRig(spec rigSpec) (*rig, error) {
	s := gomcp.NewServer(&gomcp.Implementation{Name: "scale", Version: "1.0.0"}, &gomcp.ServerOptions{Logger: quiet})
	echo := func(ctx context.Context, req *gomcp.CallToolRequest, a echoArgs) (*gomcp.CallToolResult, any, error) {
		return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: a.Name}}}, nil, nil
	}
	for i := range max(spec.tools, 1) {
		gomcp.AddTool(s, &gomcp.Tool{Name: toolName(i), Description: toolDescription(i)}, echo)
	}
	if spec.payload > 0 {
		text := payloadOf(spec.payload)
		blob := []byte(text)
		gomcp.AddTool(s, &gomcp.Tool{Name: "big"}, func(ctx context.Context, req *gomcp.CallToolRequest, a echoArgs) (*gomcp.CallToolResult, any, error) {
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: text}}}, nil, nil
		})
		s.AddResource(&gomcp.Resource{URI: blobURI, Name: "payload", MIMEType: "application/octet-stream"}, func(ctx context.Context, req *gomcp.ReadResourceRequest) (*gomcp.ReadResourceResult, error) {
			return &gomcp.ReadResourceResult{Contents: []*gomcp.ResourceContents{{URI: blobURI, MIMEType: "application/octet-stream", Blob: blob}}}, nil
		})
	}
	r := &rig{}
	var ct gomcp.Transport
	var ss *gomcp.ServerSession
	var ts *httptest.Server
	if spec.http {
		h := gomcp.NewStreamableHTTPHandler(func(*http.Request) *gomcp.Server { return s }, &gomcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: quiet})
		ts = httptest.NewServer(mux(h))
		r.url = ts.URL + endpoint
		ct = &gomcp.StreamableClientTransport{Endpoint: r.url}
	} else {
		var st gomcp.Transport
		ct, st = gomcp.NewInMemoryTransports()
		var err error
		if ss, err = s.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
	}
	cs, err := gomcp.NewClient(&gomcp.Implementation{Name: "scale-client", Version: "1.0.0"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		return nil, err
	}
	r.close = func() {
		cs.Close()
		if ss != nil {
			ss.Close()
		}
		if ts != nil {
			ts.Close()
		}
	}
	last := toolName(max(spec.tools, 1) - 1)
	callText := func(ctx context.Context, name string) (string, error) {
		res, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: name, Arguments: scaleArgs})
		if err != nil {
			return "", err
		}
		if res.IsError || len(res.Content) != 1 {
			return "", fmt.Errorf("unexpected result %+v", res)
		}
		tc, ok := res.Content[0].(*gomcp.TextContent)
		if !ok {
			return "", fmt.Errorf("unexpected content %+v", res.Content[0])
		}
		return tc.Text, nil
	}
	r.textCalls(callText, last, spec.payload)
	r.read = func(ctx context.Context) error {
		res, err := cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: blobURI})
		if err != nil {
			return err
		}
		if len(res.Contents) != 1 {
			return fmt.Errorf("read: %d contents", len(res.Contents))
		}
		return checkLen("read", len(res.Contents[0].Blob), spec.payload)
	}
	r.list = func(ctx context.Context) (int, int, error) {
		var tools, pages int
		p := &gomcp.ListToolsParams{}
		for {
			res, err := cs.ListTools(ctx, p)
			if err != nil {
				return 0, 0, err
			}
			pages++
			tools += len(res.Tools)
			if res.NextCursor == "" {
				return tools, pages, nil
			}
			p = &gomcp.ListToolsParams{Cursor: res.NextCursor}
		}
	}
	return r, nil
}

func mcpgoRig(spec rigSpec) (*rig, error) {
	s := mgserver.NewMCPServer("scale", "1.0.0", mgserver.WithInputSchemaValidation(), mgserver.WithToolCapabilities(true), mgserver.WithResourceCapabilities(true, true))
	echo := mgmcp.NewTypedToolHandler(func(ctx context.Context, req mgmcp.CallToolRequest, a echoArgs) (*mgmcp.CallToolResult, error) {
		return mgmcp.NewToolResultText(a.Name), nil
	})
	for i := range max(spec.tools, 1) {
		s.AddTool(mgmcp.NewTool(toolName(i), mgmcp.WithDescription(toolDescription(i)), mgmcp.WithInputSchema[echoArgs]()), echo)
	}
	if spec.payload > 0 {
		text := payloadOf(spec.payload)
		blob := []byte(text)
		s.AddTool(mgmcp.NewTool("big", mgmcp.WithInputSchema[echoArgs]()), mgmcp.NewTypedToolHandler(func(ctx context.Context, req mgmcp.CallToolRequest, a echoArgs) (*mgmcp.CallToolResult, error) {
			return mgmcp.NewToolResultText(text), nil
		}))
		// mcp-go's blob is the base64 text: the handler encodes it on
		// each read, as the other SDKs' encoders do.
		s.AddResource(mgmcp.NewResource(blobURI, "payload", mgmcp.WithMIMEType("application/octet-stream")), func(ctx context.Context, req mgmcp.ReadResourceRequest) ([]mgmcp.ResourceContents, error) {
			return []mgmcp.ResourceContents{mgmcp.BlobResourceContents{URI: blobURI, MIMEType: "application/octet-stream", Blob: base64.StdEncoding.EncodeToString(blob)}}, nil
		})
	}
	r := &rig{}
	var c *mgclient.Client
	var ts *httptest.Server
	var err error
	if spec.http {
		ts = httptest.NewServer(mux(mgserver.NewStreamableHTTPServer(s, mgserver.WithStateLess(true), mgserver.WithStreamableHTTPLogger(quiet))))
		r.url = ts.URL + endpoint
		t, err := mgtransport.NewStreamableHTTP(r.url)
		if err != nil {
			ts.Close()
			return nil, err
		}
		c = mgclient.NewClient(t)
	} else if c, err = mgclient.NewInProcessClient(s); err != nil {
		return nil, err
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	req := mgmcp.InitializeRequest{}
	req.Params.ClientInfo = mgmcp.Implementation{Name: "scale-client", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, req); err != nil {
		return nil, err
	}
	r.close = func() {
		c.Close()
		if ts != nil {
			ts.Close()
		}
	}
	last := toolName(max(spec.tools, 1) - 1)
	callText := func(ctx context.Context, name string) (string, error) {
		req := mgmcp.CallToolRequest{}
		req.Params.Name = name
		req.Params.RawArguments = scaleArgs
		res, err := c.CallTool(ctx, req)
		if err != nil {
			return "", err
		}
		if res.IsError || len(res.Content) != 1 {
			return "", fmt.Errorf("unexpected result %+v", res)
		}
		tc, ok := res.Content[0].(mgmcp.TextContent)
		if !ok {
			return "", fmt.Errorf("unexpected content %#v", res.Content[0])
		}
		return tc.Text, nil
	}
	r.textCalls(callText, last, spec.payload)
	r.read = func(ctx context.Context) error {
		req := mgmcp.ReadResourceRequest{}
		req.Params.URI = blobURI
		res, err := c.ReadResource(ctx, req)
		if err != nil {
			return err
		}
		if len(res.Contents) != 1 {
			return fmt.Errorf("read: %d contents", len(res.Contents))
		}
		b, ok := res.Contents[0].(mgmcp.BlobResourceContents)
		if !ok {
			return fmt.Errorf("read: contents %T", res.Contents[0])
		}
		// The client holds the base64 text; decoding it is the caller's.
		return checkLen("read", base64.StdEncoding.DecodedLen(len(b.Blob))-padding(b.Blob), spec.payload)
	}
	r.list = func(ctx context.Context) (int, int, error) {
		var tools, pages int
		req := mgmcp.ListToolsRequest{}
		for {
			res, err := c.ListToolsByPage(ctx, req)
			if err != nil {
				return 0, 0, err
			}
			pages++
			tools += len(res.Tools)
			if res.NextCursor == "" {
				return tools, pages, nil
			}
			req.Params.Cursor = res.NextCursor
		}
	}
	return r, nil
}

// padding is the number of '=' at the end of a base64 text.
func padding(s string) int { return len(s) - len(strings.TrimRight(s, "=")) }

// mux serves h on endpoint, as the serve subcommand does.
func mux(h http.Handler) http.Handler {
	m := http.NewServeMux()
	m.Handle(endpoint, h)
	return m
}
