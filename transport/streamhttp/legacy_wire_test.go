package streamhttp

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/mcp"
)

// TestHandlerLegacyWire: everything a legacy session over Streamable HTTP
// sends names only members 2025-11-25 defines: its JSON answers to every
// method, the events of a request's stream (progress, a log message, the
// server's own request, the response), the list changes and resource
// updates of its GET stream, and the answers of a stateless legacy
// request.
func TestHandlerLegacyWire(t *testing.T) {
	spectest.Dir(t) // fails here, naming the folder, if the fixtures are missing
	strict := func(msg []byte, method string) {
		t.Helper()
		spectest.ValidateMessageStrict(t, mcp.Version20251125, msg, method)
	}
	url, f, _, _ := srvServer(t, nil)
	resp, body := post(t, url, srvHeaders(""), srvInitialize)
	strict(body, mcp.MethodInitialize)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp, body := post(t, url, srvHeaders(sid), `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d %s", resp.StatusCode, body)
	}

	for i, c := range []struct{ method, params string }{
		{mcp.MethodPing, `{}`},
		{mcp.MethodListTools, `{}`},
		{mcp.MethodCallTool, `{"name":"echo","arguments":{"text":"hi"}}`},
		{mcp.MethodListPrompts, `{}`},
		{mcp.MethodGetPrompt, `{"name":"greeting","arguments":{"name":"Ada"}}`},
		{mcp.MethodListResources, `{}`},
		{mcp.MethodListResourceTemplates, `{}`},
		{mcp.MethodReadResource, `{"uri":"file:///readme.txt"}`},
		{mcp.MethodComplete, `{"ref":{"type":"ref/prompt","name":"greeting"},"argument":{"name":"name","value":"A"}}`},
		{mcp.MethodSetLoggingLevel, `{"level":"info"}`},
		{mcp.MethodSubscribeResource, `{"uri":"file:///readme.txt"}`},
	} {
		resp, body := post(t, url, srvHeaders(sid), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, i+1, c.method, c.params))
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: status %d, Content-Type %q: %s", c.method, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		strict(body, c.method)
	}

	get := srvReadEvents(srvOpen(t, http.MethodGet, url, srvGetHeaders(sid, ""), "").Body)
	srvPriming(t, get.next(t), "0-0")
	f.s.NotifyToolListChanged()
	f.s.NotifyPromptListChanged()
	f.s.NotifyResourceListChanged()
	f.s.NotifyResourceUpdated("file:///readme.txt")
	for range 4 {
		strict([]byte(get.next(t).data), "")
	}

	// A request's own stream: progress, a log message, then the response.
	work := srvReadEvents(srvOpen(t, http.MethodPost, url, srvHeaders(sid), `{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"work","_meta":{"progressToken":"p1"}}}`).Body)
	srvPriming(t, work.next(t), "1-0")
	for range 3 {
		strict([]byte(work.next(t).data), "")
	}
	strict([]byte(work.next(t).data), mcp.MethodCallTool)
	work.end(t)

	// The server's own request, and the response after the answer.
	ask := srvReadEvents(srvOpen(t, http.MethodPost, url, srvHeaders(sid), `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"ask"}}`).Body)
	srvPriming(t, ask.next(t), "2-0")
	ev := ask.next(t)
	strict([]byte(ev.data), "")
	q := srvAsRequest(t, ev, mcp.MethodElicit)
	if r, body := post(t, url, srvHeaders(sid), fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"region":"eu-west-1"}}}`, q.ID.Raw())); r.StatusCode != http.StatusAccepted {
		t.Fatalf("the answer: %d %s", r.StatusCode, body)
	}
	strict([]byte(ask.next(t).data), mcp.MethodCallTool)
	ask.end(t)

	if resp, body := post(t, url, srvHeaders(sid), `{"jsonrpc":"2.0","id":22,"method":"resources/unsubscribe","params":{"uri":"file:///readme.txt"}}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("resources/unsubscribe: %d %s", resp.StatusCode, body)
	} else {
		strict(body, mcp.MethodUnsubscribeResource)
	}

	// Stateless legacy mode serves each request through a session of its
	// own, with the same results.
	url, _, _, _ = srvServer(t, &HandlerOptions{Sessions: &SessionOptions{Stateless: true}})
	h := srvWith(srvHeaders(""), HeaderProtocolVersion, srvVersion)
	for i, method := range []string{mcp.MethodListTools, mcp.MethodListResourceTemplates} {
		resp, body := post(t, url, h, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, i+1, method))
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"result"`) {
			t.Fatalf("stateless %s: %d %s", method, resp.StatusCode, body)
		}
		strict(body, method)
	}
}
