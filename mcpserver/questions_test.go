package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/server"
)

// The dependency engine: questions a registration declares (Elicit,
// Sample, ListRoots), asked over as many rounds as their dependencies
// need, answered once, and handed to the body as typed values.

type dbArgs struct {
	Name string `json:"name" jsonschema:"the database to create"`
}

type regionField struct {
	Region string `json:"region" jsonschema:"where the database lives"`
}

type yesNo struct {
	OK bool `json:"ok"`
}

func regionQuestion() *mcpserver.ElicitQuestion[regionField] {
	return mcpserver.Elicit[regionField]("region", func(a dbArgs, _ *mcpserver.Call) string {
		return "Which region should " + a.Name + " live in?"
	})
}

// addProvision registers the "provision" tool asking region, and returns
// a counter of its body's runs.
func addProvision(t *testing.T, s *mcpserver.Server, region *mcpserver.ElicitQuestion[regionField]) *counter {
	t.Helper()
	runs := new(counter)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "provision"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
		runs.add("body")
		if c.InputResponses() != nil || c.RequestState() != "" {
			return "", fmt.Errorf("a question-declaring body sees the channel: %v %q", c.InputResponses(), c.RequestState())
		}
		return fmt.Sprintf("Provisioned %s in %s.", a.Name, region.Get(c).Region), nil
	}, region))
	return runs
}

func provisionCall(t *testing.T, name string) *client.Call {
	t.Helper()
	call, err := client.ToolCall("provision", map[string]any{"name": name})
	mustOK(t, err)
	return call
}

func TestQuestionFirstRound(t *testing.T) {
	s, _ := newServer(t, nil)
	runs := addProvision(t, s, regionQuestion())
	sess := connect(t, s, &client.Options{Elicit: (&elicitor{answer: func(string) *mcp.ElicitResult { return nil }}).elicit})

	p := begin(t, sess, provisionCall(t, "orders"))
	wantKeys(t, p.InputRequests, "region")
	if got := formMessage(t, p.InputRequests, "region"); got != "Which region should orders live in?" {
		t.Errorf("message = %q", got)
	}
	raw, err := json.Marshal(p.InputRequests["region"])
	mustOK(t, err)
	wantJSON(t, "elicitation", raw, `{"method":"elicitation/create","params":{
		"message":"Which region should orders live in?",
		"requestedSchema":{"type":"object","properties":{"region":{"type":"string","description":"where the database lives"}},"required":["region"]}
	}}`)
	if p.RequestState == "" {
		t.Fatal("the round carries no requestState")
	}
	if strings.Contains(p.RequestState, "{") || strings.Contains(p.RequestState, `"v"`) {
		t.Errorf("requestState %q looks like plaintext", p.RequestState)
	}
	if n := runs.get("body"); n != 0 {
		t.Fatalf("the body ran %d times before its question was answered", n)
	}

	res := finish(t, sess, p, responses(t, map[string]mcp.InputResponse{"region": accept(map[string]any{"region": "eu-west-1"})}))
	wantText(t, res, false, "Provisioned orders in eu-west-1.")
	if n := runs.get("body"); n != 1 {
		t.Errorf("the body ran %d times, want 1", n)
	}
}

func TestQuestionAutomaticLoop(t *testing.T) {
	s, _ := newServer(t, nil)
	runs := addProvision(t, s, regionQuestion())
	el := &elicitor{answer: func(string) *mcp.ElicitResult { return accept(map[string]any{"region": "us-east-2"}) }}
	sess := connect(t, s, &client.Options{Elicit: el.elicit})
	res, err := sess.CallTool(context.Background(), "provision", map[string]any{"name": "users"})
	mustOK(t, err)
	wantText(t, res, false, "Provisioned users in us-east-2.")
	if el.times("Which region should users live in?") != 1 || runs.get("body") != 1 {
		t.Errorf("asked %v, body ran %d times", el.asked, runs.get("body"))
	}
}

func TestQuestionsBatchedAndDependent(t *testing.T) {
	type envField struct {
		Env string `json:"env"`
	}
	region := regionQuestion()
	env := mcpserver.Elicit[envField]("env", func(a dbArgs, _ *mcpserver.Call) string {
		return "Which environment is " + a.Name + " for?"
	})
	// confirm depends on both, and its message uses their answers.
	confirm := mcpserver.Elicit[yesNo]("confirm", func(a dbArgs, c *mcpserver.Call) string {
		return fmt.Sprintf("Create %s in %s for %s?", a.Name, region.Get(c).Region, env.Get(c).Env)
	}, region, env)

	s, _ := newServer(t, nil)
	runs := new(counter)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "provision"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
		runs.add("body")
		return fmt.Sprintf("%s %s %s %v", a.Name, region.Get(c).Region, env.Get(c).Env, confirm.Get(c).OK), nil
	}, confirm)) // region and env join through confirm's dependencies
	el := &elicitor{answer: func(m string) *mcp.ElicitResult {
		switch {
		case strings.HasPrefix(m, "Which region"):
			return accept(map[string]any{"region": "eu"})
		case strings.HasPrefix(m, "Which environment"):
			return accept(map[string]any{"env": "prod"})
		}
		return accept(map[string]any{"ok": true})
	}}
	rounds := new(roundLog)
	sess := connect(t, s, &client.Options{Elicit: el.elicit, Loop: &client.LoopOptions{OnRound: rounds.onRound}})
	res, err := sess.CallTool(context.Background(), "provision", map[string]any{"name": "orders"})
	mustOK(t, err)
	wantText(t, res, false, "orders eu prod true")
	if got := rounds.String(); got != "env+region | confirm" {
		t.Errorf("rounds = %s, want env+region | confirm", got)
	}
	for _, m := range []string{"Which region should orders live in?", "Which environment is orders for?", "Create orders in eu for prod?"} {
		if n := el.times(m); n != 1 {
			t.Errorf("%q asked %d times, want 1 (all asked: %q)", m, n, el.asked)
		}
	}
	if n := runs.get("body"); n != 1 {
		t.Errorf("body ran %d times", n)
	}
}

