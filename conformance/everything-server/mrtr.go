package main

// The multi-round-trip (MRTR, SEP-2322) fixtures. A tool or prompt that
// needs input answers with an *mcp.InputRequiredResult; the client fulfils
// its inputRequests and sends the same request again with inputResponses
// and the requestState echoed unchanged.
//
// Most fixtures declare what they need, as mcpserver questions (Elicit,
// Sample, ListRoots) passed to AddTool or AddPrompt: mcpserver asks them,
// over as many rounds as their dependencies need, records every answer in
// the sealed requestState, and runs the body once, when all are answered;
// the body reads the typed answers with Get. A question's answer counts
// only if the sealed state of the round it echoes asked exactly that
// question, so these fixtures always send a requestState.
//
// Two tools build their InputRequiredResult by hand and read
// call.InputResponses() and call.RequestState() themselves, because their
// scenarios need what the declared form deliberately does not do:
//
//   - test_input_required_result_elicitation must complete on a cold call
//     that already carries a correct answer and no requestState
//     (input-required-result-ignore-extra-params), so it asks without
//     state and takes an answer under its key whatever round it comes in;
//     it also answers a malformed answer with -32602 (validate-input).
//   - test_input_required_result_capabilities asks only what the request's
//     client capabilities allow (capability-check), so its questions
//     depend on the request; declared questions are fixed at registration,
//     and one the client cannot answer fails the call with -32021.
//
// Either way the fixture never sees a token: mcpserver seals the plaintext
// state on the way out and verifies it, bound to this tool and these
// arguments, on the way back, so a forged or altered state never reaches
// this code. The server keeps nothing between requests.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

// ---- the forms ----

// The forms the fixtures elicit. Each schema is the form's struct with
// descriptions, as it goes on the wire.
type (
	nameForm struct {
		Name string `json:"name"`
	}
	confirmForm struct {
		OK bool `json:"ok"`
	}
	colorForm struct {
		Color string `json:"color"`
	}
	contextForm struct {
		Context string `json:"context"`
	}
)

var (
	nameSchema = mcp.ElicitRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{"name": &mcp.StringSchema{Description: "Your name"}},
		Required:   []string{"name"},
	}
	confirmSchema = mcp.ElicitRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{"ok": &mcp.BooleanSchema{Description: "Confirm"}},
		Required:   []string{"ok"},
	}
	colorSchema = mcp.ElicitRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{"color": &mcp.StringSchema{Description: "Your favorite color"}},
		Required:   []string{"color"},
	}
	contextSchema = mcp.ElicitRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{"context": &mcp.StringSchema{Description: "Context for the prompt"}},
		Required:   []string{"context"},
	}
)

// ---- the declared questions ----
//
// Their messages are fixed, so they read no arguments (In is any) and fit
// every registration.

// message returns a render function for a fixed message.
func message(text string) func(any, *mcpserver.Call) string {
	return func(any, *mcpserver.Call) string { return text }
}

// ask returns a sampling request of one user message.
func ask(text string, maxTokens int64) func(any, *mcpserver.Call) mcp.CreateMessageRequestParams {
	return func(any, *mcpserver.Call) mcp.CreateMessageRequestParams {
		return mcp.CreateMessageRequestParams{Messages: []mcp.SamplingMessage{userMessage(text)}, MaxTokens: maxTokens}
	}
}

var (
	userName        = mcpserver.Elicit[nameForm]("user_name", message("What is your name?")).WithSchema(nameSchema)
	capitalQuestion = mcpserver.Sample("capital_question", ask("What is the capital of France?", 100))
	greeting        = mcpserver.Sample("greeting", ask("Generate a greeting", 50))
	clientRoots     = mcpserver.ListRoots("client_roots")
	// confirm lets a decline reach the body, which reports it.
	confirm = mcpserver.Elicit[confirmForm]("confirm", message("Please confirm")).WithSchema(confirmSchema).AllowDecline()
	// step2 is asked once step1 is answered: two rounds.
	step1       = mcpserver.Elicit[nameForm]("step1", message("Step 1: What is your name?")).WithSchema(nameSchema)
	step2       = mcpserver.Elicit[colorForm]("step2", message("Step 2: What is your favorite color?"), step1).WithSchema(colorSchema)
	userContext = mcpserver.Elicit[contextForm]("user_context", message("What context should the prompt use?")).WithSchema(contextSchema)
)

