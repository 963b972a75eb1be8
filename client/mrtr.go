package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/parley-mcp/parley/mcp"
)

// Call is what a multi-round-trip call asks for: the method and its target
// (a tool or prompt name and arguments, or a resource URI). It is the same
// on every round: a retry is the original call repeated, not a new one.
// It is plain data, the description of a request (a Pending persists it);
// mcpserver.Call, on the other side, is the server's handle on a call it
// serves.
type Call struct {
	// Method is mcp.MethodCallTool, mcp.MethodGetPrompt or
	// mcp.MethodReadResource.
	Method string `json:"method"`
	// Name is the tool or prompt.
	Name string `json:"name,omitempty"`
	// URI is the resource.
	URI string `json:"uri,omitempty"`
	// Arguments are the tool's arguments (a JSON object) or the prompt's
	// (a JSON object of strings).
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// ToolCall returns the Call of tool name with args (anything that encodes
// as a JSON object, or nil).
func ToolCall(name string, args any) (*Call, error) {
	p := &mcp.CallToolRequestParams{}
	if err := p.SetArguments(args); err != nil {
		return nil, fmt.Errorf("client: arguments of %s: %w", name, err)
	}
	return &Call{Method: mcp.MethodCallTool, Name: name, Arguments: p.Arguments}, nil
}

// PromptCall returns the Call of prompt name with args.
func PromptCall(name string, args map[string]string) *Call {
	c := &Call{Method: mcp.MethodGetPrompt, Name: name}
	if args != nil {
		c.Arguments, _ = json.Marshal(args) // a map of strings always encodes
	}
	return c
}

// ResourceCall returns the Call that reads uri.
func ResourceCall(uri string) *Call { return &Call{Method: mcp.MethodReadResource, URI: uri} }

// Pending is a call the server answered with an InputRequiredResult: what it
// asked, the state to echo, and how many rounds it has taken. A Pending is
// plain data: marshal it to JSON to continue the call later, in another
// process, with a fresh client (Session.Continue).
type Pending struct {
	// Call is the call being continued.
	Call Call `json:"call"`
	// InputRequests are what the server needs, by key. Answer every key
	// under the same key in the responses given to Continue.
	InputRequests mcp.InputRequests `json:"inputRequests,omitempty"`
	// RequestState is the server's opaque state, echoed byte for byte on
	// the next round. An empty one is echoed only with ForceRequestState:
	// "" alone means the server sent none, and then none is sent.
	RequestState string `json:"requestState,omitempty"`
	// ForceRequestState marks an empty RequestState as present: the
	// server sent "requestState":"", and the next round echoes it. It is
	// kept when a Pending is marshalled.
	ForceRequestState bool `json:"-"`
	// Round counts the input_required results of this call so far (1 after
	// the first).
	Round int `json:"round"`
}

// LookupRequestState returns the state to echo and whether there is one;
// like os.LookupEnv, an empty state may be present.
func (p *Pending) LookupRequestState() (string, bool) {
	return p.RequestState, p.RequestState != "" || p.ForceRequestState
}

// SetRequestState makes the state to echo state, present even when it is
// empty; when present is false it removes it and state is ignored.
func (p *Pending) SetRequestState(state string, present bool) {
	if !present {
		state = ""
	}
	p.RequestState, p.ForceRequestState = state, present && state == ""
}

// pendingFormat is the format version a Pending is written with. A record
// of a newer format is refused rather than misread.
const pendingFormat = 1

// MarshalJSON writes p with its format version ("v"), so that a record
// persisted today is told apart from one written in a later format. An
// empty state that is present is written as "requestState":"".
func (p Pending) MarshalJSON() ([]byte, error) {
	type plain Pending
	var state *string // a *string, to write a present empty state
	if s, ok := p.LookupRequestState(); ok {
		state = &s
	}
	return json.Marshal(struct {
		V int `json:"v"`
		plain
		RequestState *string `json:"requestState,omitempty"`
	}{pendingFormat, plain(p), state})
}

// UnmarshalJSON reads a Pending of format version 1 (or one written without
// a version). A record of another version is an error.
func (p *Pending) UnmarshalJSON(data []byte) error {
	type plain Pending
	var w struct {
		V *int `json:"v"`
		plain
		RequestState *string `json:"requestState"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	if w.V != nil && *w.V != pendingFormat {
		return fmt.Errorf("client: a pending call of format version %d; this client reads version %d", *w.V, pendingFormat)
	}
	*p = Pending(w.plain)
	if w.RequestState != nil {
		p.SetRequestState(*w.RequestState, true)
	}
	return nil
}

// NeedsInput reports whether the server asked for anything: a Pending
// without input requests only wants its state sent back (a server that is
// not ready yet, or sheds load).
func (p *Pending) NeedsInput() bool { return len(p.InputRequests) > 0 }

// Begin sends the first round of call. It returns the complete result (an
// *mcp.CallToolResult, *mcp.GetPromptResult or *mcp.ReadResourceResult), or,
// when the server needs input, a Pending to fulfil and Continue.
//
// On a legacy session Begin always returns the complete result, never a
// Pending: the server asks for input while the call is in flight, and the
// client's callbacks answer at once, so there is no round to drive (nor
// to audit with LoopOptions.OnRound, or persist).
func (s *Session) Begin(ctx context.Context, call *Call) (mcp.AnyResult, *Pending, error) {
	return s.round(ctx, call, 0, nil, "", false)
}

// Continue sends the next round of p with responses and p's request state
// (an empty one included, when present), exactly as given: nothing is
// added, merged or overwritten. It returns the
// complete result or the next Pending. The session need not be the one that
// began the call, but it must speak 2026-07-28: on a legacy session, whose
// server cannot read a round, Continue fails with an error wrapping
// ErrLegacySession and sends nothing.
func (s *Session) Continue(ctx context.Context, p *Pending, responses mcp.InputResponses) (mcp.AnyResult, *Pending, error) {
	if s.legacy.Load() {
		return nil, nil, fmt.Errorf("client: continuing %s %s on protocol version %s: %w", p.Call.Method, p.Call.target(), s.ProtocolVersion(), ErrLegacySession)
	}
	state, present := p.LookupRequestState()
	return s.round(ctx, &p.Call, p.Round, responses, state, present)
}

// round sends one request of a multi-round-trip call, with state when
// present.
func (s *Session) round(ctx context.Context, call *Call, done int, responses mcp.InputResponses, state string, present bool) (mcp.AnyResult, *Pending, error) {
	var (
		out mcp.AnyResult
		ir  *mcp.InputRequiredResult
		err error
	)
	ctx = s.withRound(ctx, call, done+1)
	switch call.Method {
	case mcp.MethodCallTool:
		var o mcp.CallToolOutcome
		p := &mcp.CallToolRequestParams{Name: call.Name, Arguments: call.Arguments, InputResponses: responses}
		p.SetRequestState(state, present)
		o, err = s.CallToolRound(ctx, p)
		out, _ = o.(mcp.AnyResult)
	case mcp.MethodGetPrompt:
		p := &mcp.GetPromptRequestParams{Name: call.Name, InputResponses: responses}
		p.SetRequestState(state, present)
		if len(call.Arguments) > 0 {
			if err := json.Unmarshal(call.Arguments, &p.Arguments); err != nil {
				return nil, nil, fmt.Errorf("client: prompt arguments: %w", err)
			}
		}
		var o mcp.GetPromptOutcome
		o, err = s.GetPromptRound(ctx, p)
		out, _ = o.(mcp.AnyResult)
	case mcp.MethodReadResource:
		var o mcp.ReadResourceOutcome
		p := &mcp.ReadResourceRequestParams{URI: call.URI, InputResponses: responses}
		p.SetRequestState(state, present)
		o, err = s.ReadResourceRound(ctx, p)
		out, _ = o.(mcp.AnyResult)
	default:
		return nil, nil, fmt.Errorf("client: %q cannot take part in a multi-round-trip call", call.Method)
	}
	if err != nil {
		return nil, nil, err
	}
	if ir, _ = out.(*mcp.InputRequiredResult); ir == nil {
		return out, nil, nil
	}
	next := &Pending{Call: *call, InputRequests: ir.InputRequests, Round: done + 1}
	next.SetRequestState(ir.LookupRequestState())
	return nil, next, nil
}

// CallToolRound sends one tools/call round exactly as p says — its
// inputResponses and requestState included — and returns the union the
// server answered: *mcp.CallToolResult or *mcp.InputRequiredResult. It is
// the building block of loops you drive yourself; CallTool runs the loop
// for you. The session sets p.Meta.
//
// On a legacy session the one round is the whole call: it returns the
// *mcp.CallToolResult (the callbacks answer the server's requests
// meanwhile), fails with an *InvalidResponseError on an input_required
// result, and refuses params with inputResponses or requestState (an error
// wrapping ErrLegacySession), which a legacy server cannot read.
func (s *Session) CallToolRound(ctx context.Context, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	if err := s.legacyRound(mcp.MethodCallTool, p); err != nil {
		return nil, err
	}
	raw, err := s.call(ctx, mcp.MethodCallTool, p, func(m *mcp.RequestMetaObject) { p.Meta = m })
	if err != nil {
		return nil, err
	}
	out, err := mcp.DecodeCallToolOutcome(raw)
	if err != nil {
		return nil, &InvalidResponseError{Method: mcp.MethodCallTool, Err: err}
	}
	if err := s.legacyOutcome(mcp.MethodCallTool, out); err != nil {
		return nil, err
	}
	return out, nil
}

// GetPromptRound is CallToolRound for prompts/get.
func (s *Session) GetPromptRound(ctx context.Context, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
	if err := s.legacyRound(mcp.MethodGetPrompt, p); err != nil {
		return nil, err
	}
	raw, err := s.call(ctx, mcp.MethodGetPrompt, p, func(m *mcp.RequestMetaObject) { p.Meta = m })
	if err != nil {
		return nil, err
	}
	out, err := mcp.DecodeGetPromptOutcome(raw)
	if err != nil {
		return nil, &InvalidResponseError{Method: mcp.MethodGetPrompt, Err: err}
	}
	if err := s.legacyOutcome(mcp.MethodGetPrompt, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadResourceRound is CallToolRound for resources/read. A first round
// (no inputResponses, no requestState) is answered from the session's
// cache while a cacheable result for the URI is fresh (Options.Cache).
func (s *Session) ReadResourceRound(ctx context.Context, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
	if err := s.legacyRound(mcp.MethodReadResource, p); err != nil {
		return nil, err
	}
	raw, err := s.readCall(ctx, p)
	if err != nil {
		return nil, err
	}
	out, err := mcp.DecodeReadResourceOutcome(raw)
	if err != nil {
		return nil, &InvalidResponseError{Method: mcp.MethodReadResource, Err: err}
	}
	if err := s.legacyOutcome(mcp.MethodReadResource, out); err != nil {
		return nil, err
	}
	return out, nil
}

// runRounds drives call to completion: it fulfils each round's input
// requests with the client's callbacks and retries, within the client's
// round limit and with backoff on rounds that only carry state.
func (s *Session) runRounds(ctx context.Context, call *Call) (mcp.AnyResult, error) {
	pol := s.client.loop
	res, p, err := s.timedRound(ctx, call, 1, func(ctx context.Context) (mcp.AnyResult, *Pending, error) {
		return s.Begin(ctx, call)
	})
	stateOnly := 0 // consecutive rounds that carried only state
	for err == nil && p != nil {
		if p.Round > pol.maxRounds {
			return nil, &RoundsExceededError{Method: call.Method, Target: call.target(), Rounds: pol.maxRounds, Last: p}
		}
		if pol.onRound != nil {
			if err := pol.onRound(ctx, p); err != nil {
				return nil, fmt.Errorf("client: round %d of %s %s refused: %w", p.Round, call.Method, call.target(), err)
			}
		}
		var responses mcp.InputResponses
		if p.NeedsInput() {
			stateOnly = 0
			if responses, err = s.Fulfil(ctx, p); err != nil {
				return nil, err
			}
		} else {
			if err := sleep(ctx, pol.backoff(stateOnly)); err != nil {
				return nil, err
			}
			stateOnly++
		}
		last := p
		res, p, err = s.timedRound(ctx, call, last.Round+1, func(ctx context.Context) (mcp.AnyResult, *Pending, error) {
			return s.Continue(ctx, last, responses)
		})
	}
	return res, err
}

// timedRound sends one round within LoopOptions.RoundTimeout, if set. A
// legacy session's one request spans the time its callbacks take to answer
// the server, which RoundTimeout promises not to bound, so it goes
// untimed: the call's context bounds it.
func (s *Session) timedRound(ctx context.Context, call *Call, round int, send func(context.Context) (mcp.AnyResult, *Pending, error)) (mcp.AnyResult, *Pending, error) {
	d := s.client.loop.roundTimeout
	if d <= 0 || s.legacy.Load() {
		return send(ctx)
	}
	rctx, cancel := context.WithTimeoutCause(ctx, d, errRoundTimeout)
	defer cancel()
	res, p, err := send(rctx)
	if err != nil && ctx.Err() == nil && context.Cause(rctx) == errRoundTimeout {
		return nil, nil, &RoundTimeoutError{Method: call.Method, Target: call.target(), Round: round, Timeout: d}
	}
	return res, p, err
}

var errRoundTimeout = errors.New("client: round timeout")

// RoundTimeoutError is returned when the server takes longer than
// LoopOptions.RoundTimeout to answer one request of the loop. It matches
// context.DeadlineExceeded with errors.Is.
type RoundTimeoutError struct {
	Method  string        // the call's method
	Target  string        // the tool or prompt name, or the resource URI
	Round   int           // the request that timed out: 1 for the first call
	Timeout time.Duration // LoopOptions.RoundTimeout
}

// Error names the call, the request and the limit.
func (e *RoundTimeoutError) Error() string {
	return fmt.Sprintf("client: %s %s: request %d got no answer within %v (LoopOptions.RoundTimeout)", e.Method, e.Target, e.Round, e.Timeout)
}

// Is makes errors.Is(err, context.DeadlineExceeded) match.
func (e *RoundTimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

func (c *Call) target() string {
	if c.Method == mcp.MethodReadResource {
		return c.URI
	}
	return c.Name
}

// RoundsExceededError is returned when a server keeps answering
// input_required past the client's round limit.
type RoundsExceededError struct {
	Method string // the call's method
	Target string // the tool or prompt name, or the resource URI
	Rounds int    // the limit
	// Last is the round the server asked for when the limit was reached.
	// It can be inspected, persisted, or resumed with Session.Fulfil and
	// Session.Continue by a caller who decides to go on.
	Last *Pending
}

// Error names the call and the limit.
func (e *RoundsExceededError) Error() string {
	return fmt.Sprintf("client: %s %s still asks for input after %d rounds", e.Method, e.Target, e.Rounds)
}

// Is makes errors.Is(err, ErrTooManyRounds) match.
func (e *RoundsExceededError) Is(target error) bool { return target == ErrTooManyRounds }

// ErrTooManyRounds matches every *RoundsExceededError.
var ErrTooManyRounds = errors.New("client: too many input_required rounds")
