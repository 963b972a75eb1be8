package mcp_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
)

func TestRequestMetaRoundTrip(t *testing.T) {
	in := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{},"url":{}},"roots":{},"sampling":{"tools":{},"context":{}},"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}},"experimental":{"x":{}}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"c","title":"C","version":"1","description":"d","websiteUrl":"https://example.com","icons":[{"src":"https://example.com/i.png","sizes":["48x48"]}]},` +
		`"io.modelcontextprotocol/logLevel":"warning","progressToken":17,` +
		`"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","tracestate":"a=b","baggage":"k=v",` +
		`"com.example/custom":{"deep":[1,2.50,{"x":null}]},"io.modelcontextprotocol/future":"kept"}`
	var m mcp.RequestMetaObject
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatal(err)
	}
	if m.ProtocolVersion != modern || m.LogLevel != mcp.LevelWarning || m.ProgressToken.Raw() != "17" ||
		m.ClientInfo.Title != "C" || len(m.ClientInfo.Icons) != 1 || m.Baggage != "k=v" || m.Tracestate != "a=b" {
		t.Errorf("typed fields: %+v", m)
	}
	c := m.ClientCapabilities
	if !c.Elicitation.SupportsForm() || !c.Elicitation.SupportsURL() || c.Roots == nil || c.Sampling.Tools == nil || c.Sampling.Context == nil ||
		string(c.Extensions["io.modelcontextprotocol/ui"]) != `{"mimeTypes":["text/html;profile=mcp-app"]}` {
		t.Errorf("capabilities: %+v", c)
	}
	if string(m.Extra["com.example/custom"]) != `{"deep":[1,2.50,{"x":null}]}` || string(m.Extra["io.modelcontextprotocol/future"]) != `"kept"` || len(m.Extra) != 2 {
		t.Errorf("extra keys not kept raw: %v", m.Extra)
	}
	out := encode(t, m)
	if d := jsonDiff([]byte(in), out); d != "" {
		t.Errorf("round trip: %s\n%s", d, out)
	}
	if !strings.HasPrefix(string(out), `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities"`) {
		t.Errorf("typed keys should come first: %s", out)
	}
	// The raw extra is byte-exact (2.50 stays 2.50).
	if !strings.Contains(string(out), `"com.example/custom":{"deep":[1,2.50,{"x":null}]}`) {
		t.Errorf("extra not written verbatim: %s", out)
	}
	p := mcp.PaginatedRequestParams{Meta: &m, Cursor: "c"}
	validateRequest(t, mcp.MethodListTools, p)

	// A string progress token stays a string; typed keys set in Extra do
	// not duplicate.
	m2 := modernMeta()
	m2.ProgressToken = jsonrpc.StringID("17")
	if err := m2.Extra.Set(mcp.MetaKeyProtocolVersion, "1999-01-01"); err != nil {
		t.Fatal(err)
	}
	if err := m2.Extra.Set("com.example/n", 5); err != nil {
		t.Fatal(err)
	}
	out = encode(t, m2)
	if strings.Count(string(out), mcp.MetaKeyProtocolVersion) != 1 || !strings.Contains(string(out), `"progressToken":"17"`) {
		t.Errorf("encoded %s", out)
	}
	var n int
	if ok, err := m2.Extra.Decode("com.example/n", &n); !ok || err != nil || n != 5 {
		t.Errorf("Extra.Decode: %d %v %v", n, ok, err)
	}
	if ok, _ := m2.Extra.Decode("absent", &n); ok {
		t.Error("Extra.Decode of an absent key")
	}
}

