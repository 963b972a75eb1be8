package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// seenRequest is what a handler saw of a request on a legacy session.
type seenRequest struct {
	version mcp.ProtocolVersion
	caps    mcp.ClientCapabilities
	session *server.Session
}

// generationServer is a default server (it serves 2026-07-28 and every
// legacy version) whose tool "seen" reports what its handler saw.
func generationServer(seen chan<- seenRequest) *server.Server {
	s := server.New(mcp.Implementation{Name: "generation", Version: "1"}, &server.Options{Logger: slog.New(slog.DiscardHandler)})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if p.Name == "ask" {
			// Ask checks the capabilities the request runs with before it
			// sends anything.
			_, err := req.Ask(ctx, mcp.NewElicitFormRequest("Which region?", mcp.ElicitRequestedSchema{
				Properties: map[string]mcp.PrimitiveSchemaDefinition{"region": &mcp.StringSchema{}},
			}))
			if err != nil {
				return mcp.TextResult("ask failed: " + err.Error()), nil
			}
			return mcp.TextResult("asked"), nil
		}
		seen <- seenRequest{version: req.ProtocolVersion(), caps: *req.ClientCapabilities(), session: req.Session()}
		return mcp.TextResult("seen"), nil
	})
	return s
}

// initializeOver opens a connection to s, initializes it with params
// (without the 2026-07-28 envelope, as a legacy client does) and returns
// the connection and the answer. The server's requests to the client go to
// answer (nil: method not found).
func initializeOver(t *testing.T, s *server.Server, params string, answer jsonrpc.Handler) (*jsonrpc.Conn, *mcp.InitializeResult) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a, b := transport.NewMemoryPipe()
	served := make(chan struct{})
	go func() { s.ServeConn(ctx, b); close(served) }()
	conn := jsonrpc.NewConn(a, &jsonrpc.ConnOptions{Handler: answer})
	t.Cleanup(func() { conn.Close(); cancel(); <-served })
	callCtx, end := context.WithTimeout(context.Background(), 10*time.Second)
	defer end()
	var res mcp.InitializeResult
	if err := conn.Call(callCtx, mcp.MethodInitialize, json.RawMessage(params), &res); err != nil {
		t.Fatalf("initialize %s: %v", params, err)
	}
	if err := conn.Notify(callCtx, mcp.NotificationInitialized, nil); err != nil {
		t.Fatal(err)
	}
	return conn, &res
}

// callSeen calls the tool "seen" with params and returns what its handler
// saw.
func callSeen(t *testing.T, conn *jsonrpc.Conn, seen <-chan seenRequest, params string) seenRequest {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var res json.RawMessage
	if err := conn.Call(ctx, mcp.MethodCallTool, json.RawMessage(params), &res); err != nil {
		t.Fatalf("tools/call %s: %v", params, err)
	}
	select {
	case r := <-seen:
		return r
	case <-ctx.Done():
		t.Fatalf("the handler of tools/call %s never ran", params)
		return seenRequest{}
	}
}

