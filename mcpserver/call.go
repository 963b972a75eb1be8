package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/tasks"
)

// Call is what a tool, prompt or resource-template function knows about
// the request it serves, beyond its typed arguments.
//
// Through the embedded *server.Request it has the request's protocol
// version, the capabilities and info the client declared on it, and ways
// to talk back while serving: Progress, Log and Notify. Cancellation is
// the function's ctx.
//
// A function that builds its InputRequiredResult by hand reads the retry
// with InputResponses and RequestState. A registration that declares
// questions reads their answers with the questions' own accessors
// ([ElicitQuestion.Get], [SampleQuestion.Get], [RootsQuestion.Get]).
type Call struct {
	*server.Request

	auth      *auth.Info
	responses mcp.InputResponses
	state     string
	stated    bool             // a state was present, perhaps empty
	answers   []questionAnswer // in the order they were settled
	owner     string           // "tool \"x\"", for messages
	log       *slog.Logger     // the server's
	rendering *question        // the question whose message is being rendered

	// answersBuf holds the answers of a registration with few questions,
	// so that they cost no allocation of their own.
	answersBuf [4]questionAnswer
}

// questionAnswer is one answered question of a call. A registration has
// a handful of questions, so a slice searched in order beats a map.
type questionAnswer struct {
	q *question
	a *answer
}

// answerFor returns q's answer in c, or nil.
func (c *Call) answerFor(q *question) *answer {
	for i := range c.answers {
		if c.answers[i].q == q {
			return c.answers[i].a
		}
	}
	return nil
}

// answer is the value a question resolved to in this call.
type answer struct {
	action mcp.ElicitAction // elicitations only
	value  any              // the typed value; nil unless accepted
}

func (s *Server) newCall(ctx context.Context, req *server.Request, owner string) *Call {
	return &Call{Request: req, auth: auth.InfoFrom(ctx), owner: owner, log: s.log}
}

// Auth returns the validated identity of the caller, or nil when the
// request was not authenticated (or authentication ended outside this
// process).
func (c *Call) Auth() *auth.Info { return c.auth }

// InputResponses returns the answers the client sent to the previous
// round's inputRequests, by key; nil on the first round. Only answers to
// questions the previous round asked reach here: the requestState
// boundary drops the rest. Read them with the typed accessors
// (InputResponses.Elicit, Sample, Roots), which check an answer's shape.
//
// For a registration that declares questions, the answers belong to the
// SDK and this returns nil.
func (c *Call) InputResponses() mcp.InputResponses { return c.responses }

// RequestState returns the plaintext requestState the previous round
// returned, verified by the server's seal; "" on the first round. For a
// registration that declares questions it is "": the SDK keeps its own
// state.
func (c *Call) RequestState() string { return c.state }

// LookupRequestState returns the plaintext requestState the previous round
// returned and whether there was one: a function that returned an empty
// state (mcp.InputRequiredResult.ForceRequestState) gets it back as
// present, which RequestState cannot tell from a first round. For a
// registration that declares questions it reports none.
func (c *Call) LookupRequestState() (string, bool) { return c.state, c.stated }

// ResourceURI returns the URI a resources/read asks for: what a resource
// template's function reads when its variables are not enough. It is ""
// for other methods.
func (c *Call) ResourceURI() string {
	if p, ok := c.Params.(*mcp.ReadResourceRequestParams); ok {
		return p.URI
	}
	return ""
}

// askKey is the key of a question Call.Ask asks through a task.
const askKey = "question"

// Ask asks the person at the host one question (an elicitation, a
// sampling or a roots request) while the body runs, and returns the
// client's raw answer: decode it as what was asked, for example with
// mcp.InputResponses{"k": raw}.Elicit("k"). With [Call.AskAll] (several
// questions, under keys of the body's choosing) it is the way to ask
// mid-body that works whether the tool runs as a task or not:
//
//   - in a task (AddTaskTool, a client that declared the extension) the
//     task waits in input_required with the question until tasks/update
//     answers it (tasks.Run.Ask, which asks several at once);
//   - in an ordinary call on a legacy (2025-11-25) session it is a
//     server-to-client request on the session's back-channel
//     (server.Request.Ask);
//   - in an ordinary 2026-07-28 call there is no way to ask mid-body
//     (the protocol asks by answering the call): it returns a -32600
//     *jsonrpc.Error wrapping server.ErrNoBackChannel, which the body
//     should take as "no answer". Declare the question with the tool
//     (Elicit, Sample, ListRoots) to ask it there, before the body runs.
//
// A client that did not declare the capability the question needs gets
// no question: -32021 naming it.
func (c *Call) Ask(ctx context.Context, q mcp.InputRequest) (json.RawMessage, error) {
	run := tasks.FromContext(ctx)
	if run == nil {
		return c.Request.Ask(ctx, q)
	}
	if !c.ClientCapabilities().Allows(q) {
		return nil, mcp.NewMissingRequiredClientCapabilityError(mcp.RequiredCapabilities(q))
	}
	answers, err := run.Ask(ctx, mcp.InputRequests{askKey: q})
	if err != nil {
		return nil, err
	}
	return answers[askKey], nil
}

// AskAll asks the person at the host several questions at once while the
// body runs, and returns the answers under the questions' keys (read them
// with mcp.InputResponses' accessors). Like [Call.Ask] it works whether
// the tool runs as a task or not: in a task the task waits in
// input_required with the questions until tasks/update has answered every
// one (tasks.Run.Ask); in an ordinary call on a legacy session they are
// sent on the back-channel (server.Request.AskAll); in an ordinary
// 2026-07-28 call it returns a -32600 *jsonrpc.Error wrapping
// server.ErrNoBackChannel.
func (c *Call) AskAll(ctx context.Context, reqs mcp.InputRequests) (mcp.InputResponses, error) {
	run := tasks.FromContext(ctx)
	if run == nil {
		return c.Request.AskAll(ctx, reqs)
	}
	for _, k := range reqs.Keys() {
		if q := reqs[k]; q != nil && !c.ClientCapabilities().Allows(q) {
			return nil, mcp.NewMissingRequiredClientCapabilityError(mcp.RequiredCapabilities(q))
		}
	}
	return run.Ask(ctx, reqs)
}

// Progress reports progress on the call. In a call answered with a task
// (AddTaskTool) it becomes the task's statusMessage, which the client sees
// when it polls (the tools/call itself has been answered by then);
// otherwise it is a notifications/progress on the request's progress
// token, and nothing when the request carried none. total and message are
// optional (zero means absent).
//
// Hosts built on the TypeScript SDK drop progress that reaches them in the
// same read as the call's answer, which over stdio is usual for the last
// updates of a quick tool: report what a person watches while a long call
// runs, never what the result does not also say (docs/guide/clients.md).
func (c *Call) Progress(ctx context.Context, progress, total float64, message string) error {
	if run := tasks.FromContext(ctx); run != nil {
		return run.Progress(ctx, progress, total, message)
	}
	return c.Request.Progress(ctx, progress, total, message)
}
