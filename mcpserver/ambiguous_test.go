package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

type payArgs struct {
	Amount int `json:"amount"`
}

// TestAmbiguousToolArgumentsRefused (issue 12): arguments that decoders
// read differently are refused with -32602 naming what is ambiguous,
// before the body runs, on both protocol generations, whatever the
// tool's In type. A body that forwards its raw arguments (In
// json.RawMessage) to code decoding with encoding/json would otherwise act
// on {"amount":1,"Amount":1000} as 1000 while the header check and the
// state digest read 1.
func TestAmbiguousToolArgumentsRefused(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	ran := new(counter)
	permissive := json.RawMessage(`{"type":"object","properties":{"amount":{"type":"integer"}}}`)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "typed", InputSchema: permissive},
		func(ctx context.Context, c *mcpserver.Call, a payArgs) (string, error) {
			ran.add("typed")
			return fmt.Sprint("paid ", a.Amount), nil
		}))
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "raw", InputSchema: permissive},
		func(ctx context.Context, c *mcpserver.Call, raw json.RawMessage) (string, error) {
			ran.add("raw")
			var a payArgs
			if err := json.Unmarshal(raw, &a); err != nil { // folds case, as a forwarding target might
				return "", err
			}
			return fmt.Sprint("paid ", a.Amount), nil
		}))
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "map"},
		func(ctx context.Context, c *mcpserver.Call, m map[string]any) (string, error) {
			ran.add("map")
			return fmt.Sprint(len(m)), nil
		}))

	for _, version := range []mcp.ProtocolVersion{mcp.Version20260728, mcp.Version20251125} {
		sess := connect(t, s, &client.Options{ProtocolVersion: version})
		for _, tool := range []string{"typed", "raw", "map"} {
			for _, tc := range []struct {
				args    string
				phrases []string
			}{
				{`{"amount":1,"Amount":1000}`, []string{`"amount" and "Amount"`, "case folding"}},
				{`{"Amount":1000,"amount":1}`, []string{`"Amount" and "amount"`, "case folding"}},
				{`{"amount":1,"amount":1000}`, []string{`"amount" and "amount"`, "same name"}},
				{`{"amount":1,"note":{"to":"a","TO":"b"}}`, []string{`"to" and "TO"`, `"/note"`}},
				{`{"amount":1,"note":"\ud800"}`, []string{`"/note"`, "lone surrogate"}},
				{"{\"amount\":1,\"note\":\"\xed\xa0\x80\"}", []string{`"/note"`, "not valid UTF-8"}},
			} {
				_, err := sess.CallToolRound(ctx, &mcp.CallToolRequestParams{Name: tool, Arguments: json.RawMessage(tc.args)})
				e := wantRPCError(t, err, jsonrpc.CodeInvalidParams, "")
				wantContains(t, fmt.Sprintf("%s %s %s", version, tool, tc.args), e.Message,
					append([]string{fmt.Sprintf("tool %q: arguments are ambiguous", tool)}, tc.phrases...)...)
			}
		}
		// Controls: the same name in two objects, and U+FFFD itself.
		res := callRaw(t, ctx, sess.CallToolRound, "raw", `{"amount":7,"note":{"amount":1,"x":"\ufffd"}}`)
		wantText(t, res, false, "paid 7")
	}
	for _, tool := range []string{"typed", "map"} {
		if n := ran.get(tool); n != 0 {
			t.Errorf("%s ran %d times on ambiguous arguments", tool, n)
		}
	}
	if n := ran.get("raw"); n != 2 { // the two controls
		t.Errorf("raw ran %d times, want 2 (the controls only)", n)
	}
}

// TestPromptArgumentCaseTwinsRefused: prompt arguments arrive as a map,
// so exact duplicates are resolved by the protocol layer before anyone
// reads them; names equal under case folding are refused as for tools.
func TestPromptArgumentCaseTwinsRefused(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	ran := new(counter)
	mustOK(t, mcpserver.AddPrompt(s, &mcp.Prompt{Name: "p", Arguments: []mcp.PromptArgument{{Name: "lang"}}},
		func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.GetPromptResult, error) {
			ran.add("p")
			return userSays("lang=" + a["lang"]), nil
		}))
	for _, version := range []mcp.ProtocolVersion{mcp.Version20260728, mcp.Version20251125} {
		sess := connect(t, s, &client.Options{ProtocolVersion: version})
		_, err := sess.GetPrompt(ctx, "p", map[string]string{"lang": "go", "LANG": "rust"})
		wantRPCError(t, err, jsonrpc.CodeInvalidParams, `Invalid params: prompt "p": arguments "LANG" and "lang" have names equal under case folding, which some decoders (Go's encoding/json among them) read as one`)
		res, err := sess.GetPrompt(ctx, "p", map[string]string{"lang": "go", "style": "terse"})
		mustOK(t, err)
		if got := promptText(t, res); got != "lang=go" {
			t.Errorf("%s: control: %q", version, got)
		}
	}
	if n := ran.get("p"); n != 2 {
		t.Errorf("the body ran %d times, want 2 (the controls)", n)
	}
}
