package mcp_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

// TestDecodeArgumentsRefusesAmbiguous (issue 12): encoding/json would store
// "amount" and "Amount" into one field, the last one winning, while the
// state digest and the Mcp-Param-* check read names exactly; such
// arguments, and the other kinds decoders read differently, are refused.
func TestDecodeArgumentsRefusesAmbiguous(t *testing.T) {
	var args struct {
		Amount int    `json:"amount"`
		Note   string `json:"note"`
	}
	for _, raw := range []string{
		`{"amount":1,"Amount":1000}`, `{"amount":1,"amount":1000}`, `{"note":"\ud800"}`, "{\"note\":\"\xff\"}",
	} {
		p := &mcp.CallToolRequestParams{Name: "pay", Arguments: json.RawMessage(raw)}
		err := p.DecodeArguments(&args)
		if !errors.Is(err, mcp.ErrAmbiguousArguments) || !strings.Contains(err.Error(), `tool "pay"`) {
			t.Errorf("%q: err = %v, want ErrAmbiguousArguments naming the tool", raw, err)
		}
	}
	p := &mcp.CallToolRequestParams{Name: "pay", Arguments: json.RawMessage(`{"AMOUNT":5,"note":"\ufffd"}`)}
	if err := p.DecodeArguments(&args); err != nil || args.Amount != 5 || args.Note != "\ufffd" {
		t.Errorf("control: %+v %v", args, err)
	}
}
