package streamhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// routeSchema is the input schema of the fixture's "route" tool, whose
// arguments are mirrored into headers.
const routeSchema = `{"type":"object","properties":{
	"region":{"type":"string","x-mcp-header":"Region"},
	"priority":{"type":"integer","x-mcp-header":"Priority"},
	"verbose":{"type":"boolean","x-mcp-header":"Verbose"},
	"config":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},
	"query":{"type":"string"}
},"required":["region"]}`

// unicodeURI is a resource whose URI cannot go into a header as it is.
const unicodeURI = "file:///notes/grüße aus köln.txt"

// fixture is the server the tests talk to.
type fixture struct {
	s *server.Server

	slowStarted chan struct{} // a "slow" call started
	slowEnded   chan error    // and ended, with its context's error

	mu    sync.Mutex
	tools []mcp.Tool // what tools/list answers; tests may change it
}

func newFixture() *fixture {
	f := &fixture{
		s:           server.New(mcp.Implementation{Name: "fixture", Version: "0.1.0"}, nil),
		slowStarted: make(chan struct{}, 1),
		slowEnded:   make(chan error, 1),
	}
	f.tools = []mcp.Tool{
		{Name: "echo", Description: "Echo the text argument.", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		{Name: "work", Description: "Report progress and log while working.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "slow", Description: "Wait until cancelled.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "route", Description: "Arguments mirrored in headers.", InputSchema: json.RawMessage(routeSchema)},
		{Name: "needs_sampling", Description: "Requires the sampling capability.", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
	s := f.s
	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		f.mu.Lock()
		tools := f.tools
		f.mu.Unlock()
		page, next, err := server.Paginate(tools, p.Cursor, 3)
		if err != nil {
			return nil, err
		}
		return &mcp.ListToolsResult{Tools: page, NextCursor: next}, nil
	})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		switch p.Name {
		case "echo":
			var args struct {
				Text string `json:"text"`
			}
			if err := p.DecodeArguments(&args); err != nil {
				return nil, wire.InvalidParams("Invalid params: %v", err)
			}
			return mcp.TextResult(args.Text), nil
		case "work":
			for i := 1; i <= 2; i++ {
				if err := req.Progress(ctx, float64(i), 2, fmt.Sprintf("step %d", i)); err != nil {
					return nil, err
				}
			}
			if err := req.Log(ctx, mcp.LevelInfo, "work", "halfway"); err != nil {
				return nil, err
			}
			return mcp.TextResult("done"), nil
		case "slow":
			f.slowStarted <- struct{}{}
			<-ctx.Done()
			f.slowEnded <- ctx.Err()
			return nil, ctx.Err()
		case "route":
			var args struct {
				Region string `json:"region"`
			}
			if err := p.DecodeArguments(&args); err != nil {
				return nil, wire.InvalidParams("Invalid params: %v", err)
			}
			return mcp.TextResult("routed to " + args.Region), nil
		case "fail_late":
			if err := req.Progress(ctx, 1, 2, "started"); err != nil {
				return nil, err
			}
			return nil, mcp.NewMissingRequiredClientCapabilityError(&mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}})
		case "needs_sampling":
			if req.ClientCapabilities().Sampling == nil {
				return nil, mcp.NewMissingRequiredClientCapabilityError(&mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}})
			}
			return mcp.TextResult("sampled"), nil
		}
		return nil, wire.InvalidParams("Unknown tool: %s", p.Name)
	})
	s.HandleListPrompts(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListPromptsResult, error) {
		return &mcp.ListPromptsResult{Prompts: []mcp.Prompt{{Name: "greeting", Arguments: []mcp.PromptArgument{{Name: "name", Required: true}}}}}, nil
	})
	s.HandleGetPrompt(func(ctx context.Context, req *server.Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
		if p.Name != "greeting" {
			return nil, wire.InvalidParams("Unknown prompt: %s", p.Name)
		}
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "Say hello to " + p.Arguments["name"]}}}}, nil
	})
	s.HandleListResources(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListResourcesResult, error) {
		return &mcp.ListResourcesResult{Resources: []mcp.Resource{
			{URI: "file:///readme.txt", Name: "readme", MIMEType: "text/plain"},
			{URI: unicodeURI, Name: "greetings", MIMEType: "text/plain"},
		}}, nil
	})
	s.HandleListResourceTemplates(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListResourceTemplatesResult, error) {
		return &mcp.ListResourceTemplatesResult{ResourceTemplates: []mcp.ResourceTemplate{{URITemplate: "file:///notes/{name}", Name: "note"}}}, nil
	})
	s.HandleReadResource(func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		switch p.URI {
		case "file:///readme.txt", unicodeURI:
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: p.URI, MIMEType: "text/plain", Text: "hello"}}}, nil
		}
		return nil, server.ResourceNotFound(p.URI)
	})
	s.HandleComplete(func(ctx context.Context, req *server.Request, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
		return &mcp.CompleteResult{Completion: mcp.Completion{Values: []string{"Alice", "Bob"}, Total: 2}}, nil
	})
	return f
}

func (f *fixture) setTools(tools []mcp.Tool) {
	f.mu.Lock()
	f.tools = tools
	f.mu.Unlock()
}

