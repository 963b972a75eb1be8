package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// DefaultRequestTimeout is how long a request waits for its answer when
// Options.RequestTimeout is zero.
const DefaultRequestTimeout = 60 * time.Second

// RequestTimeoutError is returned when the server does not answer a
// request within Options.RequestTimeout. It matches
// context.DeadlineExceeded with errors.Is. The request is cancelled as the
// transport cancels any request (closing its HTTP stream, or sending
// notifications/cancelled).
type RequestTimeoutError struct {
	Method  string        // the request's method
	Timeout time.Duration // Options.RequestTimeout, resolved
}

// Error names the request and the limit.
func (e *RequestTimeoutError) Error() string {
	return fmt.Sprintf("client: %s got no answer within %v (Options.RequestTimeout)", e.Method, e.Timeout)
}

// Is makes errors.Is(err, context.DeadlineExceeded) match.
func (e *RequestTimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

var errRequestTimeout = errors.New("client: request timeout")

// resolveRequestTimeout applies the documented default: zero means
// DefaultRequestTimeout, negative means none (0 here).
func resolveRequestTimeout(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultRequestTimeout
	case d < 0:
		return 0
	}
	return d
}

// requestContext bounds one request by the client's RequestTimeout. The
// caller must call cancel when the request is answered, after asking
// timedOut whether the timeout ended it.
func (s *Session) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	d := s.client.requestTimeout
	switch {
	case d <= 0:
		return ctx, noCancel
	case !s.legacy.Load():
		// A 2026-07-28 request never waits on the client: a plain
		// deadline (the cheapest, on the hot path of every call).
		return context.WithTimeoutCause(ctx, d, errRequestTimeout)
	}
	return s.legacyRequestContext(ctx, d)
}

func noCancel() {}

// timedOut reports whether the request context rctx, made by
// requestContext from ctx, was ended by the timeout (rather than by ctx).
func timedOut(ctx, rctx context.Context) bool {
	return ctx.Err() == nil && context.Cause(rctx) == errRequestTimeout
}

// legacyRequestContext is requestContext on a legacy session, where the
// server may ask the client for input in the middle of a request, and the
// callbacks that answer (a person filling in a form) take what they take:
// while any of them runs on the session, the timer does not end the
// request but starts again, so that only a server that is silent on its
// own account is cut.
func (s *Session) legacyRequestContext(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	rctx, cancel := context.WithCancelCause(ctx)
	lt := &legacyTimer{s: s, d: d, cancel: cancel}
	lt.mu.Lock()
	lt.t = time.AfterFunc(d, lt.fire)
	lt.mu.Unlock()
	return rctx, lt.stop
}

// legacyTimer is the timeout of one legacy request.
type legacyTimer struct {
	s      *Session
	d      time.Duration
	cancel context.CancelCauseFunc

	mu      sync.Mutex
	stopped bool
	t       *time.Timer
}

func (lt *legacyTimer) fire() {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if lt.stopped {
		return
	}
	if lt.s.answering.Load() > 0 {
		lt.t = time.AfterFunc(lt.d, lt.fire)
		return
	}
	lt.cancel(errRequestTimeout)
}

func (lt *legacyTimer) stop() {
	lt.mu.Lock()
	lt.stopped = true
	lt.t.Stop()
	lt.mu.Unlock()
	lt.cancel(nil)
}