// Each question is asked once while the engine re-runs every round:
// answers ride the sealed state and are restored, not asked again.
func TestQuestionChainAsksEachOnce(t *testing.T) {
	renders := new(counter)
	a := mcpserver.Elicit[yesNo]("a", func(_ dbArgs, _ *mcpserver.Call) string { renders.add("a"); return "A?" })
	b := mcpserver.Elicit[yesNo]("b", func(_ dbArgs, _ *mcpserver.Call) string { renders.add("b"); return "B?" }, a)
	c := mcpserver.Elicit[yesNo]("c", func(_ dbArgs, _ *mcpserver.Call) string { renders.add("c"); return "C?" }, b)
	s, _ := newServer(t, nil)
	runs := new(counter)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "chain"}, func(ctx context.Context, call *mcpserver.Call, _ dbArgs) (string, error) {
		runs.add("body")
		return fmt.Sprint(a.Get(call).OK, b.Get(call).OK, c.Get(call).OK), nil
	}, a, b, c))
	el := &elicitor{answer: func(m string) *mcp.ElicitResult { return accept(map[string]any{"ok": m != "B?"}) }}
	rounds := new(roundLog)
	sess := connect(t, s, &client.Options{Elicit: el.elicit, Loop: &client.LoopOptions{OnRound: rounds.onRound}})
	res, err := sess.CallTool(context.Background(), "chain", map[string]any{"name": "x"})
	mustOK(t, err)
	wantText(t, res, false, "true false true")
	if got := rounds.String(); got != "a | b | c" {
		t.Errorf("rounds = %s", got)
	}
	for _, m := range []string{"A?", "B?", "C?"} {
		if n := el.times(m); n != 1 {
			t.Errorf("%s asked %d times", m, n)
		}
	}
	if runs.get("body") != 1 {
		t.Errorf("body ran %d times", runs.get("body"))
	}
	// The engine ran on all four requests, rendering a each time.
	if n := renders.get("a"); n != 4 {
		t.Errorf("a rendered %d times, want once per request (4)", n)
	}
}

func TestQuestionDeclineAndCancel(t *testing.T) {
	for _, action := range []mcp.ElicitAction{mcp.ActionDecline, mcp.ActionCancel} {
		t.Run(string(action), func(t *testing.T) {
			s, _ := newServer(t, nil)
			runs := addProvision(t, s, regionQuestion())
			el := &elicitor{answer: func(string) *mcp.ElicitResult { return &mcp.ElicitResult{Action: action} }}
			sess := connect(t, s, &client.Options{Elicit: el.elicit})
			res, err := sess.CallTool(context.Background(), "provision", map[string]any{"name": "orders"})
			mustOK(t, err)
			verb := map[mcp.ElicitAction]string{mcp.ActionDecline: "declined", mcp.ActionCancel: "cancelled"}[action]
			wantText(t, res, true, `Tool "provision" stopped: the user `+verb+` question "region" of tool "provision".`)
			if runs.get("body") != 0 {
				t.Error("the body ran after the question was refused")
			}
		})
	}
}

func TestQuestionAllowDecline(t *testing.T) {
	region := regionQuestion().AllowDecline()
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "provision"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
		o := region.Outcome(c)
		return fmt.Sprintf("%s accepted=%v get=%q content=%q", o.Action, o.Accepted(), region.Get(c).Region, o.Content.Region), nil
	}, region))
	for _, tc := range []struct {
		answer *mcp.ElicitResult
		want   string
	}{
		{&mcp.ElicitResult{Action: mcp.ActionDecline}, `decline accepted=false get="" content=""`},
		{&mcp.ElicitResult{Action: mcp.ActionCancel}, `cancel accepted=false get="" content=""`},
		{accept(map[string]any{"region": "ap"}), `accept accepted=true get="ap" content="ap"`},
	} {
		el := &elicitor{answer: func(string) *mcp.ElicitResult { return tc.answer }}
		sess := connect(t, s, &client.Options{Elicit: el.elicit})
		res, err := sess.CallTool(context.Background(), "provision", map[string]any{"name": "orders"})
		mustOK(t, err)
		wantText(t, res, false, tc.want)
	}
}

// Answers that do not fit their question end the call with an isError
// result naming the question; the body never runs.
func TestQuestionAnswersThatDoNotFit(t *testing.T) {
	s, _ := newServer(t, nil)
	runs := addProvision(t, s, regionQuestion())
	sess := connect(t, s, &client.Options{Elicit: (&elicitor{}).elicit})
	prefix := `Tool "provision" stopped: question "region" of tool "provision": `
	for _, tc := range []struct {
		name   string
		answer string
		want   string
	}{
		{"accept without content", `{"action":"accept"}`, "the elicitation was accepted with no content."},
		{"wrong type", `{"action":"accept","content":{"region":5}}`, "the accepted content does not match the requested schema"},
		{"missing field", `{"action":"accept","content":{"other":"x"}}`, "the accepted content does not match the requested schema"},
		{"sampling result", `{"role":"assistant","content":{"type":"text","text":"eu"},"model":"m"}`, "the answer is not of the kind asked"},
		{"roots result", `{"roots":[]}`, "the answer is not of the kind asked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := begin(t, sess, provisionCall(t, "orders"))
			res := finish(t, sess, p, mcp.InputResponses{"region": json.RawMessage(tc.answer)})
			if !res.IsError {
				t.Fatalf("accepted: %q", onlyText(t, res))
			}
			wantContains(t, "text", onlyText(t, res), prefix+tc.want)
		})
	}
	if runs.get("body") != 0 {
		t.Errorf("the body ran %d times", runs.get("body"))
	}
}

