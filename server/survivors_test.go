package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// clientLog records the server-to-client requests a legacy peer receives
// and answers each with answer (nil: a roots/list result).
type clientLog struct {
	mu      sync.Mutex
	methods []string
}

func (l *clientLog) answer(answer func(context.Context, *jsonrpc.Request) (any, error)) func(context.Context, *jsonrpc.Request) (any, error) {
	return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		l.mu.Lock()
		l.methods = append(l.methods, req.Method)
		l.mu.Unlock()
		if answer == nil {
			return rootsAnswer(ctx, req)
		}
		return answer(ctx, req)
	}
}

func (l *clientLog) sent() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.methods...)
}

// irServer is a bridged server whose only tool returns what ir returns,
// counting its runs.
func irServer(runs *atomic.Int32, ir func() *mcp.InputRequiredResult) *server.Server {
	s := server.New(mcp.Implementation{Name: "bridged", Version: "1"}, &server.Options{Bridge: &server.BridgeOptions{}})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		runs.Add(1)
		if p.InputResponses != nil {
			return mcp.TextResult("answered"), nil
		}
		return ir(), nil
	})
	return s
}

// SV06: on a bridged legacy session, an invalid InputRequiredResult is a
// server bug answered with -32603 at once: the handler is not called
// again and nothing goes to the client.
func TestBridgeRefusesInvalidInputRequired(t *testing.T) {
	var runs atomic.Int32
	var log clientLog
	p := dialLegacy(t, irServer(&runs, func() *mcp.InputRequiredResult { return &mcp.InputRequiredResult{} }),
		`{"roots":{},"elicitation":{}}`, log.answer(nil))
	_, err := p.callTool(t, "x")
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError || rpcErr.Message != "Internal error" {
		t.Fatalf("empty InputRequiredResult on a bridged session: %v, want -32603 Internal error", err)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("handler ran %d times, want 1 (no retry of an invalid result)", n)
	}
	if got := log.sent(); len(got) != 0 {
		t.Errorf("the client was sent %v", got)
	}
}

// SV08: on a bridged legacy session, the input requests are checked
// against the capabilities the client declared at initialize, all of them
// at once, before anything is sent: the client gets -32021 naming every
// capability it lacks, and no question.
func TestBridgeChecksClientCapabilities(t *testing.T) {
	for _, c := range []struct {
		name, caps, want string
		ir               func() *mcp.InputRequiredResult
	}{
		{"form elicitation, nothing declared", `{}`, `{"elicitation":{}}`, elicitForm},
		{"elicitation and roots, nothing declared", `{}`, `{"elicitation":{},"roots":{}}`, func() *mcp.InputRequiredResult {
			ir := elicitForm()
			ir.InputRequests["r"] = mcp.NewListRootsRequest()
			return ir
		}},
		{"elicitation and roots, roots declared", `{"roots":{}}`, `{"elicitation":{}}`, func() *mcp.InputRequiredResult {
			ir := elicitForm()
			ir.InputRequests["r"] = mcp.NewListRootsRequest()
			return ir
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var runs atomic.Int32
			var log clientLog
			p := dialLegacy(t, irServer(&runs, c.ir), c.caps, log.answer(func(context.Context, *jsonrpc.Request) (any, error) {
				return json.RawMessage(`{"action":"cancel"}`), nil
			}))
			_, err := p.callTool(t, "x")
			data, ok := mcp.AsMissingRequiredClientCapability(err)
			if !ok {
				t.Fatalf("got %v, want -32021", err)
			}
			got, _ := json.Marshal(data.RequiredCapabilities)
			var gotMap, wantMap map[string]any
			json.Unmarshal(got, &gotMap)
			json.Unmarshal([]byte(c.want), &wantMap)
			if !reflect.DeepEqual(gotMap, wantMap) {
				t.Errorf("requiredCapabilities = %s, want %s", got, c.want)
			}
			if n := runs.Load(); n != 1 {
				t.Errorf("handler ran %d times, want 1", n)
			}
			// Nothing reaches the client, not even the question it could
			// answer. (The connection is synchronous up to the response,
			// so anything sent was recorded by now.)
			if got := log.sent(); len(got) != 0 {
				t.Errorf("the client was sent %v", got)
			}
		})
	}
}

