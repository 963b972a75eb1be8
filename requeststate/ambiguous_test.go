package requeststate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// payFixture is a low-level server with one tool, "pay", written the way
// low-level handlers usually are: it decodes its arguments with
// encoding/json (which matches names case-insensitively, the last member
// winning). Round one asks to confirm the amount it read and keeps it in
// its state; round two pays the amount it reads then, trusting that the
// verified state means the arguments are those that were confirmed.
func payFixture(t *testing.T) (*fixture, *logBuffer) {
	t.Helper()
	log, buf := newLogger()
	f := &fixture{t: t}
	f.s = server.New(mcp.Implementation{Name: "pay", Version: "1.0.0"}, &server.Options{Logger: slog.New(slog.DiscardHandler)})
	requeststate.MustProtect(f.s, &requeststate.Policy{Keys: [][]byte{key(9)}, Logger: log})
	f.s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		var args struct {
			Amount int `json:"amount"`
		}
		if err := json.Unmarshal(p.Arguments, &args); err != nil {
			return nil, wire.InvalidParams("Invalid params: %v", err)
		}
		if p.RequestState == "" {
			return &mcp.InputRequiredResult{
				InputRequests: mcp.InputRequests{"confirm": confirmQ},
				RequestState:  fmt.Sprintf("confirmed:%d", args.Amount),
			}, nil
		}
		return mcp.TextResult(fmt.Sprintf("paid %d (state %s)", args.Amount, p.RequestState)), nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	a, b := transport.NewMemoryPipe()
	done := make(chan struct{})
	go func() { f.s.ServeConn(ctx, b); close(done) }()
	f.conn = a
	t.Cleanup(func() { a.Close(); cancel(); <-done })
	return f, buf
}

// TestReorderedCaseTwinsCannotRideAVerifiedState is the attack of issue
// 12: {"Amount":1000,"amount":1} and {"amount":1,"Amount":1000} digest
// alike (the digest orders members by name), but encoding/json reads
// amount=1 from the first and amount=1000 from the second. Before the fix,
// state sealed when the person confirmed 1 paid 1000. Now such arguments
// have no digest: round one earns no token, and no retry can present one.
func TestReorderedCaseTwinsCannotRideAVerifiedState(t *testing.T) {
	f, buf := payFixture(t)
	first := tool("pay", json.RawMessage(`{"Amount":1000,"amount":1}`))
	r := f.do(first)
	if r.Error == nil {
		st, _ := r.Result["requestState"].(string)
		again := f.do(tool("pay", json.RawMessage(`{"amount":1,"Amount":1000}`)).with(st, "confirm"))
		t.Fatalf("round one earned a token for ambiguous arguments; the reordered retry got %q %+v", again.text(), again.Error)
	}
	if r.Error.Code != mcp.CodeInvalidParams || !strings.Contains(r.Error.Message, "ambiguous") || !strings.Contains(r.Error.Message, `"Amount" and "amount"`) {
		t.Errorf("round one with ambiguous arguments: %+v, want -32602 naming the members", r.Error)
	}
	if !strings.Contains(buf.String(), "ambiguous") || !strings.Contains(buf.String(), `\"Amount\" and \"amount\"`) {
		t.Errorf("the log does not say which members are ambiguous: %s", buf)
	}

	// A token earned with unambiguous arguments does not stretch to a
	// case twin either.
	st := f.begin(tool("pay", json.RawMessage(`{"amount":1}`)))
	for _, args := range []string{`{"amount":1,"Amount":1000}`, `{"Amount":1000,"amount":1}`, `{"amount":1,"amount":1000}`} {
		r := f.do(tool("pay", json.RawMessage(args)).with(st, "confirm"))
		if !mcp.IsInvalidRequestState(r.Error) {
			t.Errorf("%s with the token of {\"amount\":1}: %q %+v, want the fixed rejection", args, r.text(), r.Error)
		}
	}
	if got := f.do(tool("pay", json.RawMessage(`{"amount":1}`)).with(st, "confirm")).text(); got != "paid 1 (state confirmed:1)" {
		t.Errorf("control: %q", got)
	}
}

// TestSurrogateSpellingsCannotShareADigest: "\ud800" escaped and the same
// code unit as raw bytes digested alike before the fix, yet encoding/json
// reads the first as one U+FFFD and the second as three. Neither has a
// digest now.
func TestSurrogateSpellingsCannotShareADigest(t *testing.T) {
	f, _ := payFixture(t)
	f.s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		var args struct {
			Note string `json:"note"`
		}
		_ = json.Unmarshal(p.Arguments, &args)
		if p.RequestState == "" {
			return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"confirm": confirmQ}, RequestState: "note:" + args.Note}, nil
		}
		return mcp.TextResult(fmt.Sprintf("note %q (state %s)", args.Note, p.RequestState)), nil
	})
	for _, args := range []string{`{"note":"\ud800"}`, "{\"note\":\"\xed\xa0\x80\"}", "{\"note\":\"\xff\"}"} {
		if r := f.do(tool("pay", json.RawMessage(args))); r.Error == nil {
			t.Errorf("%q earned a result: %+v", args, r.Result)
		}
	}
	// U+FFFD itself, escaped or not, is an ordinary character.
	st := f.begin(tool("pay", json.RawMessage(`{"note":"\ufffd"}`)))
	if got := f.do(tool("pay", json.RawMessage("{\"note\":\"\uFFFD\"}")).with(st, "confirm")).text(); !strings.HasPrefix(got, "note \"\ufffd\"") {
		t.Errorf("U+FFFD: %q", got)
	}
}
