package streamhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// TestEveryMethod drives every method of 2026-07-28 through the real client
// and server over HTTP.
func TestEveryMethod(t *testing.T) {
	f := newFixture()
	url, rec := serve(t, NewHandler(f.s, nil))
	sess := connect(t, url, nil, nil)
	ctx := context.Background()

	if info := sess.ServerInfo(); info == nil || info.Name != "fixture" {
		t.Errorf("ServerInfo = %+v", info)
	}
	var names []string
	for tool, err := range sess.Tools(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, ","); got != "echo,work,slow,route,needs_sampling" {
		t.Errorf("tools = %s", got)
	}
	res, err := sess.CallTool(ctx, "echo", map[string]string{"text": "hi"})
	if err != nil || textOf(res) != "hi" {
		t.Fatalf("echo: %v %v", textOf(res), err)
	}
	res, err = sess.CallTool(ctx, "route", map[string]any{"region": "Zürich", "priority": 3, "verbose": true, "config": map[string]string{"zone": "b"}})
	if err != nil || textOf(res) != "routed to Zürich" {
		t.Fatalf("route: %v %v", textOf(res), err)
	}
	prompts, err := sess.ListPrompts(ctx, "")
	if err != nil || len(prompts.Prompts) != 1 {
		t.Fatalf("prompts/list: %+v %v", prompts, err)
	}
	prompt, err := sess.GetPrompt(ctx, "greeting", map[string]string{"name": "Ann"})
	if err != nil || len(prompt.Messages) != 1 {
		t.Fatalf("prompts/get: %+v %v", prompt, err)
	}
	resources, err := sess.ListResources(ctx, "")
	if err != nil || len(resources.Resources) != 2 {
		t.Fatalf("resources/list: %+v %v", resources, err)
	}
	templates, err := sess.ListResourceTemplates(ctx, "")
	if err != nil || len(templates.ResourceTemplates) != 1 {
		t.Fatalf("resources/templates/list: %+v %v", templates, err)
	}
	for _, uri := range []string{"file:///readme.txt", unicodeURI} {
		read, err := sess.ReadResource(ctx, uri)
		if err != nil || len(read.Contents) != 1 {
			t.Fatalf("resources/read %s: %+v %v", uri, read, err)
		}
	}
	completion, err := sess.Complete(ctx, &mcp.CompleteRequestParams{
		Ref:      &mcp.PromptReference{Name: "greeting"},
		Argument: mcp.CompleteArgument{Name: "name", Value: "A"},
	})
	if err != nil || len(completion.Completion.Values) != 2 {
		t.Fatalf("completion/complete: %+v %v", completion, err)
	}

	// Errors keep their code through the client.
	if _, err := sess.CallTool(ctx, "nope", nil); !errors.Is(err, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams}) {
		t.Errorf("unknown tool: %v", err)
	}
	if _, err := sess.CallTool(ctx, "needs_sampling", nil); !errors.Is(err, mcp.ErrMissingRequiredClientCapability) {
		t.Errorf("needs_sampling: %v", err)
	}

	// The headers the client sent.
	for _, tt := range []struct{ method, name string }{
		{"server/discover", ""}, {"tools/list", ""}, {"tools/call", "echo"}, {"prompts/get", "greeting"},
		{"resources/read", "file:///readme.txt"}, {"resources/read", EncodeHeaderValue(unicodeURI)}, {"completion/complete", ""},
	} {
		found := false
		for _, e := range rec.posts(t, tt.method) {
			if e.header.Get(HeaderName) != tt.name {
				continue
			}
			found = true
			if e.header.Get(HeaderMethod) != tt.method || e.header.Get(HeaderProtocolVersion) != "2026-07-28" ||
				e.header.Get("Content-Type") != "application/json" || e.header.Get("Accept") != "application/json, text/event-stream" {
				t.Errorf("%s headers: %v", tt.method, e.header)
			}
		}
		if !found {
			t.Errorf("no %s POST with Mcp-Name %q", tt.method, tt.name)
		}
	}
	routes := rec.posts(t, "tools/call")
	var route http.Header
	for _, e := range routes {
		if e.header.Get(HeaderName) == "route" {
			route = e.header
		}
	}
	for k, want := range map[string]string{"Mcp-Param-Region": EncodeHeaderValue("Zürich"), "Mcp-Param-Priority": "3", "Mcp-Param-Verbose": "true", "Mcp-Param-Zone": "b"} {
		if got := route.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

func textOf(r *mcp.CallToolResult) string {
	if r == nil || len(r.Content) == 0 {
		return ""
	}
	if tc, ok := r.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

func TestProgressAndLogsOverSSE(t *testing.T) {
	url, rec := serve(t, NewHandler(newFixture().s, nil))
	var mu sync.Mutex
	var progress []float64
	var logs []string
	sess := connect(t, url, &client.Options{
		LogLevel: mcp.LevelInfo,
		OnProgress: func(ctx context.Context, p *mcp.ProgressNotificationParams) {
			mu.Lock()
			progress = append(progress, p.Progress)
			mu.Unlock()
		},
		OnLog: func(ctx context.Context, p *mcp.LoggingMessageNotificationParams) {
			mu.Lock()
			logs = append(logs, p.Logger)
			mu.Unlock()
		},
	}, nil)
	res, err := sess.CallTool(context.Background(), "work", nil)
	if err != nil || textOf(res) != "done" {
		t.Fatalf("work: %v %v", textOf(res), err)
	}
	mu.Lock()
	defer mu.Unlock()
	// Notifications are read before the response, so they have been handled.
	if len(progress) != 2 || progress[0] != 1 || progress[1] != 2 || len(logs) != 1 {
		t.Errorf("progress %v, logs %v", progress, logs)
	}
	posts := rec.posts(t, "tools/call")
	if len(posts) != 1 || posts[0].rheader.Get("Content-Type") != "text/event-stream" {
		t.Errorf("tools/call was not answered with an event stream")
	}
	// A request without notifications is answered with JSON.
	if lists := rec.posts(t, "server/discover"); len(lists) != 1 || lists[0].rheader.Get("Content-Type") != "application/json" {
		t.Errorf("server/discover was not answered with JSON")
	}
}

func TestListen(t *testing.T) {
	f := newFixture()
	url, rec := serve(t, NewHandler(f.s, nil))
	sess := connect(t, url, nil, nil)
	ctx := context.Background()

	sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	if !sub.Granted.ToolsListChanged {
		t.Errorf("granted %+v", sub.Granted)
	}
	f.s.NotifyToolListChanged()
	f.s.NotifyPromptListChanged() // not asked for: never sent
	select {
	case ev := <-sub.Events():
		if ev.Method != mcp.NotificationToolListChanged {
			t.Errorf("event %s", ev.Method)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no list_changed notification")
	}

	// A second stream, ended by the client.
	sub2, err := sess.Listen(ctx, mcp.SubscriptionFilter{PromptsListChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	sub2.Close()
	for range sub2.Events() {
	}

	// Graceful shutdown ends the first stream with its final result.
	f.s.EndSubscriptions()
	for range sub.Events() {
	}
	if !errors.Is(sub.Err(), client.ErrListenEnded) {
		t.Errorf("Err = %v, want ErrListenEnded", sub.Err())
	}
	for _, e := range rec.posts(t, "subscriptions/listen") {
		if e.rheader.Get("Content-Type") != "text/event-stream" {
			t.Errorf("listen answered with %q", e.rheader.Get("Content-Type"))
		}
	}
}

// TestClientDisconnectCancels: a call whose context ends has its POST
// closed, which cancels the handler; no cancellation is POSTed.
func TestClientDisconnectCancels(t *testing.T) {
	f := newFixture()
	url, rec := serve(t, NewHandler(f.s, nil))
	sess := connect(t, url, nil, nil)

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := sess.CallTool(ctx, "slow", nil)
		errc <- err
	}()
	srvRecv(t, f.slowStarted, "the start of the slow call")
	cancel()
	if err := srvRecv(t, errc, "the end of the cancelled CallTool"); !errors.Is(err, context.Canceled) {
		t.Errorf("CallTool = %v, want context.Canceled", err)
	}
	select {
	case err := <-f.slowEnded:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("handler context ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler was not cancelled")
	}
	// The session still works, and sent no notifications/cancelled.
	if _, err := sess.CallTool(context.Background(), "echo", map[string]string{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.posts(t, jsonrpc.CancelMethod)); n != 0 {
		t.Errorf("%d cancellation POSTs", n)
	}
}

// fakeServer is a scripted MCP endpoint: answer maps a request (or
// notification) to the status and body of the reply.
func fakeServer(t *testing.T, answer func(r *http.Request, msg *jsonrpc.Request) (int, string)) (string, func() []*http.Request) {
	t.Helper()
	var mu sync.Mutex
	var got []*http.Request
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m, _, err := jsonrpc.DecodeMessage(body)
		if err != nil {
			t.Errorf("fake server got %q: %v", body, err)
			w.WriteHeader(400)
			return
		}
		msg := m.(*jsonrpc.Request)
		r2 := r.Clone(context.Background())
		r2.Body = io.NopCloser(bytes.NewReader(body))
		mu.Lock()
		got = append(got, r2)
		mu.Unlock()
		if msg.Method == mcp.MethodDiscover {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+msg.ID.Raw()+`,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"private"}}`)
			return
		}
		status, reply := answer(r, msg)
		if reply != "" {
			if strings.HasPrefix(reply, "event:") || strings.HasPrefix(reply, ":") || strings.HasPrefix(reply, "data:") {
				w.Header().Set("Content-Type", "text/event-stream")
			} else if strings.HasPrefix(reply, "{") {
				w.Header().Set("Content-Type", "application/json")
			} else {
				w.Header().Set("Content-Type", "text/plain")
			}
		}
		w.WriteHeader(status)
		io.WriteString(w, strings.ReplaceAll(reply, "$ID", msg.ID.Raw()))
	}))
	t.Cleanup(ts.Close)
	return ts.URL, func() []*http.Request {
		mu.Lock()
		defer mu.Unlock()
		return append([]*http.Request(nil), got...)
	}
}

// The tools of the conformance suite's http-invalid-tool-headers scenario.
const invalidToolsList = `{"jsonrpc":"2.0","id":$ID,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"private","tools":[
{"name":"valid_tool","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}},
{"name":"invalid_empty_header","inputSchema":{"type":"object","properties":{"value":{"type":"string","x-mcp-header":""}}}},
{"name":"invalid_object_header","inputSchema":{"type":"object","properties":{"data":{"type":"object","x-mcp-header":"Data"}}}},
{"name":"invalid_array_header","inputSchema":{"type":"object","properties":{"items":{"type":"array","items":{"type":"string"},"x-mcp-header":"Items"}}}},
{"name":"invalid_null_header","inputSchema":{"type":"object","properties":{"nil":{"type":"null","x-mcp-header":"Nil"}}}},
{"name":"invalid_number_header","inputSchema":{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}},
{"name":"invalid_duplicate_same_case","inputSchema":{"type":"object","properties":{"field1":{"type":"string","x-mcp-header":"Region"},"field2":{"type":"string","x-mcp-header":"Region"}}}},
{"name":"invalid_duplicate_diff_case","inputSchema":{"type":"object","properties":{"field1":{"type":"string","x-mcp-header":"MyField"},"field2":{"type":"string","x-mcp-header":"myfield"}}}},
{"name":"invalid_space_in_name","inputSchema":{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"My Region"}}}},
{"name":"invalid_colon_in_name","inputSchema":{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"Region:Primary"}}}},
{"name":"invalid_non_ascii_name","inputSchema":{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"Région"}}}},
{"name":"invalid_control_char_name","inputSchema":{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"Region\t1"}}}},
{"name":"invalid_in_items","inputSchema":{"type":"object","properties":{"list":{"type":"array","items":{"type":"string","x-mcp-header":"Item"}}}}},
{"name":"invalid_in_anyOf","inputSchema":{"type":"object","anyOf":[{"properties":{"v":{"type":"string","x-mcp-header":"V"}}}]}},
{"name":"invalid_in_defs","inputSchema":{"type":"object","$defs":{"v":{"type":"string","x-mcp-header":"V"}},"properties":{"v":{"$ref":"#/$defs/v"}}}}
]}}`

func TestInvalidToolHeadersDropped(t *testing.T) {
	url, _ := fakeServer(t, func(r *http.Request, msg *jsonrpc.Request) (int, string) {
		return 200, invalidToolsList
	})
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	sess := connect(t, url, nil, &ClientOptions{Logger: logger})
	list, err := sess.ListTools(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 1 || list.Tools[0].Name != "valid_tool" {
		var names []string
		for _, tool := range list.Tools {
			names = append(names, tool.Name)
		}
		t.Fatalf("tools %v, want only valid_tool", names)
	}
	if list.CacheScope != "private" || list.ResultType != mcp.ResultTypeComplete {
		t.Errorf("the rest of the result was not kept: %+v", list)
	}
	if n := strings.Count(logs.String(), "removing a tool"); n != 14 {
		t.Errorf("%d removals logged, want 14:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "tool=invalid_space_in_name") {
		t.Errorf("log does not name the tool:\n%s", logs.String())
	}
}

// TestClientHeaders checks what the client mirrors, against the values of
// the conformance suite's http-custom-headers scenario.
func TestClientHeaders(t *testing.T) {
	const tools = `{"jsonrpc":"2.0","id":$ID,"result":{"resultType":"complete","ttlMs":0,"tools":[{"name":"test_custom_headers","inputSchema":{"type":"object","properties":{
"region":{"type":"string","x-mcp-header":"Region"},
"priority":{"type":"integer","x-mcp-header":"Priority"},
"verbose":{"type":"boolean","x-mcp-header":"Verbose"},
"debug":{"type":"boolean","x-mcp-header":"Debug"},
"empty_val":{"type":"string","x-mcp-header":"EmptyVal"},
"method_val":{"type":"string","x-mcp-header":"Method"},
"float_val":{"type":"number"},
"non_ascii_val":{"type":"string","x-mcp-header":"NonAscii"},
"whitespace_val":{"type":"string","x-mcp-header":"Whitespace"},
"leading_space_val":{"type":"string","x-mcp-header":"LeadingSpace"},
"internal_space_val":{"type":"string","x-mcp-header":"InternalSpace"},
"control_char_val":{"type":"string","x-mcp-header":"ControlChar"},
"crlf_val":{"type":"string","x-mcp-header":"CrLf"},
"tab_val":{"type":"string","x-mcp-header":"Tab"},
"sentinel_val":{"type":"string","x-mcp-header":"Sentinel"},
"null_val":{"type":"string","x-mcp-header":"NullVal"},
"absent_val":{"type":"string","x-mcp-header":"AbsentVal"},
"query":{"type":"string"}}}}]}}`
	url, requests := fakeServer(t, func(r *http.Request, msg *jsonrpc.Request) (int, string) {
		if msg.Method == mcp.MethodListTools {
			return 200, tools
		}
		return 200, `{"jsonrpc":"2.0","id":$ID,"result":{"resultType":"complete","content":[]}}`
	})
	sess := connect(t, url, nil, nil)
	ctx := context.Background()
	if _, err := sess.ListTools(ctx, ""); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{
		"region": "us-west1", "priority": 42, "verbose": false, "debug": true, "empty_val": "",
		"method_val": "test-method", "float_val": 3.14159, "non_ascii_val": "Hello, 世界",
		"whitespace_val": " padded ", "leading_space_val": " us-west1", "internal_space_val": "us west 1",
		"control_char_val": "line1\nline2", "crlf_val": "line1\r\nline2", "tab_val": "\tindented",
		"sentinel_val": "=?base64?literal?=", "null_val": nil, "query": "SELECT * FROM users",
	}
	if _, err := sess.CallTool(ctx, "test_custom_headers", args); err != nil {
		t.Fatal(err)
	}
	var call *http.Request
	for _, r := range requests() {
		if r.Header.Get(HeaderMethod) == mcp.MethodCallTool {
			call = r
		}
	}
	if call == nil {
		t.Fatal("no tools/call")
	}
	want := map[string]string{
		"Mcp-Name":                "test_custom_headers",
		"Mcp-Param-Region":        "us-west1",
		"Mcp-Param-Priority":      "42",
		"Mcp-Param-Verbose":       "false",
		"Mcp-Param-Debug":         "true",
		"Mcp-Param-Method":        "test-method",
		"Mcp-Param-Nonascii":      "=?base64?SGVsbG8sIOS4lueVjA==?=",
		"Mcp-Param-Whitespace":    "=?base64?IHBhZGRlZCA=?=",
		"Mcp-Param-Leadingspace":  EncodeHeaderValue(" us-west1"),
		"Mcp-Param-Internalspace": "us west 1",
		"Mcp-Param-Controlchar":   "=?base64?bGluZTEKbGluZTI=?=",
		"Mcp-Param-Crlf":          EncodeHeaderValue("line1\r\nline2"),
		"Mcp-Param-Tab":           EncodeHeaderValue("\tindented"),
		"Mcp-Param-Sentinel":      "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
	}
	for k, v := range want {
		if got := call.Header.Values(k); len(got) != 1 || got[0] != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if got, ok := call.Header["Mcp-Param-Emptyval"]; !ok || len(got) != 1 || got[0] != "" {
		t.Errorf("Mcp-Param-EmptyVal = %q (present %v), want an empty value", got, ok)
	}
	for _, k := range []string{"Mcp-Param-Nullval", "Mcp-Param-Absentval", "Mcp-Param-Query", "Mcp-Param-Float_val"} {
		if v, ok := call.Header[k]; ok {
			t.Errorf("%s = %q, want no header", k, v)
		}
	}
	// Every header value decodes back to the argument.
	for k, v := range want {
		if !strings.HasPrefix(k, HeaderParamPrefix) {
			continue
		}
		got, err := DecodeHeaderValue(v)
		if err != nil {
			t.Errorf("%s: %v", k, err)
		}
		var argName string
		for name, a := range args {
			if s, ok := a.(string); ok && s == got {
				argName = name
			}
		}
		if argName == "" && k != "Mcp-Param-Priority" && k != "Mcp-Param-Verbose" && k != "Mcp-Param-Debug" {
			t.Errorf("%s decodes to %q, which is no argument", k, got)
		}
	}
}

// TestHeaderMismatchRetry: a tools/call refused with -32020 makes the
// client list the tools again and retry once with the new headers.
func TestHeaderMismatchRetry(t *testing.T) {
	f := newFixture()
	plain := []mcp.Tool{{Name: "route", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string"}}}`)}}
	f.setTools(plain)
	url, rec := serve(t, NewHandler(f.s, nil))
	sess := connect(t, url, nil, nil)
	ctx := context.Background()
	if _, err := sess.ListTools(ctx, ""); err != nil {
		t.Fatal(err)
	}
	// The server now annotates the argument: the client, not knowing,
	// sends no header and is refused, lists again, and retries.
	f.setTools([]mcp.Tool{{Name: "route", InputSchema: json.RawMessage(routeSchema)}})
	res, err := sess.CallTool(ctx, "route", map[string]string{"region": "eu"})
	if err != nil || textOf(res) != "routed to eu" {
		t.Fatalf("route: %v %v", textOf(res), err)
	}
	calls := rec.posts(t, "tools/call")
	if len(calls) != 2 || calls[0].status != 400 || calls[1].status != 200 || calls[1].header.Get("Mcp-Param-Region") != "eu" {
		t.Fatalf("tools/call POSTs: %+v", calls)
	}
	if n := len(rec.posts(t, "tools/list")); n != 2 {
		t.Errorf("%d tools/list POSTs, want 2", n)
	}

	// When the retry is refused too, the caller gets the -32020: the
	// client retries only once.
	f.setTools(plain)
	if _, err := sess.ListTools(ctx, ""); err != nil {
		t.Fatal(err)
	}
	f.setTools([]mcp.Tool{{Name: "route", InputSchema: json.RawMessage(routeSchema)}})
	if _, err := sess.CallTool(ctx, "route", map[string]string{"region": "eu"}); err != nil {
		t.Fatal(err) // the refetch sees the annotation: fine
	}
	bad := &ClientOptions{HTTPClient: &http.Client{Transport: dropParamHeaders{http.DefaultTransport}}}
	sess2 := connect(t, url, nil, bad)
	before := len(rec.posts(t, "tools/call"))
	_, err = sess2.CallTool(ctx, "route", map[string]string{"region": "eu"})
	if !mcp.IsHeaderMismatch(err) {
		t.Fatalf("CallTool = %v, want -32020", err)
	}
	if n := len(rec.posts(t, "tools/call")) - before; n != 2 {
		t.Errorf("%d tools/call POSTs, want 2 (one retry)", n)
	}
}

// dropParamHeaders is a RoundTripper that strips Mcp-Param-* headers, so
// the server always refuses.
type dropParamHeaders struct{ next http.RoundTripper }

func (d dropParamHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k := range r.Header {
		if strings.HasPrefix(k, HeaderParamPrefix) {
			delete(r.Header, k)
		}
	}
	return d.next.RoundTrip(r)
}

// TestClientErrorStatuses: answers that are not JSON-RPC become error
// responses that say what happened, and a status other than 2xx is in the
// call's error as a *transport.HTTPStatusError, with the server's own
// JSON-RPC error when the body held one.
func TestClientErrorStatuses(t *testing.T) {
	var mode atomic.Value
	url, _ := fakeServer(t, func(r *http.Request, msg *jsonrpc.Request) (int, string) {
		switch mode.Load() {
		case "502":
			return 502, "bad gateway"
		case "403":
			return 403, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Forbidden: Host not allowed"}}`
		case "202":
			return 202, ""
		case "sse-cut":
			return 200, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n"
		case "sse-ok":
			return 200, ": hello\r\n\r\nid: 4\r\nretry: 10\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":$ID,\"result\":{\"resultType\":\"complete\",\"content\":[]}}\r\n\r\n"
		case "other-id":
			return 200, `{"jsonrpc":"2.0","id":"zzz","result":{}}`
		case "huge":
			return 200, `{"jsonrpc":"2.0","id":$ID,"result":{"resultType":"complete","content":[],"x":"` + strings.Repeat("x", 2000) + `"}}`
		}
		return 500, ""
	})
	sess := connect(t, url, nil, &ClientOptions{MaxMessageSize: 1000})
	ctx := context.Background()
	for _, tt := range []struct {
		mode    string
		code    int64
		message string
		status  int // of the *transport.HTTPStatusError; 0: none
	}{
		{"502", jsonrpc.CodeInternalError, "HTTP 502 Bad Gateway", 502},
		{"403", jsonrpc.CodeInvalidRequest, "Forbidden: Host not allowed", 403},
		{"202", jsonrpc.CodeInternalError, "carried no JSON-RPC response", 0},
		{"sse-cut", jsonrpc.CodeInternalError, "ended before the response", 0},
		{"sse-ok", 0, "", 0},
		{"other-id", jsonrpc.CodeInternalError, "with the response to", 0},
		{"huge", jsonrpc.CodeInternalError, "exceeds the limit of 1000 bytes", 0},
	} {
		mode.Store(tt.mode)
		_, err := sess.CallTool(ctx, "x", nil)
		if tt.code == 0 {
			if err != nil {
				t.Errorf("%s: %v", tt.mode, err)
			}
			continue
		}
		var e *jsonrpc.Error
		if !errors.As(err, &e) || e.Code != tt.code || !strings.Contains(e.Message, tt.message) {
			t.Errorf("%s: error %v, want code %d with %q", tt.mode, err, tt.code, tt.message)
		}
		if err.Error() != e.Error() {
			t.Errorf("%s: error says %q, want the error object's %q", tt.mode, err, e)
		}
		var se *transport.HTTPStatusError
		switch {
		case tt.status == 0 && errors.As(err, &se):
			t.Errorf("%s: error %v carries HTTP status %d", tt.mode, err, se.StatusCode)
		case tt.status != 0 && (!errors.As(err, &se) || se.StatusCode != tt.status || !strings.HasPrefix(se.Status, strconv.Itoa(tt.status)+" ")):
			t.Errorf("%s: error %v, want a *transport.HTTPStatusError with status %d", tt.mode, err, tt.status)
		}
	}
}

// TestNotificationPost: notifications other than cancellations are
// POSTed, and Write reports a refusal.
func TestNotificationPost(t *testing.T) {
	status := 202
	url, requests := fakeServer(t, func(r *http.Request, msg *jsonrpc.Request) (int, string) { return status, "" })
	conn, err := NewClientTransport(url, nil).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	note := []byte(`{"jsonrpc":"2.0","method":"notifications/custom","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	if err := conn.Write(ctx, note); err != nil {
		t.Fatal(err)
	}
	status = 400
	if err := conn.Write(ctx, note); err == nil {
		t.Error("a refused notification was not reported")
	}
	// A cancellation of no request in flight, and a response: neither is sent.
	if err := conn.Write(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`)); err != nil {
		t.Fatal(err)
	}
	if err := conn.Write(ctx, []byte(`{"jsonrpc":"2.0","id":9,"result":{}}`)); err != nil {
		t.Fatal(err)
	}
	got := requests()
	if len(got) != 2 {
		t.Fatalf("%d POSTs, want 2", len(got))
	}
	if h := got[0].Header; h.Get(HeaderMethod) != "notifications/custom" || h.Get(HeaderProtocolVersion) != "2026-07-28" {
		t.Errorf("notification headers %v", h)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Read(ctx); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Read after Close = %v", err)
	}
	if err := conn.Write(ctx, note); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Write after Close = %v", err)
	}
}

// TestClientExtraHeaders: ClientOptions.Header goes on every POST, and the
// transport's own headers win.
func TestClientExtraHeaders(t *testing.T) {
	url, requests := fakeServer(t, func(r *http.Request, msg *jsonrpc.Request) (int, string) { return 500, "" })
	connect(t, url, nil, &ClientOptions{Header: http.Header{"Authorization": {"Bearer t"}, "Mcp-Method": {"forged"}}})
	got := requests()
	if len(got) != 1 || got[0].Header.Get("Authorization") != "Bearer t" || got[0].Header.Get(HeaderMethod) != "server/discover" {
		t.Fatalf("requests %v", got)
	}
}

func TestConnectBadURL(t *testing.T) {
	if _, err := NewClientTransport("ftp://example.com/mcp", nil).Connect(context.Background()); err == nil {
		t.Error("Connect accepted an ftp URL")
	}
}

// TestCancelNotificationClosesPOST: on the raw transport, a
// notifications/cancelled for a request in flight closes its POST (which
// cancels the handler) instead of being sent, and nothing is delivered for
// the request.
func TestCancelNotificationClosesPOST(t *testing.T) {
	f := newFixture()
	url, rec := serve(t, NewHandler(f.s, nil))
	conn, err := NewClientTransport(url, nil).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	if err := conn.Write(ctx, []byte(rawRequest(41, "tools/call", `"name":"slow"`))); err != nil {
		t.Fatal(err)
	}
	srvRecv(t, f.slowStarted, "the start of the slow call")
	if err := conn.Write(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":41,"reason":"enough"}}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.slowEnded:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler was not cancelled")
	}
	rctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if msg, err := conn.Read(rctx); err == nil {
		t.Errorf("delivered %s for a cancelled request", msg)
	}
	if n := len(rec.posts(t, jsonrpc.CancelMethod)); n != 0 {
		t.Errorf("%d cancellation POSTs", n)
	}
}

// TestCloseEndsCalls: Close closes every POST in flight and returns.
func TestCloseEndsCalls(t *testing.T) {
	f := newFixture()
	url, _ := serve(t, NewHandler(f.s, nil))
	conn, err := NewClientTransport(url, nil).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Write(context.Background(), []byte(rawRequest(1, "tools/call", `"name":"slow"`))); err != nil {
		t.Fatal(err)
	}
	srvRecv(t, f.slowStarted, "the start of the slow call")
	closed := make(chan error, 1)
	go func() { closed <- conn.Close() }()
	srvRecv(t, closed, "Close's return with a call in flight")
	select {
	case <-f.slowEnded:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler was not cancelled")
	}
}

// TestConcurrentCalls: many calls in flight on one connection each get
// their own answer.
func TestConcurrentCalls(t *testing.T) {
	url, _ := serve(t, NewHandler(newFixture().s, nil))
	sess := connect(t, url, &client.Options{OnProgress: func(context.Context, *mcp.ProgressNotificationParams) {}}, nil)
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			tool, args, want := "echo", map[string]any{"text": strings.Repeat("x", i)}, strings.Repeat("x", i)
			if i%2 == 1 {
				tool, args, want = "work", nil, "done"
			}
			res, err := sess.CallTool(context.Background(), tool, args)
			if err != nil || textOf(res) != want {
				t.Errorf("call %d: %q %v", i, textOf(res), err)
			}
		})
	}
	wg.Wait()
}