func TestQuestionWrongKindForSampleAndRoots(t *testing.T) {
	sample := mcpserver.Sample("summary", func(a dbArgs, _ *mcpserver.Call) mcp.CreateMessageRequestParams {
		return mcp.CreateMessageRequestParams{MaxTokens: 10, Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.SamplingContent{mcp.NewTextContent("hi")}}}}
	})
	roots := mcpserver.ListRoots("roots")
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "t"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
		return "ran", nil
	}, sample, roots))
	sess := connect(t, s, &client.Options{Capabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}, Roots: &mcp.RootsCapability{}}})
	call, err := client.ToolCall("t", map[string]any{"name": "x"})
	mustOK(t, err)
	elicitAnswer := json.RawMessage(`{"action":"accept","content":{"x":"y"}}`)
	goodSample := json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}`)
	goodRoots := json.RawMessage(`{"roots":[{"uri":"file:///w"}]}`)

	p := begin(t, sess, call)
	wantKeys(t, p.InputRequests, "roots", "summary")
	res := finish(t, sess, p, mcp.InputResponses{"summary": elicitAnswer, "roots": goodRoots})
	wantContains(t, "text", onlyText(t, res), `Tool "t" stopped: question "summary" of tool "t": the answer is not of the kind asked`)

	p = begin(t, sess, call)
	res = finish(t, sess, p, mcp.InputResponses{"summary": goodSample, "roots": elicitAnswer})
	wantContains(t, "text", onlyText(t, res), `Tool "t" stopped: question "roots" of tool "t": the answer is not of the kind asked`)

	p = begin(t, sess, call)
	wantText(t, finish(t, sess, p, mcp.InputResponses{"summary": goodSample, "roots": goodRoots}), false, "ran")
}

// A question reworded between rounds (a redeploy) is asked again: neither
// an answer to the old wording arriving now, nor one recorded in the
// state, stands for it.
func TestQuestionReworded(t *testing.T) {
	var wording atomic.Value
	wording.Store("v1")
	region := mcpserver.Elicit[regionField]("region", func(a dbArgs, _ *mcpserver.Call) string {
		return wording.Load().(string) + ": where should " + a.Name + " live?"
	})
	confirm := mcpserver.Elicit[yesNo]("confirm", func(a dbArgs, c *mcpserver.Call) string {
		return "Create " + a.Name + " in " + region.Get(c).Region + "?"
	}, region)
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "provision"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
		return fmt.Sprintf("%s in %s (%v)", a.Name, region.Get(c).Region, confirm.Get(c).OK), nil
	}, confirm))
	sess := connect(t, s, manual)
	regionIs := func(r string) mcp.InputResponses {
		return responses(t, map[string]mcp.InputResponse{"region": accept(map[string]any{"region": r})})
	}
	yes := responses(t, map[string]mcp.InputResponse{"confirm": accept(map[string]any{"ok": true})})

	t.Run("answer arriving after the reword", func(t *testing.T) {
		wording.Store("v1")
		p := begin(t, sess, provisionCall(t, "orders"))
		if got := formMessage(t, p.InputRequests, "region"); got != "v1: where should orders live?" {
			t.Fatalf("message = %q", got)
		}
		wording.Store("v2")
		p = again(t, sess, p, regionIs("eu"))
		wantKeys(t, p.InputRequests, "region")
		if got := formMessage(t, p.InputRequests, "region"); got != "v2: where should orders live?" {
			t.Errorf("re-asked with %q", got)
		}
		p = again(t, sess, p, regionIs("us"))
		wantKeys(t, p.InputRequests, "confirm")
		if got := formMessage(t, p.InputRequests, "confirm"); got != "Create orders in us?" {
			t.Errorf("confirm message = %q", got)
		}
		wantText(t, finish(t, sess, p, yes), false, "orders in us (true)")
	})

	t.Run("recorded answer after the reword", func(t *testing.T) {
		wording.Store("v1")
		p := begin(t, sess, provisionCall(t, "orders"))
		p = again(t, sess, p, regionIs("eu")) // recorded under v1
		wantKeys(t, p.InputRequests, "confirm")
		wording.Store("v2")
		// The state holds region=eu for the v1 wording: it does not count,
		// so region is asked again and confirm waits for it.
		p = again(t, sess, p, yes)
		wantKeys(t, p.InputRequests, "region")
		if got := formMessage(t, p.InputRequests, "region"); got != "v2: where should orders live?" {
			t.Errorf("re-asked with %q", got)
		}
		p = again(t, sess, p, regionIs("ap"))
		wantKeys(t, p.InputRequests, "confirm")
		if got := formMessage(t, p.InputRequests, "confirm"); got != "Create orders in ap?" {
			t.Errorf("confirm message = %q, want the fresh answer in it", got)
		}
		wantText(t, finish(t, sess, p, yes), false, "orders in ap (true)")
	})
}

// A recorded decline pinned to an old wording does not suppress the
// reworded question.
func TestQuestionStaleDeclineReasked(t *testing.T) {
	var wording atomic.Value
	wording.Store("v1")
	region := mcpserver.Elicit[regionField]("region", func(a dbArgs, _ *mcpserver.Call) string {
		return wording.Load().(string) + " region?"
	}).AllowDecline()
	confirm := mcpserver.Elicit[yesNo]("confirm", func(a dbArgs, c *mcpserver.Call) string { return "Sure?" }, region)
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "provision"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
		return string(region.Outcome(c).Action), nil
	}, confirm))
	sess := connect(t, s, manual)
	p := begin(t, sess, provisionCall(t, "orders"))
	p = again(t, sess, p, responses(t, map[string]mcp.InputResponse{"region": &mcp.ElicitResult{Action: mcp.ActionDecline}}))
	wantKeys(t, p.InputRequests, "confirm")
	wording.Store("v2")
	p = again(t, sess, p, responses(t, map[string]mcp.InputResponse{"confirm": accept(map[string]any{"ok": true})}))
	wantKeys(t, p.InputRequests, "region")
	if got := formMessage(t, p.InputRequests, "region"); got != "v2 region?" {
		t.Errorf("message = %q", got)
	}
}

// An answer under a key the previous round did not ask is dropped: a
// client cannot answer a question before it is asked.
func TestQuestionUnaskedAnswerDropped(t *testing.T) {
	first := mcpserver.Elicit[regionField]("region", func(a dbArgs, _ *mcpserver.Call) string { return "Region?" })
	second := mcpserver.Elicit[yesNo]("confirm", func(a dbArgs, c *mcpserver.Call) string { return "In " + first.Get(c).Region + "?" }, first)
	s, _ := newServer(t, nil)
	runs := new(counter)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "provision"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
		runs.add("body")
		return fmt.Sprint(first.Get(c).Region, " ", second.Get(c).OK), nil
	}, second))
	sess := connect(t, s, manual)
	all := responses(t, map[string]mcp.InputResponse{
		"region":  accept(map[string]any{"region": "eu"}),
		"confirm": accept(map[string]any{"ok": true}),
	})

	// On the first round, with no state, no answer counts.
	out, err := sess.CallToolRound(context.Background(), &mcp.CallToolRequestParams{
		Name: "provision", Arguments: json.RawMessage(`{"name":"orders"}`), InputResponses: all,
	})
	mustOK(t, err)
	ir, ok := out.(*mcp.InputRequiredResult)
	if !ok {
		t.Fatalf("unsolicited answers completed the call: %+v", out)
	}
	wantKeys(t, ir.InputRequests, "region")

	// The retry answers region, and slips in confirm, which was not asked.
	p := begin(t, sess, provisionCall(t, "orders"))
	p = again(t, sess, p, all)
	wantKeys(t, p.InputRequests, "confirm")
	if got := formMessage(t, p.InputRequests, "confirm"); got != "In eu?" {
		t.Errorf("message = %q", got)
	}
	wantText(t, finish(t, sess, p, all), false, "eu true")
	if runs.get("body") != 1 {
		t.Errorf("body ran %d times", runs.get("body"))
	}
}

func TestQuestionForgedRequestState(t *testing.T) {
	s, _ := newServer(t, nil)
	runs := addProvision(t, s, regionQuestion())
	sess := connect(t, s, manual)
	answer := responses(t, map[string]mcp.InputResponse{"region": accept(map[string]any{"region": "eu"})})
	p := begin(t, sess, provisionCall(t, "orders"))

	tamper := []byte(p.RequestState)
	i := len(tamper) / 2
	if tamper[i] == 'A' {
		tamper[i] = 'B'
	} else {
		tamper[i] = 'A'
	}
	for name, state := range map[string]string{
		"tampered":  string(tamper),
		"truncated": p.RequestState[:len(p.RequestState)-4],
		"plaintext": `{"v":1,"o":{"region":{"a":"accept","d":{"region":"eu"},"q":"x"}}}`,
		"garbage":   "not-a-token",
	} {
		t.Run(name, func(t *testing.T) {
			forged := *p
			forged.RequestState = state
			_, _, err := sess.Continue(context.Background(), &forged, answer)
			wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Invalid or expired requestState")
		})
	}
	t.Run("replayed with other arguments", func(t *testing.T) {
		other := *p
		other.Call = *provisionCall(t, "users")
		_, _, err := sess.Continue(context.Background(), &other, answer)
		wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Invalid or expired requestState")
	})
	t.Run("replayed on another tool", func(t *testing.T) {
		addGreet(t, s)
		other := *p
		call, err := client.ToolCall("greet", map[string]any{"name": "orders"})
		mustOK(t, err)
		other.Call = *call
		_, _, err = sess.Continue(context.Background(), &other, answer)
		wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Invalid or expired requestState")
	})
	if runs.get("body") != 0 {
		t.Fatalf("the body ran on forged state")
	}
	// The genuine state still completes the call.
	wantText(t, finish(t, sess, p, answer), false, "Provisioned orders in eu.")
}

func TestQuestionCapabilityGate(t *testing.T) {
	tools := []mcp.Tool{{Name: "lookup", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	samplingParams := func(withTools bool) func(dbArgs, *mcpserver.Call) mcp.CreateMessageRequestParams {
		return func(dbArgs, *mcpserver.Call) mcp.CreateMessageRequestParams {
			p := mcp.CreateMessageRequestParams{MaxTokens: 5, Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.SamplingContent{mcp.NewTextContent("hi")}}}}
			if withTools {
				p.Tools = tools
			}
			return p
		}
	}
	for _, tc := range []struct {
		name     string
		question mcpserver.Dependency
		caps     *mcp.ClientCapabilities
		message  string
		required string
	}{
		{"elicitation", regionQuestion(), &mcp.ClientCapabilities{},
			`Missing required client capability: elicitation (needed by question "region" of tool "t")`, `{"elicitation":{}}`},
		{"elicitation url only", regionQuestion(), &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{URL: &struct{}{}}},
			`Missing required client capability: elicitation (needed by question "region" of tool "t")`, `{"elicitation":{}}`},
		{"sampling", mcpserver.Sample("s", samplingParams(false)), &mcp.ClientCapabilities{Roots: &mcp.RootsCapability{}},
			`Missing required client capability: sampling (needed by question "s" of tool "t")`, `{"sampling":{}}`},
		{"sampling.tools", mcpserver.Sample("s", samplingParams(true)), &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}},
			`Missing required client capability: sampling.tools (needed by question "s" of tool "t")`, `{"sampling":{"tools":{}}}`},
		{"roots", mcpserver.ListRoots("r"), &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}},
			`Missing required client capability: roots (needed by question "r" of tool "t")`, `{"roots":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newServer(t, nil)
			runs := new(counter)
			mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "t"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
				runs.add("body")
				return "ran", nil
			}, tc.question))
			addGreet(t, s)
			sess := connect(t, s, &client.Options{Capabilities: tc.caps})
			_, err := sess.CallTool(context.Background(), "t", map[string]any{"name": "x"})
			e := wantRPCError(t, err, mcp.CodeMissingRequiredClientCapability, tc.message)
			data, ok := mcp.AsMissingRequiredClientCapability(err)
			if !ok {
				t.Fatalf("no requiredCapabilities in %v", e)
			}
			raw, err := json.Marshal(data.RequiredCapabilities)
			mustOK(t, err)
			wantJSON(t, "requiredCapabilities", raw, tc.required)
			if runs.get("body") != 0 {
				t.Error("the body ran")
			}
			// The session stays usable.
			res, err := sess.CallTool(context.Background(), "greet", map[string]any{"name": "Ada"})
			mustOK(t, err)
			wantText(t, res, false, "Hello, Ada!")
		})
	}
}

