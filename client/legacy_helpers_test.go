package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// Fixtures of the legacy-session tests (legacy_test.go).

// legacySchema is the schema legacy messages are checked against: the
// newest legacy version, the one the client offers by default.
const legacySchema = mcp.Version20251125

// legacyOnly makes a server that serves 2025-11-25 only: it refuses
// server/discover with -32022 and answers initialize.
func legacyOnly() *server.Options {
	return &server.Options{SupportedVersions: []mcp.ProtocolVersion{mcp.Version20251125}}
}

// legacyWire is tap for sessions that may be legacy: it checks every
// message both ways against the schema of the generation the connection
// speaks, holding each to the members that schema names
// (spectest.ValidateMessageStrict). Up to the client's initialize that is
// 2026-07-28 (a server/discover probe and its answer); from initialize on
// it is 2025-11-25, so that nothing of 2026-07-28 crosses a legacy session
// either way: the client's requests, its answers to the server's requests
// (checked by the method of the request each answers), and what the server
// sends. It records the messages both ways like tap.
type legacyWire struct {
	*tap

	mu     sync.Mutex
	legacy bool              // the client has written initialize
	asked  map[string]string // raw id of each request the server sent → its method
	calls  map[string]string // raw id of each request the client sent → its method
}

func newLegacyWire(t testing.TB, conn transport.Conn) *legacyWire {
	return &legacyWire{tap: &tap{Conn: conn, t: t}, asked: make(map[string]string), calls: make(map[string]string)}
}

// schema returns the version the connection's messages are checked
// against, once msg has gone by.
func (w *legacyWire) schema(m wireMsg, sent bool) mcp.ProtocolVersion {
	w.mu.Lock()
	defer w.mu.Unlock()
	if sent && m.Method == mcp.MethodInitialize {
		w.legacy = true
	}
	if w.legacy {
		return legacySchema
	}
	return mcp.LatestVersion
}

func (w *legacyWire) Write(ctx context.Context, msg []byte) error {
	m := decodeWire(w.t, msg)
	method := ""
	w.mu.Lock()
	if m.isRequest() {
		w.calls[string(m.ID)] = m.Method
	} else if m.Method == "" {
		method = w.asked[string(m.ID)]
	}
	w.mu.Unlock()
	spectest.ValidateMessageStrict(w.t, w.schema(m, true), msg, method)
	w.tap.mu.Lock()
	w.tap.sent = append(w.tap.sent, bytes.Clone(msg))
	w.tap.mu.Unlock()
	return w.tap.Conn.Write(ctx, msg)
}

func (w *legacyWire) Read(ctx context.Context) ([]byte, error) {
	msg, err := w.tap.Read(ctx)
	if err != nil {
		return msg, err
	}
	m := decodeWire(w.t, msg)
	method := ""
	w.mu.Lock()
	if m.isRequest() {
		w.asked[string(m.ID)] = m.Method
	} else if m.Method == "" {
		method = w.calls[string(m.ID)]
	}
	w.mu.Unlock()
	spectest.ValidateMessageStrict(w.t, w.schema(m, false), msg, method)
	return msg, nil
}

// legacyWireTransport connects through t and checks each connection's
// messages with a legacyWire of its own.
type legacyWireTransport struct {
	t  testing.TB
	tr transport.Transport
}

func (w legacyWireTransport) Connect(ctx context.Context) (transport.Conn, error) {
	conn, err := w.tr.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return newLegacyWire(w.t, conn), nil
}

// Answers returns the client's responses to the server's requests.
func (w *legacyWire) Answers() []wireMsg {
	var out []wireMsg
	for _, m := range w.Sent() {
		if m.Method == "" {
			out = append(out, m)
		}
	}
	return out
}

// serve serves s on one end of a fresh pipe until the test ends, and
// returns the other end and a channel that receives ServeConn's result.
func serve(t testing.TB, s *server.Server) (transport.Conn, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	clientEnd, serverEnd := transport.NewMemoryPipe()
	done := make(chan error, 1)
	go func() { done <- s.ServeConn(ctx, serverEnd) }()
	t.Cleanup(cancel)
	return clientEnd, done
}

// dialLegacy connects c to s over a legacyWire. It fails the test if
// Connect fails; the session is closed when the test ends.
func dialLegacy(t testing.TB, c *client.Client, s *server.Server) (*client.Session, *legacyWire) {
	t.Helper()
	conn, _ := serve(t, s)
	w := newLegacyWire(t, conn)
	sess, err := c.Connect(context.Background(), transport.NewMemoryTransport(w))
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess, w
}

// redialTransport connects afresh on every Connect, as a stdio transport
// that spawns its server process does, and counts the connections.
type redialTransport struct {
	dial func(n int) transport.Conn // n counts from 1
	n    atomic.Int32
}

func (r *redialTransport) Connect(ctx context.Context) (transport.Conn, error) {
	return r.dial(int(r.n.Add(1))), nil
}

// legacyProcess plays, in front of a real server, a legacy stdio server
// process that exits when its first request is not initialize: it closes
// the connection, after answering -32601 when answerFirst is set.
type legacyProcess struct {
	transport.Conn
	answerFirst bool
	seen        atomic.Bool
}

