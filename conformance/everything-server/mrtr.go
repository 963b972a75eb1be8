package main

// The multi-round-trip (MRTR, SEP-2322) fixtures. A tool or prompt that
// needs input answers with an *mcp.InputRequiredResult; the client fulfils
// its inputRequests and sends the same request again with inputResponses
// and the requestState echoed unchanged.
//
// The fixtures share one small engine: a flow is a list of rounds, each
// round a list of questions. A request's answers are matched to the current
// round's questions; a question not answered yet is asked again, a
// malformed answer is -32602, and once every round is answered the flow
// completes. Answers of earlier rounds, and the round reached, travel in
// requestState as plain JSON. The fixture never sees a token: the SDK's
// requestState boundary (attached in main.go) seals the state on the way
// out and verifies it, bound to this tool and these arguments, on the way
// back, so a forged or altered state never reaches this code. The server
// keeps nothing between requests.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// question is one input request of a round, under its key.
type question struct {
	key string
	ask mcp.InputRequest
}

// flow is a multi-round conversation with the client.
type flow struct {
	// name binds requestState to the tool or prompt that issued it.
	name string
	// rounds are asked in order; each must be fully answered before the
	// next is asked.
	rounds [][]question
	// stateful flows send requestState (with the round reached and the
	// answers so far). A flow of one round can do without.
	stateful bool
}

// step is what a flow says about one request: either more questions (a
// result to send) or the answers of every round.
type step struct {
	more    *mcp.InputRequiredResult
	answers map[string]string
}

// advance runs one request through f. requestState, if any, must be one this
// server sealed for f.
func (f *fixture) advance(req *server.Request, fl flow, responses mcp.InputResponses, requestState string) (step, error) {
	st := flowState{Flow: fl.name, Answers: map[string]string{}}
	if fl.stateful && requestState == "" {
		// A stateful flow's answers count only with the state that asked
		// for them: without it, start over.
		responses = nil
	}
	if requestState != "" {
		// Verified by the boundary: this is the plaintext a round of this
		// very tool issued. The checks below only guard against this
		// file's own mistakes.
		var opened flowState
		if err := json.Unmarshal([]byte(requestState), &opened); err != nil || opened.Flow != fl.name {
			return step{}, server.InvalidParams("Invalid params: invalid requestState")
		}
		st = opened
		if st.Answers == nil {
			st.Answers = map[string]string{}
		}
	}
	for st.Round < len(fl.rounds) {
		var pending []question
		for _, q := range fl.rounds[st.Round] {
			if _, done := st.Answers[q.key]; done {
				continue
			}
			if !responses.Has(q.key) {
				pending = append(pending, q)
				continue
			}
			val, ok, err := answer(responses, q)
			if err != nil {
				return step{}, invalidInputResponse(err)
			}
			if !ok {
				pending = append(pending, q) // answered without what was asked: ask again
				continue
			}
			st.Answers[q.key] = val
		}
		if len(pending) > 0 {
			return f.ask(req, fl, st, pending)
		}
		st.Round++
		responses = nil // answers are per round: the next round's are still to come
	}
	return step{answers: st.Answers}, nil
}

// ask builds the InputRequiredResult for the pending questions, after
// checking that this request declared the capabilities they need.
func (f *fixture) ask(req *server.Request, fl flow, st flowState, pending []question) (step, error) {
	reqs := make(mcp.InputRequests, len(pending))
	for _, q := range pending {
		reqs[q.key] = q.ask
	}
	if missing := req.ClientCapabilities().MissingFor(reqs); missing != nil {
		return step{}, mcp.NewMissingRequiredClientCapabilityError(missing)
	}
	res := &mcp.InputRequiredResult{InputRequests: reqs}
	if fl.stateful {
		b, err := json.Marshal(st)
		if err != nil {
			return step{}, err
		}
		res.RequestState = string(b) // plaintext; sealed by the boundary
	}
	return step{more: res}, nil
}

