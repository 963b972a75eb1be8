package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

// The fixtures every behaviour test of this package shares: a server, a
// client session connected to it in memory, and small readers of results
// and errors.

var (
	serverInfo = mcp.Implementation{Name: "mcpserver-test", Version: "1.0.0"}
	clientInfo = mcp.Implementation{Name: "mcpserver-test-client", Version: "1.0.0"}
)

// newServer returns a server with opts and a logger that writes into the
// returned buffer, so that tests can read what the server logged.
func newServer(t *testing.T, opts *mcpserver.Options) (*mcpserver.Server, *logBuffer) {
	t.Helper()
	logs := new(logBuffer)
	var o mcpserver.Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	s, err := mcpserver.New(serverInfo, &o)
	if err != nil {
		t.Fatalf("mcpserver.New: %v", err)
	}
	return s, logs
}

// connect opens a client session to s over the in-memory transport; it is
// closed when the test ends.
func connect(t *testing.T, s *mcpserver.Server, opts *client.Options) *client.Session {
	t.Helper()
	var o client.Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = quietLogger()
	}
	sess, err := client.New(clientInfo, &o).Connect(context.Background(), s.InMemoryTransport())
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

// quietLogger discards what it is given.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(new(logBuffer), nil)) }

// mustOK fails the test at once on err.
func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// onlyText returns the text of a result that must hold exactly one text
// block.
func onlyText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res == nil {
		t.Fatal("no result")
	}
	if len(res.Content) != 1 {
		t.Fatalf("result has %d content blocks, want 1: %+v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content block is %T, want *mcp.TextContent", res.Content[0])
	}
	return tc.Text
}

// wantText checks a tool result: its one text block and its isError flag.
func wantText(t *testing.T, res *mcp.CallToolResult, isError bool, want string) {
	t.Helper()
	if got := onlyText(t, res); got != want {
		t.Errorf("text = %q\nwant   %q", got, want)
	}
	if res.IsError != isError {
		t.Errorf("isError = %v, want %v", res.IsError, isError)
	}
}

// wantRPCError checks that err is a JSON-RPC error with code and, unless
// message is "", exactly that message. It returns the error.
func wantRPCError(t *testing.T, err error, code int64, message string) *jsonrpc.Error {
	t.Helper()
	var e *jsonrpc.Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want a JSON-RPC error %d", err, err, code)
	}
	if e.Code != code {
		t.Errorf("code = %d, want %d (message %q)", e.Code, code, e.Message)
	}
	if message != "" && e.Message != message {
		t.Errorf("message = %q\nwant      %q", e.Message, message)
	}
	return e
}

// wantContains checks that s holds every one of subs.
func wantContains(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s = %q, want it to contain %q", what, s, sub)
		}
	}
}

// jsonEqual reports whether two JSON texts hold the same value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("not JSON: %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("not JSON: %s: %v", b, err)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

// wantJSON checks that got holds the same JSON value as want.
func wantJSON(t *testing.T, what string, got []byte, want string) {
	t.Helper()
	if !jsonEqual(t, got, []byte(want)) {
		t.Errorf("%s = %s\nwant %s", what, got, want)
	}
}

// accept is an elicitation answer accepting content.
func accept(content map[string]any) *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: content}
}

// responses encodes answers by key, as a client sends them.
func responses(t *testing.T, answers map[string]mcp.InputResponse) mcp.InputResponses {
	t.Helper()
	var r mcp.InputResponses
	for k, a := range answers {
		mustOK(t, r.Set(k, a))
	}
	return r
}

// formMessage returns the message of a form elicitation among a round's
// requests.
func formMessage(t *testing.T, reqs mcp.InputRequests, key string) string {
	t.Helper()
	r, ok := reqs[key].(*mcp.ElicitRequest)
	if !ok {
		t.Fatalf("input request %q is %T, want an elicitation (requests: %v)", key, reqs[key], reqs.Keys())
	}
	p, ok := r.Params.(*mcp.ElicitRequestFormParams)
	if !ok {
		t.Fatalf("input request %q has %T, want form params", key, r.Params)
	}
	return p.Message
}