// The gate names every question of the round that needs what the client
// lacks, and merges their requirements.
func TestQuestionCapabilityGateNamesEveryQuestion(t *testing.T) {
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "t"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
		return "ran", nil
	}, mcpserver.ListRoots("r2"), regionQuestion(), mcpserver.ListRoots("r1")))
	sess := connect(t, s, &client.Options{Capabilities: &mcp.ClientCapabilities{}})
	_, err := sess.CallTool(context.Background(), "t", map[string]any{"name": "x"})
	wantRPCError(t, err, mcp.CodeMissingRequiredClientCapability,
		`Missing required client capability: elicitation, roots (needed by question "r1", "r2", "region" of tool "t")`)
}

func TestQuestionSampleAndRootsInjectValues(t *testing.T) {
	temp := 0.2
	summary := mcpserver.Sample("summary", func(a dbArgs, _ *mcpserver.Call) mcp.CreateMessageRequestParams {
		return mcp.CreateMessageRequestParams{
			Messages:     []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.SamplingContent{mcp.NewTextContent("Describe " + a.Name)}}},
			SystemPrompt: "Be brief.",
			MaxTokens:    50,
			Temperature:  &temp,
		}
	})
	roots := mcpserver.ListRoots("roots")
	region := regionQuestion()
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "survey"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
		var uris []string
		for _, r := range roots.Get(c) {
			uris = append(uris, r.URI+"="+r.Name)
		}
		res := summary.Get(c)
		return fmt.Sprintf("%s | %s/%s | %s | %s", region.Get(c).Region, res.Text(), res.Model, strings.Join(uris, ","), a.Name), nil
	}, summary, roots, region))

	var sampled, listed atomic.Int32
	el := &elicitor{answer: func(string) *mcp.ElicitResult { return accept(map[string]any{"region": "eu"}) }}
	rounds := new(roundLog)
	sess := connect(t, s, &client.Options{
		Elicit: el.elicit,
		Sample: func(ctx context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
			sampled.Add(1)
			if p.SystemPrompt != "Be brief." || p.MaxTokens != 50 || p.Temperature == nil || *p.Temperature != 0.2 || len(p.Messages) != 1 {
				return nil, fmt.Errorf("unexpected params %+v", p)
			}
			text := p.Messages[0].Content[0].(*mcp.TextContent).Text
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "tiny-1", Content: mcp.SamplingContent{mcp.NewTextContent("summary of " + text)}}, nil
		},
		ListRoots: func(ctx context.Context) (*mcp.ListRootsResult, error) {
			listed.Add(1)
			return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///src", Name: "src"}, {URI: "file:///docs", Name: "docs"}}}, nil
		},
		Loop: &client.LoopOptions{OnRound: rounds.onRound},
	})
	res, err := sess.CallTool(context.Background(), "survey", map[string]any{"name": "orders"})
	mustOK(t, err)
	wantText(t, res, false, "eu | summary of Describe orders/tiny-1 | file:///src=src,file:///docs=docs | orders")
	// Elicit, Sample and ListRoots are independent: one round asks all.
	if got := rounds.String(); got != "region+roots+summary" {
		t.Errorf("rounds = %s, want one round with all three", got)
	}
	if sampled.Load() != 1 || listed.Load() != 1 || el.count() != 1 {
		t.Errorf("sampled %d, listed %d, elicited %d times", sampled.Load(), listed.Load(), el.count())
	}
}

