package streamhttp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// These tests drive the handler as a 2025-11-25 client does, with raw HTTP:
// sessions, event streams with ids, server-to-client requests and their
// answers, the GET stream, resumption, DELETE and the limits.

// TestHandlerLegacyInitialize: initialize opens a session whose id is
// visible ASCII; the session then serves the legacy methods.
func TestHandlerLegacyInitialize(t *testing.T) {
	url, _, _, _ := srvServer(t, nil)
	resp, body := post(t, url, srvHeaders(""), srvInitialize)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("initialize: status %d, Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	if !regexp.MustCompile(`^[\x21-\x7E]{16,}$`).MatchString(sid) {
		t.Fatalf("session id %q is not long visible ASCII", sid)
	}
	var init struct {
		Result mcp.InitializeResult `json:"result"`
	}
	if err := json.Unmarshal(body, &init); err != nil || init.Result.ProtocolVersion != srvVersion || init.Result.ServerInfo.Name != "fixture" {
		t.Fatalf("initialize result %s (%v)", body, err)
	}
	if resp, body := post(t, url, srvHeaders(""), srvInitialize); resp.Header.Get("Mcp-Session-Id") == sid {
		t.Fatalf("a second initialize got the same session id: %s", body)
	}

	resp, body = post(t, url, srvHeaders(sid), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if resp.StatusCode != http.StatusAccepted || len(body) != 0 {
		t.Fatalf("notifications/initialized: status %d body %q, want 202 and nothing", resp.StatusCode, body)
	}
	resp, body = post(t, url, srvHeaders(sid), `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"result":{}`) {
		t.Fatalf("ping: status %d: %s", resp.StatusCode, body)
	}
	resp, body = post(t, url, srvHeaders(sid), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"text":"hi"`) {
		t.Fatalf("tools/call: status %d: %s", resp.StatusCode, body)
	}
	// JSON-RPC errors are in-band: 404 would tell the client its session
	// is gone.
	resp, body = post(t, url, srvHeaders(sid), `{"jsonrpc":"2.0","id":3,"method":"no/such"}`)
	if _, e := rpcError(t, body); resp.StatusCode != http.StatusOK || e.Code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("unknown method: status %d: %s", resp.StatusCode, body)
	}
	// The header must name the session's version, when present.
	resp, body = post(t, url, srvWith(srvHeaders(sid), HeaderProtocolVersion, "2025-06-18"), `{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if _, e := rpcError(t, body); resp.StatusCode != http.StatusBadRequest || !strings.Contains(e.Message, "2025-06-18") {
		t.Fatalf("version mismatch: status %d: %s", resp.StatusCode, body)
	}
	resp, body = post(t, url, srvWith(srvHeaders(sid), HeaderProtocolVersion, ""), `{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("no version header: status %d: %s", resp.StatusCode, body)
	}
	// A legacy request without its session.
	resp, body = post(t, url, srvWith(srvHeaders(""), HeaderProtocolVersion, srvVersion), `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`)
	if _, e := rpcError(t, body); resp.StatusCode != http.StatusBadRequest || !strings.Contains(e.Message, "Mcp-Session-Id") {
		t.Fatalf("no session: status %d: %s", resp.StatusCode, body)
	}
}

// TestHandlerLegacyProgressOverSSE: a request that reports progress and
// logs answers with an event stream that starts with a priming event, and
// every event has an id naming the stream.
func TestHandlerLegacyProgressOverSSE(t *testing.T) {
	url, _, _, _ := srvServer(t, nil)
	sid := srvInit(t, url)
	if resp, body := post(t, url, srvHeaders(sid), `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("logging/setLevel: %d %s", resp.StatusCode, body)
	}
	resp := srvOpen(t, http.MethodPost, url, srvHeaders(sid), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"work","_meta":{"progressToken":"p1"}}}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	es := srvReadEvents(resp.Body)
	first := es.next(t)
	srvPriming(t, first, "1-0")
	for i := 1; i <= 2; i++ {
		ev := es.next(t)
		n := srvAsNotification(t, ev, mcp.NotificationProgress)
		if ev.id != fmt.Sprintf("1-%d", i) || !strings.Contains(string(n.Params), `"progressToken":"p1"`) {
			t.Fatalf("progress event %+v", ev)
		}
	}
	if ev := es.next(t); ev.id != "1-3" {
		t.Fatalf("log event %+v", ev)
	} else {
		srvAsNotification(t, ev, mcp.NotificationMessage)
	}
	ev := es.next(t)
	if r := srvAsResponse(t, ev, "2"); ev.id != "1-4" || r.Error != nil || !strings.Contains(string(r.Result), "done") {
		t.Fatalf("response event %+v", ev)
	}
	es.end(t)
}

// TestHandlerLegacyElicitation: a handler's server-to-client request goes
// on its request's own stream; the client answers with a POST of the
// session, which gets 202, and the result follows on the stream.
func TestHandlerLegacyElicitation(t *testing.T) {
	url, _, lt, h := srvServer(t, nil)
	sid := srvInit(t, url)
	resp := srvOpen(t, http.MethodPost, url, srvHeaders(sid), `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask"}}`)
	es := srvReadEvents(resp.Body)
	srvPriming(t, es.next(t), "1-0")
	ev := es.next(t)
	q := srvAsRequest(t, ev, mcp.MethodElicit)
	if ev.id != "1-1" || !strings.Contains(string(q.Params), "Which region?") {
		t.Fatalf("elicitation event %+v", ev)
	}

	// Answers for no request of this session are refused.
	r, body := post(t, url, srvHeaders(sid), `{"jsonrpc":"2.0","id":99,"result":{"action":"cancel"}}`)
	if r.StatusCode != http.StatusBadRequest {
		t.Fatalf("a stray answer: status %d: %s", r.StatusCode, body)
	}
	answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"region":"eu-west-1"}}}`, q.ID.Raw())
	r, body = post(t, url, srvHeaders(sid), answer)
	if r.StatusCode != http.StatusAccepted || len(body) != 0 {
		t.Fatalf("the answer: status %d body %q, want 202", r.StatusCode, body)
	}
	ev = es.next(t)
	if res := srvAsResponse(t, ev, "7"); res.Error != nil || !strings.Contains(string(res.Result), "region: eu-west-1") {
		t.Fatalf("result %s", ev.data)
	}
	es.end(t)
	if err := srvRecv(t, lt.askEnded, "end of ask"); err != nil {
		t.Fatalf("ask ended with %v", err)
	}
	// A repeated answer is late, not wrong.
	if r, body := post(t, url, srvHeaders(sid), answer); r.StatusCode != http.StatusAccepted {
		t.Fatalf("a repeated answer: status %d: %s", r.StatusCode, body)
	}
	ls := h.srvSession(t, sid)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if len(ls.calls) != 0 {
		t.Errorf("%d server-to-client requests still pending", len(ls.calls))
	}
}

// TestHandlerLegacyElicitationJSONOnly: a client that does not accept
// event streams cannot be asked; the handler is told why.
func TestHandlerLegacyElicitationJSONOnly(t *testing.T) {
	url, _, _, _ := srvServer(t, nil)
	sid := srvInit(t, url)
	resp, body := post(t, url, srvWith(srvHeaders(sid), "Accept", "application/json"), `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask"}}`)
	_, e := rpcError(t, body)
	if resp.StatusCode != http.StatusOK || e.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(e.Message, "text/event-stream") {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
}

