package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// serveHTTP serves h on a test HTTP server for the test's lifetime and
// returns its URL.
func serveHTTP(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// connectHTTP opens a client session to the endpoint at url.
func connectHTTP(t *testing.T, url string, opts *client.Options) *client.Session {
	t.Helper()
	var o client.Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = quietLogger()
	}
	tr := streamhttp.NewClientTransport(url, &streamhttp.ClientOptions{HTTPClient: http.DefaultClient, Logger: quietLogger()})
	sess, err := client.New(clientInfo, &o).Connect(context.Background(), tr)
	mustOK(t, err)
	t.Cleanup(func() { sess.Close() })
	return sess
}

func TestHTTPProvisionFlow(t *testing.T) {
	s, _ := newServer(t, nil)
	runs := addProvision(t, s, regionQuestion())
	url := serveHTTP(t, s.HTTPHandler(nil))
	el := &elicitor{answer: func(string) *mcp.ElicitResult { return accept(map[string]any{"region": "eu-central-1"}) }}
	sess := connectHTTP(t, url, &client.Options{Elicit: el.elicit})
	if v := sess.ProtocolVersion(); v != mcp.LatestVersion {
		t.Errorf("protocol version = %s", v)
	}

	res, err := sess.CallTool(context.Background(), "provision", map[string]any{"name": "orders"})
	mustOK(t, err)
	wantText(t, res, false, "Provisioned orders in eu-central-1.")
	if el.times("Which region should orders live in?") != 1 || runs.get("body") != 1 {
		t.Errorf("asked %q; body ran %d times", el.asked, runs.get("body"))
	}

	// By hand: the state crosses HTTP sealed, and a forged one is refused.
	p := begin(t, sess, provisionCall(t, "users"))
	if strings.Contains(p.RequestState, "{") {
		t.Errorf("requestState = %q", p.RequestState)
	}
	answer := responses(t, map[string]mcp.InputResponse{"region": accept(map[string]any{"region": "us"})})
	forged := *p
	forged.RequestState = p.RequestState[1:]
	_, _, err = sess.Continue(context.Background(), &forged, answer)
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Invalid or expired requestState")
	wantText(t, finish(t, sess, p, answer), false, "Provisioned users in us.")

	// A client without elicitation hears -32021 over HTTP too.
	bare := connectHTTP(t, url, &client.Options{Capabilities: &mcp.ClientCapabilities{}})
	_, err = bare.CallTool(context.Background(), "provision", map[string]any{"name": "orders"})
	wantRPCError(t, err, mcp.CodeMissingRequiredClientCapability, "")
}

// routeSchema is a hand-written inputSchema whose region argument is
// mirrored in the Mcp-Param-Region header.
const routeSchema = `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"note":{"type":"string"}},"required":["region"]}`

type routeArgs struct {
	Region string `json:"region"`
	Note   string `json:"note,omitempty"`
}

// addRoute registers the "route" tool and counts, through middleware,
// every tools/list the server serves (to a client or to itself).
func addRoute(t *testing.T, s *mcpserver.Server) *counter {
	t.Helper()
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "route", InputSchema: json.RawMessage(routeSchema)},
		func(ctx context.Context, c *mcpserver.Call, a routeArgs) (string, error) {
			return "routed to " + a.Region, nil
		}))
	lists := new(counter)
	s.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			lists.add(req.Method)
			return next(ctx, req)
		}
	})
	return lists
}

