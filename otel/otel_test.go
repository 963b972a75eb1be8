package otel_test

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
)

var testKeys = [][]byte{[]byte("0123456789abcdef0123456789abcdef-otel-test-key")}

// provisionServer is one instance of a fleet: tool "provision" asks for a
// region, then for a confirmation, then answers; its state is sealed
// with the fleet's key ring, so any instance serves any round.
func provisionServer(t testing.TB, tel *telemetry, policy *requeststate.Policy) *server.Server {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "fleet", Version: "1"}, nil)
	s.Use(tel.ServerMiddleware)
	if policy == nil {
		policy = &requeststate.Policy{}
	}
	policy.Keys = testKeys
	policy.Rejected = tel.StateRejected
	requeststate.MustProtect(s, policy)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		// A handler of package server says what it serves: the name its
		// telemetry may record (Request.Route).
		req.Route = p.Name
		switch p.RequestState {
		case "":
			return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"region": regionForm()}, RequestState: "asked-region"}, nil
		case "asked-region":
			return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"confirm": mcp.NewElicitFormRequest("Sure?", mcp.ElicitRequestedSchema{})}, RequestState: "asked-confirm"}, nil
		}
		return mcp.TextResult("provisioned"), nil
	})
	return s
}

func regionForm() mcp.InputRequest {
	return mcp.NewElicitFormRequest("Which region?", mcp.ElicitRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{"region": &mcp.StringSchema{}},
	})
}

func accepting(tel *telemetry) *client.Options {
	return &client.Options{
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "eu"}}, nil
		},
		Middleware: []client.Middleware{tel.ClientMiddleware},
	}
}

func parentOf(s sdktrace.ReadOnlySpan) trace.SpanID { return s.Parent().SpanID() }