// A sampled completion is recorded in the state: a later round uses it
// without sampling again.
func TestQuestionSampledOnceAcrossRounds(t *testing.T) {
	idea := mcpserver.Sample("idea", func(a dbArgs, _ *mcpserver.Call) mcp.CreateMessageRequestParams {
		return mcp.CreateMessageRequestParams{MaxTokens: 20, Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.SamplingContent{mcp.NewTextContent("name " + a.Name)}}}}
	})
	ok := mcpserver.Elicit[yesNo]("ok", func(a dbArgs, c *mcpserver.Call) string { return "Use " + idea.Get(c).Text() + "?" }, idea)
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "name"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
		return fmt.Sprint(idea.Get(c).Text(), " ", ok.Get(c).OK), nil
	}, ok))
	var sampled atomic.Int32
	el := &elicitor{answer: func(string) *mcp.ElicitResult { return accept(map[string]any{"ok": true}) }}
	sess := connect(t, s, &client.Options{
		Elicit: el.elicit,
		Sample: func(ctx context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
			n := sampled.Add(1)
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "m", Content: mcp.SamplingContent{mcp.NewTextContent(fmt.Sprintf("blue-%d", n))}}, nil
		},
	})
	res, err := sess.CallTool(context.Background(), "name", map[string]any{"name": "x"})
	mustOK(t, err)
	wantText(t, res, false, "blue-1 true")
	if sampled.Load() != 1 || el.times("Use blue-1?") != 1 {
		t.Errorf("sampled %d times; asked %q", sampled.Load(), el.asked)
	}
}

func TestQuestionSampleWithTools(t *testing.T) {
	q := mcpserver.Sample("plan", func(a dbArgs, _ *mcpserver.Call) mcp.CreateMessageRequestParams {
		return mcp.CreateMessageRequestParams{
			MaxTokens:  20,
			Messages:   []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.SamplingContent{mcp.NewTextContent("plan")}}},
			Tools:      []mcp.Tool{{Name: "lookup", InputSchema: json.RawMessage(`{"type":"object"}`)}},
			ToolChoice: &mcp.ToolChoice{Mode: mcp.ToolChoiceAuto},
		}
	})
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "t"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
		return q.Get(c).Text(), nil
	}, q))
	var toolsSeen atomic.Value
	sess := connect(t, s, &client.Options{
		Capabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{Tools: &struct{}{}}},
		Sample: func(ctx context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
			toolsSeen.Store(fmt.Sprint(len(p.Tools), p.Tools[0].Name, p.ToolChoice.Mode))
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "m", Content: mcp.SamplingContent{mcp.NewTextContent("planned")}}, nil
		},
	})
	res, err := sess.CallTool(context.Background(), "t", map[string]any{"name": "x"})
	mustOK(t, err)
	wantText(t, res, false, "planned")
	if got := toolsSeen.Load(); got != "1lookupauto" {
		t.Errorf("the callback saw %v", got)
	}
}

// Typed form fields: integers, numbers and booleans decode into T.
func TestQuestionTypedForm(t *testing.T) {
	type sizing struct {
		Replicas int     `json:"replicas" jsonschema:"how many"`
		Ratio    float64 `json:"ratio,omitempty"`
		HA       bool    `json:"ha,omitempty"`
	}
	q := mcpserver.Elicit[sizing]("sizing", func(a dbArgs, _ *mcpserver.Call) string { return "Size?" })
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "t"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
		return fmt.Sprintf("%+v", q.Get(c)), nil
	}, q))
	sess := connect(t, s, manual)
	call, err := client.ToolCall("t", map[string]any{"name": "x"})
	mustOK(t, err)
	p := begin(t, sess, call)
	raw, err := json.Marshal(p.InputRequests["sizing"].(*mcp.ElicitRequest).Params.(*mcp.ElicitRequestFormParams).RequestedSchema)
	mustOK(t, err)
	wantJSON(t, "requestedSchema", raw, `{"type":"object","properties":{
		"replicas":{"type":"integer","description":"how many"},
		"ratio":{"type":"number"},
		"ha":{"type":"boolean"}
	},"required":["replicas"]}`)
	res := finish(t, sess, p, mcp.InputResponses{"sizing": json.RawMessage(`{"action":"accept","content":{"replicas":3,"ratio":0.5,"ha":true}}`)})
	wantText(t, res, false, "{Replicas:3 Ratio:0.5 HA:true}")

	p = begin(t, sess, call)
	res = finish(t, sess, p, mcp.InputResponses{"sizing": json.RawMessage(`{"action":"accept","content":{"replicas":2.5}}`)})
	wantContains(t, "text", onlyText(t, res), "the accepted content does not match the requested schema")
}

