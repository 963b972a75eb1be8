package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// futureVersion is a modern protocol version newer than any Parley knows.
// Tests make a client speak it (client.SetVersionsForTest) to play a client
// that is ahead of its server.
const futureVersion mcp.ProtocolVersion = "2099-01-01"

var testClientInfo = mcp.Implementation{Name: "test-client", Title: "Test Client", Version: "1.2.3"}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// newClient returns a client that logs nothing, with opts (nil for
// defaults).
func newClient(opts *client.Options) *client.Client {
	var o client.Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = quiet()
	}
	return client.New(testClientInfo, &o)
}

// newServer returns a server that logs nothing.
func newServer(opts *server.Options) *server.Server {
	var o server.Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = quiet()
	}
	return server.New(mcp.Implementation{Name: "test-server", Version: "9.8.7"}, &o)
}

// wireMsg is one JSON-RPC message as it crossed the wire.
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`

	Raw []byte `json:"-"`
}

func decodeWire(t testing.TB, raw []byte) wireMsg {
	t.Helper()
	var m wireMsg
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not a JSON-RPC message: %s: %v", raw, err)
	}
	m.Raw = raw
	return m
}

func (m wireMsg) isRequest() bool { return m.Method != "" && m.ID != nil }

// meta returns the members of params._meta, raw.
func (m wireMsg) meta(t testing.TB) map[string]json.RawMessage {
	t.Helper()
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatalf("params of %s: %v", m.Raw, err)
	}
	return p.Meta
}

// param decodes one member of the params into v.
func (m wireMsg) param(t testing.TB, key string, v any) {
	t.Helper()
	var p map[string]json.RawMessage
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatalf("params of %s: %v", m.Raw, err)
	}
	raw, ok := p[key]
	if !ok {
		t.Fatalf("params of %s have no %q", m.Raw, key)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("params %q of %s: %v", key, m.Raw, err)
	}
}

// tap is the client's end of a pipe. It checks every message the client
// writes against the official schema and records the messages both ways.
type tap struct {
	transport.Conn
	t testing.TB

	mu       sync.Mutex
	sent     [][]byte
	targets  []string // the target each sent message was written with (transport.WithTarget)
	received [][]byte
}

func (w *tap) Write(ctx context.Context, msg []byte) error {
	spectest.ValidateMessage(w.t, mcp.LatestVersion, msg, "")
	target, _ := transport.TargetFrom(ctx)
	w.mu.Lock()
	w.sent = append(w.sent, bytes.Clone(msg))
	w.targets = append(w.targets, target)
	w.mu.Unlock()
	return w.Conn.Write(ctx, msg)
}

func (w *tap) Read(ctx context.Context) ([]byte, error) {
	msg, err := w.Conn.Read(ctx)
	if err == nil {
		w.mu.Lock()
		w.received = append(w.received, bytes.Clone(msg))
		w.mu.Unlock()
	}
	return msg, err
}

// Sent returns what the client wrote so far.
func (w *tap) Sent() []wireMsg { return w.decode(&w.sent) }

// Received returns what the client read so far.
func (w *tap) Received() []wireMsg { return w.decode(&w.received) }

func (w *tap) decode(list *[][]byte) []wireMsg {
	w.t.Helper()
	w.mu.Lock()
	raws := append([][]byte(nil), *list...)
	w.mu.Unlock()
	out := make([]wireMsg, len(raws))
	for i, raw := range raws {
		out[i] = decodeWire(w.t, raw)
	}
	return out
}

// Targets returns the targets the requests of method were written with, in
// order: what Streamable HTTP sends as Mcp-Name ("" for none).
func (w *tap) Targets(method string) []string {
	w.mu.Lock()
	sent, targets := append([][]byte(nil), w.sent...), append([]string(nil), w.targets...)
	w.mu.Unlock()
	var out []string
	for i, raw := range sent {
		if m := decodeWire(w.t, raw); m.isRequest() && m.Method == method {
			out = append(out, targets[i])
		}
	}
	return out
}

// Requests returns the requests the client sent, optionally only those of
// one method.
func (w *tap) Requests(method string) []wireMsg {
	var out []wireMsg
	for _, m := range w.Sent() {
		if m.isRequest() && (method == "" || m.Method == method) {
			out = append(out, m)
		}
	}
	return out
}

// connect serves s over an in-memory pipe and connects c to it. Everything
// is torn down when the test ends: the session first, then the server.
func connect(t testing.TB, c *client.Client, s *server.Server) (*client.Session, *tap) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	clientEnd, serverEnd := transport.NewMemoryPipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.ServeConn(ctx, serverEnd)
	}()
	t.Cleanup(func() { cancel(); <-done })
	w := &tap{Conn: clientEnd, t: t}
	sess, err := c.Connect(ctx, transport.NewMemoryTransport(w))
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess, w
}

// fake is a server played by hand: the test reads what the client sends
// and writes raw JSON back, so it controls every byte the client sees.
// Every message the client sends is checked against the schema.
type fake struct {
	t    testing.TB
	conn transport.Conn
}

// newFake returns a fake server and the transport a client connects to it
// with.
func newFake(t testing.TB) (*fake, transport.Transport) {
	clientEnd, serverEnd := transport.NewMemoryPipe()
	t.Cleanup(func() { serverEnd.Close() })
	return &fake{t: t, conn: serverEnd}, transport.NewMemoryTransport(clientEnd)
}

// next returns the next message the client sent. Tests with a fake run in
// a synctest bubble, where a message that never comes is a deadlock.
func (f *fake) next() wireMsg {
	f.t.Helper()
	raw, err := f.conn.Read(context.Background())
	if err != nil {
		f.t.Fatalf("fake: waiting for a message from the client: %v", err)
	}
	spectest.ValidateMessage(f.t, mcp.LatestVersion, raw, "")
	return decodeWire(f.t, raw)
}

// expect returns the next message, which must be a request of method.
func (f *fake) expect(method string) wireMsg {
	f.t.Helper()
	m := f.next()
	if m.Method != method || !m.isRequest() {
		f.t.Fatalf("fake: client sent %s, want a %s request", m.Raw, method)
	}
	return m
}

// expectClosed checks that the client sends nothing more and closes the
// connection.
func (f *fake) expectClosed() {
	f.t.Helper()
	raw, err := f.conn.Read(context.Background())
	if err == nil {
		f.t.Fatalf("fake: client sent %s, want nothing more", raw)
	}
	if !errors.Is(err, io.EOF) {
		f.t.Fatalf("fake: read: %v, want io.EOF", err)
	}
}

// send writes one raw message.
func (f *fake) send(format string, args ...any) {
	f.t.Helper()
	msg := fmt.Sprintf(format, args...)
	if !json.Valid([]byte(msg)) {
		f.t.Fatalf("fake: invalid JSON %s", msg)
	}
	if err := f.conn.Write(context.Background(), []byte(msg)); err != nil {
		f.t.Fatalf("fake: write: %v", err)
	}
}

func (f *fake) reply(id json.RawMessage, result string) {
	f.t.Helper()
	f.send(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

func (f *fake) fail(id json.RawMessage, code int64, message, data string) {
	f.t.Helper()
	if data == "" {
		f.send(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, code, message)
		return
	}
	f.send(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q,"data":%s}}`, id, code, message, data)
}