// postCall POSTs one tools/call of route with args and the given
// Mcp-Param-Region header ("" for none), and returns the HTTP status and
// the decoded JSON-RPC response.
func postCall(t *testing.T, url, args, regionHeader string) (int, *jsonrpc.Response) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"route","arguments":` + args +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"` + string(mcp.LatestVersion) + `","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	mustOK(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(streamhttp.HeaderProtocolVersion, string(mcp.LatestVersion))
	req.Header.Set(streamhttp.HeaderMethod, mcp.MethodCallTool)
	req.Header.Set(streamhttp.HeaderName, "route")
	if regionHeader != "" {
		req.Header.Set(streamhttp.HeaderParamPrefix+"Region", regionHeader)
	}
	resp, err := http.DefaultClient.Do(req)
	mustOK(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	mustOK(t, err)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type = %q, body %s", ct, raw)
	}
	msg, _, err := jsonrpc.DecodeMessage(raw)
	if err != nil {
		t.Fatalf("response %s: %v", raw, err)
	}
	r, ok := msg.(*jsonrpc.Response)
	if !ok {
		t.Fatalf("answer is %T: %s", msg, raw)
	}
	return resp.StatusCode, r
}

// HTTPHandler checks Mcp-Param-* headers against the registry directly:
// no tools/list is served to find the tool's annotations.
func TestHTTPParamHeadersCheckedFromRegistry(t *testing.T) {
	s, _ := newServer(t, nil)
	calls := addRoute(t, s)
	url := serveHTTP(t, s.HTTPHandler(nil))

	status, resp := postCall(t, url, `{"region":"eu"}`, "eu")
	if status != http.StatusOK || resp.Error != nil {
		t.Fatalf("matching header: %d %+v", status, resp.Error)
	}
	var res mcp.CallToolResult
	mustOK(t, json.Unmarshal(resp.Result, &res))
	wantText(t, &res, false, "routed to eu")

	for _, tc := range []struct {
		name, args, header, message string
	}{
		{"header differs", `{"region":"eu"}`, "us", `Mcp-Param-Region header value "us" does not match argument "region"`},
		{"header missing", `{"region":"eu"}`, "", `missing Mcp-Param-Region header for argument "region"`},
		{"argument missing", `{"note":"x"}`, "eu", `Mcp-Param-Region header is present but argument "region" is absent or null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, resp := postCall(t, url, tc.args, tc.header)
			if status != http.StatusBadRequest {
				t.Errorf("status = %d, want 400", status)
			}
			if resp.Error == nil {
				t.Fatalf("no error: %s", resp.Result)
			}
			if resp.Error.Code != mcp.CodeHeaderMismatch {
				t.Errorf("code = %d, want -32020", resp.Error.Code)
			}
			wantContains(t, "message", resp.Error.Message, tc.message)
		})
	}
	if n := calls.get(mcp.MethodListTools); n != 0 {
		t.Errorf("the handler served tools/list %d times to find the tool", n)
	}
	if n := calls.get(mcp.MethodCallTool); n != 1 {
		t.Errorf("%d tools/call reached the server, want only the matching one", n)
	}

	// The same server behind a handler without FindTool finds the tool
	// through tools/list, which the counter sees: the count above means
	// something.
	plain := serveHTTP(t, streamhttp.NewHandler(s.LowLevel(), &streamhttp.HandlerOptions{Logger: quietLogger()}))
	status, _ = postCall(t, plain, `{"region":"eu"}`, "us")
	if status != http.StatusBadRequest {
		t.Errorf("status = %d, want 400", status)
	}
	if calls.get(mcp.MethodListTools) == 0 {
		t.Error("a handler without FindTool checked the header without listing tools")
	}
}

// A client over Streamable HTTP mirrors the annotated argument itself,
// and tools registered or replaced later are checked as they are now.
func TestHTTPParamHeadersWithClient(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	addRoute(t, s)
	url := serveHTTP(t, s.HTTPHandler(nil))
	sess := connectHTTP(t, url, nil)
	list, err := sess.ListTools(ctx, "")
	mustOK(t, err)
	if len(list.Tools) != 1 || string(list.Tools[0].InputSchema) != routeSchema {
		t.Fatalf("tools = %+v", list.Tools)
	}
	res, err := sess.CallTool(ctx, "route", map[string]any{"region": "ap-south-1", "note": "hi"})
	mustOK(t, err)
	wantText(t, res, false, "routed to ap-south-1")

	// The tool stops being annotated: a header sent for it is no longer
	// checked against the argument.
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "route"}, func(ctx context.Context, c *mcpserver.Call, a routeArgs) (string, error) {
		return "plain " + a.Region, nil
	}))
	status, resp := postCall(t, url, `{"region":"eu"}`, "")
	if status != http.StatusOK || resp.Error != nil {
		t.Fatalf("unannotated tool: %d %+v", status, resp.Error)
	}
}

// roundRobin sends each POST to the next of its handlers, as a load
// balancer without affinity does.
type roundRobin struct {
	mu       sync.Mutex
	next     int
	handlers []http.Handler
	served   []int
}

func (rr *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rr.mu.Lock()
	i := rr.next
	rr.next = (rr.next + 1) % len(rr.handlers)
	rr.served[i]++
	rr.mu.Unlock()
	rr.handlers[i].ServeHTTP(w, r)
}

// Two instances sharing a key ring serve one endpoint: every round may
// land on either. With process-local keys the same deployment fails.
func TestHTTPLoadBalancedInstances(t *testing.T) {
	el := &elicitor{answer: func(string) *mcp.ElicitResult { return accept(map[string]any{"region": "eu"}) }}
	for _, tc := range []struct {
		name   string
		policy func() *requeststate.Policy
		ok     bool
	}{
		{"shared keys", func() *requeststate.Policy { return &requeststate.Policy{Keys: sharedKeys()} }, true},
		{"process-local keys", func() *requeststate.Policy { return nil }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := provisionServer(t, "fleet", tc.policy()), provisionServer(t, "fleet", tc.policy())
			rr := &roundRobin{handlers: []http.Handler{a.HTTPHandler(nil), b.HTTPHandler(nil)}, served: make([]int, 2)}
			sess := connectHTTP(t, serveHTTP(t, rr), &client.Options{Elicit: el.elicit})
			res, err := sess.CallTool(context.Background(), "provision", map[string]any{"name": "orders"})
			if !tc.ok {
				wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Invalid or expired requestState")
				return
			}
			mustOK(t, err)
			wantText(t, res, false, "Provisioned orders in eu.")
			rr.mu.Lock()
			defer rr.mu.Unlock()
			if rr.served[0] == 0 || rr.served[1] == 0 {
				t.Errorf("requests per instance = %v, want both used", rr.served)
			}
		})
	}
}