// TestHandlerLegacyStandaloneStream: a GET opens the session's stream,
// where list changes arrive; a second GET is refused with 409.
func TestHandlerLegacyStandaloneStream(t *testing.T) {
	url, f, _, _ := srvServer(t, nil)
	sid := srvInit(t, url)
	resp := srvOpen(t, http.MethodGet, url, srvGetHeaders(sid, ""), "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET: status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	es := srvReadEvents(resp.Body)
	srvPriming(t, es.next(t), "0-0")

	if second := srvOpen(t, http.MethodGet, url, srvGetHeaders(sid, ""), ""); second.StatusCode != http.StatusConflict {
		t.Fatalf("second GET: status %d, want 409", second.StatusCode)
	}
	f.s.NotifyToolListChanged()
	ev := es.next(t)
	srvAsNotification(t, ev, mcp.NotificationToolListChanged)
	if ev.id != "0-1" {
		t.Fatalf("event id %q, want 0-1", ev.id)
	}
	// The stream carries only what belongs to no request.
	if r, body := post(t, url, srvHeaders(sid), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","_meta":{"progressToken":"p"}}}`); !strings.Contains(string(body), `"id":1,"result"`) {
		t.Fatalf("tools/call: %d %s", r.StatusCode, body)
	}
	f.s.NotifyPromptListChanged()
	srvAsNotification(t, es.next(t), mcp.NotificationPromptListChanged)

	// Without a session, GET is what 2026-07-28 always got.
	if r := srvOpen(t, http.MethodGet, url, http.Header{"Accept": {"text/event-stream"}}, ""); r.StatusCode != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "POST" {
		t.Fatalf("GET without a session: status %d Allow %q", r.StatusCode, r.Header.Get("Allow"))
	}
	if r := srvOpen(t, http.MethodGet, url, srvWith(srvGetHeaders(sid, ""), "Accept", "application/json"), ""); r.StatusCode != http.StatusNotAcceptable {
		t.Fatalf("GET without Accept: text/event-stream: status %d", r.StatusCode)
	}
}

// TestHandlerLegacyResumeStandalone: a GET with Last-Event-ID gets the
// standalone stream's events after that id, then the live ones; the
// connection it replaces ends.
func TestHandlerLegacyResumeStandalone(t *testing.T) {
	url, f, _, _ := srvServer(t, nil)
	sid := srvInit(t, url)
	first := srvOpen(t, http.MethodGet, url, srvGetHeaders(sid, ""), "")
	es1 := srvReadEvents(first.Body)
	srvPriming(t, es1.next(t), "0-0")
	f.s.NotifyToolListChanged()
	f.s.NotifyPromptListChanged()
	f.s.NotifyResourceListChanged()
	if ev := es1.next(t); ev.id != "0-1" {
		t.Fatalf("first event %+v", ev)
	}

	// The client lost the stream after 0-1.
	second := srvOpen(t, http.MethodGet, url, srvGetHeaders(sid, "0-1"), "")
	if second.StatusCode != http.StatusOK {
		t.Fatalf("resume: status %d", second.StatusCode)
	}
	es2 := srvReadEvents(second.Body)
	srvPriming(t, es2.next(t), "0-1")
	if ev := es2.next(t); ev.id != "0-2" {
		t.Fatalf("replayed %+v, want 0-2", ev)
	} else {
		srvAsNotification(t, ev, mcp.NotificationPromptListChanged)
	}
	if ev := es2.next(t); ev.id != "0-3" {
		t.Fatalf("replayed %+v, want 0-3", ev)
	} else {
		srvAsNotification(t, ev, mcp.NotificationResourceListChanged)
	}
	f.s.NotifyToolListChanged()
	if ev := es2.next(t); ev.id != "0-4" {
		t.Fatalf("live %+v, want 0-4", ev)
	}
	// The replaced connection ended (after whatever it had been sent).
	es1.drain(t)

	for _, bad := range []string{"nonsense", "7-1", "0-99"} {
		if r := srvOpen(t, http.MethodGet, url, srvGetHeaders(sid, bad), ""); r.StatusCode != http.StatusBadRequest {
			t.Errorf("Last-Event-ID %q: status %d, want 400", bad, r.StatusCode)
		}
	}
}

// TestHandlerLegacyResumeRequestStream: a handler closes its stream's
// connection (SEP-1699 polling); the client resumes with GET and
// Last-Event-ID and gets what was sent meanwhile, the response included,
// then the stream ends. Resuming the ended stream again replays it.
func TestHandlerLegacyResumeRequestStream(t *testing.T) {
	url, _, lt, _ := srvServer(t, nil)
	sid := srvInit(t, url)

	// Resumed after the request has finished.
	resp := srvOpen(t, http.MethodPost, url, srvHeaders(sid), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"poll","_meta":{"progressToken":"p"}}}`)
	es := srvReadEvents(resp.Body)
	srvPriming(t, es.next(t), "1-0")
	es.end(t) // the server closed the connection, not the stream
	if !srvRecv(t, lt.polled, "CloseEventStream") {
		t.Fatal("CloseEventStream reported false")
	}
	srvSend(t, lt.pollGo, struct{}{}, "the go-ahead of poll")
	// The handler is done once the client can read its response.
	get := srvOpen(t, http.MethodGet, url, srvGetHeaders(sid, "1-0"), "")
	es = srvReadEvents(get.Body)
	srvPriming(t, es.next(t), "1-0")
	ev := es.next(t)
	srvAsNotification(t, ev, mcp.NotificationProgress)
	if ev.id != "1-1" {
		t.Fatalf("progress id %q", ev.id)
	}
	if ev := es.next(t); ev.id != "1-2" || !strings.Contains(string(srvAsResponse(t, ev, "1").Result), "polled") {
		t.Fatalf("response %+v", ev)
	}
	es.end(t)

	// Resumed while the request runs: the GET carries the rest live.
	resp = srvOpen(t, http.MethodPost, url, srvHeaders(sid), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"poll","_meta":{"progressToken":"p"}}}`)
	es = srvReadEvents(resp.Body)
	srvPriming(t, es.next(t), "2-0")
	es.end(t)
	srvRecv(t, lt.polled, "CloseEventStream")
	get = srvOpen(t, http.MethodGet, url, srvGetHeaders(sid, "2-0"), "")
	es = srvReadEvents(get.Body)
	srvPriming(t, es.next(t), "2-0")
	srvSend(t, lt.pollGo, struct{}{}, "the go-ahead of poll")
	srvAsNotification(t, es.next(t), mcp.NotificationProgress)
	srvAsResponse(t, es.next(t), "2")
	es.end(t)

	// An ended stream whose events are kept can be replayed again.
	get = srvOpen(t, http.MethodGet, url, srvGetHeaders(sid, "2-1"), "")
	es = srvReadEvents(get.Body)
	srvPriming(t, es.next(t), "2-1")
	srvAsResponse(t, es.next(t), "2")
	es.end(t)
}