// TestInitializeNeverAgreesToAModernVersion: a default server, which
// serves 2026-07-28 too, never agrees to a 2026-07-28-generation version
// in an initialize, whatever the client asks for: 2026-07-28 has no
// handshake, and a session that answered initialize with it would be a
// legacy session (a back-channel, capabilities declared once) running
// under a version that has none of that. The client gets the server's
// newest legacy version instead, the session speaks it, and the requests
// of the session run under it, even a request whose own _meta claims
// 2026-07-28.
func TestInitializeNeverAgreesToAModernVersion(t *testing.T) {
	newestLegacy := mcp.Version20251125
	for _, asked := range []mcp.ProtocolVersion{mcp.LatestVersion, "2099-01-01", "1900-01-01", ""} {
		t.Run(string(asked), func(t *testing.T) {
			seen := make(chan seenRequest, 1)
			s := generationServer(seen)
			conn, res := initializeOver(t, s, `{"protocolVersion":"`+string(asked)+`","capabilities":{},"clientInfo":{"name":"x","version":"1"}}`, nil)
			if res.ProtocolVersion != newestLegacy {
				t.Fatalf("initialize asking %q answered %q, want the newest legacy version %q", asked, res.ProtocolVersion, newestLegacy)
			}
			got := callSeen(t, conn, seen, `{"name":"seen","arguments":{}}`)
			if got.session == nil || got.version != newestLegacy || got.session.ProtocolVersion() != newestLegacy {
				t.Fatalf("a request of the session ran under %q (on a session: %v), want %q", got.version, got.session != nil, newestLegacy)
			}
			got = callSeen(t, conn, seen, `{"name":"seen","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"`+string(mcp.LatestVersion)+`"}}`)
			if got.session == nil || got.version != newestLegacy {
				t.Fatalf("a request of the session claiming %s ran under %q (on a session: %v), want %q", mcp.LatestVersion, got.version, got.session != nil, newestLegacy)
			}
		})
	}
	// Initialize itself, which every transport calls, agrees to the same.
	s := server.New(mcp.Implementation{Name: "generation", Version: "1"}, nil)
	for _, asked := range []mcp.ProtocolVersion{mcp.LatestVersion, "2099-01-01"} {
		msg := &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: mcp.MethodInitialize,
			Params: json.RawMessage(`{"protocolVersion":"` + string(asked) + `","capabilities":{},"clientInfo":{"name":"x","version":"1"}}`)}
		sess, res, err := s.Initialize(context.Background(), msg, nil)
		if err != nil {
			t.Fatalf("Initialize asking %s: %v", asked, err)
		}
		if res.ProtocolVersion.Era() != mcp.EraLegacy || sess.ProtocolVersion().Era() != mcp.EraLegacy {
			t.Errorf("Initialize asking %s: answered %s, session %s", asked, res.ProtocolVersion, sess.ProtocolVersion())
		}
		sess.Close()
	}
}

// TestLegacyRequestCannotRedeclareCapabilities: a legacy session's
// capabilities are the ones its client declared in initialize, for every
// request of the session. A request's own _meta (which a legacy client
// never sends, and a 2026-07-28 client sends on every request) neither
// adds capabilities the session did not declare nor takes away those it
// did: the handler sees the session's, and Ask, which checks them before
// it sends anything, does not reach a client that never declared
// elicitation.
func TestLegacyRequestCannotRedeclareCapabilities(t *testing.T) {
	const claimsAll = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{},"url":{}},"sampling":{},"roots":{}}}`
	const claimsNone = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}`

	t.Run("declared nothing", func(t *testing.T) {
		seen := make(chan seenRequest, 1)
		var asked atomic.Int32
		conn, _ := initializeOver(t, generationServer(seen), `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}`,
			jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				asked.Add(1)
				return json.RawMessage(`{"action":"accept","content":{"region":"eu-west-1"}}`), nil
			}))
		got := callSeen(t, conn, seen, `{"name":"seen","arguments":{},`+claimsAll+`}`)
		if got.caps.Elicitation != nil || got.caps.Sampling != nil || got.caps.Roots != nil {
			t.Errorf("a request claiming every capability on a session that declared none: the handler saw %+v", got.caps)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var res mcp.CallToolResult
		if err := conn.Call(ctx, mcp.MethodCallTool, json.RawMessage(`{"name":"ask","arguments":{},`+claimsAll+`}`), &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Content) != 1 {
			t.Fatalf("ask: content %+v", res.Content)
		}
		if text, _ := res.Content[0].(*mcp.TextContent); text == nil || !strings.HasPrefix(text.Text, "ask failed: ") {
			t.Errorf("Ask on a session that declared no elicitation, in a request claiming it: %+v, want a refusal", res.Content[0])
		}
		if n := asked.Load(); n != 0 {
			t.Errorf("the client that declared no elicitation was sent %d requests", n)
		}
	})

	t.Run("declared everything", func(t *testing.T) {
		seen := make(chan seenRequest, 1)
		conn, _ := initializeOver(t, generationServer(seen), `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}},"sampling":{},"roots":{}},"clientInfo":{"name":"x","version":"1"}}`, nil)
		got := callSeen(t, conn, seen, `{"name":"seen","arguments":{},`+claimsNone+`}`)
		if got.caps.Elicitation == nil || got.caps.Sampling == nil || got.caps.Roots == nil {
			t.Errorf("a request claiming no capability on a session that declared them: the handler saw %+v", got.caps)
		}
	})
}