// wantKeys checks the keys of a round's input requests.
func wantKeys(t *testing.T, reqs mcp.InputRequests, want ...string) {
	t.Helper()
	got := strings.Join(reqs.Keys(), ",")
	if w := strings.Join(want, ","); got != w {
		t.Fatalf("input request keys = [%s], want [%s]", got, w)
	}
}

// rawRequest serves one request straight through the low-level server,
// with the _meta every 2026-07-28 request carries (empty client
// capabilities). params is encoded as it is, then the _meta is added.
func rawRequest(t *testing.T, s *mcpserver.Server, method string, params map[string]any) (any, error) {
	t.Helper()
	p := map[string]any{}
	for k, v := range params {
		p[k] = v
	}
	p["_meta"] = map[string]any{
		mcp.MetaKeyProtocolVersion:    string(mcp.LatestVersion),
		mcp.MetaKeyClientCapabilities: map[string]any{},
	}
	raw, err := json.Marshal(p)
	mustOK(t, err)
	return s.LowLevel().Handle(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: method, Params: raw}, nil)
}

// logBuffer is an io.Writer safe for the server's concurrent logging.
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

// counter counts calls from any goroutine.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[key]++
}

func (c *counter) get(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

// manual declares every capability for sessions whose rounds a test
// drives by hand, without callbacks.
var manual = &client.Options{Capabilities: &mcp.ClientCapabilities{
	Elicitation: &mcp.ElicitationCapability{},
	Sampling:    &mcp.SamplingCapability{Tools: &struct{}{}},
	Roots:       &mcp.RootsCapability{},
}}

// elicitor is a client Elicit callback that answers by message and
// counts what it was asked.
type elicitor struct {
	mu     sync.Mutex
	asked  []string
	answer func(message string) *mcp.ElicitResult
}

func (e *elicitor) elicit(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
	form, ok := p.(*mcp.ElicitRequestFormParams)
	if !ok {
		return nil, fmt.Errorf("not a form: %T", p)
	}
	e.mu.Lock()
	e.asked = append(e.asked, form.Message)
	e.mu.Unlock()
	return e.answer(form.Message), nil
}

func (e *elicitor) times(message string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, m := range e.asked {
		if m == message {
			n++
		}
	}
	return n
}

func (e *elicitor) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.asked)
}

// roundLog records the keys of every round a client's loop fulfils.
type roundLog struct {
	mu     sync.Mutex
	rounds []string
}

func (l *roundLog) onRound(ctx context.Context, p *client.Pending) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rounds = append(l.rounds, strings.Join(p.InputRequests.Keys(), "+"))
	return nil
}

func (l *roundLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.rounds, " | ")
}

// begin sends the first round of call and returns what it asks.
func begin(t *testing.T, sess *client.Session, call *client.Call) *client.Pending {
	t.Helper()
	res, p, err := sess.Begin(context.Background(), call)
	mustOK(t, err)
	if p == nil {
		t.Fatalf("the first round completed: %+v", res)
	}
	return p
}

// finish continues p with answers and returns the tool result it must
// complete with.
func finish(t *testing.T, sess *client.Session, p *client.Pending, answers mcp.InputResponses) *mcp.CallToolResult {
	t.Helper()
	res, next, err := sess.Continue(context.Background(), p, answers)
	mustOK(t, err)
	if next != nil {
		t.Fatalf("the round asked again: %v", next.InputRequests.Keys())
	}
	r, ok := res.(*mcp.CallToolResult)
	if !ok {
		t.Fatalf("result is %T", res)
	}
	return r
}

// again continues p with answers and returns the next round it must ask.
func again(t *testing.T, sess *client.Session, p *client.Pending, answers mcp.InputResponses) *client.Pending {
	t.Helper()
	res, next, err := sess.Continue(context.Background(), p, answers)
	mustOK(t, err)
	if next == nil {
		t.Fatalf("the round completed: %+v", res)
	}
	return next
}

// sortedKeys returns the keys of responses in order.
func sortedKeys(r mcp.InputResponses) []string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
