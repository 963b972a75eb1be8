package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
)

// The engine runs a registration's questions: it works out which are
// answered (recorded in the sealed state, or answered just now), which can
// be asked now (everything they depend on is answered) and which must
// wait, and hands the askable ones to an asker.
//
// How questions reach the client is the asker's business. Under
// 2026-07-28 there is no back-channel: the multi-round-trip asker suspends
// the call, and the engine answers the request with an InputRequiredResult
// whose sealed state records every answer so far; the client's retry
// re-enters the engine. A back-channel asker (a 2025-11-25 session) can
// instead send the questions and wait for the answers, and the engine
// carries on within the same request. Either way the same questions are
// rendered, checked and recorded by the same code, and the body sees the
// same typed values.

// asker puts one round of questions to the client.
type asker interface {
	// ask returns the answers by key, or errSuspend when the answers will
	// come with a later request (the multi-round-trip asker).
	ask(ctx context.Context, c *Call, questions mcp.InputRequests) (mcp.InputResponses, error)
}

// errSuspend: the round goes to the client as an InputRequiredResult.
var errSuspend = errors.New("mcpserver: round suspended for the client")

// mrtrAsker asks by returning an InputRequiredResult.
type mrtrAsker struct{}

func (mrtrAsker) ask(context.Context, *Call, mcp.InputRequests) (mcp.InputResponses, error) {
	return nil, errSuspend
}

// backChannelAsker asks over a legacy session's back-channel: every
// question of the round at once, as server-to-client requests tied to the
// request, and the engine carries on with the answers within the same
// request. Without a back-channel (stateless legacy HTTP) the call fails
// with the error that says so.
type backChannelAsker struct{}

func (backChannelAsker) ask(ctx context.Context, c *Call, questions mcp.InputRequests) (mcp.InputResponses, error) {
	return c.AskAll(ctx, questions)
}

// askerFor picks how the call's questions reach the client: by suspending
// under 2026-07-28, over the back-channel on a legacy session.
func askerFor(c *Call) asker {
	if c.ProtocolVersion().SupportsInputRequired() {
		return mrtrAsker{}
	}
	return backChannelAsker{}
}

// prepare readies a call before its body runs. Without questions it hands
// the body the retry's answers and plaintext state (the hand-built form);
// with questions it resolves them, and returns an InputRequiredResult
// when the client must answer first.
func prepare[In any](ctx context.Context, c *Call, pl *plan, in In, p mcp.RequestStateParams) (*mcp.InputRequiredResult, error) {
	responses, _ := p.Continuation()
	state, present := p.LookupRequestState()
	if pl == nil {
		c.responses, c.state, c.stated = *responses, state, present
		return nil, nil
	}
	return pl.resolve(ctx, c, in, *responses, state, c.StateProof(), askerFor(c))
}

// maxEngineRounds bounds the rounds one request may run with a
// back-channel asker; the question graph is finite, so only a
// misbehaving asker reaches it.
const maxEngineRounds = 64

// resolve answers the plan's questions for one request. It returns nil
// when every question is answered (the answers are in c), an
// InputRequiredResult when the client must answer more first, or an
// error: a *QuestionError, a capability error, or an internal one.
//
// responses and state are the request's inputResponses and its verified,
// plaintext requestState, and proof what that state proved (nil on a first
// round or without a sealer). An answer in responses counts only if proof
// says the previous round asked exactly the question as it renders now; a
// record in state counts only for a question asked in this call whose
// rendering still has the recorded digest. So a
// client can neither slip in an answer to a question it was not asked,
// nor make a stale answer stand for a reworded question.
func (p *plan) resolve(ctx context.Context, c *Call, in any, responses mcp.InputResponses, state string, proof server.StateProof, a asker) (*mcp.InputRequiredResult, error) {
	recorded := decodeState(state)
	// asked reports whether the round answered now asked q, whose digest
	// is digest, under key: first the sealed round proof speaks for, then
	// the back-channel round just asked.
	asked := func(key string, q mcp.InputRequest, _ string) bool { return proof != nil && proof.Asked(key, q) }
	var keptBuf [4]keptRecord
	kept := keptBuf[:0]
	c.answers = c.answersBuf[:0]
	// Only a back-channel asker reads the digests of the questions it was
	// asked; the multi-round-trip asker never returns answers.
	_, suspends := a.(mrtrAsker)
	for round := 0; ; round++ {
		var pending mcp.InputRequests
		var digests map[string]string
		for _, q := range p.order {
			if c.answerFor(q) != nil || !answered(c, q.after) {
				continue
			}
			var rendered mcp.InputRequest
			c.rendering = q
			err := guardErr(func() (err error) { rendered, err = q.render(in, c); return })
			c.rendering = nil
			if err != nil {
				return nil, renderError(ctx, c, p.owner, q.key, err)
			}
			digest, err := requeststate.QuestionDigest(rendered)
			if err != nil {
				return nil, renderError(ctx, c, p.owner, q.key, err)
			}
			if rec := recorded[q.key]; rec != nil && rec.Q == digest {
				if ans, ok := q.restore(rec); ok {
					if err := p.settle(c, q, ans); err != nil {
						return nil, err
					}
					kept = append(kept, keptRecord{q.key, rec})
					continue
				}
			}
			if raw, ok := responses[q.key]; ok && asked(q.key, rendered, digest) {
				rec, ans, err := q.consume(raw)
				if err != nil {
					return nil, &QuestionError{Owner: p.owner, Key: q.key, Err: err}
				}
				rec.Q = digest
				if err := p.settle(c, q, ans); err != nil {
					return nil, err
				}
				kept = append(kept, keptRecord{q.key, rec})
				continue
			}
			if pending == nil {
				pending = make(mcp.InputRequests)
			}
			pending[q.key] = rendered
			if !suspends {
				if digests == nil {
					digests = make(map[string]string)
				}
				digests[q.key] = digest
			}
		}
		if len(pending) == 0 {
			return nil, nil
		}
		if !suspends && !c.HasBackChannel() {
			// A legacy request with nowhere to ask (stateless HTTP): the
			// missing back-channel, not the capabilities a stateless
			// session cannot know, is what the client must hear about.
			// AskAll sends nothing then and returns that error.
			_, err := c.AskAll(ctx, pending)
			return nil, err
		}
		if err := p.gate(c, pending); err != nil {
			return nil, err
		}
		if round >= maxEngineRounds {
			return nil, fmt.Errorf("mcpserver: %s: questions still open after %d rounds", p.owner, round)
		}
		got, err := a.ask(ctx, c, pending)
		if errors.Is(err, errSuspend) {
			return &mcp.InputRequiredResult{InputRequests: pending, RequestState: encodeState(kept)}, nil
		}
		if err != nil {
			return nil, err
		}
		// The answers a back-channel brings answer exactly what it was
		// just asked.
		responses, recorded = got, nil
		asked = func(key string, _ mcp.InputRequest, digest string) bool {
			d, ok := digests[key]
			return ok && d == digest
		}
	}
}

