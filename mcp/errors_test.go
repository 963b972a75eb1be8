package mcp_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
)

func TestErrorConstructors(t *testing.T) {
	hm := mcp.NewHeaderMismatchError("Mcp-Name header value 'foo' does not match body value 'bar'")
	if hm.Code != -32020 || hm.Data != nil {
		t.Errorf("header mismatch: %+v", hm)
	}
	if mcp.NewHeaderMismatchError("").Message == "" {
		t.Error("empty header mismatch message")
	}
	validateError(t, hm)

	required := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{URL: &struct{}{}}, Sampling: &mcp.SamplingCapability{Tools: &struct{}{}}}
	mc := mcp.NewMissingRequiredClientCapabilityError(required)
	if mc.Code != -32021 || string(mc.Data) != `{"requiredCapabilities":{"sampling":{"tools":{}},"elicitation":{"url":{}}}}` {
		t.Errorf("missing capability: %+v data %s", mc, mc.Data)
	}
	if !strings.Contains(mc.Message, "elicitation.url") || !strings.Contains(mc.Message, "sampling.tools") {
		t.Errorf("missing capability message %q", mc.Message)
	}
	validateError(t, mc)
	empty := mcp.NewMissingRequiredClientCapabilityError(nil)
	if string(empty.Data) != `{"requiredCapabilities":{}}` {
		t.Errorf("nil required: %s", empty.Data)
	}
	validateError(t, empty)

	uv := mcp.NewUnsupportedProtocolVersionError("1900-01-01", []mcp.ProtocolVersion{mcp.Version20260728, mcp.Version20251125})
	if uv.Code != -32022 || string(uv.Data) != `{"supported":["2026-07-28","2025-11-25"],"requested":"1900-01-01"}` {
		t.Errorf("unsupported version: %+v data %s", uv, uv.Data)
	}
	if !strings.Contains(uv.Message, "2025-11-25") || !strings.Contains(uv.Message, "1900-01-01") {
		t.Errorf("unsupported version message %q", uv.Message)
	}
	validateError(t, uv)
	none := mcp.NewUnsupportedProtocolVersionError("x", nil)
	if string(none.Data) != `{"supported":[],"requested":"x"}` {
		t.Errorf("no supported versions: %s", none.Data)
	}
	validateError(t, none)
	validateError(t, mcp.NewInvalidParamsError("Unknown tool: nope"))
	if mnf := mcp.NewMethodNotFoundError("initialize"); mnf.Code != mcp.CodeMethodNotFound || !strings.Contains(mnf.Message, "initialize") {
		t.Errorf("method not found: %+v", mnf)
	}
}

func TestErrorAccessors(t *testing.T) {
	uv := mcp.NewUnsupportedProtocolVersionError("1900-01-01", []mcp.ProtocolVersion{mcp.Version20260728})
	wrapped := fmt.Errorf("connect: %w", fmt.Errorf("call server/discover: %w", uv))
	d, ok := mcp.AsUnsupportedProtocolVersion(wrapped)
	if !ok || d.Requested != "1900-01-01" || len(d.Supported) != 1 || d.Supported[0] != mcp.Version20260728 {
		t.Errorf("AsUnsupportedProtocolVersion = %+v, %v", d, ok)
	}
	if !errors.Is(wrapped, mcp.ErrUnsupportedProtocolVersion) || errors.Is(wrapped, mcp.ErrHeaderMismatch) {
		t.Error("errors.Is with the code sentinels")
	}

	mc := fmt.Errorf("tools/call: %w", mcp.NewMissingRequiredClientCapabilityError(&mcp.ClientCapabilities{Roots: &mcp.RootsCapability{}}))
	md, ok := mcp.AsMissingRequiredClientCapability(mc)
	if !ok || md.RequiredCapabilities.Roots == nil || md.RequiredCapabilities.Sampling != nil {
		t.Errorf("AsMissingRequiredClientCapability = %+v, %v", md, ok)
	}
	if !errors.Is(mc, mcp.ErrMissingRequiredClientCapability) {
		t.Error("errors.Is missing capability")
	}
	if !mcp.IsHeaderMismatch(fmt.Errorf("x: %w", mcp.NewHeaderMismatchError("m"))) || mcp.IsHeaderMismatch(uv) {
		t.Error("IsHeaderMismatch")
	}

	// Negative and degraded cases.
	for _, err := range []error{nil, errors.New("plain"), mcp.NewInvalidParamsError("x"), mcp.NewHeaderMismatchError("")} {
		if _, ok := mcp.AsUnsupportedProtocolVersion(err); ok {
			t.Errorf("AsUnsupportedProtocolVersion(%v) matched", err)
		}
		if _, ok := mcp.AsMissingRequiredClientCapability(err); ok {
			t.Errorf("AsMissingRequiredClientCapability(%v) matched", err)
		}
	}
	bare := &jsonrpc.Error{Code: mcp.CodeUnsupportedProtocolVersion, Message: "no data"}
	if d, ok := mcp.AsUnsupportedProtocolVersion(bare); !ok || d == nil || len(d.Supported) != 0 {
		t.Errorf("without data: %+v %v", d, ok)
	}
	bad := &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapability, Message: "x", Data: json.RawMessage(`[1]`)}
	if d, ok := mcp.AsMissingRequiredClientCapability(bad); !ok || d.RequiredCapabilities == nil {
		t.Errorf("malformed data: %+v %v", d, ok)
	}
}

// TestErrorExamples decodes the official error examples into their types
// and reads them with the accessors.
func TestErrorExamples(t *testing.T) {
	dir := filepath.Join(spectest.Dir(t), string(modern), "examples")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var uv UnsupportedProtocolVersionError
	if err := json.Unmarshal(read("UnsupportedProtocolVersionError/unsupported-version.json"), &uv); err != nil {
		t.Fatal(err)
	}
	if d, ok := mcp.AsUnsupportedProtocolVersion(uv.Error); !ok || d.Requested != "1900-01-01" || len(d.Supported) != 2 {
		t.Errorf("unsupported version example: %+v %v", d, ok)
	}
	var mc MissingRequiredClientCapabilityError
	if err := json.Unmarshal(read("MissingRequiredClientCapabilityError/missing-elicitation-capability.json"), &mc); err != nil {
		t.Fatal(err)
	}
	if d, ok := mcp.AsMissingRequiredClientCapability(mc.Error); !ok || d.RequiredCapabilities.Elicitation == nil || mc.ID.Raw() != "1" {
		t.Errorf("missing capability example: %+v %v", d, ok)
	}
	var hm HeaderMismatchError
	if err := json.Unmarshal(read("HeaderMismatchError/header-mismatch.json"), &hm); err != nil || !mcp.IsHeaderMismatch(hm.Error) {
		t.Errorf("header mismatch example: %+v %v", hm, err)
	}
	var ip mcp.InvalidParamsError
	if err := json.Unmarshal(read("InvalidParamsError/unknown-tool.json"), &ip); err != nil || ip.Code != mcp.CodeInvalidParams {
		t.Errorf("invalid params example: %+v %v", ip, err)
	}
	if !errors.Is((*jsonrpc.Error)(&ip), &jsonrpc.Error{Code: mcp.CodeInvalidParams}) {
		t.Error("converted InvalidParamsError is not an invalid-params error")
	}
}