// SV10: AskAll returns the first error any answer carries, and no answers.
func TestAskAllReturnsAnAnswersError(t *testing.T) {
	type outcome struct {
		answers mcp.InputResponses
		err     error
	}
	got := make(chan outcome, 1)
	s := server.New(mcp.Implementation{Name: "askall", Version: "1"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		answers, err := req.AskAll(ctx, mcp.InputRequests{
			"q": elicitForm().InputRequests["q"],
			"r": mcp.NewListRootsRequest(),
		})
		got <- outcome{answers, err}
		return mcp.TextResult("done"), nil
	})
	p := dialLegacy(t, s, `{"roots":{},"elicitation":{}}`, func(_ context.Context, req *jsonrpc.Request) (any, error) {
		if req.Method == mcp.MethodListRoots {
			return nil, &jsonrpc.Error{Code: -32001, Message: "roots unavailable"}
		}
		return json.RawMessage(`{"action":"accept","content":{"region":"eu-west-1"}}`), nil
	})
	if _, err := p.callTool(t, "x"); err != nil {
		t.Fatal(err)
	}
	var o outcome
	select {
	case o = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler never finished AskAll")
	}
	var rpcErr *jsonrpc.Error
	if !errors.As(o.err, &rpcErr) || rpcErr.Code != -32001 || rpcErr.Message != "roots unavailable" {
		t.Fatalf("AskAll error = %v, want the client's -32001 roots unavailable", o.err)
	}
	if o.answers != nil {
		t.Errorf("AskAll returned answers %v with its error", o.answers)
	}
}

