package requeststate_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// The boundary tests drive a real low-level server over an in-memory pipe
// with hand-written JSON-RPC, so they see the exact bytes a client would.

// clock is an injectable clock that moves only when told to.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// logBuffer collects log output safely across goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lines returns the log records at level.
func (b *logBuffer) lines(level string) []map[string]any {
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["level"] == level {
			out = append(out, m)
		}
	}
	return out
}

func newLogger() (*slog.Logger, *logBuffer) {
	b := new(logBuffer)
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

// key returns a deterministic test key; distinct seeds give distinct keys.
// It is a hash, so that it has the spread of byte values NewAESGCM asks of
// a random key.
func key(seed byte) []byte {
	k := sha256.Sum256([]byte{'k', 'e', 'y', seed})
	return k[:]
}

// The question every fixture flow asks.
var confirmQ = mcp.NewElicitFormRequest("Please confirm", mcp.ElicitRequestedSchema{
	Properties: map[string]mcp.PrimitiveSchemaDefinition{"ok": &mcp.BooleanSchema{}},
	Required:   []string{"ok"},
})

// fixture is a server whose carriers all run one two-round flow: the first
// round asks "confirm" and sets the plaintext state "issued-by:<target>";
// the retry completes with a text that reports the plaintext state it
// received, the answer keys that reached it and whether Asked vouches for
// the answer. The tool "plain" never issues state.
type fixture struct {
	t     *testing.T
	s     *server.Server
	runs  atomic.Int64 // handler invocations
	conn  transport.Conn
	wire  sync.Mutex // one request at a time: responses are matched by order
	mu    sync.Mutex
	state string // the plaintext state handlers return on round one
}

func (f *fixture) round(ctx context.Context, target, state string, responses mcp.InputResponses) (*mcp.InputRequiredResult, string) {
	f.runs.Add(1)
	if state == "" {
		f.mu.Lock()
		st := f.state
		f.mu.Unlock()
		if st == "" {
			st = "issued-by:" + target
		}
		return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"confirm": confirmQ}, RequestState: st}, ""
	}
	keys := make([]string, 0, len(responses))
	for k := range responses {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return nil, fmt.Sprintf("state=%s answers=%v asked=%v", state, keys, requeststate.Asked(ctx, "confirm", confirmQ))
}

// newFixture returns a fixture server named name. protect attaches the
// boundary with p; without it the server has no boundary at all.
func newFixture(t *testing.T, name string, protect bool, p *requeststate.Policy) *fixture {
	t.Helper()
	f := &fixture{t: t}
	f.s = server.New(mcp.Implementation{Name: name, Version: "1.0.0"}, &server.Options{Logger: slog.New(slog.DiscardHandler)})
	if protect && p == nil {
		p = requeststate.ProcessLocal()
	}
	if p != nil && p.Logger == nil {
		p.Logger = discard()
	}
	if protect {
		if err := requeststate.Protect(f.s, p); err != nil {
			t.Fatal(err)
		}
	}
	f.s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if p.Name == "plain" {
			f.runs.Add(1)
			return mcp.TextResult("plain state=" + p.RequestState), nil
		}
		if ir, text := f.round(ctx, p.Name, p.RequestState, p.InputResponses); ir != nil {
			return ir, nil
		} else {
			return mcp.TextResult(text), nil
		}
	})
	f.s.HandleGetPrompt(func(ctx context.Context, req *server.Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
		if ir, text := f.round(ctx, p.Name, p.RequestState, p.InputResponses); ir != nil {
			return ir, nil
		} else {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(text)}}}, nil
		}
	})
	f.s.HandleReadResource(func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		if ir, text := f.round(ctx, p.URI, p.RequestState, p.InputResponses); ir != nil {
			return ir, nil
		} else {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: p.URI, Text: text}}}, nil
		}
	})
	f.s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		return &mcp.ListToolsResult{}, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	a, b := transport.NewMemoryPipe()
	done := make(chan struct{})
	go func() { f.s.ServeConn(ctx, b); close(done) }()
	f.conn = a
	t.Cleanup(func() { a.Close(); cancel(); <-done })
	return f
}

// call is one request: method, params (without _meta) and the client name
// that goes into _meta's clientInfo ("" for none).
type call struct {
	method string
	params map[string]any
	client string
}

func tool(name string, args any) call {
	return call{method: mcp.MethodCallTool, params: map[string]any{"name": name, "arguments": args}}
}

func prompt(name string, args map[string]string) call {
	return call{method: mcp.MethodGetPrompt, params: map[string]any{"name": name, "arguments": args}}
}