func TestQuestionWithSchema(t *testing.T) {
	q := mcpserver.Elicit[regionField]("region", func(a dbArgs, _ *mcpserver.Call) string { return "Region?" }).
		WithSchema(mcp.ElicitRequestedSchema{
			Properties: map[string]mcp.PrimitiveSchemaDefinition{
				"region": &mcp.UntitledSingleSelectEnumSchema{Title: "Region", Enum: []string{"eu", "us"}},
			},
			Required: []string{"region"},
		})
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "t"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
		return q.Get(c).Region, nil
	}, q))
	sess := connect(t, s, manual)
	call, err := client.ToolCall("t", map[string]any{"name": "x"})
	mustOK(t, err)
	p := begin(t, sess, call)
	raw, err := json.Marshal(p.InputRequests["region"])
	mustOK(t, err)
	wantContains(t, "request", string(raw), `"enum":["eu","us"]`, `"title":"Region"`)
	res := finish(t, sess, p, responses(t, map[string]mcp.InputResponse{"region": accept(map[string]any{"region": "mars"})}))
	wantContains(t, "text", onlyText(t, res), "does not match the requested schema")
	p = begin(t, sess, call)
	wantText(t, finish(t, sess, p, responses(t, map[string]mcp.InputResponse{"region": accept(map[string]any{"region": "us"})})), false, "us")
}

func TestQuestionRegistrationErrors(t *testing.T) {
	s, _ := newServer(t, nil)
	body := func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) { return "", nil }
	msg := func(dbArgs, *mcpserver.Call) string { return "?" }
	type otherArgs struct {
		ID string `json:"id"`
	}
	type nested struct {
		Inner struct{ X string } `json:"inner"`
	}
	for _, tc := range []struct {
		name string
		deps []mcpserver.Dependency
		want string
	}{
		{"two questions with one key",
			[]mcpserver.Dependency{mcpserver.Elicit[yesNo]("k", msg), mcpserver.Elicit[regionField]("k", msg)},
			`mcpserver: tool "t": two questions have the key "k"`},
		{"a dependency shares a key",
			[]mcpserver.Dependency{mcpserver.Elicit[yesNo]("k", msg, mcpserver.ListRoots("k"))},
			`mcpserver: tool "t": two questions have the key "k"`},
		{"other argument type",
			[]mcpserver.Dependency{mcpserver.Elicit[yesNo]("k", func(otherArgs, *mcpserver.Call) string { return "?" })},
			`mcpserver: tool "t": question "k" renders from arguments of type mcpserver_test.otherArgs, but the registration's arguments are mcpserver_test.dbArgs`},
		{"sample of other argument type",
			[]mcpserver.Dependency{mcpserver.Sample("k", func(otherArgs, *mcpserver.Call) mcp.CreateMessageRequestParams {
				return mcp.CreateMessageRequestParams{}
			})},
			`question "k" renders from arguments of type mcpserver_test.otherArgs`},
		{"empty key", []mcpserver.Dependency{mcpserver.Elicit[yesNo]("", msg)}, "a question needs a non-empty key"},
		{"no message", []mcpserver.Dependency{mcpserver.Elicit[yesNo, dbArgs]("k", nil)}, `question "k" has no message`},
		{"no sampling params", []mcpserver.Dependency{mcpserver.Sample[dbArgs]("k", nil)}, `question "k" has no parameters`},
		{"form not a struct", []mcpserver.Dependency{mcpserver.Elicit[string]("k", msg)}, "the form type string is not a struct"},
		{"form with a nested field", []mcpserver.Dependency{mcpserver.Elicit[nested]("k", msg)}, `field "inner"`},
		{"schema property not a field",
			[]mcpserver.Dependency{mcpserver.Elicit[yesNo]("k", msg).WithSchema(mcp.ElicitRequestedSchema{
				Properties: map[string]mcp.PrimitiveSchemaDefinition{"nope": &mcp.StringSchema{}},
			})},
			`the schema's property "nope" is not a field`},
		{"nil question", []mcpserver.Dependency{nil}, `mcpserver: tool "t": a declared question is nil`},
		{"nil dependency", []mcpserver.Dependency{mcpserver.Elicit[yesNo]("k", msg, nil)}, `question "k" depends on a nil question`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := mcpserver.AddTool(s, &mcp.Tool{Name: "t"}, body, tc.deps...)
			if err == nil {
				t.Fatal("registered")
			}
			wantContains(t, "error", err.Error(), tc.want)
		})
	}
	// A dependency declared both directly and through another question is
	// one question, not two with one key.
	shared := mcpserver.Elicit[yesNo]("shared", msg)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "t"}, body, shared, mcpserver.Elicit[regionField]("next", msg, shared), shared))
	// A question whose In is any renders for any registration.
	anyQ := mcpserver.Elicit[yesNo]("any", func(any, *mcpserver.Call) string { return "?" })
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "u"}, func(ctx context.Context, c *mcpserver.Call, a otherArgs) (string, error) { return "", nil }, anyQ))
}

