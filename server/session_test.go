package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// legacyPeer is a 2025-11-25 client written with bare JSON-RPC: it
// answers the server's requests with answer and collects notifications.
type legacyPeer struct {
	conn          *jsonrpc.Conn
	notifications chan *jsonrpc.Request
	served        chan error // ServeConn's return
}

func dialLegacy(t *testing.T, s *server.Server, caps string, answer func(ctx context.Context, req *jsonrpc.Request) (any, error)) *legacyPeer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a, b := transport.NewMemoryPipe()
	p := &legacyPeer{notifications: make(chan *jsonrpc.Request, 100), served: make(chan error, 1)}
	go func() { p.served <- s.ServeConn(ctx, b) }()
	p.conn = jsonrpc.NewConn(a, &jsonrpc.ConnOptions{Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.IsNotification() {
			p.notifications <- req
			return nil, nil
		}
		if answer == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no"}
		}
		return answer(ctx, req)
	})})
	t.Cleanup(func() { p.conn.Close(); cancel() })
	var res mcp.InitializeResult
	if err := p.call(t, mcp.MethodInitialize, json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"old","version":"1"}}`), &res); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if res.ProtocolVersion != mcp.Version20251125 || res.ServerInfo.Name == "" {
		t.Fatalf("initialize result = %+v", res)
	}
	if err := p.conn.Notify(context.Background(), mcp.NotificationInitialized, nil); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *legacyPeer) call(t *testing.T, method string, params, result any) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return p.conn.Call(ctx, method, params, result)
}

func (p *legacyPeer) callTool(t *testing.T, name string) (string, error) {
	t.Helper()
	var res mcp.CallToolResult
	if err := p.call(t, mcp.MethodCallTool, map[string]any{"name": name, "arguments": map[string]any{}}, &res); err != nil {
		return "", err
	}
	if res.ResultType != "" {
		t.Errorf("legacy result carries resultType %q", res.ResultType)
	}
	if len(res.Content) != 1 {
		t.Fatalf("content = %+v", res.Content)
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

// askServer has a tool "ask" that elicits a region over the back-channel,
// and reports what the handler saw through seen.
func askServer(opts *server.Options, seen chan<- error) *server.Server {
	s := server.New(mcp.Implementation{Name: "legacy", Version: "1"}, opts)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if req.ProtocolVersion().Era() != mcp.EraLegacy || !req.HasBackChannel() || req.Session() == nil {
			return nil, errors.New("not a legacy request with a back-channel")
		}
		var q mcp.InputRequest = mcp.NewElicitFormRequest("Which region?", mcp.ElicitRequestedSchema{
			Properties: map[string]mcp.PrimitiveSchemaDefinition{"region": &mcp.StringSchema{}},
		})
		if p.Name == "url" {
			q = mcp.NewElicitURLRequest("Sign in", "https://example.com/login")
		}
		raw, err := req.Ask(ctx, q)
		if seen != nil {
			seen <- err
		}
		if err != nil {
			return nil, err
		}
		ans, err := mcp.InputResponses{"q": raw}.Elicit("q")
		if err != nil {
			return nil, wire.InvalidParams("Invalid params: %v", err)
		}
		region, _ := ans.Content["region"].(string)
		return mcp.TextResult(string(ans.Action) + " " + region), nil
	})
	return s
}

func TestLegacyAskGoesOverTheBackChannel(t *testing.T) {
	var asked atomic.Value
	p := dialLegacy(t, askServer(nil, nil), `{"elicitation":{"form":{},"url":{}}}`, func(_ context.Context, req *jsonrpc.Request) (any, error) {
		asked.Store(string(req.Params))
		if req.Method != mcp.MethodElicit {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: req.Method}
		}
		return json.RawMessage(`{"action":"accept","content":{"region":"eu-west-1"}}`), nil
	})
	got, err := p.callTool(t, "ask")
	if err != nil || got != "accept eu-west-1" {
		t.Fatalf("ask = %q, %v", got, err)
	}
	if s, _ := asked.Load().(string); !strings.Contains(s, `"message":"Which region?"`) || !strings.Contains(s, `"requestedSchema"`) {
		t.Errorf("elicitation params = %s", s)
	}
	// A URL elicitation gets the elicitationId a legacy session requires.
	if _, err := p.callTool(t, "url"); err != nil {
		t.Fatal(err)
	}
	var params mcp.ElicitRequestURLParams
	if err := json.Unmarshal([]byte(asked.Load().(string)), &params); err != nil || len(params.ElicitationID) != 32 {
		t.Errorf("URL elicitation params = %s (%v)", asked.Load(), err)
	}
}

func TestLegacyAskRefusesWhatTheClientDidNotDeclare(t *testing.T) {
	seen := make(chan error, 1)
	var called atomic.Bool
	p := dialLegacy(t, askServer(nil, seen), `{"elicitation":{"form":{}}}`, func(context.Context, *jsonrpc.Request) (any, error) {
		called.Store(true)
		return json.RawMessage(`{"action":"cancel"}`), nil
	})
	_, err := p.callTool(t, "url")
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeMissingRequiredClientCapability {
		t.Fatalf("err = %v, want -32021", err)
	}
	if askErr := <-seen; askErr == nil {
		t.Error("Ask returned no error")
	}
	if called.Load() {
		t.Error("the client was asked although it declared no URL elicitation")
	}
}

func TestLegacyDisconnectMidQuestion(t *testing.T) {
	seen := make(chan error, 1)
	asking := make(chan struct{})
	release := make(chan struct{})
	p := dialLegacy(t, askServer(nil, seen), `{"elicitation":{}}`, func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		close(asking)
		select { // the connection's close cancels ctx
		case <-release:
		case <-ctx.Done():
		}
		return nil, errors.New("gone")
	})
	defer close(release)
	go p.conn.Call(context.Background(), mcp.MethodCallTool, map[string]any{"name": "ask"}, nil)
	testwait.Recv(t, asking, "the server's question to the client")
	p.conn.Close()
	select {
	case err := <-seen:
		if err == nil {
			t.Error("Ask succeeded after the client left")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler still waits for an answer from a client that left")
	}
	select {
	case err := <-p.served:
		if err != nil {
			t.Errorf("ServeConn = %v, want nil after the peer closed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeConn did not return after the client left")
	}
}

func TestStatelessSessionHasNoBackChannel(t *testing.T) {
	seen := make(chan error, 1)
	s := server.New(mcp.Implementation{Name: "legacy", Version: "1"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		_, err := req.Ask(ctx, &mcp.ListRootsRequest{})
		seen <- err
		return nil, err
	})
	sess := s.StatelessSession(mcp.Version20250618)
	if sess.ProtocolVersion() != mcp.Version20250618 {
		t.Errorf("version = %s", sess.ProtocolVersion())
	}
	_, err := sess.Handle(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: mcp.MethodCallTool,
		Params: json.RawMessage(`{"name":"x"}`)}, nil, nil)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(rpcErr.Message, "no back-channel") {
		t.Fatalf("err = %v, want -32600 saying there is no back-channel", err)
	}
	if askErr := <-seen; !errors.Is(askErr, server.ErrNoBackChannel) {
		t.Errorf("Ask error %v does not match ErrNoBackChannel", askErr)
	}
	if server.New(mcp.Implementation{}, &server.Options{SupportedVersions: []mcp.ProtocolVersion{mcp.LatestVersion}}).StatelessSession(mcp.Version20251125) != nil {
		t.Error("a modern-only server made a legacy session")
	}
}

// bridgedServer's tool needs two answers in two rounds: a region, then a
// confirmation, each in a hand-built InputRequiredResult.
func bridgedServer(opts *server.Options, calls *atomic.Int32) *server.Server {
	s := server.New(mcp.Implementation{Name: "bridged", Version: "1"}, opts)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		calls.Add(1)
		if p.Name == "forever" {
			return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"q": &mcp.ListRootsRequest{}}}, nil
		}
		if p.Name == "empty" {
			// An empty state is a state: it comes back present, and a
			// round without state takes it away again.
			switch state, present := p.LookupRequestState(); {
			case present && state == "" && p.InputResponses.Has("first"):
				return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"second": &mcp.ListRootsRequest{}}}, nil
			case !present && p.InputResponses.Has("second"):
				return mcp.TextResult("done, the empty state came back"), nil
			case !present && len(p.InputResponses) == 0:
				return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"first": &mcp.ListRootsRequest{}}, ForceRequestState: true}, nil
			}
			return nil, wire.InvalidParams("Invalid params: state %q present %v", p.RequestState, p.ForceRequestState)
		}
		switch p.RequestState {
		case "":
			return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"region": &mcp.ListRootsRequest{}}, RequestState: "1"}, nil
		case "1":
			roots, err := p.InputResponses.Roots("region")
			if err != nil {
				return nil, wire.InvalidParams("Invalid params: %v", err)
			}
			return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"ok": &mcp.ListRootsRequest{}}, RequestState: "2:" + roots.Roots[0].URI}, nil
		default:
			return mcp.TextResult("done " + p.RequestState), nil
		}
	})
	return s
}

func rootsAnswer(context.Context, *jsonrpc.Request) (any, error) {
	return json.RawMessage(`{"roots":[{"uri":"file:///work"}]}`), nil
}

func TestLegacyBridge(t *testing.T) {
	var calls atomic.Int32
	p := dialLegacy(t, bridgedServer(&server.Options{Bridge: &server.BridgeOptions{}}, &calls), `{"roots":{}}`, rootsAnswer)
	got, err := p.callTool(t, "two")
	if err != nil || got != "done 2:file:///work" {
		t.Fatalf("bridged call = %q, %v", got, err)
	}
	if calls.Load() != 3 {
		t.Errorf("handler ran %d times, want 3", calls.Load())
	}

	// An empty state goes round the bridge as present, and goes away with
	// a round that has none.
	calls.Store(0)
	got, err = p.callTool(t, "empty")
	if err != nil || got != "done, the empty state came back" || calls.Load() != 3 {
		t.Fatalf("bridged call with an empty state = %q, %v after %d runs", got, err, calls.Load())
	}

	// The round limit: the first call and MaxRounds retries, then -32603.
	calls.Store(0)
	p = dialLegacy(t, bridgedServer(&server.Options{Bridge: &server.BridgeOptions{MaxRounds: 3}}, &calls), `{"roots":{}}`, rootsAnswer)
	_, err = p.callTool(t, "forever")
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError {
		t.Fatalf("err = %v, want -32603", err)
	}
	if calls.Load() != 4 {
		t.Errorf("handler ran %d times, want 4 (one call, three rounds)", calls.Load())
	}

	// Without the bridge, the protocol's rule: -32603 (S15).
	calls.Store(0)
	p = dialLegacy(t, bridgedServer(nil, &calls), `{"roots":{}}`, rootsAnswer)
	if _, err = p.callTool(t, "two"); !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError {
		t.Fatalf("err = %v, want -32603", err)
	}
	if calls.Load() != 1 {
		t.Errorf("handler ran %d times without a bridge, want 1", calls.Load())
	}

	// With the bridge but no back-channel, the error says so.
	s := bridgedServer(&server.Options{Bridge: &server.BridgeOptions{}}, &calls)
	_, err = s.StatelessSession("").Handle(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: mcp.MethodCallTool,
		Params: json.RawMessage(`{"name":"two"}`)}, nil, nil)
	if !errors.As(err, &rpcErr) || !strings.Contains(rpcErr.Message, "no back-channel") {
		t.Fatalf("err = %v, want the no-back-channel error", err)
	}
}

func TestLegacySessionReceivesChanges(t *testing.T) {
	s := newFixture(nil)
	p := dialLegacy(t, s, `{}`, nil)
	if err := p.call(t, mcp.MethodSubscribeResource, map[string]string{"uri": "file:///readme.txt"}, nil); err != nil {
		t.Fatal(err)
	}
	s.NotifyResourceUpdated("file:///other.txt") // not subscribed: not sent
	s.NotifyResourceUpdated("file:///readme.txt")
	s.NotifyToolListChanged()
	want := []string{mcp.NotificationResourceUpdated, mcp.NotificationToolListChanged}
	for _, w := range want {
		select {
		case n := <-p.notifications:
			if n.Method != w {
				t.Fatalf("got %s %s, want %s", n.Method, n.Params, w)
			}
			if w == mcp.NotificationResourceUpdated && !strings.Contains(string(n.Params), "readme") {
				t.Errorf("update params = %s", n.Params)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s", w)
		}
	}
}

func TestConnectionGenerationIsFixed(t *testing.T) {
	// A 2026-07-28 request that succeeds fixes the connection: initialize
	// afterwards is refused.
	rc := dial(t, newFixture(nil))
	if _, err := rc.call(t, mcp.MethodListTools, &mcp.PaginatedRequestParams{Meta: meta()}); err != nil {
		t.Fatal(err)
	}
	_, err := rc.call(t, mcp.MethodInitialize, json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}`))
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidRequest {
		t.Fatalf("initialize after a modern request: %v, want -32600", err)
	}

	// A modern-only server answers initialize with -32601 naming what it
	// speaks, and never advertises a legacy version.
	modern := newFixture(&server.Options{SupportedVersions: []mcp.ProtocolVersion{mcp.LatestVersion, "2024-11-05", "1900-01-01"}})
	if got := modern.SupportedVersions(); len(got) != 1 || got[0] != mcp.LatestVersion {
		t.Errorf("SupportedVersions = %v, want only what the server can serve", got)
	}
	rc = dial(t, modern)
	_, err = rc.call(t, mcp.MethodInitialize, json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}`))
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMethodNotFound || !strings.HasSuffix(rpcErr.Message, "supported protocol versions: 2026-07-28)") {
		t.Fatalf("initialize on a modern-only server: %v", err)
	}
}

func TestInitializeNegotiatesVersion(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "v", Version: "1"}, &server.Options{SupportedVersions: []mcp.ProtocolVersion{mcp.Version20251125, mcp.Version20250618}})
	for asked, want := range map[mcp.ProtocolVersion]mcp.ProtocolVersion{
		mcp.Version20250618: mcp.Version20250618, // served: kept
		mcp.Version20250326: mcp.Version20251125, // not served: the server's preferred legacy version
		mcp.Version20260728: mcp.Version20251125, // not a handshake version
		"1900-01-01":        mcp.Version20251125,
	} {
		msg := &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: mcp.MethodInitialize,
			Params: json.RawMessage(`{"protocolVersion":"` + string(asked) + `","capabilities":{},"clientInfo":{"name":"x","version":"1"}}`)}
		sess, res, err := s.Initialize(context.Background(), msg, nil)
		if err != nil {
			t.Fatalf("%s: %v", asked, err)
		}
		if res.ProtocolVersion != want || sess.ProtocolVersion() != want {
			t.Errorf("asked %s: got %s, want %s", asked, res.ProtocolVersion, want)
		}
		sess.Close()
		sess.Close() // twice is fine
	}
	_, _, err := s.Initialize(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: mcp.MethodInitialize, Params: json.RawMessage(`{"protocolVersion":7}`)}, nil)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("bad initialize params: %v, want -32602", err)
	}
}

// TestAskOnAModernRequest: a 2026-07-28 request never has a back-channel,
// and the error says what to do instead.
func TestAskOnAModernRequest(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "modern", Version: "1"}, nil)
	seen := make(chan error, 1)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		_, err := req.Ask(ctx, &mcp.ListRootsRequest{})
		seen <- err
		return mcp.TextResult("x"), nil
	})
	rc := dial(t, s)
	if _, err := rc.call(t, mcp.MethodCallTool, &mcp.CallToolRequestParams{Meta: meta(), Name: "x"}); err != nil {
		t.Fatal(err)
	}
	err := <-seen
	if !errors.Is(err, server.ErrNoBackChannel) || !strings.Contains(err.Error(), "return an InputRequiredResult") {
		t.Errorf("Ask on a 2026-07-28 request: %v", err)
	}
}

// TestLegacyResultsCarryNothingModern: what a handler sets of 2026-07-28
// on its results (resultType, ttlMs, cacheScope, serverInfo and other
// reserved _meta keys) stays off a legacy session's wire, every result
// naming only what 2025-11-25 defines; the handler's own (shared) values
// keep them, and a 2026-07-28 request still gets them.
func TestLegacyResultsCarryNothingModern(t *testing.T) {
	spectest.Dir(t)
	header := mcp.Result{
		Meta: &mcp.ResultMetaObject{
			ServerInfo:     &mcp.Implementation{Name: "handler", Version: "9"},
			SubscriptionID: jsonrpc.Int64ID(3),
			Extra:          mcp.MetaExtra{mcp.MetaKeyLogLevel: json.RawMessage(`"debug"`)},
		},
		ResultType: mcp.ResultTypeComplete,
	}
	cacheable := mcp.CacheableResult{Result: header, TTLMs: 5000, CacheScope: mcp.CacheScopePublic}
	tools := &mcp.ListToolsResult{CacheableResult: cacheable, Tools: []mcp.Tool{{Name: "t"}}}
	s := server.New(mcp.Implementation{Name: "legacy", Version: "1"}, nil)
	s.HandleListTools(func(context.Context, *server.Request, *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		return tools, nil
	})
	s.HandleCallTool(func(context.Context, *server.Request, *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return &mcp.CallToolResult{Result: header, Content: []mcp.ContentBlock{&mcp.TextContent{Text: "hi"}}}, nil
	})
	s.HandleListPrompts(func(context.Context, *server.Request, *mcp.PaginatedRequestParams) (*mcp.ListPromptsResult, error) {
		return &mcp.ListPromptsResult{CacheableResult: cacheable}, nil
	})
	s.HandleGetPrompt(func(context.Context, *server.Request, *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
		return &mcp.GetPromptResult{Result: header}, nil
	})
	s.HandleListResources(func(context.Context, *server.Request, *mcp.PaginatedRequestParams) (*mcp.ListResourcesResult, error) {
		return &mcp.ListResourcesResult{CacheableResult: cacheable}, nil
	})
	s.HandleListResourceTemplates(func(context.Context, *server.Request, *mcp.PaginatedRequestParams) (*mcp.ListResourceTemplatesResult, error) {
		return &mcp.ListResourceTemplatesResult{CacheableResult: cacheable}, nil
	})
	s.HandleReadResource(func(_ context.Context, _ *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		return &mcp.ReadResourceResult{CacheableResult: cacheable, Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: p.URI, Text: "a"}}}, nil
	})
	s.HandleComplete(func(context.Context, *server.Request, *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
		return &mcp.CompleteResult{Result: header, Completion: mcp.Completion{Values: []string{"a"}}}, nil
	})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, b := transport.NewMemoryPipe()
	go s.ServeConn(ctx, b)
	defer a.Close()
	exchange := func(msg string) []byte {
		t.Helper()
		if err := a.Write(ctx, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		got, err := a.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	exchange(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`)
	for i, c := range []struct{ method, params string }{
		{mcp.MethodListTools, `{}`},
		{mcp.MethodCallTool, `{"name":"t"}`},
		{mcp.MethodListPrompts, `{}`},
		{mcp.MethodGetPrompt, `{"name":"p"}`},
		{mcp.MethodListResources, `{}`},
		{mcp.MethodListResourceTemplates, `{}`},
		{mcp.MethodReadResource, `{"uri":"file:///a"}`},
		{mcp.MethodComplete, `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}`},
	} {
		msg := exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, i+1, c.method, c.params))
		spectest.ValidateMessageStrict(t, mcp.Version20251125, msg, c.method)
	}
	if tools.TTLMs != 5000 || tools.CacheScope != mcp.CacheScopePublic || tools.ResultType != mcp.ResultTypeComplete || tools.Meta.ServerInfo.Name != "handler" {
		t.Errorf("the handler's shared result changed: %+v", tools)
	}
	res, err := s.Handle(ctx, &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: mcp.MethodListTools, Params: json.RawMessage(
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`)}, nil)
	if got, _ := res.(*mcp.ListToolsResult); err != nil || got == nil || got.TTLMs != 5000 || got.CacheScope != mcp.CacheScopePublic {
		t.Errorf("2026-07-28 tools/list = %#v, %v", res, err)
	}
}
