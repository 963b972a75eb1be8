package spectest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/mcp"
)

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func TestDir(t *testing.T) {
	dir := spectest.Dir(t)
	for _, v := range spectest.Supported {
		if _, err := os.Stat(filepath.Join(dir, string(v), "schema.json")); err != nil {
			t.Errorf("schema of %s: %v", v, err)
		}
	}
}

func TestValidateMessage(t *testing.T) {
	spectest.Dir(t) // fails here, naming the folder, if the fixtures are missing
	v := spectest.Version20260728
	valid := []struct{ name, msg, method string }{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta + `,"name":"x","arguments":{}}}`, ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`, ""},
		{"complete result", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hi"}]}}`, "tools/call"},
		{"input required", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s"}}`, "tools/call"},
		{"discover", `{"jsonrpc":"2.0","id":"d","result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"public"}}`, "server/discover"},
		{"error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`, ""},
		{"unsupported version", `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"no","data":{"supported":["2026-07-28"],"requested":"1"}}}`, ""},
	}
	for _, c := range valid {
		if err := spectest.CheckMessage(v, []byte(c.msg), c.method); err != nil {
			t.Errorf("%s: valid message rejected: %v", c.name, err)
		}
	}
	spectest.ValidateMessage(t, v, []byte(valid[0].msg), "")

	invalid := []struct{ name, msg, method, want string }{
		{"missing _meta", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`, "", "_meta"},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":1,"method":"tools/list","params":{` + meta + `}}`, "", "jsonrpc"},
		{"content null", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":null}}`, "tools/call", "content"},
		{"no resultType", `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, "tools/call", "resultType"},
		{"input required on list", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s"}}`, "tools/list", "input_required"},
		{"empty input required", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required"}}`, "tools/call", "inputRequests or requestState"},
		{"missing ttl", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[]}}`, "tools/list", "ttlMs"},
		{"bad error data", `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"no"}}`, "", "data"},
		{"no method for result", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}`, "", "method"},
	}
	for _, c := range invalid {
		err := spectest.CheckMessage(v, []byte(c.msg), c.method)
		if err == nil {
			t.Errorf("%s: invalid message accepted", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not mention %q", c.name, err, c.want)
		}
	}
}

func TestValidateLegacy(t *testing.T) {
	spectest.Dir(t) // fails here, naming the folder, if the fixtures are missing
	v := spectest.Version20251125
	ok := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	if err := spectest.CheckMessage(v, []byte(ok), ""); err != nil {
		t.Errorf("legacy initialize rejected: %v", err)
	}
	res := `{"jsonrpc":"2.0","id":1,"result":{}}`
	if err := spectest.CheckMessage(v, []byte(res), "ping"); err != nil {
		t.Errorf("legacy ping result rejected: %v", err)
	}
	bad := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`
	if err := spectest.CheckMessage(v, []byte(bad), ""); err == nil {
		t.Error("legacy initialize without protocolVersion accepted")
	}
	spectest.Validate(t, v, "Implementation", []byte(`{"name":"n","version":"1"}`))
}

func TestValidate(t *testing.T) {
	spectest.Validate(t, spectest.Version20260728, "TextContent", []byte(`{"type":"text","text":"hi"}`))
	if err := spectest.Check(spectest.Version20260728, "TextContent", []byte(`{"type":"text"}`)); err == nil {
		t.Error("TextContent without text accepted")
	}
	if err := spectest.Check(spectest.Version20260728, "NoSuchDef", []byte(`{}`)); err == nil {
		t.Error("unknown definition accepted")
	}
	if err := spectest.Check("1999-01-01", "TextContent", []byte(`{}`)); err == nil {
		t.Error("unknown version accepted")
	}
}

func TestExamples(t *testing.T) {
	ex := spectest.Examples(t, spectest.Version20260728)
	if len(ex) < 100 {
		t.Fatalf("found %d examples, want the full set", len(ex))
	}
	for _, e := range ex {
		if e.Type == "" || len(e.Data) == 0 {
			t.Errorf("bad example %+v", e)
		}
	}
}

// TestFactsAgreeWithMCP: spectest writes its protocol facts from the
// specification rather than importing them, so that it stays an
// independent oracle; here, and only here, they are compared with package
// mcp's, so that a disagreement is a failing test naming the fact.
func TestFactsAgreeWithMCP(t *testing.T) {
	if spectest.Version20260728 != string(mcp.Version20260728) || spectest.Version20251125 != string(mcp.Version20251125) {
		t.Error("version names differ")
	}
	for _, m := range []string{mcp.MethodCallTool, mcp.MethodGetPrompt, mcp.MethodReadResource, mcp.MethodListTools, mcp.MethodDiscover, mcp.MethodComplete, "initialize"} {
		ir := []byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s"}}`)
		err := spectest.CheckMessage(spectest.Version20260728, ir, m)
		if (err == nil) != mcp.AllowsInputRequired(m) {
			t.Errorf("%s: spectest says input_required is allowed: %v; mcp says %v", m, err == nil, mcp.AllowsInputRequired(m))
		}
	}
}