// The two forms do not mix: a registration that declares questions cannot
// also build its own InputRequiredResult.
func TestQuestionMixingRule(t *testing.T) {
	s, _ := newServer(t, nil)
	q := regionQuestion()
	err := mcpserver.AddTool(s, &mcp.Tool{Name: "mix-outcome"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (mcp.CallToolOutcome, error) {
		return nil, nil
	}, q)
	if err == nil {
		t.Fatal("a CallToolOutcome tool with questions registered")
	}
	wantContains(t, "error", err.Error(), `tool "mix-outcome" declares questions and its handler returns mcp.CallToolOutcome`, "not both")
	err = mcpserver.AddTool(s, &mcp.Tool{Name: "mix-ir"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (*mcp.InputRequiredResult, error) {
		return nil, nil
	}, q)
	if err == nil {
		t.Fatal("an *InputRequiredResult tool with questions registered")
	}
	wantContains(t, "error", err.Error(), `tool "mix-ir" declares questions and its handler returns *mcp.InputRequiredResult`)

	// Out = any cannot be refused up front; returning one is a tool error.
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "mix-any"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (any, error) {
		return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"more": mcp.NewListRootsRequest()}, RequestState: "x"}, nil
	}, q))
	el := &elicitor{answer: func(string) *mcp.ElicitResult { return accept(map[string]any{"region": "eu"}) }}
	sess := connect(t, s, &client.Options{Elicit: el.elicit})
	res, err := sess.CallTool(context.Background(), "mix-any", map[string]any{"name": "x"})
	mustOK(t, err)
	wantText(t, res, true, `Tool "mix-any" returned an InputRequiredResult but declares questions; `+
		"a call has one inputResponses/requestState channel, so the rounds are driven either by declared questions or by the handler, not both")
}

// A chain longer than the client's round limit ends the call with the
// client's typed error after exactly MaxRounds answered rounds.
func TestQuestionChainExceedsRounds(t *testing.T) {
	const links = 11
	qs := make([]*mcpserver.ElicitQuestion[yesNo], links)
	for i := range qs {
		var after []mcpserver.Dependency
		if i > 0 {
			after = append(after, qs[i-1])
		}
		qs[i] = mcpserver.Elicit[yesNo](fmt.Sprintf("step%02d", i+1), func(dbArgs, *mcpserver.Call) string {
			return fmt.Sprintf("Step %d?", i+1)
		}, after...)
	}
	s, _ := newServer(t, nil)
	runs := new(counter)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "long"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
		runs.add("body")
		return "done", nil
	}, qs[links-1]))
	legs := new(counter)
	s.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			legs.add(req.Method)
			return next(ctx, req)
		}
	})
	el := &elicitor{answer: func(string) *mcp.ElicitResult { return accept(map[string]any{"ok": true}) }}
	sess := connect(t, s, &client.Options{Elicit: el.elicit})
	_, err := sess.CallTool(context.Background(), "long", map[string]any{"name": "x"})
	var rounds *client.RoundsExceededError
	if !errors.As(err, &rounds) {
		t.Fatalf("err = %v, want a *client.RoundsExceededError", err)
	}
	if !errors.Is(err, client.ErrTooManyRounds) || rounds.Rounds != 10 || rounds.Target != "long" || rounds.Method != mcp.MethodCallTool {
		t.Errorf("error = %+v", rounds)
	}
	if rounds.Last == nil || rounds.Last.Round != 11 {
		t.Fatalf("last round = %+v, want round 11", rounds.Last)
	}
	wantKeys(t, rounds.Last.InputRequests, "step11")
	if n := el.count(); n != 10 {
		t.Errorf("answered %d questions, want exactly 10", n)
	}
	for i := 1; i <= 10; i++ {
		if n := el.times(fmt.Sprintf("Step %d?", i)); n != 1 {
			t.Errorf("step %d asked %d times", i, n)
		}
	}
	if n := legs.get(mcp.MethodCallTool); n != 11 {
		t.Errorf("%d tools/call requests, want 11", n)
	}
	if runs.get("body") != 0 {
		t.Error("the body ran")
	}

	// One more round allowed: the same chain completes.
	sess = connect(t, s, &client.Options{Elicit: el.elicit, Loop: &client.LoopOptions{MaxRounds: 11}})
	res, err := sess.CallTool(context.Background(), "long", map[string]any{"name": "x"})
	mustOK(t, err)
	wantText(t, res, false, "done")
}

// The hand-built form: a tool without questions returns its own
// InputRequiredResult and reads the retry from its Call. Its state is
// sealed on the wire and plaintext in the handler.
func TestToolHandBuiltInputRequired(t *testing.T) {
	s, _ := newServer(t, nil)
	seen := make(chan string, 4)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "delete"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (mcp.CallToolOutcome, error) {
		seen <- fmt.Sprintf("responses=%v state=%q", sortedKeys(c.InputResponses()), c.RequestState())
		if c.InputResponses() == nil {
			return &mcp.InputRequiredResult{
				InputRequests: mcp.InputRequests{"confirm": mcp.NewElicitFormRequest("Delete "+a.Name+"?", mcp.ElicitRequestedSchema{
					Properties: map[string]mcp.PrimitiveSchemaDefinition{"ok": &mcp.BooleanSchema{}},
					Required:   []string{"ok"},
				})},
				RequestState: "delete:" + a.Name + ":step1",
			}, nil
		}
		if c.RequestState() != "delete:"+a.Name+":step1" {
			return nil, fmt.Errorf("state %q", c.RequestState())
		}
		r, err := c.InputResponses().Elicit("confirm")
		if err != nil {
			return nil, err
		}
		return mcp.TextResult(fmt.Sprintf("deleted %s: %v", a.Name, r.Content["ok"])), nil
	}))
	sess := connect(t, s, &client.Options{Elicit: (&elicitor{answer: func(string) *mcp.ElicitResult {
		return accept(map[string]any{"ok": true})
	}}).elicit})

	call, err := client.ToolCall("delete", map[string]any{"name": "orders"})
	mustOK(t, err)
	p := begin(t, sess, call)
	if got := testwait.Recv(t, seen, "the handler's first round"); got != `responses=[] state=""` {
		t.Errorf("first round saw %s", got)
	}
	if got := formMessage(t, p.InputRequests, "confirm"); got != "Delete orders?" {
		t.Errorf("message = %q", got)
	}
	if p.RequestState == "" || strings.Contains(p.RequestState, "step1") || strings.Contains(p.RequestState, "orders") {
		t.Errorf("requestState on the wire = %q, want it sealed", p.RequestState)
	}
	answers := responses(t, map[string]mcp.InputResponse{
		"confirm": accept(map[string]any{"ok": true}),
		"unasked": accept(map[string]any{"ok": false}),
	})
	res := finish(t, sess, p, answers)
	wantText(t, res, false, "deleted orders: true")
	// The answer to a key the round did not ask never reaches the handler.
	if got := testwait.Recv(t, seen, "the handler's retry"); got != `responses=[confirm] state="delete:orders:step1"` {
		t.Errorf("retry saw %s", got)
	}

	// Forged state is refused before the handler runs.
	forged := *p
	forged.RequestState = "delete:orders:step1"
	_, _, err = sess.Continue(context.Background(), &forged, answers)
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Invalid or expired requestState")
	select {
	case got := <-seen:
		t.Errorf("the handler ran on forged state: %s", got)
	default:
	}

	// The automatic loop drives the same tool.
	res2, err := sess.CallTool(context.Background(), "delete", map[string]any{"name": "users"})
	mustOK(t, err)
	wantText(t, res2, false, "deleted users: true")
}