// TestThreeRoundCallAcrossTwoServers: a call that takes three rounds,
// served by two instances sharing a key ring (round 1 and 3 by A, round 2
// by B), is one trace: the call's span, a CLIENT span per round under it
// (rounds 1, 2, 3), the two elicitations as SERVER spans under it (waiting
// on the person), and under each round the server's span, which from the
// second round on links to the first round's server span, whichever
// instance served it.
func TestThreeRoundCallAcrossTwoServers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	tel := newTelemetry(t)
	a, b := provisionServer(t, tel, nil), provisionServer(t, tel, nil)
	sess := connect(t, serveRoundRobin(t, a, b), accepting(tel))
	res, err := sess.CallTool(ctx, "provision", map[string]any{"size": 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("tool error: %v", res.Content)
	}

	calls := find(tel, "tools/call provision", trace.SpanKindInternal)
	if len(calls) != 1 {
		t.Fatalf("%d call spans, want 1", len(calls))
	}
	call := calls[0]
	if got := attr(call, "mcp.call.rounds"); got != "3" {
		t.Errorf("the call's span says %s rounds, want 3", got)
	}
	if attr(call, "gen_ai.tool.name") != "provision" || attr(call, "mcp.method.name") != "tools/call" {
		t.Errorf("call span attributes %v", call.Attributes())
	}
	rounds := find(tel, "tools/call provision", trace.SpanKindClient)
	if len(rounds) != 3 {
		t.Fatalf("%d round spans, want 3", len(rounds))
	}
	for i, r := range rounds {
		if parentOf(r) != call.SpanContext().SpanID() || r.SpanContext().TraceID() != call.SpanContext().TraceID() {
			t.Errorf("round %d is not a child of the call's span", i+1)
		}
		if got, want := attr(r, "mcp.call.round"), []string{"1", "2", "3"}[i]; got != want {
			t.Errorf("round span %d says round %s", i+1, got)
		}
	}
	if got := attr(rounds[0], "mcp.input_request.kinds"); got != `["elicitation/create"]` {
		t.Errorf("round 1 asked for %s", got)
	}
	if got := attr(rounds[2], "mcp.result.type"); got != "complete" {
		t.Errorf("round 3 result type %q", got)
	}
	asks := find(tel, "elicitation/create", trace.SpanKindServer)
	if len(asks) != 2 {
		t.Fatalf("%d elicitation spans, want 2", len(asks))
	}
	for i, s := range asks {
		if parentOf(s) != call.SpanContext().SpanID() {
			t.Errorf("elicitation %d is not a child of the call's span", i+1)
		}
		if attr(s, "mcp.input_request.waits_on") != "person" || attr(s, "mcp.input_request.outcome") != "accept" {
			t.Errorf("elicitation %d: %v", i+1, s.Attributes())
		}
		if !s.StartTime().After(rounds[i].EndTime()) && !s.StartTime().Equal(rounds[i].EndTime()) {
			t.Errorf("elicitation %d began before round %d ended", i+1, i+1)
		}
	}
	if attr(asks[0], "mcp.input_request.key") != "region" || attr(asks[1], "mcp.input_request.key") != "confirm" {
		t.Errorf("elicitation keys %q, %q", attr(asks[0], "mcp.input_request.key"), attr(asks[1], "mcp.input_request.key"))
	}
	served := find(tel, "tools/call provision", trace.SpanKindServer)
	if len(served) != 3 {
		t.Fatalf("%d server spans, want 3", len(served))
	}
	first := served[0]
	for i, s := range served {
		if parentOf(s) != rounds[i].SpanContext().SpanID() {
			t.Errorf("server span %d is not a child of client round %d", i+1, i+1)
		}
		if got, want := attr(s, "mcp.call.round"), []string{"1", "2", "3"}[i]; got != want {
			t.Errorf("server span %d says round %s", i+1, got)
		}
		if i == 0 {
			if len(s.Links()) != 0 {
				t.Errorf("the first round links to %v", s.Links())
			}
			continue
		}
		if len(s.Links()) != 1 || s.Links()[0].SpanContext.SpanID() != first.SpanContext().SpanID() || s.Links()[0].SpanContext.TraceID() != first.SpanContext().TraceID() {
			t.Errorf("server round %d links to %v, want the first round's span %v", i+1, s.Links(), first.SpanContext().SpanID())
		}
	}

	m := tel.metrics(t)
	if n, sum := histWhere(t, m["mcp.client.call.rounds"], map[string]string{"mcp.method.name": "tools/call"}); n != 1 || sum != 3 {
		t.Errorf("mcp.client.call.rounds: %d calls, %d rounds; want 1, 3", n, sum)
	}
	if n, sum := histWhere(t, m["mcp.server.call.rounds"], map[string]string{"mcp.method.name": "tools/call"}); n != 1 || sum != 3 {
		t.Errorf("mcp.server.call.rounds: %d calls, %d rounds; want 1, 3", n, sum)
	}
	if n := sumWhere(t, m["mcp.client.input_request.count"], map[string]string{"mcp.method.name": "elicitation/create", "mcp.input_request.outcome": "accept"}); n != 2 {
		t.Errorf("mcp.client.input_request.count accept = %d, want 2", n)
	}
	if n := sumWhere(t, m["mcp.server.input_request.count"], map[string]string{"mcp.method.name": "elicitation/create"}); n != 2 {
		t.Errorf("mcp.server.input_request.count = %d, want 2", n)
	}
	if n := floatHistCount(t, m["mcp.server.operation.duration"], map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "provision", "network.transport": "pipe"}); n != 3 {
		t.Errorf("mcp.server.operation.duration counted %d tools/call, want 3", n)
	}
	if n := floatHistCount(t, m["mcp.client.operation.duration"], map[string]string{"mcp.method.name": "tools/call", "mcp.protocol.version": string(mcp.LatestVersion)}); n != 3 {
		t.Errorf("mcp.client.operation.duration counted %d tools/call, want 3", n)
	}
	if n := floatHistCount(t, m["mcp.client.input_request.duration"], map[string]string{"mcp.method.name": "elicitation/create"}); n != 2 {
		t.Errorf("mcp.client.input_request.duration counted %d, want 2", n)
	}
}