// answer decodes the answer to q, as the kind of request q asked. ok is
// false when the answer does not hold what was asked (an accepted form
// without a required field); err is set when the answer is malformed.
func answer(responses mcp.InputResponses, q question) (val string, ok bool, err error) {
	switch r := q.ask.(type) {
	case *mcp.ElicitRequest:
		res, err := responses.Elicit(q.key)
		if err != nil {
			return "", false, err
		}
		if !res.Accepted() {
			return "(" + string(res.Action) + ")", true, nil
		}
		form, _ := r.Params.(*mcp.ElicitRequestFormParams)
		if form == nil {
			return "(accepted)", true, nil
		}
		var parts []string
		for _, field := range form.RequestedSchema.Required {
			v, set := res.Content[field]
			if !set {
				return "", false, nil
			}
			parts = append(parts, fmt.Sprint(v))
		}
		return strings.Join(parts, ", "), true, nil
	case *mcp.CreateMessageRequest:
		res, err := responses.Sample(q.key)
		if err != nil {
			return "", false, err
		}
		return res.Text(), true, nil
	case *mcp.ListRootsRequest:
		res, err := responses.Roots(q.key)
		if err != nil {
			return "", false, err
		}
		uris := make([]string, len(res.Roots))
		for i, root := range res.Roots {
			uris[i] = root.URI
		}
		return strings.Join(uris, ", "), true, nil
	}
	return "", false, errors.New("unknown question kind")
}

// ---- the questions ----

func askName(key, message string) question {
	return question{key, mcp.NewElicitFormRequest(message, mcp.ElicitRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{"name": &mcp.StringSchema{Description: "Your name"}},
		Required:   []string{"name"},
	})}
}

func askConfirm(key string) question {
	return question{key, mcp.NewElicitFormRequest("Please confirm", mcp.ElicitRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{"ok": &mcp.BooleanSchema{Description: "Confirm"}},
		Required:   []string{"ok"},
	})}
}

func askColor(key string) question {
	return question{key, mcp.NewElicitFormRequest("Step 2: What is your favorite color?", mcp.ElicitRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{"color": &mcp.StringSchema{Description: "Your favorite color"}},
		Required:   []string{"color"},
	})}
}

func askContext(key string) question {
	return question{key, mcp.NewElicitFormRequest("What context should the prompt use?", mcp.ElicitRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{"context": &mcp.StringSchema{Description: "Context for the prompt"}},
		Required:   []string{"context"},
	})}
}

func askLLM(key, text string, maxTokens int64) question {
	return question{key, mcp.NewCreateMessageRequest(mcp.CreateMessageRequestParams{
		Messages:  []mcp.SamplingMessage{userMessage(text)},
		MaxTokens: maxTokens,
	})}
}

func askRoots(key string) question {
	return question{key, mcp.NewListRootsRequest()}
}

// ---- the tools ----

// mrtrTools returns the tools of the input-required-result-* scenarios.
func (f *fixture) mrtrTools() []toolDef {
	oneRound := func(name string, qs ...question) flow {
		return flow{name: name, rounds: [][]question{qs}}
	}
	return []toolDef{
		f.mrtrTool("test_input_required_result_elicitation", "MRTR: asks for the user's name by elicitation",
			oneRound("elicitation", askName("user_name", "What is your name?")),
			func(a map[string]string) string { return "Hello, " + a["user_name"] + "!" }),
		f.mrtrTool("test_input_required_result_sampling", "MRTR: asks the client's LLM a question",
			oneRound("sampling", askLLM("capital_question", "What is the capital of France?", 100)),
			func(a map[string]string) string { return "The model answered: " + a["capital_question"] }),
		f.mrtrTool("test_input_required_result_list_roots", "MRTR: asks for the client's roots",
			oneRound("list_roots", askRoots("client_roots")),
			func(a map[string]string) string { return "Client roots: " + a["client_roots"] }),
		f.mrtrTool("test_input_required_result_request_state", "MRTR: asks for a confirmation and carries requestState",
			flow{name: "request_state", rounds: [][]question{{askConfirm("confirm")}}, stateful: true},
			func(a map[string]string) string {
				return "state-ok: requestState verified, confirmation " + a["confirm"]
			}),
		f.mrtrTool("test_input_required_result_multiple_inputs", "MRTR: asks by elicitation, sampling and roots at once",
			flow{name: "multiple_inputs", stateful: true, rounds: [][]question{{
				askName("user_name", "What is your name?"),
				askLLM("greeting", "Generate a greeting", 50),
				askRoots("client_roots"),
			}}},
			func(a map[string]string) string {
				return fmt.Sprintf("name=%s; greeting=%s; roots=%s", a["user_name"], a["greeting"], a["client_roots"])
			}),
		f.mrtrTool("test_input_required_result_multi_round", "MRTR: two rounds of questions, state carried between them",
			flow{name: "multi_round", stateful: true, rounds: [][]question{
				{askName("step1", "Step 1: What is your name?")},
				{askColor("step2")},
			}},
			func(a map[string]string) string {
				return fmt.Sprintf("Hello %s, your favorite color is %s.", a["step1"], a["step2"])
			}),
		f.mrtrTool("test_input_required_result_tampered_state", "MRTR: sealed requestState; an altered state is refused",
			flow{name: "tampered_state", rounds: [][]question{{askConfirm("confirm")}}, stateful: true},
			func(a map[string]string) string { return "requestState verified; confirmation " + a["confirm"] }),
		{tool("test_input_required_result_capabilities", "MRTR: asks only for what this request's client capabilities allow", noArgs), f.capabilitiesTool},
	}
}