// ---- the tools ----

// registerMRTRTools registers the tools of the input-required-result-*
// scenarios.
func (f *fixture) registerMRTRTools() error {
	s := f.srv
	return errors.Join(
		// Hand-built: see the file comment.
		mcpserver.AddTool(s, tool("test_input_required_result_elicitation", "MRTR: asks for the user's name by elicitation", noArgs),
			mrtrElicitation),
		mcpserver.AddTool(s, tool("test_input_required_result_sampling", "MRTR: asks the client's LLM a question", noArgs),
			func(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
				return "The model answered: " + capitalQuestion.Get(c).Text(), nil
			}, capitalQuestion),
		mcpserver.AddTool(s, tool("test_input_required_result_list_roots", "MRTR: asks for the client's roots", noArgs),
			func(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
				return "Client roots: " + rootURIs(clientRoots.Get(c)), nil
			}, clientRoots),
		mcpserver.AddTool(s, tool("test_input_required_result_request_state", "MRTR: asks for a confirmation and carries requestState", noArgs),
			func(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
				return "state-ok: requestState verified, confirmation " + confirmation(confirm.Outcome(c)), nil
			}, confirm),
		mcpserver.AddTool(s, tool("test_input_required_result_multiple_inputs", "MRTR: asks by elicitation, sampling and roots at once", noArgs),
			func(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
				return fmt.Sprintf("name=%s; greeting=%s; roots=%s", userName.Get(c).Name, greeting.Get(c).Text(), rootURIs(clientRoots.Get(c))), nil
			}, userName, greeting, clientRoots),
		mcpserver.AddTool(s, tool("test_input_required_result_multi_round", "MRTR: two rounds of questions, state carried between them", noArgs),
			func(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
				return fmt.Sprintf("Hello %s, your favorite color is %s.", step1.Get(c).Name, step2.Get(c).Color), nil
			}, step1, step2),
		mcpserver.AddTool(s, tool("test_input_required_result_tampered_state", "MRTR: sealed requestState; an altered state is refused", noArgs),
			func(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
				return "requestState verified; confirmation " + confirmation(confirm.Outcome(c)), nil
			}, confirm),
		// Hand-built: see the file comment.
		mcpserver.AddTool(s, tool("test_input_required_result_capabilities", "MRTR: asks only for what this request's client capabilities allow", noArgs),
			mrtrCapabilities),
	)
}

// confirmation is what the user did with the confirm form: true or false
// when they accepted it, (decline) or (cancel) otherwise.
func confirmation(e mcpserver.Elicitation[confirmForm]) string {
	if !e.Accepted() {
		return "(" + string(e.Action) + ")"
	}
	return fmt.Sprint(e.Content.OK)
}

func rootURIs(roots []mcp.Root) string {
	uris := make([]string, len(roots))
	for i, root := range roots {
		uris[i] = root.URI
	}
	return strings.Join(uris, ", ")
}

// mrtrElicitation asks for the user's name, without requestState. An
// answer under user_name counts whenever it comes, even on a first call; an
// accepted form without a name is asked again; a malformed answer is
// -32602; a decline completes.
func mrtrElicitation(ctx context.Context, c *mcpserver.Call, _ none) (mcp.CallToolOutcome, error) {
	q := question{"user_name", mcp.NewElicitFormRequest("What is your name?", nameSchema)}
	answers, more, err := handAsk(c, "elicitation", []question{q}, false)
	if err != nil || more != nil {
		return more, err
	}
	return mcp.TextResult("Hello, " + answers["user_name"] + "!"), nil
}

