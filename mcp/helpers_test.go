package mcp_test

import (
	"encoding/json"
	"testing"

	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
)

const modern = mcp.Version20260728

func encode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %T: %v", v, err)
	}
	return b
}

// modernMeta is a valid 2026-07-28 request _meta.
func modernMeta() *mcp.RequestMetaObject {
	return &mcp.RequestMetaObject{
		ProtocolVersion:    modern,
		ClientCapabilities: &mcp.ClientCapabilities{},
		ClientInfo:         &mcp.Implementation{Name: "test-client", Version: "1.0.0"},
	}
}

// validateResult wraps result in a response to method and validates it.
func validateResult(t *testing.T, method string, result any) {
	t.Helper()
	msg := encode(t, JSONRPCResultResponse{ID: jsonrpc.Int64ID(1), Result: encode(t, result)})
	spectest.ValidateMessage(t, modern, msg, method)
}

// validateRequest wraps params in a request for method and validates it.
func validateRequest(t *testing.T, method string, params any) {
	t.Helper()
	msg := encode(t, JSONRPCRequest{ID: jsonrpc.StringID("r-1"), Method: method, Params: encode(t, params)})
	spectest.ValidateMessage(t, modern, msg, "")
}

// validateNotification wraps params in a notification and validates it.
func validateNotification(t *testing.T, method string, params any) {
	t.Helper()
	msg := encode(t, JSONRPCNotification{Method: method, Params: encode(t, params)})
	spectest.ValidateMessage(t, modern, msg, "")
}

// validateError wraps err in an error response and validates it.
func validateError(t *testing.T, err *jsonrpc.Error) {
	t.Helper()
	msg := encode(t, JSONRPCErrorResponse{ID: jsonrpc.Int64ID(7), Error: err})
	spectest.ValidateMessage(t, modern, msg, "")
}

func ptr[T any](v T) *T { return &v }