// SV11: the bridge serves legacy sessions only. A 2026-07-28 request to a
// server with Options.Bridge set gets the InputRequiredResult itself, to
// retry with the answers, not a no-back-channel error.
func TestBridgeLeavesModernRequestsAlone(t *testing.T) {
	var calls atomic.Int32
	rc := dial(t, bridgedServer(&server.Options{Bridge: &server.BridgeOptions{}}, &calls))
	res, err := rc.call(t, mcp.MethodCallTool, &mcp.CallToolRequestParams{Meta: metaWith(`{"roots":{}}`), Name: "two"})
	if err != nil {
		t.Fatalf("2026-07-28 call on a bridged server: %v, want the input_required result", err)
	}
	var probe struct {
		ResultType    string                     `json:"resultType"`
		RequestState  string                     `json:"requestState"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
	}
	if err := json.Unmarshal(res, &probe); err != nil {
		t.Fatal(err)
	}
	if probe.ResultType != "input_required" || probe.RequestState != "1" || probe.InputRequests["region"] == nil {
		t.Errorf("result = %s", res)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("handler ran %d times, want 1", n)
	}
}

// SV13: a handler that returns a typed nil result and no error is a server
// bug: -32603, and the server keeps serving.
func TestTypedNilResultIsInternalError(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "nil", Version: "1"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if p.Name == "ok" {
			return mcp.TextResult("ok"), nil
		}
		return (*mcp.CallToolResult)(nil), nil
	})
	rc := dial(t, s)
	_, err := rc.call(t, mcp.MethodCallTool, &mcp.CallToolRequestParams{Meta: meta(), Name: "nil"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError || rpcErr.Message != "Internal error" {
		t.Fatalf("typed-nil result: %v, want -32603 Internal error", err)
	}
	if _, err := rc.call(t, mcp.MethodCallTool, &mcp.CallToolRequestParams{Meta: meta(), Name: "ok"}); err != nil {
		t.Fatalf("the next call: %v", err)
	}
}

// SV13, without a connection: jsonrpc.Conn turns a handler's panic into
// -32603 as well, so the check must hold where Handle is called directly
// (the Streamable HTTP handler calls it once per POST). Server.Handle
// itself must answer -32603 and log why, not panic, for a typed nil from
// any slot.
func TestTypedNilResultDoesNotPanicHandle(t *testing.T) {
	logs := &strings.Builder{}
	var mu sync.Mutex
	s := server.New(mcp.Implementation{Name: "nil", Version: "1"}, &server.Options{
		Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, logs}, nil)),
	})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return (*mcp.CallToolResult)(nil), nil
	})
	s.HandleGetPrompt(func(ctx context.Context, req *server.Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
		return (*mcp.GetPromptResult)(nil), nil
	})
	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		return nil, nil
	})
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, c := range []struct{ method, params string }{
		{mcp.MethodCallTool, `{` + meta + `,"name":"x"}`},
		{mcp.MethodGetPrompt, `{` + meta + `,"name":"x"}`},
		{mcp.MethodListTools, `{` + meta + `}`},
	} {
		t.Run(c.method, func(t *testing.T) {
			var (
				res any
				err error
			)
			func() {
				defer func() {
					if v := recover(); v != nil {
						t.Fatalf("Handle panicked on a typed-nil result: %v", v)
					}
				}()
				res, err = s.Handle(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: c.method, Params: json.RawMessage(c.params)}, nil)
			}()
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError || rpcErr.Message != "Internal error" {
				t.Fatalf("typed-nil result: (%v, %v), want -32603 Internal error", res, err)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if n := strings.Count(logs.String(), "handler returned neither a result nor an error"); n != 3 {
		t.Errorf("logged the typed nil %d times, want 3:\n%s", n, logs)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// SV16: a server whose SupportedVersions leave out 2026-07-28 refuses a
// request carrying it in _meta with -32022, listing what it supports.
func TestModernVersionRefusedWhenNotSupported(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "legacy-only", Version: "1"}, &server.Options{SupportedVersions: []mcp.ProtocolVersion{mcp.Version20251125}})
	var ran atomic.Int32
	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		ran.Add(1)
		return &mcp.ListToolsResult{}, nil
	})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		ran.Add(1)
		return mcp.TextResult("x"), nil
	})
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, c := range []struct{ method, params string }{
		{mcp.MethodListTools, `{` + meta + `}`},
		{mcp.MethodCallTool, `{` + meta + `,"name":"x"}`},
	} {
		_, err := s.Handle(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: c.method, Params: json.RawMessage(c.params)}, nil)
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeUnsupportedProtocolVersion {
			t.Fatalf("%s at 2026-07-28 on a server without it: %v, want -32022", c.method, err)
		}
		if !strings.Contains(rpcErr.Message, "2026-07-28") || strings.Contains(rpcErr.Message, "legacy versions are served") {
			t.Errorf("message = %q", rpcErr.Message)
		}
		var data struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}
		raw, _ := json.Marshal(rpcErr.Data)
		if err := json.Unmarshal(raw, &data); err != nil || len(data.Supported) != 1 || data.Supported[0] != "2025-11-25" || data.Requested != "2026-07-28" {
			t.Errorf("data = %s, want supported [2025-11-25], requested 2026-07-28", raw)
		}
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("handlers ran %d times", n)
	}
}

// SV18, SV19: the invalid-requestState error is for a carrier whose
// requestState is neither a string nor null. A non-carrier with a bad
// requestState member, or a carrier with a null one, that fails to decode
// for another reason gets the ordinary -32602 Invalid params.
func TestRequestStateErrorOnlyForBadCarrierState(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "states", Version: "1"}, nil)
	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		return &mcp.ListToolsResult{}, nil
	})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return mcp.TextResult("x"), nil
	})
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, c := range []struct {
		name, method, params string
		stateErr             bool
	}{
		{"SV18 non-carrier, bad cursor and bad state", mcp.MethodListTools, `{"cursor":5,"requestState":7,` + meta + `}`, false},
		{"SV19 carrier, null state and bad name", mcp.MethodCallTool, `{` + meta + `,"name":5,"requestState":null}`, false},
		{"carrier, bad state and bad name", mcp.MethodCallTool, `{` + meta + `,"name":5,"requestState":7}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.Handle(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: c.method, Params: json.RawMessage(c.params)}, nil)
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("%s: %v, want -32602", c.params, err)
			}
			if c.stateErr {
				if !mcp.IsInvalidRequestState(err) {
					t.Errorf("%s: %q, want the invalid-requestState error", c.params, rpcErr.Message)
				}
				return
			}
			if mcp.IsInvalidRequestState(err) || !strings.HasPrefix(rpcErr.Message, "Invalid params: ") {
				t.Errorf("%s: %q, want the ordinary Invalid params error", c.params, rpcErr.Message)
			}
		})
	}
}