// mrtrTool builds a tool that runs fl and, once it is answered, completes
// with the text done makes of the answers.
func (f *fixture) mrtrTool(name, description string, fl flow, done func(map[string]string) string) toolDef {
	call := func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		s, err := f.advance(req, fl, p.InputResponses, p.RequestState)
		if err != nil {
			return nil, err
		}
		if s.more != nil {
			return s.more, nil
		}
		return mcp.TextResult(done(s.answers)), nil
	}
	return toolDef{tool(name, description, noArgs), call}
}

// capabilitiesTool asks one question for each input capability the request
// declares, and none for the others. With none declared it completes
// without asking.
func (f *fixture) capabilitiesTool(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	caps := req.ClientCapabilities()
	var qs []question
	if caps.Elicitation.SupportsForm() {
		qs = append(qs, askName("user_name", "What is your name?"))
	}
	if caps.Sampling != nil {
		qs = append(qs, askLLM("capital_question", "What is the capital of France?", 100))
	}
	if caps.Roots != nil {
		qs = append(qs, askRoots("client_roots"))
	}
	if len(qs) == 0 {
		return mcp.TextResult("The client declared no elicitation, sampling or roots capability; finished without asking."), nil
	}
	s, err := f.advance(req, flow{name: "capabilities", rounds: [][]question{qs}, stateful: true}, p.InputResponses, p.RequestState)
	if err != nil {
		return nil, err
	}
	if s.more != nil {
		return s.more, nil
	}
	keys := make([]string, 0, len(s.answers))
	for k := range s.answers {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + s.answers[k]
	}
	return mcp.TextResult("Received: " + strings.Join(parts, "; ")), nil
}

// ---- the prompt ----

// mrtrPrompt is the prompt of the input-required-result-non-tool-request
// scenario: prompts/get asks for context before it can build the messages.
func (f *fixture) mrtrPrompt() promptDef {
	fl := flow{name: "prompt", rounds: [][]question{{askContext("user_context")}}}
	get := func(ctx context.Context, req *server.Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
		s, err := f.advance(req, fl, p.InputResponses, p.RequestState)
		if err != nil {
			return nil, err
		}
		if s.more != nil {
			return s.more, nil
		}
		return &mcp.GetPromptResult{
			Description: "A prompt built from context the user gave",
			Messages: []mcp.PromptMessage{
				{Role: mcp.RoleUser, Content: mcp.NewTextContent("Answer with this context in mind: " + s.answers["user_context"])},
			},
		}, nil
	}
	return promptDef{mcp.Prompt{Name: "test_input_required_result_prompt", Description: "MRTR: prompts/get that asks for context first"}, get}
}

// ---- requestState ----

// flowState is the plaintext of requestState: which flow issued it, the
// round reached and the answers so far. Expiry, binding to the tool and its
// arguments, and freshness are the boundary's business, not this struct's.
type flowState struct {
	Flow    string            `json:"flow"`              // the flow that issued it
	Round   int               `json:"round"`             // the round being asked
	Answers map[string]string `json:"answers,omitempty"` // the answers so far, by key
}