// TestHandlerLegacyReplayBound: the replay buffer keeps the newest events
// within ReplayBytes; a stream whose events are all gone cannot be resumed.
func TestHandlerLegacyReplayBound(t *testing.T) {
	url, _, _, h := srvServer(t, &HandlerOptions{Sessions: &SessionOptions{ReplayBytes: 600}})
	sid := srvInit(t, url)
	for id := 1; id <= 5; id++ {
		post(t, url, srvHeaders(sid), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"work","_meta":{"progressToken":"p"}}}`, id))
	}
	ls := h.srvSession(t, sid)
	ls.mu.Lock()
	kept, bytes, streams := len(ls.kept)-ls.keptHead, ls.keptBytes, len(ls.streams)
	ls.mu.Unlock()
	if bytes > 600 || kept == 0 || streams > 3 {
		t.Fatalf("%d events, %d bytes, %d streams kept", kept, bytes, streams)
	}
	if r := srvOpen(t, http.MethodGet, url, srvGetHeaders(sid, "1-0"), ""); r.StatusCode != http.StatusBadRequest {
		t.Fatalf("resuming a forgotten stream: status %d, want 400", r.StatusCode)
	}
	r := srvOpen(t, http.MethodGet, url, srvGetHeaders(sid, "5-2"), "")
	es := srvReadEvents(r.Body)
	srvPriming(t, es.next(t), "5-2")
	srvAsResponse(t, es.next(t), "5")
	es.end(t)
}

// TestHandlerLegacyCancelNotification: notifications/cancelled ends the
// named request's handler.
func TestHandlerLegacyCancelNotification(t *testing.T) {
	url, f, _, _ := srvServer(t, nil)
	sid := srvInit(t, url)
	done := make(chan []byte, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"slow"}}`))
		req.Header = srvHeaders(sid)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- nil
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- b
	}()
	srvRecv(t, f.slowStarted, "slow call")
	if r, body := post(t, url, srvHeaders(sid), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s","reason":"test"}}`); r.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/cancelled: %d %s", r.StatusCode, body)
	}
	if err := srvRecv(t, f.slowEnded, "end of slow"); err != context.Canceled {
		t.Fatalf("slow ended with %v", err)
	}
	if body := srvRecv(t, done, "slow's answer"); !strings.Contains(string(body), `"id":"s"`) {
		t.Fatalf("slow's answer %q", body)
	}
}

