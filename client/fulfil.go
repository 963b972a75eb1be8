package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/parley-mcp/parley/mcp"
)

// Callbacks answer what a server asks of the person or the host: a form or a
// URL to open (Elicit), an answer from the host's model (Sample), the
// client's roots (ListRoots). They are the same callbacks for either
// protocol generation: a 2026-07-28 server's inputRequests reach them, and
// so do a legacy server's elicitation/create, sampling/createMessage and
// roots/list requests, through one dispatch with one capability check.
//
// A callback runs on its own goroutine: the requests of one round (or a
// legacy server's concurrent requests) are fulfilled concurrently. Under
// 2026-07-28 its error ends the call; on a legacy session the server gets
// an internal error instead and decides how its request ends, since the
// call is the server's to finish.
type (
	// ElicitFunc answers an elicitation; p is *mcp.ElicitRequestFormParams
	// or *mcp.ElicitRequestURLParams. Decline and cancel are answers, not
	// errors.
	ElicitFunc func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error)
	// SampleFunc answers a sampling request with the host model's reply.
	SampleFunc func(ctx context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error)
	// ListRootsFunc returns the client's roots.
	ListRootsFunc func(ctx context.Context) (*mcp.ListRootsResult, error)
)

// LoopOptions tunes the automatic multi-round-trip loop of CallTool,
// GetPrompt and ReadResource. A nil *LoopOptions means defaults.
type LoopOptions struct {
	// MaxRounds is how many input_required results one call may receive
	// before it fails with a *RoundsExceededError. Default: 10.
	MaxRounds int
	// Backoff is the wait before retrying a round that carried only
	// requestState (a server saying "not ready yet"); it doubles on each
	// consecutive such round up to MaxBackoff. Default: 50ms.
	Backoff time.Duration
	// MaxBackoff caps every such wait, the first one included. Default:
	// 250ms, or Backoff when that is longer.
	MaxBackoff time.Duration
	// RoundTimeout, when positive, bounds each request the loop sends to
	// the server (the first call and every retry), not the time callbacks
	// take to answer: a server that hangs on one round ends the call with a
	// *RoundTimeoutError. Default: none; the call's context bounds the
	// whole call. It does not apply on a legacy session, whose one request
	// spans the callbacks' answers to the server.
	RoundTimeout time.Duration
	// MaxInputRequests is how many input requests one round may carry; a
	// round with more fails with an *InputRequestLimitError before any
	// callback runs, since the client would run a callback for each at
	// once. Default: 32.
	MaxInputRequests int
	// OnRound, when set, sees every round before the client fulfils it:
	// log or audit it, or return an error to refuse it, which ends the call
	// with that error wrapped. Do not keep p after OnRound returns. A
	// legacy session has no rounds, so it never runs there: a legacy
	// server's requests go straight to the callbacks.
	OnRound func(ctx context.Context, p *Pending) error
	// MaxTaskPolls is how many times CallTool polls a task (tasks/get)
	// before it fails with a *TaskPollsExceededError and cancels the task.
	// Default: 100,000 (a day at the default interval).
	MaxTaskPolls int
	// MaxPollInterval caps the wait between two polls of a task, whatever
	// the server's pollIntervalMs says. Default: 30s.
	MaxPollInterval time.Duration
}

// loopPolicy is LoopOptions with defaults applied.
type loopPolicy struct {
	maxRounds                int
	maxInputRequests         int
	roundTimeout             time.Duration
	firstBackoff, maxBackoff time.Duration
	onRound                  func(context.Context, *Pending) error
	maxTaskPolls             int
	maxPollInterval          time.Duration
}

func newLoopPolicy(o *LoopOptions) loopPolicy {
	p := loopPolicy{maxRounds: 10, maxInputRequests: 32, firstBackoff: 50 * time.Millisecond, maxBackoff: 250 * time.Millisecond,
		maxTaskPolls: 100_000, maxPollInterval: 30 * time.Second}
	if o == nil {
		return p
	}
	if o.MaxTaskPolls > 0 {
		p.maxTaskPolls = o.MaxTaskPolls
	}
	if o.MaxPollInterval > 0 {
		p.maxPollInterval = o.MaxPollInterval
	}
	if o.MaxRounds > 0 {
		p.maxRounds = o.MaxRounds
	}
	if o.MaxInputRequests > 0 {
		p.maxInputRequests = o.MaxInputRequests
	}
	p.roundTimeout = max(o.RoundTimeout, 0)
	// What the caller sets wins over the defaults, and MaxBackoff caps
	// every wait: Backoff alone raises the default cap if it has to,
	// MaxBackoff alone lowers the default first wait if it has to.
	switch {
	case o.Backoff > 0 && o.MaxBackoff > 0:
		p.firstBackoff, p.maxBackoff = min(o.Backoff, o.MaxBackoff), o.MaxBackoff
	case o.Backoff > 0:
		p.firstBackoff, p.maxBackoff = o.Backoff, max(p.maxBackoff, o.Backoff)
	case o.MaxBackoff > 0:
		p.firstBackoff, p.maxBackoff = min(p.firstBackoff, o.MaxBackoff), o.MaxBackoff
	}
	p.onRound = o.OnRound
	return p
}

