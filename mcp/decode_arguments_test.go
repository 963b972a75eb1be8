package mcp_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/internal/spectest"
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

// TestDecodeArgumentsErrorIsForThePeer: a handler sends DecodeArguments'
// error to the client as it is, so its message names the argument and the
// JSON kinds, never a Go type or encoding/json's own text, while the
// decoder's error stays reachable for the log.
func TestDecodeArgumentsErrorIsForThePeer(t *testing.T) {
	type server struct {
		Port int `json:"port"`
	}
	var args struct {
		Name    string   `json:"name"`
		Ready   bool     `json:"ready"`
		Ratio   float64  `json:"ratio"`
		Servers []server `json:"servers"`
		Region  struct {
			Code string `json:"code"`
		} `json:"region"`
	}
	cases := []struct{ raw, want string }{
		{`{"name":7}`, `mcp: tool "t": argument "name" must be a string, not a number`},
		{`{"ready":"yes"}`, `mcp: tool "t": argument "ready" must be a boolean, not a string`},
		{`{"ratio":[1]}`, `mcp: tool "t": argument "ratio" must be a number, not an array`},
		{`{"servers":[{"port":1.5}]}`, `mcp: tool "t": argument "servers.port" must be an integer, not a number`},
		{`{"region":"eu"}`, `mcp: tool "t": argument "region" must be an object, not a string`},
		{`{"servers":{"a":1}}`, `mcp: tool "t": argument "servers" must be an array, not an object`},
		{`[1,2]`, `mcp: tool "t": the arguments must be an object, not an array`},
		{`{"name":`, `mcp: tool "t": the arguments are not valid JSON`},
	}
	for _, c := range cases {
		p := &mcp.CallToolRequestParams{Name: "t", Arguments: json.RawMessage(c.raw)}
		err := p.DecodeArguments(&args)
		var ae *mcp.ArgumentsError
		if !errors.As(err, &ae) || ae.Err == nil {
			t.Errorf("%s: err = %#v, want an *ArgumentsError wrapping the decoder's", c.raw, err)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.raw, err, c.want)
		}
		if leaks := spectest.GoText([]byte(err.Error())); len(leaks) > 0 {
			t.Errorf("%s: Go's own text %q in %s", c.raw, leaks, err)
		}
	}
}