// TestHandlerLegacyDelete: DELETE ends the session, its requests in
// progress and its streams; afterwards the session id gets 404.
func TestHandlerLegacyDelete(t *testing.T) {
	url, f, _, h := srvServer(t, nil)
	sid := srvInit(t, url)
	get := srvOpen(t, http.MethodGet, url, srvGetHeaders(sid, ""), "")
	es := srvReadEvents(get.Body)
	srvPriming(t, es.next(t), "0-0")
	slow := make(chan struct{})
	go func() {
		defer close(slow)
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`))
		req.Header = srvHeaders(sid)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	srvRecv(t, f.slowStarted, "slow call")

	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header = http.Header{"Mcp-Session-Id": {sid}, HeaderProtocolVersion: {srvVersion}}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: status %d", resp.StatusCode)
	}
	if err := srvRecv(t, f.slowEnded, "end of slow"); err != context.Canceled {
		t.Fatalf("the request in progress ended with %v", err)
	}
	es.end(t)
	srvRecv(t, slow, "slow's answer")

	r, body := post(t, url, srvHeaders(sid), `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if id, e := rpcError(t, body); r.StatusCode != http.StatusNotFound || id.Raw() != "2" || !strings.Contains(e.Message, "initialize") {
		t.Fatalf("after DELETE: status %d: %s", r.StatusCode, body)
	}
	if r := srvOpen(t, http.MethodGet, url, srvGetHeaders(sid, ""), ""); r.StatusCode != http.StatusNotFound {
		t.Fatalf("GET after DELETE: status %d", r.StatusCode)
	}
	if r := srvOpen(t, http.MethodDelete, url, http.Header{"Mcp-Session-Id": {sid}}, ""); r.StatusCode != http.StatusNotFound {
		t.Fatalf("DELETE after DELETE: status %d", r.StatusCode)
	}
	if n := h.sessions.len(); n != 0 {
		t.Fatalf("%d sessions left", n)
	}
}

// TestHandlerLegacyUnknownSession: every method with a session id that was
// never issued gets 404 and a JSON-RPC error.
func TestHandlerLegacyUnknownSession(t *testing.T) {
	url, _, _, _ := srvServer(t, nil)
	for _, tt := range []struct {
		method, body string
		h            http.Header
	}{
		{http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, srvHeaders("nope")},
		{http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, srvHeaders("nope")},
		{http.MethodPost, `{"jsonrpc":"2.0","id":1,"result":{}}`, srvHeaders("nope")},
		{http.MethodGet, "", srvGetHeaders("nope", "")},
		{http.MethodDelete, "", http.Header{"Mcp-Session-Id": {"nope"}}},
	} {
		r := srvOpen(t, tt.method, url, tt.h, tt.body)
		body, _ := io.ReadAll(r.Body)
		if r.StatusCode != http.StatusNotFound {
			t.Errorf("%s %s: status %d, want 404", tt.method, tt.body, r.StatusCode)
			continue
		}
		rpcError(t, body)
	}
}

// TestHandlerLegacySessionLimit: an initialize over MaxSessions gets 503
// and says why; the open sessions go on working.
func TestHandlerLegacySessionLimit(t *testing.T) {
	url, _, _, _ := srvServer(t, &HandlerOptions{Sessions: &SessionOptions{MaxSessions: 2}})
	a, b := srvInit(t, url), srvInit(t, url)
	resp, body := post(t, url, srvHeaders(""), srvInitialize)
	if _, e := rpcError(t, body); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(e.Message, "limit of 2") || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("initialize over the limit: status %d: %s", resp.StatusCode, body)
	}
	for _, sid := range []string{a, b} {
		if r, body := post(t, url, srvHeaders(sid), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}`); !strings.Contains(string(body), "still here") {
			t.Fatalf("session %s: %d %s", sid, r.StatusCode, body)
		}
	}
	// Ending a session makes room.
	if r := srvOpen(t, http.MethodDelete, url, http.Header{"Mcp-Session-Id": {a}}, ""); r.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %d", r.StatusCode)
	}
	srvInit(t, url)
}

// TestHandlerLegacyStateless: in stateless mode, initialize is answered
// without a session, each legacy request stands alone with the version of
// its header, and a handler that asks the client is told there is no
// back-channel.
func TestHandlerLegacyStateless(t *testing.T) {
	url, _, lt, _ := srvServer(t, &HandlerOptions{Sessions: &SessionOptions{Stateless: true}})
	resp, body := post(t, url, srvHeaders(""), srvInitialize)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") != "" || !strings.Contains(string(body), `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: status %d, session %q: %s", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), body)
	}
	h := srvWith(srvHeaders(""), HeaderProtocolVersion, srvVersion)
	resp, body = post(t, url, h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}`)
	id, e := rpcError(t, body)
	if resp.StatusCode != http.StatusOK || id.Raw() != "1" || e.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(e.Message, "back-channel") {
		t.Fatalf("ask: status %d: %s", resp.StatusCode, body)
	}
	if err := srvRecv(t, lt.askEnded, "end of ask"); err != nil {
		t.Fatalf("ask ended with %v", err)
	}
	resp, body = post(t, url, h, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"work","_meta":{"progressToken":"p"}}}`)
	if resp.Header.Get("Content-Type") != "text/event-stream" || !strings.Contains(string(body), `"progressToken":"p"`) || strings.Contains(string(body), "id:") {
		t.Fatalf("work: %s %q", resp.Header.Get("Content-Type"), body)
	}
	// A session id means nothing here; no header means 2025-03-26.
	if resp, body := post(t, url, srvWith(srvHeaders("whatever"), HeaderProtocolVersion, ""), `{"jsonrpc":"2.0","id":3,"method":"ping"}`); resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"result":{}`) {
		t.Fatalf("ping: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(t, url, srvWith(srvHeaders(""), HeaderProtocolVersion, "2024-11-05"), `{"jsonrpc":"2.0","id":4,"method":"ping"}`); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("unsupported version: %d %s", resp.StatusCode, body)
	}
	if resp, _ := post(t, url, srvHeaders(""), `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notification: %d", resp.StatusCode)
	}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		if r := srvOpen(t, m, url, srvGetHeaders("whatever", ""), ""); r.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: status %d, want 405", m, r.StatusCode)
		}
	}
}