// unsupported answers id with -32022.
func (f *fake) unsupported(id json.RawMessage, requested mcp.ProtocolVersion, supported ...mcp.ProtocolVersion) {
	f.t.Helper()
	data, _ := json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: supported, Requested: requested})
	f.fail(id, mcp.CodeUnsupportedProtocolVersion, "Unsupported protocol version", string(data))
}

const fakeDiscoverResult = `{"resultType":"complete","supportedVersions":["2026-07-28"],` +
	`"capabilities":{"tools":{"listChanged":true},"prompts":{},"resources":{"subscribe":true}},` +
	`"instructions":"be kind","ttlMs":0,"cacheScope":"private",` +
	`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fake","version":"0.0.1"}}}`

type connected struct {
	sess *client.Session
	err  error
}

// connectAsync runs Connect in the background, for the test to play the
// server meanwhile.
func connectAsync(c *client.Client, tr transport.Transport) <-chan connected {
	ch := make(chan connected, 1)
	go func() {
		sess, err := c.Connect(context.Background(), tr)
		ch <- connected{sess, err}
	}()
	return ch
}

// dialFake connects c to a fake server that answers server/discover
// normally.
func dialFake(t testing.TB, c *client.Client) (*client.Session, *fake) {
	t.Helper()
	f, tr := newFake(t)
	res := connectAsync(c, tr)
	m := f.expect(mcp.MethodDiscover)
	f.reply(m.ID, fakeDiscoverResult)
	r := <-res
	if r.err != nil {
		t.Fatalf("Connect: %v", r.err)
	}
	t.Cleanup(func() { r.sess.Close() })
	return r.sess, f
}

// async runs f in the background and returns its error on a channel.
func async(f func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}

// tool returns a tool with an object input schema.
func tool(name string) mcp.Tool {
	return mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}
}
