package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-mcp/parley/bridge"
	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// The requestState of a 2026-07-28 server goes back to it byte for byte
// when the bridge asks a legacy host for the answers.
func TestRequestStateUntouched(t *testing.T) {
	const state = "opaque/state+with=characters\u00e9"
	got := make(chan string, 2)
	s := server.New(mcp.Implementation{Name: "stated", Version: "1"}, &server.Options{
		Logger:            quiet,
		SupportedVersions: []mcp.ProtocolVersion{mcp.LatestVersion},
	})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if !p.InputResponses.Has("name") {
			return &mcp.InputRequiredResult{
				InputRequests: mcp.InputRequests{"name": mcp.NewElicitFormRequest("Name?", mcp.ElicitRequestedSchema{})},
				RequestState:  state,
			}, nil
		}
		st, _ := p.LookupRequestState()
		got <- st
		return mcp.TextResult("ok"), nil
	})
	srv := httptest.NewServer(streamhttp.NewHandler(s, nil))
	t.Cleanup(srv.Close)
	sess := startBridge(t, httpRemote(srv.URL), hostCallbacks(&client.Options{ProtocolVersion: mcp.Version20251125}, false))
	if res := callTool(t, sess, "x"); res != "ok" {
		t.Fatalf("x = %q", res)
	}
	if st := testwait.Recv(t, got, "the retried call"); st != state {
		t.Errorf("the server received requestState %q on the retry, want %q", st, state)
	}
}

