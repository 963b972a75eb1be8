package requeststate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
)

func TestPolicyErrors(t *testing.T) {
	codec := mustCodec(t, key(1))
	cases := []struct {
		name       string
		serverName string
		p          *requeststate.Policy
		want       string
	}{
		{"neither", "svc", &requeststate.Policy{}, "exactly one of Keys and Codec"},
		{"both", "svc", &requeststate.Policy{Keys: [][]byte{key(1)}, Codec: codec}, "exactly one of Keys and Codec"},
		{"empty ring", "svc", &requeststate.Policy{Keys: [][]byte{}}, "exactly one of Keys and Codec"},
		{"short key", "svc", &requeststate.Policy{Keys: [][]byte{key(1), []byte("short")}}, "keys[1] is 5 bytes"},
		{"duplicate key", "svc", &requeststate.Policy{Keys: [][]byte{key(1), key(1)}}, "keys[1] duplicates keys[0]"},
		{"negative TTL", "svc", &requeststate.Policy{Keys: [][]byte{key(1)}, TTL: -time.Second}, "TTL must be positive"},
		{"sub-millisecond TTL", "svc", &requeststate.Policy{Keys: [][]byte{key(1)}, TTL: time.Microsecond}, "TTL must be positive"},
		{"unnamed server, keys", "", &requeststate.Policy{Keys: [][]byte{key(1)}}, "no name to use as the audience"},
		{"unnamed server, codec", "", &requeststate.Policy{Codec: codec}, "no name to use as the audience"},
	}
	for _, c := range cases {
		_, err := requeststate.NewBoundary(c.serverName, c.p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	ok := []struct {
		name       string
		serverName string
		p          *requeststate.Policy
	}{
		{"unnamed, explicit audience", "", &requeststate.Policy{Keys: [][]byte{key(1)}, Audience: "billing"}},
		{"unnamed, default policy", "", nil},
		{"unnamed, process-local", "", requeststate.ProcessLocal()},
		{"named, codec", "svc", &requeststate.Policy{Codec: codec}},
	}
	for _, c := range ok {
		if _, err := requeststate.NewBoundary(c.serverName, c.p); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// A process-local policy whose keys were changed is an explicit one:
	// the changed keys may be shared with another service, so its tokens
	// need an audience. Replaced, appended to, prepended to, or the
	// generated key overwritten in place.
	for _, change := range []struct {
		name string
		do   func(p *requeststate.Policy)
	}{
		{"replaced", func(p *requeststate.Policy) { p.Keys = [][]byte{key(3)} }},
		{"appended", func(p *requeststate.Policy) { p.Keys = append(p.Keys, key(3)) }},
		{"prepended", func(p *requeststate.Policy) { p.Keys = append([][]byte{key(3)}, p.Keys...) }},
		{"overwritten in place", func(p *requeststate.Policy) { copy(p.Keys[0], key(3)) }},
	} {
		p := requeststate.ProcessLocal()
		change.do(p)
		if _, err := requeststate.NewBoundary("", p); err == nil || !strings.Contains(err.Error(), "no name to use as the audience") {
			t.Errorf("a process-local policy with its keys %s, on an unnamed server: err = %v, want the named-server rule", change.name, err)
		}
		if _, err := requeststate.NewBoundary("svc", p); err != nil {
			t.Errorf("a process-local policy with its keys %s, on a named server: %v", change.name, err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("MustProtect did not panic on a bad policy")
		}
	}()
	requeststate.MustProtect(server.New(mcp.Implementation{Name: "svc"}, nil), &requeststate.Policy{})
}

func TestExpiry(t *testing.T) {
	for _, c := range []struct {
		ttl    time.Duration
		wait   time.Duration
		accept bool
	}{
		{0, requeststate.DefaultTTL - time.Second, true},
		{0, requeststate.DefaultTTL + time.Second, false},
		{0, requeststate.DefaultTTL, false}, // the expiry instant itself is past
		{5 * time.Second, 4 * time.Second, true},
		{5 * time.Second, 6 * time.Second, false},
		{1500 * time.Millisecond, 1400 * time.Millisecond, true}, // sub-second parts keep the full TTL
		{1500 * time.Millisecond, 1600 * time.Millisecond, false},
	} {
		clk := newClock()
		clk.Advance(123 * time.Millisecond) // a mint instant that is not a whole second
		f := newFixture(t, "svc", true, &requeststate.Policy{Keys: [][]byte{key(1)}, TTL: c.ttl, Now: clk.Now})
		st := f.begin(tool("ask", nil))
		clk.Advance(c.wait)
		got := f.raw(tool("ask", nil).with(st, "confirm"))
		if accepted := got != wantRejected; accepted != c.accept {
			t.Errorf("TTL %v, retry after %v: accepted=%v, want %v (%s)", c.ttl, c.wait, accepted, c.accept, got)
		}
	}
}

// TestFutureTokens: a token minted by an instance whose clock runs ahead is
// accepted within ClockSkew, and refused beyond it.
func TestFutureTokens(t *testing.T) {
	ahead, here := newClock(), newClock()
	minter := newFixture(t, "svc", true, &requeststate.Policy{Keys: [][]byte{key(1)}, Now: ahead.Now})
	verifier := newFixture(t, "svc", true, &requeststate.Policy{Keys: [][]byte{key(1)}, Now: here.Now})
	ahead.Advance(requeststate.ClockSkew - time.Second)
	st := minter.begin(tool("ask", nil))
	if got := verifier.raw(tool("ask", nil).with(st, "confirm")); got == wantRejected {
		t.Errorf("a token %v in the future was refused", requeststate.ClockSkew-time.Second)
	}
	ahead.Advance(2 * time.Second)
	st = minter.begin(tool("ask", nil))
	if got := verifier.raw(tool("ask", nil).with(st, "confirm")); got != wantRejected {
		t.Errorf("a token %v in the future was accepted: %s", requeststate.ClockSkew+time.Second, got)
	}
}

// TestShorterTTLWins: an instance refuses a token older than its own TTL,
// even when the minting instance allowed longer.
func TestShorterTTLWins(t *testing.T) {
	clk := newClock()
	long := newFixture(t, "svc", true, &requeststate.Policy{Keys: [][]byte{key(1)}, TTL: time.Hour, Now: clk.Now})
	short := newFixture(t, "svc", true, &requeststate.Policy{Keys: [][]byte{key(1)}, TTL: time.Minute, Now: clk.Now})
	st := long.begin(tool("ask", nil))
	clk.Advance(2 * time.Minute)
	if got := short.raw(tool("ask", nil).with(st, "confirm")); got != wantRejected {
		t.Errorf("a token older than the verifier's TTL was accepted: %s", got)
	}
	if got := long.raw(tool("ask", nil).with(st, "confirm")); got == wantRejected {
		t.Error("the minting instance refused its own live token")
	}
	// The other way round, the token's own expiry rules.
	st = short.begin(tool("ask", nil))
	clk.Advance(2 * time.Minute)
	if got := long.raw(tool("ask", nil).with(st, "confirm")); got != wantRejected {
		t.Errorf("a token past its own expiry was accepted: %s", got)
	}
}

// TestRotationThroughThreePhases rolls a fleet of two instances through the
// three phases, one instance at a time, with state in flight at each step:
// every retry lands on the other instance.
func TestRotationThroughThreePhases(t *testing.T) {
	oldKey, newKey := key(1), key(2)
	rings := [][][]byte{{oldKey}, {oldKey, newKey}, {newKey, oldKey}, {newKey}}
	instance := func(ring [][]byte) *fixture {
		return newFixture(t, "svc", true, &requeststate.Policy{Keys: ring})
	}
	b := instance(rings[0])
	for phase := 1; phase < len(rings); phase++ {
		// Mid-rollout: a is upgraded, b not yet. State flows both ways.
		a := instance(rings[phase])
		for _, pair := range [][2]*fixture{{a, b}, {b, a}} {
			st := pair[0].begin(tool("ask", nil))
			if r := pair[1].do(tool("ask", nil).with(st, "confirm")); r.Error != nil {
				t.Errorf("phase %d mid-rollout: state refused across instances: %v", phase, r.Error)
			}
		}
		b = instance(rings[phase])
		st := a.begin(tool("ask", nil))
		if r := b.do(tool("ask", nil).with(st, "confirm")); r.Error != nil {
			t.Errorf("phase %d complete: %v", phase, r.Error)
		}
	}
	// Promoting the new key first is exactly what the three phases avoid.
	early, behind := instance([][]byte{newKey, oldKey}), instance([][]byte{oldKey})
	if got := behind.raw(tool("ask", nil).with(early.begin(tool("ask", nil)), "confirm")); got != wantRejected {
		t.Error("an instance without the new key accepted state sealed under it")
	}
}

func TestProcessLocalInstancesRejectEachOther(t *testing.T) {
	a := newFixture(t, "svc", true, nil)
	b := newFixture(t, "svc", true, requeststate.ProcessLocal())
	st := a.begin(tool("ask", nil))
	if got := b.raw(tool("ask", nil).with(st, "confirm")); got != wantRejected {
		t.Errorf("another process-local instance accepted the state: %s", got)
	}
	if r := a.do(tool("ask", nil).with(st, "confirm")); r.Error != nil {
		t.Errorf("the issuing instance refused its own state: %v", r.Error)
	}
}

func TestSharedKeysAcrossInstances(t *testing.T) {
	keys := [][]byte{key(1)}
	a := newFixture(t, "svc", true, &requeststate.Policy{Keys: keys})
	b := newFixture(t, "svc", true, &requeststate.Policy{Keys: keys})
	st := a.begin(tool("ask", map[string]any{"x": 1}))
	r := b.do(tool("ask", map[string]any{"x": 1}).with(st, "confirm"))
	if r.text() != "state=issued-by:ask answers=[confirm] asked=true" {
		t.Fatalf("a sister instance: %+v", r)
	}
	// Same key, different names: separate audiences.
	c := newFixture(t, "svc-2", true, &requeststate.Policy{Keys: keys})
	if got := c.raw(tool("ask", map[string]any{"x": 1}).with(st, "confirm")); got != wantRejected {
		t.Errorf("a service with another name accepted the state: %s", got)
	}
	// An explicit audience joins them on purpose.
	d := newFixture(t, "svc-3", true, &requeststate.Policy{Keys: keys, Audience: "svc"})
	if r := d.do(tool("ask", map[string]any{"x": 1}).with(st, "confirm")); r.Error != nil {
		t.Errorf("an explicit shared audience: %v", r.Error)
	}
}

// TestArgumentsDigestByMeaning: re-encoding the arguments (member order,
// white space, number spelling) does not break the binding.
func TestArgumentsDigestByMeaning(t *testing.T) {
	f := newFixture(t, "svc", true, &requeststate.Policy{Keys: [][]byte{key(1)}})
	st := f.begin(tool("ask", map[string]any{"a": 1, "b": []any{"x", true}}))
	same := tool("ask", nil)
	same.params["arguments"] = jsonRaw(`{ "b" : ["x",true], "a": 1.0 }`)
	if r := f.do(same.with(st, "confirm")); r.Error != nil {
		t.Errorf("the same arguments, spelled differently: %v", r.Error)
	}
	// Absent and empty arguments are one thing.
	st = f.begin(tool("ask", nil))
	if r := f.do(tool("ask", map[string]any{}).with(st, "confirm")); r.Error != nil {
		t.Errorf("absent then empty arguments: %v", r.Error)
	}
}

func TestAuthPrincipal(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "svc"}, &server.Options{Logger: discard()})
	requeststate.MustProtect(s, &requeststate.Policy{Keys: [][]byte{key(1)}, Logger: discard()})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if p.RequestState == "" {
			return &mcp.InputRequiredResult{RequestState: "s"}, nil
		}
		return mcp.TextResult("ok"), nil
	})
	alice := &authInfo{ClientID: "app", Issuer: "https://as.example", Subject: "alice"}
	bob := &authInfo{ClientID: "app", Issuer: "https://as.example", Subject: "bob"}
	st := handleState(t, s, withAuth(alice), "")
	if err := handleErr(s, withAuth(alice), st); err != nil {
		t.Errorf("alice's own state: %v", err)
	}
	for name, ctx := range map[string]context.Context{
		"bob":             withAuth(bob),
		"unauthenticated": context.Background(),
		"other issuer":    withAuth(&authInfo{ClientID: "app", Issuer: "https://other.example", Subject: "alice"}),
		"no subject":      withAuth(&authInfo{ClientID: "app", Issuer: "https://as.example"}),
	} {
		if err := handleErr(s, ctx, st); !mcp.IsInvalidRequestState(err) {
			t.Errorf("%s used alice's state: %v", name, err)
		}
	}
	// State sealed without a principal fails once there is one.
	anon := handleState(t, s, context.Background(), "")
	if err := handleErr(s, withAuth(alice), anon); !mcp.IsInvalidRequestState(err) {
		t.Errorf("unbound state accepted for alice: %v", err)
	}
}