// Reading a question the registration did not declare is a programming
// error. The function does not carry on with a zero answer; the client
// gets an answer that names the question and says how to declare it (an
// isError result from a tool, -32603 from a prompt or template), the log
// gets the stack, and the server keeps serving.
func TestQuestionReadUndeclared(t *testing.T) {
	declared := regionQuestion()
	undeclared := mcpserver.Elicit[yesNo]("other", func(dbArgs, *mcpserver.Call) string { return "?" })
	// sneaky's message reads declared without depending on it.
	sneaky := mcpserver.Elicit[yesNo]("sneaky", func(a dbArgs, c *mcpserver.Call) string { return declared.Get(c).Region })
	anyArgs := mcpserver.Elicit[yesNo]("other", func(any, *mcpserver.Call) string { return "?" })
	s, logs := newServer(t, nil)
	carriedOn := new(counter)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "reads-other"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
		ok := undeclared.Get(c).OK
		carriedOn.add("tool")
		return fmt.Sprint(ok), nil
	}, declared))
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "sneaky"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
		return "ran", nil
	}, sneaky))
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "nil-call"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
		return declared.Get(nil).Region, nil
	}, declared))
	mustOK(t, mcpserver.AddPrompt(s, &mcp.Prompt{Name: "reads-other"}, func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.GetPromptResult, error) {
		ok := anyArgs.Outcome(c).Accepted()
		carriedOn.add("prompt")
		return userSays(fmt.Sprint(ok)), nil
	}))
	mustOK(t, mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "db://{name}", Name: "db"},
		func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.ReadResourceResult, error) {
			ok := anyArgs.Get(c).OK
			carriedOn.add("template")
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: "db://x", Text: fmt.Sprint(ok)}}}, nil
		}))
	s.CompleteTemplateVariable("db://{name}", "name", func(ctx context.Context, c *mcpserver.Call, value string, _ map[string]string) ([]string, error) {
		return []string{fmt.Sprint(anyArgs.Get(c).OK)}, nil
	})
	addGreet(t, s)
	el := &elicitor{answer: func(string) *mcp.ElicitResult { return accept(map[string]any{"region": "eu"}) }}
	sess := connect(t, s, &client.Options{Elicit: el.elicit})
	ctx := context.Background()

	res, err := sess.CallTool(ctx, "reads-other", map[string]any{"name": "x"})
	mustOK(t, err)
	wantText(t, res, true, `tool "reads-other" reads question "other", which it does not declare: pass the question to AddTool `+
		`(or to the after arguments of a question it declares)`)
	wantContains(t, "log", logs.String(), "a question was read that is not declared", `question=other`, "questions_test.go")

	res, err = sess.CallTool(ctx, "sneaky", map[string]any{"name": "x"})
	mustOK(t, err)
	wantText(t, res, true, `the message of question "sneaky" of tool "sneaky" reads question "region" without depending on it: `+
		`pass "region" among the after arguments of the constructor of "sneaky"`)

	res, err = sess.CallTool(ctx, "nil-call", map[string]any{"name": "x"})
	mustOK(t, err)
	wantText(t, res, true, `question "region" was read with a nil *mcpserver.Call: pass the Call the function received`)

	_, err = sess.GetPrompt(ctx, "reads-other", nil)
	wantRPCError(t, err, jsonrpc.CodeInternalError, `Internal error: prompt "reads-other" reads question "other", which it does not declare: `+
		`pass the question to AddPrompt (or to the after arguments of a question it declares)`)
	_, err = sess.ReadResource(ctx, "db://x")
	wantRPCError(t, err, jsonrpc.CodeInternalError, `Internal error: resource template "db://{name}" reads question "other", which it does not declare: `+
		`pass the question to AddResourceTemplate (or to the after arguments of a question it declares)`)
	_, err = sess.Complete(ctx, &mcp.CompleteRequestParams{Ref: &mcp.ResourceTemplateReference{URI: "db://{name}"}, Argument: mcp.CompleteArgument{Name: "name"}})
	wantRPCError(t, err, jsonrpc.CodeInternalError, `Internal error: completion of "name" in ref/resource "db://{name}" reads question "other", `+
		`but it cannot ask questions: only tools, prompts and resource templates declare them`)
	if n := carriedOn.get("tool") + carriedOn.get("prompt") + carriedOn.get("template"); n != 0 {
		t.Errorf("a function carried on after reading an undeclared question (%d times)", n)
	}
	// Only the declared region, for reads-other and nil-call: sneaky's
	// message failed before anything went out.
	if el.count() != 2 {
		t.Errorf("the client was asked %d questions (%q), want 2", el.count(), el.asked)
	}

	res, err = sess.CallTool(ctx, "greet", map[string]any{"name": "Ada"})
	mustOK(t, err)
	wantText(t, res, false, "Hello, Ada!")
}

// Declaring a question declares what it depends on, however deep: the
// body may read a question it reaches only through after.
func TestQuestionDependenciesAreDeclared(t *testing.T) {
	a := mcpserver.Elicit[yesNo]("a", func(dbArgs, *mcpserver.Call) string { return "A?" })
	b := mcpserver.Elicit[yesNo]("b", func(dbArgs, *mcpserver.Call) string { return "B?" }, a)
	c := mcpserver.Elicit[yesNo]("c", func(dbArgs, *mcpserver.Call) string { return "C?" }, b)
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "deep"}, func(ctx context.Context, call *mcpserver.Call, _ dbArgs) (string, error) {
		return fmt.Sprint(a.Get(call).OK, b.Get(call).OK, c.Get(call).OK), nil
	}, c))
	el := &elicitor{answer: func(m string) *mcp.ElicitResult { return accept(map[string]any{"ok": m == "A?"}) }}
	sess := connect(t, s, &client.Options{Elicit: el.elicit})
	res, err := sess.CallTool(context.Background(), "deep", map[string]any{"name": "x"})
	mustOK(t, err)
	wantText(t, res, false, "true false false")
}
