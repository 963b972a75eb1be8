package spectest_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/parley-mcp/parley/internal/spectest"
)

func TestGoText(t *testing.T) {
	type tool struct{ Name string }
	verb := "%d" // a verb that does not fit its argument, as a careless caller writes it
	leaks := []string{
		fmt.Sprintf(`{"message":"Invalid params: `+verb+`"}`, "x"),
		fmt.Sprintf(`{"message":"failed: %v"}`, fmt.Errorf("wrap: %w", errors.New("inner"))) + fmt.Sprintf("%#v", errors.New("x")),
		fmt.Sprintf(`{"message":"%v"}`, &tool{"a"}),
		`{"message":"json: cannot unmarshal string into Go value of type int"}`,
		`{"message":"bad *mcp.Tool"}`,
		`{"message":"want wire.Error"}`,
		`{"message":"runtime error: index out of range"}`,
		`{"message":"at server/dispatch.go:120"}`,
		`{"message":"got <nil>"}`,
	}
	for _, msg := range leaks {
		if len(spectest.GoText([]byte(msg))) == 0 {
			t.Errorf("GoText found nothing in %s", msg)
		}
	}
	clean := []string{
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: tool \"provision\" needs the argument \"name\""}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32022,"message":"Unsupported protocol version \"1900-01-01\" (supported: 2026-07-28, 2025-11-25)","data":{"supported":["2026-07-28"],"requested":"1900-01-01"}}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Provisioned 'orders' in eu-west-1. 100% done."}]}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"mcp.example.com is up"}}`,
	}
	for _, msg := range clean {
		if got := spectest.GoText([]byte(msg)); len(got) != 0 {
			t.Errorf("GoText found %q in %s", got, msg)
		}
	}
}
