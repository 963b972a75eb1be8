package requeststate_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
)

func TestRoundTripOnEveryCarrier(t *testing.T) {
	for _, c := range []call{tool("ask", map[string]any{"n": 1}), prompt("ask", map[string]string{"a": "b"}), resource("ask://one")} {
		t.Run(c.method, func(t *testing.T) {
			f := newFixture(t, "svc", true, &requeststate.Policy{Keys: [][]byte{key(1)}})
			st := f.begin(c)
			if !strings.HasPrefix(st, "rs1.") || strings.Contains(st, "issued-by") {
				t.Fatalf("state on the wire is not sealed: %q", st)
			}
			r := f.do(c.with(st, "confirm"))
			target := c.params["name"]
			if target == nil {
				target = c.params["uri"]
			}
			if want := "state=issued-by:" + target.(string) + " answers=[confirm] asked=true"; r.text() != want {
				t.Fatalf("retry: got %q (%+v), want %q", r.text(), r, want)
			}
		})
	}
}

func TestUnprotectedServerPassesStateVerbatim(t *testing.T) {
	f := newFixture(t, "svc", false, nil)
	st := f.begin(tool("ask", nil))
	if st != "issued-by:ask" {
		t.Fatalf("state = %q, want the plaintext", st)
	}
	if r := f.do(tool("ask", nil).with("forged", "confirm")); r.text() != "state=forged answers=[confirm] asked=false" {
		t.Fatalf("retry: %+v", r)
	}
}

func TestRejectionIsByteIdentical(t *testing.T) {
	clk := newClock()
	logger, logs := newLogger()
	pol := func(keys ...[]byte) *requeststate.Policy {
		return &requeststate.Policy{Keys: keys, Now: clk.Now, Logger: logger,
			Principal: func(ctx context.Context, req *server.Request) (string, error) {
				if ci := req.ClientInfo(); ci != nil {
					return ci.Name, nil
				}
				return "", nil
			}}
	}
	f := newFixture(t, "svc", true, pol(key(1)))
	other := newFixture(t, "svc", true, pol(key(2)))
	otherAudience := newFixture(t, "other-svc", true, pol(key(1)))

	base := tool("ask", map[string]any{"n": 1}).as("alice")
	st := f.begin(base)
	foreign := other.begin(base)
	foreignAudience := otherAudience.begin(base)

	cases := []struct {
		name string
		c    call
	}{
		{"tampered", base.with(st+"x", "confirm")},
		{"truncated", base.with(st[:len(st)-1], "confirm")},
		{"re-prefixed", base.with("rs2."+strings.TrimPrefix(st, "rs1."), "confirm")},
		{"plaintext", base.with("issued-by:ask", "confirm")},
		{"another key", base.with(foreign, "confirm")},
		{"another audience", base.with(foreignAudience, "confirm")},
		{"another tool", tool("other", map[string]any{"n": 1}).as("alice").with(st, "confirm")},
		{"other arguments", tool("ask", map[string]any{"n": 2}).as("alice").with(st, "confirm")},
		{"another method", prompt("ask", nil).as("alice").with(st, "confirm")},
		{"another principal", base.as("bob").with(st, "confirm")},
		{"no principal", base.as("").with(st, "confirm")},
		{"a tool that never issues state", tool("plain", map[string]any{"n": 1}).as("alice").with(st)},
	}
	runsBefore := f.runs.Load()
	for _, c := range cases {
		if got := f.raw(c.c); got != wantRejected {
			t.Errorf("%s: got %s, want %s", c.name, got, wantRejected)
		}
	}
	if n := f.runs.Load() - runsBefore; n != 0 {
		t.Errorf("handlers ran %d times for refused states", n)
	}
	// Expired, one second after the TTL.
	clk.Advance(requeststate.DefaultTTL + time.Second)
	if got := f.raw(base.with(st, "confirm")); got != wantRejected {
		t.Errorf("expired: got %s", got)
	}
	warns := logs.lines("WARN")
	if len(warns) != len(cases)+1 {
		t.Errorf("%d Warn lines for %d refusals:\n%s", len(warns), len(cases)+1, logs)
	}
	for _, leak := range []string{st, "issued-by", "alice", "bob", foreign[4:20]} {
		if strings.Contains(logs.String(), leak) {
			t.Errorf("the log contains %q:\n%s", leak, logs)
		}
	}
}

