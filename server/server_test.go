package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// rawClient is a JSON-RPC peer that speaks to a server without the Parley
// client, so tests see exactly what the server sends.
type rawClient struct {
	conn          *jsonrpc.Conn
	notifications chan *jsonrpc.Request
}

func dial(t *testing.T, s *server.Server) *rawClient {
	t.Helper()
	// Fail here, on the test goroutine, where the schema fixtures are
	// missing: the recording wrapper validates on the connection's read
	// goroutine, where FailNow would stall the test instead.
	spectest.Dir(t)
	ctx, cancel := context.WithCancel(context.Background())
	a, b := transport.NewMemoryPipe()
	done := make(chan struct{})
	go func() { s.ServeConn(ctx, b); close(done) }()
	rc := &rawClient{notifications: make(chan *jsonrpc.Request, 100)}
	rc.conn = jsonrpc.NewConn(recording{t, a}, &jsonrpc.ConnOptions{Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		rc.notifications <- req
		return nil, nil
	})})
	t.Cleanup(func() { rc.conn.Close(); cancel(); <-done })
	return rc
}

// recording validates every notification the server sends against the
// official schema.
type recording struct {
	t *testing.T
	transport.Conn
}

func (r recording) Read(ctx context.Context) ([]byte, error) {
	msg, err := r.Conn.Read(ctx)
	if err == nil {
		if m, _, derr := jsonrpc.DecodeMessage(msg); derr == nil {
			if _, isReq := m.(*jsonrpc.Request); isReq {
				spectest.ValidateMessage(r.t, mcp.LatestVersion, msg, "")
			}
		}
	}
	return msg, err
}

func meta() *mcp.RequestMetaObject {
	return &mcp.RequestMetaObject{ProtocolVersion: mcp.LatestVersion, ClientCapabilities: &mcp.ClientCapabilities{}}
}

func (rc *rawClient) call(t *testing.T, method string, params any) (json.RawMessage, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var res json.RawMessage
	err := rc.conn.Call(ctx, method, params, &res)
	return res, err
}

func TestListenStream(t *testing.T) {
	s := newFixture(nil)
	rc := dial(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	listenDone := make(chan error, 1)
	go func() {
		var res json.RawMessage
		listenDone <- rc.conn.Call(ctx, mcp.MethodSubscriptionsListen, &mcp.SubscriptionsListenRequestParams{
			Meta:          meta(),
			Notifications: mcp.SubscriptionFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"file:///readme.txt"}},
		}, &res)
	}()

	ack := testwait.Recv(t, rc.notifications, "the listen stream's acknowledgement")
	if ack.Method != mcp.NotificationSubscriptionsAcknowledged {
		t.Fatalf("first notification is %s, want the acknowledgement", ack.Method)
	}
	var ackParams mcp.SubscriptionsAcknowledgedNotificationParams
	if err := json.Unmarshal(ack.Params, &ackParams); err != nil {
		t.Fatal(err)
	}
	subID := ackParams.Meta.SubscriptionID
	if !subID.IsValid() || !ackParams.Notifications.ToolsListChanged || ackParams.Notifications.PromptsListChanged {
		t.Fatalf("acknowledgement = %s", ack.Params)
	}

	// Only what was asked for arrives, tagged with the subscription id.
	s.NotifyPromptListChanged()                   // not asked for
	s.NotifyResourceUpdated("file:///other.txt")  // not subscribed
	s.NotifyToolListChanged()                     // asked for
	s.NotifyResourceUpdated("file:///readme.txt") // subscribed
	for _, want := range []string{mcp.NotificationToolListChanged, mcp.NotificationResourceUpdated} {
		n := testwait.Recv(t, rc.notifications, want)
		if n.Method != want {
			t.Fatalf("got %s, want %s", n.Method, want)
		}
		var p struct {
			Meta mcp.NotificationMetaObject `json:"_meta"`
			URI  string                     `json:"uri"`
		}
		json.Unmarshal(n.Params, &p)
		if p.Meta.SubscriptionID != subID {
			t.Errorf("%s carries subscription id %v, want %v", n.Method, p.Meta.SubscriptionID, subID)
		}
		if want == mcp.NotificationResourceUpdated && p.URI != "file:///readme.txt" {
			t.Errorf("resource updated for %q", p.URI)
		}
	}

	// Cancelling the listen request ends the stream.
	cancel()
	if err := testwait.Recv(t, listenDone, "the end of the cancelled listen request"); !errors.Is(err, context.Canceled) {
		t.Fatalf("listen ended with %v", err)
	}
	select {
	case n := <-rc.notifications:
		t.Fatalf("unexpected notification after cancel: %s", n.Method)
	default:
	}
}