// exchange is one POST the test server answered.
type exchange struct {
	method  string // of the JSON-RPC message posted
	header  http.Header
	status  int
	rheader http.Header
	body    []byte // the response body
}

// recorder wraps a handler, keeping every exchange; at the end of the test
// it validates every message the handler sent against the official schema.
type recorder struct {
	next   http.Handler
	active atomic.Int32 // requests being served

	mu        sync.Mutex
	exchanges []exchange
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.active.Add(1)
	defer rec.active.Add(-1)
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var peek struct {
		Method string `json:"method"`
	}
	json.Unmarshal(body, &peek)
	tw := &teeWriter{ResponseWriter: w, status: http.StatusOK}
	rec.next.ServeHTTP(tw, r)
	rec.mu.Lock()
	rec.exchanges = append(rec.exchanges, exchange{
		method:  peek.Method,
		header:  r.Header.Clone(),
		status:  tw.status,
		rheader: w.Header().Clone(),
		body:    tw.buf.Bytes(),
	})
	rec.mu.Unlock()
}

// posts returns the exchanges of the POSTs of one JSON-RPC method, once
// the handler has finished serving every request. (A client may have its
// answer before the handler has returned.)
func (rec *recorder) posts(t *testing.T, method string) []exchange {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for rec.active.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the handler is still serving requests")
		}
		time.Sleep(time.Millisecond)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []exchange
	for _, e := range rec.exchanges {
		if e.method == method {
			out = append(out, e)
		}
	}
	return out
}

// validate checks every message the handler sent against the schema.
func (rec *recorder) validate(t *testing.T) {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, e := range rec.exchanges {
		for _, msg := range messagesOf(t, e.rheader, e.body) {
			spectest.ValidateMessage(t, mcp.LatestVersion, msg, e.method)
		}
		if e.rheader.Get("Mcp-Session-Id") != "" {
			t.Errorf("%s: the handler sent an Mcp-Session-Id", e.method)
		}
	}
}

// messagesOf splits a response body into the JSON-RPC messages it holds.
func messagesOf(t *testing.T, h http.Header, body []byte) [][]byte {
	t.Helper()
	if len(body) == 0 {
		return nil
	}
	if strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		var out [][]byte
		sr := newSSEReader(bytes.NewReader(body), 1<<20)
		for {
			data, err := sr.next()
			if err == io.EOF {
				return out
			}
			if err != nil {
				t.Fatalf("reading the event stream %q: %v", body, err)
			}
			out = append(out, data)
		}
	}
	return [][]byte{body}
}

type teeWriter struct {
	http.ResponseWriter
	mu     sync.Mutex
	buf    bytes.Buffer
	status int
}

func (w *teeWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

func (w *teeWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(b)
	w.mu.Unlock()
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the real writer's Flush.
func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// serve starts an HTTP server for h on a loopback address. Every message it
// sends is validated against the schema when the test ends.
func serve(t *testing.T, h http.Handler) (string, *recorder) {
	t.Helper()
	rec := &recorder{next: h}
	ts := httptest.NewServer(rec)
	t.Cleanup(func() {
		if t.Failed() {
			// A test that failed may have left a request its regression
			// never ended; Close would wait for it for ever, and the
			// failure would surface only as go test's timeout.
			ts.CloseClientConnections()
		}
		ts.Close()
		rec.validate(t)
	})
	return ts.URL, rec
}

// connect opens a client session to url over the Streamable HTTP transport.
func connect(t *testing.T, url string, opts *client.Options, topts *ClientOptions) *client.Session {
	t.Helper()
	c := client.New(mcp.Implementation{Name: "test-client", Version: "1.0.0"}, opts)
	sess, err := c.Connect(context.Background(), NewClientTransport(url, topts))
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

// The _meta of the raw requests the tests build.
const testMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}`

// rawRequest builds a request whose params are the members in params (a
// JSON object's inside, possibly empty) plus testMeta.
func rawRequest(id int, method, params string) string {
	if params != "" {
		params += ","
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s%s}}`, id, method, params, testMeta)
}

// stdHeaders returns the headers a conforming client sends for method,
// with Mcp-Name set when name is not empty.
func stdHeaders(method, name string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set(HeaderProtocolVersion, "2026-07-28")
	h.Set(HeaderMethod, method)
	if name != "" {
		h.Set(HeaderName, name)
	}
	return h
}

// post sends body to url with the headers h and returns the response and
// its body, failing the test when the whole exchange takes longer than
// testwait.FailAfter (a server that never answers is a failure with a
// message, not go test's timeout).
func post(t *testing.T, url string, h http.Header, body string) (*http.Response, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testwait.FailAfter)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", body, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: reading the answer: %v", body, err)
	}
	return resp, b
}

// rpcError decodes the JSON-RPC error response in body.
func rpcError(t *testing.T, body []byte) (jsonrpc.ID, *jsonrpc.Error) {
	t.Helper()
	m, _, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		t.Fatalf("response %q is not JSON-RPC: %v", body, err)
	}
	r, ok := m.(*jsonrpc.Response)
	if !ok || r.Error == nil {
		t.Fatalf("response %q is not an error response", body)
	}
	return r.ID, r.Error
}