func TestRequestMetaEdgeCases(t *testing.T) {
	var m mcp.RequestMetaObject
	if err := json.Unmarshal([]byte(`null`), &m); err != nil || !m.IsZero() {
		t.Errorf("null: %+v %v", m, err)
	}
	if err := json.Unmarshal([]byte(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}`), &m); err != nil || m.ClientCapabilities != nil {
		t.Errorf("null capabilities: %+v %v", m, err)
	}
	if err := json.Unmarshal([]byte(`{"io.modelcontextprotocol/protocolVersion":"2099-\u00301-01"}`), &m); err != nil || m.ProtocolVersion != "2099-01-01" {
		t.Errorf("escaped unknown version: %q %v", m.ProtocolVersion, err)
	}
	if err := json.Unmarshal([]byte(`{"io.modelcontextprotocol/logLevel":"loud"}`), &m); err != nil || m.LogLevel.Valid() {
		t.Errorf("an unknown level is kept for the server to reject: %q %v", m.LogLevel, err)
	}
	for _, bad := range []string{
		`{"io.modelcontextprotocol/protocolVersion":20260728}`,
		`{"io.modelcontextprotocol/clientCapabilities":[]}`,
		`{"io.modelcontextprotocol/clientCapabilities":{"elicitation":true}}`,
		`{"io.modelcontextprotocol/clientCapabilities":{"sampling":{"tools":1}}}`,
		`{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":"yes"}}}`,
		`{"io.modelcontextprotocol/clientInfo":{"name":7}}`,
		`{"progressToken":{}}`,
		`{"a":1,}`,
		`{"a":1} x`,
		`[]`,
	} {
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("%s accepted", bad)
		}
		if err := m.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("%s accepted by a direct call", bad)
		}
	}
	if !(mcp.RequestMetaObject{}).IsZero() || modernMeta().IsZero() {
		t.Error("IsZero")
	}
	if got := string(encode(t, mcp.PaginatedRequestParams{})); got != `{}` {
		t.Errorf("params without _meta encode as %s", got)
	}
	if got := string(encode(t, mcp.RequestMetaObject{})); got != `{}` {
		t.Errorf("zero meta encodes as %s", got)
	}
}

func TestDecodeRequestMeta(t *testing.T) {
	m, err := mcp.DecodeRequestMeta(json.RawMessage(`{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"},"arguments":{}}`))
	if err != nil || m.ProtocolVersion != mcp.Version20251125 {
		t.Errorf("DecodeRequestMeta = %+v, %v", m, err)
	}
	for _, in := range []string{``, `null`, `{}`, `{"name":"x"}`} {
		if m, err := mcp.DecodeRequestMeta(json.RawMessage(in)); err != nil || m != nil {
			t.Errorf("DecodeRequestMeta(%q) = %+v, %v", in, m, err)
		}
	}
	if _, err := mcp.DecodeRequestMeta(json.RawMessage(`{"_meta":5}`)); err == nil {
		t.Error("_meta of 5 accepted")
	}
}