// TestHandlerLegacyAnd2026: one endpoint serves both generations; a
// 2026-07-28 request is served as it always was, even next to a session,
// with a session id, or when its method is initialize.
func TestHandlerLegacyAnd2026(t *testing.T) {
	url, _, _, _ := srvServer(t, nil)
	sid := srvInit(t, url)
	resp, body := post(t, url, stdHeaders("tools/call", "echo"), rawRequest(1, "tools/call", `"name":"echo","arguments":{"text":"modern"}`))
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") != "" || !strings.Contains(string(body), `"resultType":"complete"`) {
		t.Fatalf("2026-07-28 call: %d %s", resp.StatusCode, body)
	}
	resp, body = post(t, url, srvWith(stdHeaders("tools/list", ""), "Mcp-Session-Id", sid), rawRequest(2, "tools/list", ""))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"resultType":"complete"`) {
		t.Fatalf("2026-07-28 call with a session id: %d %s", resp.StatusCode, body)
	}
	resp, body = post(t, url, stdHeaders("initialize", ""), strings.Replace(srvInitialize, `"params":{`, `"params":{`+testMeta+`,`, 1))
	if _, e := rpcError(t, body); resp.StatusCode != http.StatusNotFound || e.Code != jsonrpc.CodeMethodNotFound || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("initialize with the 2026-07-28 envelope: %d %s", resp.StatusCode, body)
	}
	// The same requests without a session id (and without a legacy
	// version) are 2026-07-28 requests missing their _meta.
	resp, body = post(t, url, http.Header{"Content-Type": {"application/json"}}, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if _, e := rpcError(t, body); resp.StatusCode != http.StatusBadRequest || e.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("neither: %d %s", resp.StatusCode, body)
	}
}

// TestHandlerLegacyDisconnectMidQuestion: a client that drops the POST
// while the handler waits for its answer ends the handler, with
// ResumeWindow < 0 at once (TestSessionResumeWindow covers the default),
// and the question is forgotten.
func TestHandlerLegacyDisconnectMidQuestion(t *testing.T) {
	url, _, lt, h := srvServer(t, &HandlerOptions{Sessions: &SessionOptions{ResumeWindow: -1}})
	sid := srvInit(t, url)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}`))
	req.Header = srvHeaders(sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	es := srvReadEvents(resp.Body)
	srvPriming(t, es.next(t), "1-0")
	q := srvAsRequest(t, es.next(t), mcp.MethodElicit)
	cancel() // the client goes away mid-question
	resp.Body.Close()
	if err := srvRecv(t, lt.askEnded, "end of ask"); err != errStreamAbandoned {
		t.Fatalf("ask ended with %v, want errStreamAbandoned", err)
	}
	ls := h.srvSession(t, sid)
	ls.mu.Lock()
	pending := len(ls.calls)
	ls.mu.Unlock()
	if pending != 0 {
		t.Fatalf("%d server-to-client requests still pending", pending)
	}
	// A late answer is accepted and dropped.
	if r, body := post(t, url, srvHeaders(sid), fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"cancel"}}`, q.ID.Raw())); r.StatusCode != http.StatusAccepted {
		t.Fatalf("late answer: %d %s", r.StatusCode, body)
	}
}

// TestHandlerLegacyNoLegacyServer: a server that serves only 2026-07-28
// answers initialize with -32601 and GET with 405, as before.
func TestHandlerLegacyNoLegacyServer(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "modern", Version: "1"}, &server.Options{SupportedVersions: []mcp.ProtocolVersion{mcp.LatestVersion}})
	ts := httptest.NewServer(NewHandler(s, nil))
	defer ts.Close()
	url := ts.URL
	resp, body := post(t, url, srvHeaders(""), srvInitialize)
	if _, e := rpcError(t, body); resp.StatusCode != http.StatusNotFound || e.Code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	if r := srvOpen(t, http.MethodGet, url, srvGetHeaders("x", ""), ""); r.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", r.StatusCode)
	}
}

// TestHandlerLegacyEndSessions: EndSessions ends every session and its GET
// stream (so that http.Server.Shutdown can complete); new sessions can
// still open.
func TestHandlerLegacyEndSessions(t *testing.T) {
	url, _, _, h := srvServer(t, nil)
	a, b := srvInit(t, url), srvInit(t, url)
	get := srvOpen(t, http.MethodGet, url, srvGetHeaders(a, ""), "")
	es := srvReadEvents(get.Body)
	srvPriming(t, es.next(t), "0-0")
	EndSessions(h)
	es.end(t)
	for _, sid := range []string{a, b} {
		if r, body := post(t, url, srvHeaders(sid), `{"jsonrpc":"2.0","id":1,"method":"ping"}`); r.StatusCode != http.StatusNotFound {
			t.Fatalf("after EndSessions: %d %s", r.StatusCode, body)
		}
	}
	srvInit(t, url)
	EndSessions(http.NotFoundHandler()) // not ours: nothing happens
}

// TestHandlerLegacySessionOwner: a session opened by an authenticated
// caller serves only that caller.
func TestHandlerLegacySessionOwner(t *testing.T) {
	f := newFixture()
	h := NewHandler(f.s, nil)
	// Stands for an authenticating middleware.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user := r.Header.Get("X-Test-User"); user != "" {
			// Scopes and expiry differ per token; the session is the
			// caller's whatever token it presents.
			info := &auth.Info{Issuer: "test", Subject: user, Scopes: r.Header.Values("X-Test-Scope"), Expiry: time.Now().Add(time.Hour)}
			r = r.WithContext(auth.WithInfo(r.Context(), info))
		}
		h.ServeHTTP(w, r)
	}))
	defer EndSessions(h)
	defer ts.Close()
	resp, body := post(t, ts.URL, srvWith(srvHeaders(""), "X-Test-User", "alice"), srvInitialize)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, c := range []struct {
		user, scope string
		want        int
	}{
		{"alice", "", http.StatusOK},
		{"alice", "refreshed", http.StatusOK},
		{"bob", "", http.StatusNotFound},
		{"", "", http.StatusNotFound},
	} {
		hdr := srvWith(srvHeaders(sid), "X-Test-User", c.user, "X-Test-Scope", c.scope)
		if r, body := post(t, ts.URL, hdr, ping); r.StatusCode != c.want {
			t.Errorf("user %q scope %q: status %d, want %d: %s", c.user, c.scope, r.StatusCode, c.want, body)
		}
	}
}

// TestHandlerLegacyIDFreeOnAnswer: the id of an answered request is free
// by the time its client reads the answer, so a client that uses the id
// again at once is served. (MCP asks clients not to reuse ids in a
// session; clients that do exist, and a refusal here depended on which
// goroutine ran first.)
func TestHandlerLegacyIDFreeOnAnswer(t *testing.T) {
	url, _, _, _ := srvServer(t, nil)
	sid := srvInit(t, url)
	for i := range 300 {
		if r, body := post(t, url, srvHeaders(sid), `{"jsonrpc":"2.0","id":7,"method":"ping"}`); r.StatusCode != http.StatusOK {
			t.Fatalf("ping %d with the same id: status %d: %s", i, r.StatusCode, body)
		}
	}
}
