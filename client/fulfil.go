package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/parley-mcp/parley/mcp"
)

// Callbacks answer what a server asks of the person or the host: a form or a
// URL to open (Elicit), an answer from the host's model (Sample), the
// client's roots (ListRoots). They are the same callbacks for either
// protocol generation: a 2026-07-28 server's inputRequests reach them, and
// so would a legacy server's requests.
//
// A callback runs on its own goroutine: the requests of one round are
// fulfilled concurrently. Its error ends the call.
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
	// MaxBackoff caps Backoff. Default: 250ms.
	MaxBackoff time.Duration
	// OnRound, when set, sees every round before the client fulfils it:
	// log or audit it, or return an error to refuse it, which ends the call
	// with that error wrapped. Do not keep p after OnRound returns.
	OnRound func(ctx context.Context, p *Pending) error
}

// loopPolicy is LoopOptions with defaults applied.
type loopPolicy struct {
	maxRounds                int
	firstBackoff, maxBackoff time.Duration
	onRound                  func(context.Context, *Pending) error
}

func newLoopPolicy(o *LoopOptions) loopPolicy {
	p := loopPolicy{maxRounds: 10, firstBackoff: 50 * time.Millisecond, maxBackoff: 250 * time.Millisecond}
	if o == nil {
		return p
	}
	if o.MaxRounds > 0 {
		p.maxRounds = o.MaxRounds
	}
	if o.Backoff > 0 {
		p.firstBackoff = o.Backoff
	}
	if o.MaxBackoff > 0 {
		p.maxBackoff = o.MaxBackoff
	}
	if p.maxBackoff < p.firstBackoff {
		p.maxBackoff = p.firstBackoff
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

// MissingCallbackError is returned when a server asks for a kind of input
// the client has no callback for. The call ends without a retry.
type MissingCallbackError struct {
	Key    string // the input request's key
	Method string // the kind: elicitation/create, sampling/createMessage or roots/list
}

func (e *MissingCallbackError) Error() string {
	return fmt.Sprintf("client: the server asked for %s (input %q), and the client has no callback for it", e.Method, e.Key)
}

// Is makes errors.Is(err, ErrInputRequired) match: the server asked for
// input the client cannot give.
func (e *MissingCallbackError) Is(target error) bool { return target == ErrInputRequired }

// CallbackError wraps the error of a callback that failed to answer an
// input request.
type CallbackError struct {
	Key    string // the input request's key
	Method string // its kind
	Err    error
}

func (e *CallbackError) Error() string {
	return fmt.Sprintf("client: answering %s (input %q): %v", e.Method, e.Key, e.Err)
}

func (e *CallbackError) Unwrap() error { return e.Err }

// Fulfil answers every input request of p with the client's callbacks, all
// at once, and returns the responses to Continue with. It fails without
// calling anything if a callback is missing for any request, and with the
// first callback error otherwise (the other callbacks' contexts are then
// cancelled).
func (s *Session) Fulfil(ctx context.Context, p *Pending) (mcp.InputResponses, error) {
	keys := p.InputRequests.Keys()
	for _, k := range keys {
		if !s.client.canAnswer(p.InputRequests[k]) {
			return nil, &MissingCallbackError{Key: k, Method: p.InputRequests[k].Method()}
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		key string
		res mcp.InputResponse
		err error
	}
	answers := make(chan answer, len(keys))
	var wg sync.WaitGroup
	for _, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := s.client.answer(ctx, p.InputRequests[k])
			if err != nil {
				err = &CallbackError{Key: k, Method: p.InputRequests[k].Method(), Err: err}
				cancel()
			}
			answers <- answer{k, r, err}
		}()
	}
	wg.Wait()
	close(answers)
	responses := make(mcp.InputResponses, len(keys))
	var firstErr error
	for a := range answers {
		switch {
		case a.err != nil:
			// Prefer the callback that failed first over the ones that
			// merely saw their context cancelled because of it.
			if firstErr == nil || (errors.Is(firstErr, context.Canceled) && !errors.Is(a.err, context.Canceled)) {
				firstErr = a.err
			}
		case firstErr == nil:
			if err := responses.Set(a.key, a.res); err != nil {
				firstErr = fmt.Errorf("client: encoding the answer to %q: %w", a.key, err)
			}
		}
	}
	if firstErr != nil {
		if ctxErr := context.Cause(ctx); errors.Is(firstErr, context.Canceled) && ctxErr != nil && !errors.Is(ctxErr, context.Canceled) {
			return nil, ctxErr
		}
		return nil, firstErr
	}
	return responses, nil
}

func (c *Client) canAnswer(r mcp.InputRequest) bool {
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
