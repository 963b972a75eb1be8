package spectest_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/internal/spectest"
)

func TestMessageExtrasLegacy(t *testing.T) {
	spectest.Dir(t) // fails here, naming the folder, if the fixtures are missing
	v := spectest.Version20251125
	cases := []struct {
		name, msg, method string
		want              []string
	}{
		{"clean list", `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-anything":1}}}}],"nextCursor":"c"}}`, "tools/list", nil},
		{"caching hints", `{"jsonrpc":"2.0","id":1,"result":{"ttlMs":0,"cacheScope":"private","resources":[]}}`, "resources/list", []string{"/result/cacheScope", "/result/ttlMs"}},
		{"resultType on an empty result", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}`, "ping", []string{"/result/resultType"}},
		{"resultType on tools/call", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[]}}`, "tools/call", []string{"/result/resultType"}},
		{"reserved _meta keys", `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"},"io.modelcontextprotocol/related-task":{"taskId":"t"},"com.example/trace":1,"progressToken":"x"},"contents":[]}}`, "resources/read", []string{"/result/_meta/io.modelcontextprotocol~1serverInfo"}},
		{"nested members", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi","ttlMs":1},{"type":"image","data":"AA==","mimeType":"image/png"}],"isError":false}}`, "tools/call", []string{"/result/content/0/ttlMs"}},
		{"open maps", `{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"ttlMs":1,"resultType":"x"}}}`, "tools/call", nil},
		{"open capabilities", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{"anything":1},"experimental":{"x":{"y":1}},"tools":{"listChanged":true}},"serverInfo":{"name":"s","version":"1"}}}`, "initialize", nil},
		{"closed capabilities", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true,"ttlMs":1},"extensions":{}},"serverInfo":{"name":"s","version":"1"}}}`, "initialize", []string{"/result/capabilities/extensions", "/result/capabilities/tools/ttlMs"}},
		{"2026 request params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"t","arguments":{"requestState":"s"},"requestState":"s","inputResponses":{}}}`, "", []string{"/params/_meta/io.modelcontextprotocol~1protocolVersion", "/params/inputResponses", "/params/requestState"}},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1},"progressToken":"p","progress":1}}`, "", []string{"/params/_meta/io.modelcontextprotocol~1subscriptionId"}},
		{"server request, form", `{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"r":{"type":"string","title":"R","x":1}}}}}`, "", []string{"/params/requestedSchema/properties/r/x"}},
		{"server request, url", `{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"mode":"url","message":"m","url":"https://example.com","elicitationId":"e"}}`, "", nil},
		{"client answer", `{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"r":"x"},"resultType":"complete"}}`, "elicitation/create", []string{"/result/resultType"}},
		{"error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"m","data":{"anything":1}},"extra":1}`, "", []string{"/extra"}},
	}
	for _, c := range cases {
		got, err := spectest.MessageExtras(v, []byte(c.msg), c.method)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: extras %q, want %q", c.name, got, c.want)
		}
	}
}

func TestMessageExtrasModern(t *testing.T) {
	spectest.Dir(t)
	v := spectest.Version20260728
	for _, c := range []struct{ msg, method string }{
		{`{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"resultType":"complete","ttlMs":0,"cacheScope":"private","tools":[]}}`, "tools/list"},
		{`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"k":{"method":"roots/list"}},"requestState":"s"}}`, "tools/call"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta + `,"name":"x","arguments":{},"requestState":"s"}}`, ""},
	} {
		got, err := spectest.MessageExtras(v, []byte(c.msg), c.method)
		if err != nil || len(got) > 0 {
			t.Errorf("%s: extras %q, %v", c.msg, got, err)
		}
	}
}

func TestMessageExtrasRefuses(t *testing.T) {
	spectest.Dir(t)
	v := spectest.Version20251125
	for _, c := range []struct{ name, msg, method, want string }{
		{"2026 request", `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`, "", "server/discover"},
		{"2026 notification", `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged"}`, "", "notifications/subscriptions/acknowledged"},
		{"result of a 2026 method", `{"jsonrpc":"2.0","id":1,"result":{}}`, "server/discover", "server/discover"},
		{"result without its method", `{"jsonrpc":"2.0","id":1,"result":{}}`, "", "method"},
		{"not JSON", `{"jsonrpc":`, "", "JSON"},
		{"not an object", `[]`, "", "object"},
		{"no kind", `{"jsonrpc":"2.0","id":1}`, "", "neither"},
	} {
		if _, err := spectest.MessageExtras(v, []byte(c.msg), c.method); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	if _, err := spectest.MessageExtras("1999-01-01", []byte(`{}`), ""); err == nil {
		t.Error("unknown version accepted")
	}
}

func TestExtras(t *testing.T) {
	spectest.Dir(t)
	got, err := spectest.Extras(spectest.Version20251125, "ListToolsResult", []byte(`{"ttlMs":0,"cacheScope":"public","tools":[{"name":"t","inputSchema":{"type":"object"},"title":"T","execution":{"taskSupport":"optional"}}]}`))
	if want := []string{"/cacheScope", "/ttlMs"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("extras %q, %v; want %q", got, err, want)
	}
	if got, err := spectest.Extras(spectest.Version20260728, "ListToolsResult", []byte(`{"resultType":"complete","ttlMs":0,"cacheScope":"public","tools":[]}`)); err != nil || len(got) > 0 {
		t.Errorf("2026-07-28 list result: extras %q, %v", got, err)
	}
	if _, err := spectest.Extras(spectest.Version20251125, "NoSuchDef", []byte(`{}`)); err == nil {
		t.Error("unknown definition accepted")
	}
	if _, err := spectest.Extras(spectest.Version20251125, "Result", []byte(`{`)); err == nil {
		t.Error("malformed JSON accepted")
	}
}

// errorRecorder records the errors a check reports instead of failing.
type errorRecorder struct {
	testing.TB
	errs []string
}

func (r *errorRecorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestValidateMessageStrict(t *testing.T) {
	spectest.Dir(t)
	v := spectest.Version20251125
	r := &errorRecorder{TB: t}
	spectest.ValidateMessageStrict(r, v, []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`), "tools/list")
	if len(r.errs) > 0 {
		t.Errorf("a clean message failed: %q", r.errs)
	}
	spectest.ValidateMessageStrict(r, v, []byte(`{"jsonrpc":"2.0","id":1,"result":{"ttlMs":0,"tools":[]}}`), "tools/list")
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "/result/ttlMs") {
		t.Errorf("errors %q, want one naming /result/ttlMs", r.errs)
	}
	r.errs = nil
	spectest.ValidateMessageStrict(r, v, []byte(`{"jsonrpc":"2.0","id":1,"method":"server/discover"}`), "")
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "server/discover") {
		t.Errorf("errors %q, want one naming the method", r.errs)
	}
}