// ServeURL sends every request to the remote server with
// Options.HTTPClient (where an OAuth RoundTripper goes) and Options.Header.
func TestServeURLUsesHTTPClientAndHeader(t *testing.T) {
	url, _ := modernRemote(t, newRemoteEvents())
	var sent, authorized atomic.Int32
	rt := roundTripper(func(r *http.Request) (*http.Response, error) {
		sent.Add(1)
		if r.Header.Get("Authorization") == "Bearer t0ken" {
			authorized.Add(1)
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	hostSide, bridgeSide := transport.NewMemoryPipe()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	served := make(chan error, 1)
	go func() {
		served <- bridge.ServeURL(ctx, bridgeSide, url, &bridge.Options{
			Logger:     quiet,
			HTTPClient: &http.Client{Transport: rt},
			Header:     http.Header{"Authorization": {"Bearer t0ken"}},
		})
	}()
	sess, err := client.New(mcp.Implementation{Name: "host", Version: "1"}, &client.Options{Logger: quiet, ProtocolVersion: mcp.Version20251125}).
		Connect(ctx, transport.NewMemoryTransport(hostSide))
	if err != nil {
		t.Fatal(err)
	}
	if got := callTool(t, sess, "progress"); got != "done" {
		t.Errorf("progress = %q", got)
	}
	sess.Close()
	testwait.Recv(t, served, "Serve to return")
	if n := sent.Load(); n == 0 || authorized.Load() != n {
		t.Errorf("%d of %d requests to the remote server carried the header, want all through the HTTP client", authorized.Load(), n)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A remote server that cannot be reached fails the host's request with an
// error that says so, without the Go text of the cause, and the bridge
// keeps serving: the next request tries again.
func TestRemoteUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	hostSide, bridgeSide := transport.NewMemoryPipe()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- bridge.ServeURL(ctx, bridgeSide, url, &bridge.Options{Logger: quiet}) }()
	host := jsonrpc.NewConn(hostSide, &jsonrpc.ConnOptions{Logger: quiet})
	for range 2 {
		var res json.RawMessage
		err := host.Call(ctx, mcp.MethodInitialize, json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`), &res)
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Message != "Internal error: the bridge cannot reach the remote server" {
			t.Fatalf("initialize through a bridge to nowhere = %v, want the bridge's one message", err)
		}
	}
	host.Close()
	if err := testwait.Recv(t, served, "Serve to return"); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// The remote server sees the capabilities the host declared, less the
// extensions, whose methods the bridge does not forward.
func TestHostCapabilitiesForwarded(t *testing.T) {
	for _, version := range []mcp.ProtocolVersion{mcp.Version20251125, mcp.LatestVersion} {
		t.Run(string(version), func(t *testing.T) {
			seen := make(chan *mcp.ClientCapabilities, 1)
			s := server.New(mcp.Implementation{Name: "caps", Version: "1"}, &server.Options{
				Logger:            quiet,
				SupportedVersions: []mcp.ProtocolVersion{mcp.LatestVersion},
			})
			s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
				seen <- req.ClientCapabilities()
				return mcp.TextResult("ok"), nil
			})
			srv := httptest.NewServer(streamhttp.NewHandler(s, nil))
			t.Cleanup(srv.Close)
			o := hostCallbacks(&client.Options{ProtocolVersion: version}, false)
			o.Sample = nil
			o.Extensions = map[string]json.RawMessage{mcp.ExtensionTasks: nil}
			sess := startBridge(t, httpRemote(srv.URL), o)
			callTool(t, sess, "x")
			caps := testwait.Recv(t, seen, "the call at the remote server")
			if caps.Elicitation == nil || caps.Roots == nil || caps.Sampling != nil {
				t.Errorf("the remote server saw capabilities %+v, want the host's: elicitation and roots, no sampling", caps)
			}
			if len(caps.Extensions) != 0 {
				t.Errorf("the remote server saw extensions %v, which the bridge does not forward", caps.Extensions)
			}
		})
	}
}

// A 2026-07-28 host that does not come back with the answer a legacy
// server waits for: after Options.AnswerTimeout the bridge ends the held
// call (the server's question fails), and a late round finds no call.
func TestRelayedCallEndsWhenTheHostDoesNotAnswer(t *testing.T) {
	asked := make(chan error, 1)
	s := server.New(mcp.Implementation{Name: "legacy", Version: "1"}, &server.Options{
		Logger:            quiet,
		SupportedVersions: []mcp.ProtocolVersion{mcp.Version20251125},
	})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		_, err := req.Ask(ctx, mcp.NewElicitFormRequest("Name?", mcp.ElicitRequestedSchema{}))
		asked <- err
		return mcp.TextResult("gave up"), nil
	})
	srv := httptest.NewServer(streamhttp.NewHandler(s, nil))
	t.Cleanup(srv.Close)

	hostSide, bridgeSide := transport.NewMemoryPipe()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	served := make(chan error, 1)
	go func() {
		// A timeout so short that it passes while the host holds the round.
		served <- bridge.ServeURL(ctx, bridgeSide, srv.URL, &bridge.Options{Logger: quiet, AnswerTimeout: time.Millisecond})
	}()
	sess, err := client.New(mcp.Implementation{Name: "host", Version: "1"}, hostCallbacks(&client.Options{Logger: quiet, ProtocolVersion: mcp.LatestVersion}, false)).
		Connect(ctx, transport.NewMemoryTransport(hostSide))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		sess.Close()
		testwait.Recv(t, served, "Serve to return")
	}()
	out, err := sess.CallToolRound(ctx, &mcp.CallToolRequestParams{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	ir, ok := out.(*mcp.InputRequiredResult)
	if !ok || len(ir.InputRequests) != 1 {
		t.Fatalf("the first round = %#v, want one question", out)
	}
	if err := testwait.Recv(t, asked, "the server's question to fail"); err == nil {
		t.Fatal("the server's question was answered, want it to fail when the bridge gives up")
	}
	state, _ := ir.LookupRequestState()
	late := &mcp.CallToolRequestParams{Name: "x", InputResponses: mcp.InputResponses{ir.InputRequests.Keys()[0]: []byte(`{"action":"cancel"}`)}}
	late.SetRequestState(state, true)
	_, err = sess.CallToolRound(ctx, late)
	var rpc *mcp.Error
	if !errors.As(err, &rpc) || rpc.Code != mcp.NewInvalidRequestStateError().Code {
		t.Errorf("the late round = %v, want the invalid-state error", err)
	}
}

// The bridge caches nothing: every list the host asks for reaches the
// remote server, whatever ttlMs it gave; caching is the host's business.
func TestNoCacheInTheBridge(t *testing.T) {
	var lists atomic.Int32
	s := server.New(mcp.Implementation{Name: "cacheable", Version: "1"}, &server.Options{
		Logger:            quiet,
		SupportedVersions: []mcp.ProtocolVersion{mcp.LatestVersion},
		ListTTL:           time.Hour,
		CacheScope:        mcp.CacheScopePublic,
	})
	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		lists.Add(1)
		return &mcp.ListToolsResult{Tools: []mcp.Tool{{Name: "x", InputSchema: json.RawMessage(`{"type":"object"}`)}}}, nil
	})
	srv := httptest.NewServer(streamhttp.NewHandler(s, nil))
	t.Cleanup(srv.Close)
	sess := startBridge(t, httpRemote(srv.URL), &client.Options{ProtocolVersion: mcp.Version20251125})
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	for range 2 {
		if _, err := sess.ListTools(ctx, ""); err != nil {
			t.Fatal(err)
		}
	}
	if n := lists.Load(); n != 2 {
		t.Errorf("the remote server served %d of the host's 2 tools/list, want every one", n)
	}
}