// settle stores an answer, and ends the call when the user declined a
// question that does not allow it. The caller keeps the answer's record
// for the next round.
func (p *plan) settle(c *Call, q *question, ans *answer) error {
	if q.method == mcp.MethodElicit && ans.action != mcp.ActionAccept && !q.allowDecline {
		return &QuestionError{Owner: p.owner, Key: q.key, Action: ans.action}
	}
	c.answers = append(c.answers, questionAnswer{q, ans})
	return nil
}

// keptRecord is the record of one question answered so far, under its
// key. A question is settled at most once per request and keys are
// unique in a plan, so the records kept never hold a key twice.
type keptRecord struct {
	key string
	rec *record
}

func answered(c *Call, qs []*question) bool {
	for _, q := range qs {
		if c.answerFor(q) == nil {
			return false
		}
	}
	return true
}

// gate refuses a round the client declared no capability for, naming the
// questions that need what it lacks.
func (p *plan) gate(c *Call, pending mcp.InputRequests) error {
	caps := c.ClientCapabilities()
	missing := caps.MissingFor(pending)
	if missing == nil {
		return nil
	}
	var keys []string
	for k, r := range pending {
		if !caps.Allows(r) {
			keys = append(keys, fmt.Sprintf("%q", k))
		}
	}
	sort.Strings(keys)
	e := mcp.NewMissingRequiredClientCapabilityError(missing)
	e.Message = fmt.Sprintf("%s (needed by question %s of %s)", e.Message, strings.Join(keys, ", "), p.owner)
	return e
}

// renderError reports a question whose message could not be rendered: a
// protocol error the message function returned stays one; a message that
// reads a question it does not depend on is an *undeclaredError, logged
// here; anything else is an internal error.
func renderError(ctx context.Context, c *Call, owner, key string, err error) error {
	if u := asUndeclared(err); u != nil {
		var stack []byte
		if pe, ok := err.(*panicError); ok {
			stack = pe.stack
		}
		if c.log != nil {
			logUndeclared(ctx, c.log, u, stack)
		}
		return u
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return err
	}
	return fmt.Errorf("mcpserver: %s: rendering question %q: %w", owner, key, err)
}

// record is what the sealed state keeps of one answered question: the
// answer as the client gave it (so that it is decoded the same way every
// round) and the digest of the question it answered.
type record struct {
	Action mcp.ElicitAction `json:"a,omitempty"` // elicitations
	Data   json.RawMessage  `json:"d,omitempty"` // accepted content, sampled result, roots
	Q      string           `json:"q"`
}

// stateVersion is the format of the engine's plaintext state. A state of
// another version (a rolling deploy) reads as no progress: the questions
// are asked again.
const stateVersion = 1

type engineState struct {
	V int                `json:"v"`
	O map[string]*record `json:"o,omitempty"`
}

// decodeState reads the engine's state; anything unreadable is no
// progress, never an error: the state was verified by the seal, so an
// unreadable one comes from another release of the server.
func decodeState(s string) map[string]*record {
	if s == "" || s == emptyState {
		// emptyState decodes to version 1 with no records.
		return nil
	}
	var st engineState
	if err := json.Unmarshal([]byte(s), &st); err != nil || st.V != stateVersion {
		return nil
	}
	for k, r := range st.O {
		if r == nil || r.Q == "" {
			delete(st.O, k)
		}
	}
	return st.O
}

// emptyState is what encodeState writes when no question is answered yet
// (json.Marshal of an engineState with no records), and what the first
// retry of every call echoes.
var emptyState = fmt.Sprintf(`{"v":%d}`, stateVersion)

// encodeState writes the records of the answered questions. The state is
// never empty, so that the boundary always seals it, and with it the
// digests of the questions asked this round.
func encodeState(kept []keptRecord) string {
	if len(kept) == 0 {
		return emptyState
	}
	o := make(map[string]*record, len(kept))
	for _, k := range kept {
		o[k.key] = k.rec
	}
	b, err := json.Marshal(engineState{V: stateVersion, O: o})
	if err != nil { // records hold only valid JSON; cannot happen
		return `{"v":1}`
	}
	return string(b)
}
