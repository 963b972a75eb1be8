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

// withRequestTimeout bounds one request by the client's RequestTimeout.
// The returned stop must be called when the request is answered; timedOut
// then reports whether it was the timeout that ended it.
//
// On a legacy session the server may ask the client for input in the
// middle of a request, and the callbacks that answer (a person filling in
// a form) take what they take: while any of them runs on the session, the
// timer does not fire but starts again, so that only a server that is
// silent on its own account is cut.
func (s *Session) withRequestTimeout(ctx context.Context) (rctx context.Context, stop func(), timedOut func() bool) {
	d := s.client.requestTimeout
	if d <= 0 {
		return ctx, func() {}, func() bool { return false }
	}
	rctx, cancel := context.WithCancelCause(ctx)
	var (
		mu      sync.Mutex
		stopped bool
		t       *time.Timer
	)
	var fire func()
	fire = func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		if s.answering.Load() > 0 {
			t = time.AfterFunc(d, fire)
			return
		}
		cancel(errRequestTimeout)
	}
	mu.Lock()
	t = time.AfterFunc(d, fire)
	mu.Unlock()
	stop = func() {
		mu.Lock()
		stopped = true
		t.Stop()
		mu.Unlock()
		cancel(nil)
	}
	timedOut = func() bool { return ctx.Err() == nil && context.Cause(rctx) == errRequestTimeout }
	return rctx, stop, timedOut
}