func TestResultAndNotificationMeta(t *testing.T) {
	in := `{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"2"},"io.modelcontextprotocol/subscriptionId":42,"com.example/x":[true]}`
	var rm mcp.ResultMetaObject
	if err := json.Unmarshal([]byte(in), &rm); err != nil {
		t.Fatal(err)
	}
	if rm.ServerInfo.Version != "2" || rm.SubscriptionID.Raw() != "42" || string(rm.Extra["com.example/x"]) != `[true]` {
		t.Errorf("result meta: %+v", rm)
	}
	if d := jsonDiff([]byte(in), encode(t, rm)); d != "" {
		t.Errorf("result meta round trip: %s", d)
	}
	nin := `{"io.modelcontextprotocol/subscriptionId":"listen-1","traceparent":"00-x"}`
	var nm mcp.NotificationMetaObject
	if err := json.Unmarshal([]byte(nin), &nm); err != nil {
		t.Fatal(err)
	}
	if nm.SubscriptionID.String() != "listen-1" || string(nm.Extra["traceparent"]) != `"00-x"` {
		t.Errorf("notification meta: %+v", nm)
	}
	if d := jsonDiff([]byte(nin), encode(t, nm)); d != "" {
		t.Errorf("notification meta round trip: %s", d)
	}
	var zero *mcp.ResultMetaObject
	if !zero.IsZero() || !(&mcp.NotificationMetaObject{}).IsZero() || rm.IsZero() {
		t.Error("IsZero")
	}
	for _, bad := range []string{`{"io.modelcontextprotocol/subscriptionId":{}}`, `{"io.modelcontextprotocol/serverInfo":[]}`} {
		if err := json.Unmarshal([]byte(bad), &rm); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if err := json.Unmarshal([]byte(`{"io.modelcontextprotocol/subscriptionId":true}`), &nm); err == nil {
		t.Error("boolean subscription id accepted")
	}
}

func TestIsReservedMetaKey(t *testing.T) {
	for key, want := range map[string]bool{
		"io.modelcontextprotocol/protocolVersion": true,
		"dev.mcp/x":                      true,
		"org.modelcontextprotocol.api/x": true,
		"com.mcp.tools/x":                true,
		"com.example.mcp/x":              false,
		"com.example/x":                  false,
		"progressToken":                  false,
		"mcp/x":                          false,
	} {
		if got := mcp.IsReservedMetaKey(key); got != want {
			t.Errorf("IsReservedMetaKey(%q) = %v", key, got)
		}
	}
}

func TestCallToolRequestParams(t *testing.T) {
	var p mcp.CallToolRequestParams
	in := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"add","arguments":{"a":1,"b":2},"future":{"x":1}}`
	if err := json.Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	var args struct{ A, B int }
	if err := p.DecodeArguments(&args); err != nil || args.A+args.B != 3 {
		t.Errorf("DecodeArguments: %+v %v", args, err)
	}
	var direct mcp.CallToolRequestParams
	if err := mcp.UnmarshalParams(json.RawMessage(in), &direct); err != nil || !reflect.DeepEqual(direct, p) {
		t.Errorf("UnmarshalParams differs: %+v %v", direct, err)
	}
	buf := []byte(in)
	var owned mcp.CallToolRequestParams
	if err := owned.UnmarshalJSON(buf); err != nil {
		t.Fatal(err)
	}
	for i := range buf {
		buf[i] = 'x' // the decoded value must not alias the input
	}
	if owned.Name != "add" || string(owned.Arguments) != `{"a":1,"b":2}` || owned.Meta.ProtocolVersion != modern {
		t.Errorf("decoded params alias the input buffer: %+v", owned)
	}

	var none mcp.CallToolRequestParams
	if err := json.Unmarshal([]byte(`{"name":"t","arguments":null}`), &none); err != nil || none.Arguments != nil {
		t.Fatal(err)
	}
	var empty map[string]any
	if err := none.DecodeArguments(&empty); err != nil || empty == nil {
		t.Errorf("absent arguments decode as %v, %v", empty, err)
	}
	if err := json.Unmarshal([]byte(`{"name":"t","arguments":[1]}`), &none); err == nil {
		t.Error("array arguments accepted")
	}
	if err := none.DecodeArguments(new(int)); err == nil || !strings.Contains(err.Error(), `"t"`) {
		t.Errorf("DecodeArguments into an int: %v", err)
	}

	out := &mcp.CallToolRequestParams{Name: "provision"}
	if err := out.SetArguments(struct {
		Name string `json:"name"`
	}{"orders"}); err != nil || string(out.Arguments) != `{"name":"orders"}` {
		t.Errorf("SetArguments: %s %v", out.Arguments, err)
	}
	if err := out.SetArguments([]int{1}); err == nil {
		t.Error("SetArguments of a list succeeded")
	}
	if err := out.SetArguments(nil); err != nil || out.Arguments != nil {
		t.Error("SetArguments(nil)")
	}
	out.Meta = modernMeta()
	validateRequest(t, mcp.MethodCallTool, out)
	var zero mcp.CallToolRequestParams
	if err := mcp.UnmarshalParams(nil, &zero); err != nil || zero.Name != "" {
		t.Error("UnmarshalParams of absent params")
	}
	var pp mcp.PaginatedRequestParams
	if err := mcp.UnmarshalParams(json.RawMessage(`{"cursor":"c"}`), &pp); err != nil || pp.Cursor != "c" {
		t.Errorf("UnmarshalParams of a plain type: %+v %v", pp, err)
	}
}

func TestImplementation(t *testing.T) {
	in := `{"name":"n\u00e9","version":"1.0","title":"T","websiteUrl":"https://x.example"}`
	var impl mcp.Implementation
	if err := json.Unmarshal([]byte(in), &impl); err != nil {
		t.Fatal(err)
	}
	if impl.Name != "né" || impl.Version != "1.0" || impl.Title != "T" || impl.WebsiteURL != "https://x.example" {
		t.Errorf("%+v", impl)
	}
	if d := jsonDiff([]byte(in), encode(t, impl)); d != "" {
		t.Error(d)
	}
	if err := json.Unmarshal([]byte(`{"name":"a","icons":{}}`), &impl); err == nil {
		t.Error("icons object accepted")
	}
}