func TestPrincipalHookFailure(t *testing.T) {
	logger, logs := newLogger()
	fail := false
	s := server.New(mcp.Implementation{Name: "svc"}, &server.Options{Logger: discard()})
	requeststate.MustProtect(s, &requeststate.Policy{Keys: [][]byte{key(1)}, Logger: logger,
		Principal: func(ctx context.Context, req *server.Request) (string, error) {
			if fail {
				return "", errors.New("directory unavailable")
			}
			return "tenant-1", nil
		}})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return &mcp.InputRequiredResult{RequestState: "s"}, nil
	})
	st := handleState(t, s, context.Background(), "")
	fail = true
	if err := handleErr(s, context.Background(), st); !mcp.IsInvalidRequestState(err) {
		t.Errorf("verify with a failing hook: %v", err)
	}
	err := handleErr(s, context.Background(), "")
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInternalError || rpc.Message != "Internal error" || rpc.Data != nil {
		t.Errorf("seal with a failing hook: %v, want a bare -32603", err)
	}
	if !strings.Contains(logs.String(), "directory unavailable") || strings.Contains(logs.String(), "tenant-1") {
		t.Errorf("log:\n%s", logs)
	}
}

// failingCodec seals nothing and unseals nothing, with errors that are not
// refusals.
type failingCodec struct{}