// TestGracefulShutdown: with EndSubscriptions registered, Shutdown ends
// the listen streams with their final result and completes.
func TestGracefulShutdown(t *testing.T) {
	f := newFixture()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: NewHandler(f.s, nil)}
	srv.RegisterOnShutdown(f.s.EndSubscriptions)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	sess := connect(t, "http://"+ln.Addr().String()+"/mcp", nil, nil)
	sub, err := sess.Listen(context.Background(), mcp.SubscriptionFilter{ToolsListChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for {
		if _, open := srvRecv2(t, sub.Events(), "the end of the listen stream after Shutdown"); !open {
			break
		}
	}
	if !errors.Is(sub.Err(), client.ErrListenEnded) {
		t.Errorf("subscription ended with %v", sub.Err())
	}
	if err := srvRecv(t, served, "Serve's return after Shutdown"); !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve: %v", err)
	}
}

// TestStreamConnectionReused: after an event-stream response the client
// drains the stream, so the next POST reuses the connection. The client
// package cancels a call's context as soon as the call returns, which is
// before the drain: the POST's context must not follow it any more, or
// net/http closes the connection (this was 2 or 3 connections in 50 runs).
// With MaxConnsPerHost 1 net/http cannot dial a spare connection while the
// previous one is being put back, so the discover request and the ten
// calls must all share one.
func TestStreamConnectionReused(t *testing.T) {
	f := newFixture()
	var conns atomic.Int32
	var streams atomic.Int32
	h := NewHandler(f.s, nil)
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if mediaType(w.Header().Get("Content-Type")) == "text/event-stream" {
			streams.Add(1)
		}
	}))
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	defer ts.Close()
	tr := &http.Transport{MaxConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	sess := connect(t, ts.URL, &client.Options{OnProgress: func(context.Context, *mcp.ProgressNotificationParams) {}},
		&ClientOptions{HTTPClient: &http.Client{Transport: tr}})
	for i := range 10 {
		// The bound only ends a hang (a connection that never came back
		// to the pool would block the next POST forever).
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err := sess.CallTool(ctx, "work", nil)
		cancel()
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	ts.Close() // waits for the handlers, so that streams is complete
	if n := streams.Load(); n != 10 {
		t.Errorf("%d event-stream responses, want 10", n)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 11 sequential POSTs, want 1", n)
	}
}