// TestRefusedReplay: with single use, a round echoed twice is refused the
// second time: the refusal is counted by reason (replayed), and the
// client's span for it carries the error (-32602).
func TestRefusedReplay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	tel := newTelemetry(t)
	store, err := requeststate.NewMemoryStore(nil)
	if err != nil {
		t.Fatal(err)
	}
	s := provisionServer(t, tel, &requeststate.Policy{SingleUse: store})
	sess := connect(t, serve(t, s), accepting(tel))
	call, err := client.ToolCall("provision", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, p, err := sess.Begin(ctx, call)
	if err != nil || p == nil {
		t.Fatalf("Begin: %v, %v", p, err)
	}
	answers, err := sess.Fulfil(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sess.Continue(ctx, p, answers); err != nil {
		t.Fatal(err)
	}
	_, _, err = sess.Continue(ctx, p, answers)
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("the replay: %v, want -32602", err)
	}
	m := tel.metrics(t)
	if n := sumWhere(t, m["mcp.server.request_state.rejections"], map[string]string{"mcp.request_state.rejection.reason": "replayed", "mcp.method.name": "tools/call"}); n != 1 {
		t.Errorf("rejections by reason replayed = %d, want 1", n)
	}
	rounds := find(tel, "tools/call provision", trace.SpanKindClient, withAttr("mcp.call.round", "2"))
	if len(rounds) != 2 {
		t.Fatalf("%d spans of round 2, want 2 (the round and its replay)", len(rounds))
	}
	replay := rounds[1]
	if replay.Status().Code != codes.Error || attr(replay, "error.type") != "-32602" || attr(replay, "rpc.response.status_code") != "-32602" {
		t.Errorf("the replay's span: status %v, attributes %v", replay.Status(), replay.Attributes())
	}
	if n := len(find(tel, "tools/call provision", trace.SpanKindServer)); n != 2 {
		t.Errorf("%d server spans, want 2: a refused state is answered before any middleware", n)
	}
}

// TestLegacyBackChannel: on a legacy session the server's elicitation is
// a CLIENT span under the server's span, and the client's answer a SERVER
// span under that, all in the trace of the client's call.
func TestLegacyBackChannel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	tel := newTelemetry(t)
	s := server.New(mcp.Implementation{Name: "legacy", Version: "1"}, &server.Options{SupportedVersions: []mcp.ProtocolVersion{mcp.Version20251125}})
	s.Use(tel.ServerMiddleware)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		req.Route = p.Name
		raw, err := req.Ask(ctx, regionForm())
		if err != nil {
			return nil, err
		}
		ans, err := mcp.InputResponses{"q": raw}.Elicit("q")
		if err != nil {
			return nil, err
		}
		return mcp.TextResult(string(ans.Action)), nil
	})
	opts := accepting(tel)
	opts.ProtocolVersion = mcp.Version20251125
	sess := connect(t, serve(t, s), opts)
	if _, err := sess.CallTool(ctx, "provision", nil); err != nil {
		t.Fatal(err)
	}
	call := find(tel, "tools/call provision", trace.SpanKindInternal)
	round := find(tel, "tools/call provision", trace.SpanKindClient)
	served := find(tel, "tools/call provision", trace.SpanKindServer)
	asked := find(tel, "elicitation/create", trace.SpanKindClient)
	answered := find(tel, "elicitation/create", trace.SpanKindServer)
	if len(call) != 1 || len(round) != 1 || len(served) != 1 || len(asked) != 1 || len(answered) != 1 {
		t.Fatalf("spans: %d call, %d round, %d served, %d asked, %d answered; want one each", len(call), len(round), len(served), len(asked), len(answered))
	}
	chain := []sdktrace.ReadOnlySpan{call[0], round[0], served[0], asked[0], answered[0]}
	for i := 1; i < len(chain); i++ {
		if parentOf(chain[i]) != chain[i-1].SpanContext().SpanID() || chain[i].SpanContext().TraceID() != call[0].SpanContext().TraceID() {
			t.Errorf("%s (%s) is not a child of %s (%s)", chain[i].Name(), chain[i].SpanKind(), chain[i-1].Name(), chain[i-1].SpanKind())
		}
	}
	if attr(answered[0], "mcp.input_request.outcome") != "accept" || attr(answered[0], "mcp.input_request.waits_on") != "person" {
		t.Errorf("the answer's span: %v", answered[0].Attributes())
	}
	if attr(served[0], "mcp.protocol.version") != string(mcp.Version20251125) {
		t.Errorf("the server span's version: %q", attr(served[0], "mcp.protocol.version"))
	}
}