func (failingCodec) Seal([]byte) (string, error)   { return "", errors.New("kms: secret detail") }
func (failingCodec) Unseal(string) ([]byte, error) { return nil, errors.New("kms: unreachable") }

func TestCodecFailures(t *testing.T) {
	logger, logs := newLogger()
	f := newFixture(t, "svc", true, &requeststate.Policy{Codec: failingCodec{}, Logger: logger})
	got := f.raw(tool("ask", nil))
	if want := `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Internal error"}}`; got != want {
		t.Errorf("seal failure: %s, want %s", got, want)
	}
	if got := f.raw(tool("ask", nil).with("anything")); got != wantRejected {
		t.Errorf("unseal failure: %s", got)
	}
	if !strings.Contains(logs.String(), "kms: secret detail") || !strings.Contains(logs.String(), "codec error") {
		t.Errorf("the log lacks the codec's errors:\n%s", logs)
	}
}

// TestAnswersPinnedToTheRound: answers under keys the sealed round did not
// ask never reach the handler, and Asked notices a question that changed.
func TestAnswersPinnedToTheRound(t *testing.T) {
	f := newFixture(t, "svc", true, &requeststate.Policy{Keys: [][]byte{key(1)}})
	st := f.begin(tool("ask", nil))
	r := f.do(tool("ask", nil).with(st, "confirm", "approve_refund", "admin"))
	if r.text() != "state=issued-by:ask answers=[confirm] asked=true" {
		t.Errorf("smuggled answers: %q", r.text())
	}
	if requeststate.Asked(context.Background(), "confirm", confirmQ) {
		t.Error("Asked vouches for an answer without any verified state")
	}

	// A handler that asks nothing (a state-only round) and one that
	// rewords its question between deploys.
	reworded := mcp.NewElicitFormRequest("Please confirm the refund", mcp.ElicitRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{"ok": &mcp.BooleanSchema{}},
		Required:   []string{"ok"},
	})
	var seen string
	s := server.New(mcp.Implementation{Name: "svc"}, &server.Options{Logger: discard()})
	requeststate.MustProtect(s, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		switch p.RequestState {
		case "":
			if p.Name == "state-only" {
				return &mcp.InputRequiredResult{RequestState: "waiting"}, nil
			}
			return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"confirm": confirmQ}, RequestState: "asked"}, nil
		}
		seen = fmt.Sprintf("answers=%d original=%v reworded=%v", len(p.InputResponses),
			requeststate.Asked(ctx, "confirm", confirmQ), requeststate.Asked(ctx, "confirm", reworded))
		return mcp.TextResult("done"), nil
	})
	answer := `,"inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}}}`
	for name, want := range map[string]string{
		"state-only": "answers=0 original=false reworded=false",
		"asking":     "answers=1 original=true reworded=false",
	} {
		res, err := s.Handle(context.Background(), rpcRequest(mcp.MethodCallTool, `{"name":"`+name+`"}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := json.Marshal(res.(*mcp.InputRequiredResult).RequestState)
		if _, err := s.Handle(context.Background(), rpcRequest(mcp.MethodCallTool, `{"name":"`+name+`","requestState":`+string(st)+answer), nil); err != nil {
			t.Fatal(err)
		}
		if seen != want {
			t.Errorf("%s: handler saw %s, want %s", name, seen, want)
		}
	}
}

// TestHandlerResultNotMutated: the boundary seals a copy, so a handler may
// return one shared value to every caller.
func TestHandlerResultNotMutated(t *testing.T) {
	shared := &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"confirm": confirmQ}, RequestState: "shared-plaintext"}
	s := server.New(mcp.Implementation{Name: "svc"}, &server.Options{Logger: discard()})
	requeststate.MustProtect(s, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return shared, nil
	})
	a := handleState(t, s, context.Background(), "")
	b := handleState(t, s, context.Background(), "")
	if shared.RequestState != "shared-plaintext" || a == b || !strings.HasPrefix(a, "rs1.") {
		t.Errorf("shared result became %q; tokens %q, %q", shared.RequestState, a, b)
	}
}

// TestNothingElseIsTouched: complete results, input_required without
// state, and methods that carry no state pass through unchanged.
func TestNothingElseIsTouched(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "svc"}, &server.Options{Logger: discard()})
	requeststate.MustProtect(s, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"confirm": confirmQ}}, nil
	})
	res, err := s.Handle(context.Background(), rpcRequest(mcp.MethodCallTool, `{"name":"t"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ir := res.(*mcp.InputRequiredResult); ir.RequestState != "" {
		t.Errorf("a state appeared: %q", ir.RequestState)
	}
}