// TestStateBindsTheTargetOfEveryMethod: a state sealed for one target is
// refused on another target of the same method with the same arguments,
// for every carrier: another tool, another prompt, another resource URI.
// The digest binds the target per method, so dropping it for one method
// would let a prompt's (or a resource's) state be spent on a sibling.
func TestStateBindsTheTargetOfEveryMethod(t *testing.T) {
	pairs := []struct {
		name string
		a, b call
	}{
		{"tools/call", tool("ask", map[string]any{"n": 1}), tool("other", map[string]any{"n": 1})},
		{"prompts/get", prompt("ask", map[string]string{"a": "b"}), prompt("other", map[string]string{"a": "b"})},
		{"prompts/get without arguments", prompt("ask", nil), prompt("other", nil)},
		{"resources/read", resource("ask://one"), resource("ask://two")},
	}
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			f := newFixture(t, "svc", true, &requeststate.Policy{Keys: [][]byte{key(1)}})
			st := f.begin(p.a)
			runs := f.runs.Load()
			if got := f.raw(p.b.with(st, "confirm")); got != wantRejected {
				t.Fatalf("the state of %v presented on %v: got %s, want %s", p.a.params, p.b.params, got, wantRejected)
			}
			if n := f.runs.Load() - runs; n != 0 {
				t.Fatalf("handlers ran %d times for a state sealed for another target", n)
			}
			if r := f.do(p.a.with(st, "confirm")); r.Error != nil {
				t.Fatalf("the state on its own target: %v", r.Error)
			}
		})
	}
}

// TestTamperMatrixOnTheWire changes every character of a sealed state, as
// a client would send it: each variant gets the one fixed error, and no
// handler runs.
func TestTamperMatrixOnTheWire(t *testing.T) {
	f := newFixture(t, "svc", true, &requeststate.Policy{Keys: [][]byte{key(1)}})
	c := tool("ask", map[string]any{"n": 1})
	st := f.begin(c)
	runs := f.runs.Load()
	for i := 0; i < len(st); i++ {
		repl := byte('A')
		if st[i] == 'A' {
			repl = 'B'
		}
		bad := st[:i] + string(repl) + st[i+1:]
		if got := f.raw(c.with(bad, "confirm")); got != wantRejected {
			t.Fatalf("character %d changed: %s", i, got)
		}
	}
	if n := f.runs.Load() - runs; n != 0 {
		t.Fatalf("handlers ran %d times for tampered states", n)
	}
	if r := f.do(c.with(st, "confirm")); r.Error != nil {
		t.Fatalf("the untouched state: %v", r.Error)
	}
}

// Protect logs to the server's logger unless the policy names another.
func TestProtectLogsToTheServersLogger(t *testing.T) {
	logger, logs := newLogger()
	s := server.New(mcp.Implementation{Name: "svc", Version: "1"}, &server.Options{Logger: logger})
	if err := requeststate.Protect(s, &requeststate.Policy{Keys: [][]byte{key(1)}}); err != nil {
		t.Fatal(err)
	}
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return mcp.TextResult("ran"), nil
	})
	msg, _, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"t","requestState":"forged"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Handle(context.Background(), msg.(*jsonrpc.Request), nil); !mcp.IsInvalidRequestState(err) {
		t.Fatalf("forged state: %v, want the fixed rejection", err)
	}
	if len(logs.lines("WARN")) != 1 {
		t.Errorf("the server's logger got:\n%s", logs)
	}
}