// mrtrCapabilities asks one question for each input capability the request
// declares, and none for the others. With none declared it completes
// without asking.
func mrtrCapabilities(ctx context.Context, c *mcpserver.Call, _ none) (mcp.CallToolOutcome, error) {
	caps := c.ClientCapabilities()
	var qs []question
	if caps.Elicitation.SupportsForm() {
		qs = append(qs, question{"user_name", mcp.NewElicitFormRequest("What is your name?", nameSchema)})
	}
	if caps.Sampling != nil {
		qs = append(qs, question{"capital_question", mcp.NewCreateMessageRequest(mcp.CreateMessageRequestParams{
			Messages:  []mcp.SamplingMessage{userMessage("What is the capital of France?")},
			MaxTokens: 100,
		})})
	}
	if caps.Roots != nil {
		qs = append(qs, question{"client_roots", mcp.NewListRootsRequest()})
	}
	if len(qs) == 0 {
		return mcp.TextResult("The client declared no elicitation, sampling or roots capability; finished without asking."), nil
	}
	answers, more, err := handAsk(c, "capabilities", qs, true)
	if err != nil || more != nil {
		return more, err
	}
	keys := slices.Sorted(maps.Keys(answers))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + answers[k]
	}
	return mcp.TextResult("Received: " + strings.Join(parts, "; ")), nil
}

// ---- the prompt ----

// registerMRTRPrompt registers the prompt of the
// input-required-result-non-tool-request scenario: prompts/get asks for
// context (a declared question) before it can build the messages.
func registerMRTRPrompt(s *mcpserver.Server) error {
	return mcpserver.AddPrompt(s, &mcp.Prompt{Name: "test_input_required_result_prompt", Description: "MRTR: prompts/get that asks for context first"},
		func(ctx context.Context, c *mcpserver.Call, _ map[string]string) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{
				Description: "A prompt built from context the user gave",
				Messages: []mcp.PromptMessage{
					{Role: mcp.RoleUser, Content: mcp.NewTextContent("Answer with this context in mind: " + userContext.Get(c).Context)},
				},
			}, nil
		}, userContext)
}

// ---- the hand-built form ----

// question is one hand-built input request, under its key.
type question struct {
	key string
	ask mcp.InputRequest
}

// handAsk runs one round of hand-built questions for one request: it
// returns the answers once every question is answered, or the
// InputRequiredResult that asks the rest. A stateful flow carries the
// answers so far in requestState (plaintext here; mcpserver seals it), and
// its answers count only with the state that asked for them; a stateless
// one takes an answer whenever it comes.
func handAsk(c *mcpserver.Call, flow string, qs []question, stateful bool) (map[string]string, *mcp.InputRequiredResult, error) {
	st := flowState{Flow: flow}
	responses := c.InputResponses()
	if state := c.RequestState(); state != "" {
		// Verified by mcpserver: this is the plaintext a round of this very
		// tool issued, for these arguments. The check below only guards
		// against this file's own mistakes.
		if err := json.Unmarshal([]byte(state), &st); err != nil || st.Flow != flow {
			return nil, nil, wire.InvalidParams("Invalid params: invalid requestState")
		}
	} else if stateful {
		responses = nil // no state: start over
	}
	if st.Answers == nil {
		st.Answers = map[string]string{}
	}
	pending := mcp.InputRequests{}
	for _, q := range qs {
		if _, done := st.Answers[q.key]; done {
			continue
		}
		if !responses.Has(q.key) {
			pending[q.key] = q.ask
			continue
		}
		val, ok, err := answer(responses, q)
		if err != nil {
			return nil, nil, invalidInputResponse(err)
		}
		if !ok {
			pending[q.key] = q.ask // answered without what was asked: ask again
			continue
		}
		st.Answers[q.key] = val
	}
	if len(pending) == 0 {
		return st.Answers, nil, nil
	}
	if missing := c.ClientCapabilities().MissingFor(pending); missing != nil {
		return nil, nil, mcp.NewMissingRequiredClientCapabilityError(missing)
	}
	res := &mcp.InputRequiredResult{InputRequests: pending}
	if stateful {
		b, err := json.Marshal(st)
		if err != nil {
			return nil, nil, err
		}
		res.RequestState = string(b) // plaintext; sealed by mcpserver
	}
	return nil, res, nil
}

// flowState is the plaintext of a hand-built flow's requestState: which
// flow issued it and the answers so far. Expiry, binding to the tool and
// its arguments, and freshness are mcpserver's business, not this struct's.
type flowState struct {
	Flow    string            `json:"flow"`              // the flow that issued it
	Answers map[string]string `json:"answers,omitempty"` // the answers so far, by key
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