// backoff returns the wait before the state-only round that follows n
// earlier consecutive ones.
func (p loopPolicy) backoff(n int) time.Duration {
	d := p.firstBackoff
	for range n {
		if d >= p.maxBackoff {
			break
		}
		d *= 2
	}
	return min(d, p.maxBackoff)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// InputRequestLimitError is returned when a round carries more input
// requests than LoopOptions.MaxInputRequests allows. No callback has run.
type InputRequestLimitError struct {
	Count int // the input requests of the round
	Limit int // LoopOptions.MaxInputRequests
}

// Error says how many inputs were asked for, and the limit.
func (e *InputRequestLimitError) Error() string {
	return fmt.Sprintf("client: the server asked for %d inputs in one round, more than the limit of %d (LoopOptions.MaxInputRequests)", e.Count, e.Limit)
}

// MissingCallbackError is returned when a server asks for a kind of input
// the client has no callback for. The call ends without a retry. On a
// legacy session the server's request is answered with -32601 (method not
// found) instead: the client does not serve that method.
type MissingCallbackError struct {
	Key    string // the input request's key ("" for a legacy server's request)
	Method string // the kind: elicitation/create, sampling/createMessage or roots/list
}

// Error names the kind of input and its key.
func (e *MissingCallbackError) Error() string {
	return fmt.Sprintf("client: the server asked for %s%s, and the client has no callback for it", e.Method, inputKey(e.Key))
}

// inputKey names an input request's key in a message, if it has one.
func inputKey(key string) string {
	if key == "" {
		return ""
	}
	return fmt.Sprintf(" (input %q)", key)
}

// Is makes errors.Is(err, ErrInputRequired) match: the server asked for
// input the client cannot give.
func (e *MissingCallbackError) Is(target error) bool { return target == ErrInputRequired }

// UndeclaredCapabilityError is returned when a server asks for input the
// client has a callback for but did not declare, such as a URL-mode
// elicitation from a client that declared form mode only (the default for
// a client with an Elicit callback). The callback is not run: the
// declaration is the host's promise of what it can present, and a server
// must not ask beyond it. On a legacy session the server's request is
// answered with -32602 (invalid params), as the specification asks for an
// undeclared elicitation mode.
type UndeclaredCapabilityError struct {
	Key    string // the input request's key ("" for a legacy server's request)
	Method string // its kind
	// Required is what the request needs declared.
	Required *mcp.ClientCapabilities
}

// Error names the kind of input and the capability it needs.
func (e *UndeclaredCapabilityError) Error() string {
	return fmt.Sprintf("client: the server asked for %s%s, which needs a capability the client did not declare (%s)",
		e.Method, inputKey(e.Key), mcp.NewMissingRequiredClientCapabilityError(e.Required).Message)
}

// Is makes errors.Is(err, ErrInputRequired) match: the server asked for
// input the client cannot give.
func (e *UndeclaredCapabilityError) Is(target error) bool { return target == ErrInputRequired }

// CallbackError wraps the error of a callback that failed to answer an
// input request.
type CallbackError struct {
	Key    string // the input request's key
	Method string // its kind
	Err    error
}

// Error names the input and the callback's error.
func (e *CallbackError) Error() string {
	return fmt.Sprintf("client: answering %s%s: %v", e.Method, inputKey(e.Key), e.Err)
}

// Unwrap returns the callback's error.
func (e *CallbackError) Unwrap() error { return e.Err }

// Fulfil answers every input request of p with the client's callbacks, all
// at once, and returns the responses to Continue with. It fails without
// calling anything if any request has no callback (*MissingCallbackError)
// or needs a capability the client did not declare
// (*UndeclaredCapabilityError), or if p has more requests than
// LoopOptions.MaxInputRequests. Otherwise it
// returns as soon as every callback has answered, a callback fails (with
// that *CallbackError), or ctx ends (with ctx.Err()); the callbacks still
// running then see their contexts cancelled, and their answers are
// dropped. A Pending without input requests needs no responses: Fulfil
// returns nil.
func (s *Session) Fulfil(ctx context.Context, p *Pending) (mcp.InputResponses, error) {
	if n, limit := len(p.InputRequests), s.client.loop.maxInputRequests; n > limit {
		return nil, &InputRequestLimitError{Count: n, Limit: limit}
	}
	keys := p.InputRequests.Keys()
	reqs := make([]mcp.InputRequest, len(keys))
	for i, k := range keys {
		r := p.InputRequests[k]
		if r == nil {
			return nil, fmt.Errorf("client: input request %q is empty", k)
		}
		if err := s.client.check(k, r); err != nil {
			return nil, err
		}
		reqs[i] = r
	}
	if len(keys) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(keys) == 1 && ctx.Done() == nil {
		// One callback and a context that never ends: nothing to run
		// alongside it and nothing to return early for, so it runs here.
		raw, err := s.dispatch(ctx, p, keys[0], reqs[0])
		if err != nil {
			return nil, err
		}
		return mcp.InputResponses{keys[0]: raw}, nil
	}
	// The first callback to fail cancels the others, and its error is the
	// cause of cctx.
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	type answer struct {
		key string
		raw json.RawMessage
		err error
	}
	answers := make(chan answer, len(keys)) // never blocks a callback
	for i, k := range keys {
		r := reqs[i]
		go func() {
			defer func() {
				// A panicking callback panics on the caller's goroutine, as
				// it does when a round has one request, rather than taking
				// the process down from here.
				if v := recover(); v != nil {
					cancel(&callbackPanic{value: v})
				}
			}()
			raw, err := s.dispatch(cctx, p, k, r)
			if err != nil {
				cancel(err)
			}
			answers <- answer{k, raw, err}
		}()
	}
	responses := make(mcp.InputResponses, len(keys))
	for i := 0; i < len(keys); i++ {
		select {
		case a := <-answers:
			if a.err == nil {
				responses[a.key] = a.raw
				continue
			}
		case <-cctx.Done():
		}
		// A callback failed, or ctx ended (and a callback may have failed
		// because of it): a panic is raised again, then the caller's
		// cancellation wins.
		cause := context.Cause(cctx)
		if p, ok := cause.(*callbackPanic); ok {
			panic(p.value)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, cause
	}
	return responses, nil
}

// callbackPanic carries a callback's panic from its goroutine to Fulfil's
// caller.
type callbackPanic struct{ value any }

func (p *callbackPanic) Error() string { return fmt.Sprintf("client: callback panicked: %v", p.value) }

// dispatch answers one input request r (under key, asked by round p, nil
// on a legacy session) with the client's callbacks, through the client's
// middleware, and encodes the answer. It is the one path from a server's
// question to Options.Elicit, Sample and ListRoots: Fulfil takes it for
// the inputRequests of a 2026-07-28 round, and a legacy session for the
// server's own requests, so both generations refuse and answer alike. The
// error is a *MissingCallbackError, an *UndeclaredCapabilityError (no
// callback has run) or a *CallbackError.
func (s *Session) dispatch(ctx context.Context, p *Pending, key string, r mcp.InputRequest) (json.RawMessage, error) {
	if err := s.client.check(key, r); err != nil {
		return nil, err
	}
	res, err := s.input(ctx, p, key, r)
	if err == nil {
		var raw []byte
		if raw, err = mcp.Marshal(res); err == nil {
			return raw, nil
		}
		err = fmt.Errorf("encoding the answer: %w", err)
	}
	return nil, &CallbackError{Key: key, Method: r.Method(), Err: err}
}

// check says why the client cannot answer r, or nil when it can: a kind
// with no callback comes first (nothing could answer it, declared or not),
// then a request the declared capabilities do not allow, by the same rule
// a server applies before asking (mcp.ClientCapabilities.Allows).
func (c *Client) check(key string, r mcp.InputRequest) error {
	if !c.hasCallback(r) {
		return &MissingCallbackError{Key: key, Method: r.Method()}
	}
	if !c.opts.Capabilities.Allows(r) {
		return &UndeclaredCapabilityError{Key: key, Method: r.Method(), Required: mcp.RequiredCapabilities(r)}
	}
	return nil
}

func (c *Client) hasCallback(r mcp.InputRequest) bool {
	switch r.(type) {
	case *mcp.ElicitRequest:
		return c.opts.Elicit != nil
	case *mcp.CreateMessageRequest:
		return c.opts.Sample != nil
	case *mcp.ListRootsRequest:
		return c.opts.ListRoots != nil
	}
	return false
}

// answer runs the callback for r. A callback returning (nil, nil) is a
// broken callback, reported as an error rather than sent as null.
func (c *Client) answer(ctx context.Context, r mcp.InputRequest) (mcp.InputResponse, error) {
	switch r := r.(type) {
	case *mcp.ElicitRequest:
		res, err := c.opts.Elicit(ctx, r.Params)
		if err == nil && res == nil {
			err = errors.New("callback returned no result")
		}
		return res, err
	case *mcp.CreateMessageRequest:
		res, err := c.opts.Sample(ctx, &r.Params)
		if err == nil && res == nil {
			err = errors.New("callback returned no result")
		}
		return res, err
	case *mcp.ListRootsRequest:
		res, err := c.opts.ListRoots(ctx)
		if err == nil && res == nil {
			err = errors.New("callback returned no result")
		}
		return res, err
	}
	return nil, fmt.Errorf("unknown input request %T", r)
}

// deriveCapabilities declares what the client's callbacks can answer.
func deriveCapabilities(o *Options) *mcp.ClientCapabilities {
	caps := &mcp.ClientCapabilities{}
	if o.Elicit != nil {
		caps.Elicitation = &mcp.ElicitationCapability{}
	}
	if o.Sample != nil {
		caps.Sampling = &mcp.SamplingCapability{}
	}
	if o.ListRoots != nil {
		caps.Roots = &mcp.RootsCapability{}
	}
	return caps
}