func resource(uri string) call {
	return call{method: mcp.MethodReadResource, params: map[string]any{"uri": uri}}
}

// with returns c carrying state and an answer under each key.
func (c call) with(state string, keys ...string) call {
	p := make(map[string]any, len(c.params)+2)
	for k, v := range c.params {
		p[k] = v
	}
	if state != "" {
		p["requestState"] = state
	}
	if len(keys) > 0 {
		rs := map[string]any{}
		for _, k := range keys {
			rs[k] = map[string]any{"action": "accept", "content": map[string]any{"ok": true}}
		}
		p["inputResponses"] = rs
	}
	c.params = p
	return c
}

func (c call) as(client string) call { c.client = client; return c }

// raw sends c with JSON-RPC id 7 and returns the response exactly as the
// server wrote it.
func (f *fixture) raw(c call) string {
	f.t.Helper()
	meta := map[string]any{
		mcp.MetaKeyProtocolVersion:    mcp.LatestVersion,
		mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}},
	}
	if c.client != "" {
		meta[mcp.MetaKeyClientInfo] = map[string]any{"name": c.client, "version": "1"}
	}
	params := map[string]any{"_meta": meta}
	for k, v := range c.params {
		params[k] = v
	}
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": c.method, "params": params})
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f.wire.Lock()
	defer f.wire.Unlock()
	if err := f.conn.Write(ctx, msg); err != nil {
		f.t.Fatal(err)
	}
	resp, err := f.conn.Read(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return string(resp)
}

// response is a decoded response.
type response struct {
	Result map[string]any `json:"result"`
	Error  *jsonrpc.Error `json:"error"`
}

func (f *fixture) do(c call) response {
	f.t.Helper()
	var r response
	if err := json.Unmarshal([]byte(f.raw(c)), &r); err != nil {
		f.t.Fatal(err)
	}
	return r
}

// begin runs round one of c and returns the sealed state.
func (f *fixture) begin(c call) string {
	f.t.Helper()
	r := f.do(c)
	if r.Error != nil || r.Result["resultType"] != "input_required" {
		f.t.Fatalf("round one of %v: %+v", c, r)
	}
	st, _ := r.Result["requestState"].(string)
	if st == "" {
		f.t.Fatalf("round one of %v carries no state: %+v", c, r)
	}
	return st
}

// text returns the text a complete result carries, or "" and the error.
func (r response) text() string {
	if r.Error != nil {
		return ""
	}
	for _, field := range []string{"content", "messages", "contents"} {
		list, _ := r.Result[field].([]any)
		if len(list) == 0 {
			continue
		}
		m := list[0].(map[string]any)
		if c, ok := m["content"].(map[string]any); ok {
			m = c
		}
		s, _ := m["text"].(string)
		return s
	}
	return ""
}

// wantRejected is the exact response to every refused state, id 7.
const wantRejected = `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid or expired requestState"}}`

type authInfo = auth.Info

func withAuth(info *auth.Info) context.Context { return auth.WithInfo(context.Background(), info) }

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func jsonRaw(s string) json.RawMessage { return json.RawMessage(s) }

// rpcRequest builds a request with a valid _meta added to params (an
// object without _meta).
func rpcRequest(method, params string) *jsonrpc.Request {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + string(mcp.LatestVersion) + `","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	if params == "{}" {
		params = "{" + meta + "}"
	} else {
		params = "{" + meta + "," + params[1:]
	}
	return &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: method, Params: json.RawMessage(params)}
}

// handleState calls tool "t" on s (with state st, if any) and returns the
// requestState of its input_required result.
func handleState(t *testing.T, s *server.Server, ctx context.Context, st string) string {
	t.Helper()
	res, err := s.Handle(ctx, rpcRequest(mcp.MethodCallTool, toolParams(st)), nil)
	if err != nil {
		t.Fatal(err)
	}
	ir, ok := res.(*mcp.InputRequiredResult)
	if !ok {
		t.Fatalf("result %T, want input_required", res)
	}
	return ir.RequestState
}

// handleErr calls tool "t" on s with state st and returns only the error.
func handleErr(s *server.Server, ctx context.Context, st string) error {
	_, err := s.Handle(ctx, rpcRequest(mcp.MethodCallTool, toolParams(st)), nil)
	return err
}

func toolParams(st string) string {
	if st == "" {
		return `{"name":"t"}`
	}
	b, _ := json.Marshal(st)
	return `{"name":"t","requestState":` + string(b) + `}`
}