func (p *legacyProcess) Read(ctx context.Context) ([]byte, error) {
	msg, err := p.Conn.Read(ctx)
	if err != nil || p.seen.Swap(true) {
		return msg, err
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &m) == nil && m.Method == mcp.MethodInitialize {
		return msg, nil
	}
	if p.answerFirst {
		p.Conn.Write(ctx, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, m.ID))
	}
	p.Conn.Close()
	return nil, io.EOF
}

// legacyInit is what a fake legacy server answers initialize with.
const legacyInit = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"logging":{}},` +
	`"serverInfo":{"name":"legacy-fake","version":"0.1"},"instructions":"old school"}`

// lnext returns the next message the client sent to a fake legacy server,
// checked against the 2025-11-25 schema; answers is the method of the
// server request it answers, when it is a response.
func (f *fake) lnext(answers string) wireMsg {
	f.t.Helper()
	raw, err := f.conn.Read(context.Background())
	if err != nil {
		f.t.Fatalf("fake: waiting for a message from the client: %v", err)
	}
	spectest.ValidateMessage(f.t, legacySchema, raw, answers)
	return decodeWire(f.t, raw)
}

// lexpect returns the next message, which must be a request (or, with
// notification set, a notification) of method.
func (f *fake) lexpect(method string) wireMsg {
	f.t.Helper()
	m := f.lnext("")
	if m.Method != method {
		f.t.Fatalf("fake: client sent %s, want %s", m.Raw, method)
	}
	return m
}

// handshake plays a legacy server's side of initialize with result.
func (f *fake) handshake(result string) wireMsg {
	f.t.Helper()
	init := f.lexpect(mcp.MethodInitialize)
	f.reply(init.ID, result)
	if m := f.lexpect(mcp.NotificationInitialized); m.isRequest() {
		f.t.Fatalf("fake: %s is a request", m.Raw)
	}
	return init
}

// dialLegacyFake connects c (which must speak the legacy generation) to a
// fake legacy server, which answers initialize with legacyInit.
func dialLegacyFake(t testing.TB, c *client.Client) (*client.Session, *fake) {
	t.Helper()
	f, tr := newFake(t)
	res := connectAsync(c, tr)
	f.handshake(legacyInit)
	r := <-res
	if r.err != nil {
		t.Fatalf("Connect: %v", r.err)
	}
	t.Cleanup(func() { r.sess.Close() })
	return r.sess, f
}

// pinned returns opts with the protocol version pinned to 2025-11-25.
func pinned(opts client.Options) *client.Options {
	opts.ProtocolVersion = mcp.Version20251125
	return &opts
}

// askingServer is a low-level server whose tools each ask the client one
// question, the way each generation asks: with req.Ask on a legacy session
// (a server-to-client request), with an InputRequiredResult under
// 2026-07-28. "elicit" asks for a region with a form, "url" has the user
// open a URL, "sample" asks the client's model, "roots" asks for the
// roots; each answers with what it got. A failed Ask ends the call with a
// tool error naming the client's error code.
func askingServer(opts *server.Options) *server.Server {
	s := newServer(opts)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		var q mcp.InputRequest
		switch p.Name {
		case "elicit":
			q = regionForm("Which region?")
		case "url":
			q = mcp.NewElicitURLRequest("Sign in", "https://example.com/login")
		case "sample":
			q = mcp.NewCreateMessageRequest(mcp.CreateMessageRequestParams{
				Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.SamplingContent{mcp.NewTextContent("Name a region.")}}},
				MaxTokens: 10,
			})
		case "roots":
			q = &mcp.ListRootsRequest{}
		default:
			return nil, wire.InvalidParams("Unknown tool: %s", p.Name)
		}
		var answer json.RawMessage
		if req.HasBackChannel() {
			raw, err := req.Ask(ctx, q)
			if err != nil {
				var rpcErr *jsonrpc.Error
				if errors.As(err, &rpcErr) {
					return mcp.ErrorResult(fmt.Sprintf("ask failed: %d %s", rpcErr.Code, rpcErr.Message)), nil
				}
				return mcp.ErrorResult("ask failed: " + err.Error()), nil
			}
			answer = raw
		} else {
			if !p.InputResponses.Has("q") {
				return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"q": q}, RequestState: "asked"}, nil
			}
			answer = p.InputResponses["q"]
		}
		in := mcp.InputResponses{"q": answer}
		switch p.Name {
		case "sample":
			r, err := in.Sample("q")
			if err != nil || len(r.Content) != 1 {
				return mcp.ErrorResult(fmt.Sprintf("bad sampling answer: %v", err)), nil
			}
			tc, _ := r.Content[0].(*mcp.TextContent)
			if tc == nil {
				return mcp.ErrorResult("the sampling answer is not text"), nil
			}
			return mcp.TextResult("sampled " + tc.Text), nil
		case "roots":
			r, err := in.Roots("q")
			if err != nil {
				return mcp.ErrorResult(fmt.Sprintf("bad roots answer: %v", err)), nil
			}
			var uris []string
			for _, root := range r.Roots {
				uris = append(uris, root.URI)
			}
			return mcp.TextResult("roots " + strings.Join(uris, " ")), nil
		}
		r, err := in.Elicit("q")
		if err != nil {
			return mcp.ErrorResult(fmt.Sprintf("bad elicitation answer: %v", err)), nil
		}
		return mcp.TextResult(fmt.Sprintf("%s %v", r.Action, r.Content["region"])), nil
	})
	return s
}