func TestEndSubscriptionsSendsResult(t *testing.T) {
	s := newFixture(nil)
	rc := dial(t, s)
	done := make(chan json.RawMessage, 1)
	go func() {
		res, err := rc.call(t, mcp.MethodSubscriptionsListen, &mcp.SubscriptionsListenRequestParams{Meta: meta(), Notifications: mcp.SubscriptionFilter{ToolsListChanged: true}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	testwait.Recv(t, rc.notifications, "the listen stream's acknowledgement") // the stream is registered
	s.EndSubscriptions()
	res := testwait.Recv(t, done, "the final result of the listen stream")
	var r mcp.SubscriptionsListenResult
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	if r.ResultType != mcp.ResultTypeComplete || r.Meta == nil || !r.Meta.SubscriptionID.IsValid() {
		t.Fatalf("final listen result = %s", res)
	}
	spectest.Validate(t, mcp.LatestVersion, "SubscriptionsListenResult", res)
}

func TestMiddlewareOrder(t *testing.T) {
	s := newFixture(nil)
	var mu sync.Mutex
	var trace []string
	mw := func(name string) server.Middleware {
		return func(next server.Handler) server.Handler {
			return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
				mu.Lock()
				trace = append(trace, name+" "+req.Method)
				mu.Unlock()
				return next(ctx, req)
			}
		}
	}
	s.Use(mw("outer"), mw("inner"))
	rc := dial(t, s)
	if _, err := rc.call(t, mcp.MethodCallTool, &mcp.CallToolRequestParams{Meta: meta(), Name: "echo", Arguments: json.RawMessage(`{"text":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(trace, ","); got != "outer tools/call,inner tools/call" {
		t.Fatalf("middleware ran as %q", got)
	}
}

func TestMiddlewareCanRewriteParams(t *testing.T) {
	s := newFixture(nil)
	s.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			if p, ok := req.Params.(*mcp.CallToolRequestParams); ok {
				p.Arguments = json.RawMessage(`{"text":"rewritten"}`)
			}
			return next(ctx, req)
		}
	})
	rc := dial(t, s)
	res, err := rc.call(t, mcp.MethodCallTool, &mcp.CallToolRequestParams{Meta: meta(), Name: "echo", Arguments: json.RawMessage(`{"text":"original"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res), "rewritten") {
		t.Fatalf("result %s", res)
	}
}

// A handler may return one shared result value for every call; the server
// stamps a copy, so concurrent calls do not race on it (run with -race).
func TestSharedResultNotWritten(t *testing.T) {
	shared := &mcp.ListToolsResult{Tools: []mcp.Tool{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}}}
	s := server.New(mcp.Implementation{Name: "shared", Version: "1"}, nil)
	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		return shared, nil
	})
	rc := dial(t, s)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := rc.call(t, mcp.MethodListTools, &mcp.PaginatedRequestParams{Meta: meta()})
			if err != nil {
				t.Error(err)
				return
			}
			if !strings.Contains(string(res), `"resultType":"complete"`) || !strings.Contains(string(res), `"cacheScope":"private"`) {
				t.Errorf("result not stamped: %s", res)
			}
		}()
	}
	wg.Wait()
	if shared.ResultType != "" || shared.Meta != nil || shared.CacheScope != "" {
		t.Fatalf("the handler's shared result was written: %+v", shared.Result)
	}
}

func TestCancelledRequestGetsNoResponse(t *testing.T) {
	started := make(chan struct{})
	stopped := make(chan error, 1)
	s := server.New(mcp.Implementation{Name: "slow", Version: "1"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		close(started)
		<-ctx.Done()
		stopped <- ctx.Err()
		return nil, ctx.Err()
	})
	rc := dial(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- rc.conn.Call(ctx, mcp.MethodCallTool, &mcp.CallToolRequestParams{Meta: meta(), Name: "slow"}, nil)
	}()
	testwait.Recv(t, started, "the slow call's start")
	cancel()
	if err := testwait.Recv(t, errc, "the end of the cancelled call"); !errors.Is(err, context.Canceled) {
		t.Fatalf("call ended with %v", err)
	}
	if err := testwait.Recv(t, stopped, "the end of the cancelled handler"); !errors.Is(err, context.Canceled) {
		t.Fatalf("handler context ended with %v", err)
	}
}

func TestInputRequiredRefusedOutsideCarriers(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "bad", Version: "1"}, nil)
	s.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			if req.Method == mcp.MethodListTools {
				return &mcp.InputRequiredResult{RequestState: "x"}, nil
			}
			return next(ctx, req)
		}
	})
	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		return &mcp.ListToolsResult{}, nil
	})
	rc := dial(t, s)
	_, err := rc.call(t, mcp.MethodListTools, &mcp.PaginatedRequestParams{Meta: meta()})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError {
		t.Fatalf("got %v, want -32603", err)
	}
}

func TestCapabilitiesFollowHandlers(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "tools-only", Version: "1"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return mcp.TextResult(""), nil
	})
	rc := dial(t, s)
	res, err := rc.call(t, mcp.MethodDiscover, &mcp.RequestParams{Meta: meta()})
	if err != nil {
		t.Fatal(err)
	}
	var d mcp.DiscoverResult
	if err := json.Unmarshal(res, &d); err != nil {
		t.Fatal(err)
	}
	if d.Capabilities.Tools == nil || d.Capabilities.Prompts != nil || d.Capabilities.Resources != nil || d.Capabilities.Completions != nil {
		t.Fatalf("capabilities = %+v", d.Capabilities)
	}
	// A slot left empty is a method the server does not offer.
	_, err = rc.call(t, mcp.MethodListPrompts, &mcp.PaginatedRequestParams{Meta: meta()})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("prompts/list without a handler: %v, want -32601", err)
	}
}

func TestPaginate(t *testing.T) {
	items := []int{1, 2, 3, 4, 5}
	var got []int
	cursor := ""
	for pages := 0; ; pages++ {
		page, next, err := server.Paginate(items, cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page...)
		if next == "" {
			break
		}
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
		cursor = next
	}
	if len(got) != 5 {
		t.Fatalf("got %v", got)
	}
	for _, bad := range []string{"x", "cGFybGV5LnBhZ2UudjE6OTk", "cGFybGV5LnBhZ2UudjE6LTE", "cGFybGV5LnBhZ2UudjE6MDI"} {
		if _, _, err := server.Paginate(items, bad, 2); err == nil {
			t.Errorf("cursor %q accepted", bad)
		} else if rpcErr := new(jsonrpc.Error); !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("cursor %q: %v, want -32602", bad, err)
		}
	}
}
