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
// caller must call end.stop when the request is answered, after asking
// timedOut whether the timeout ended it.
func (s *Session) requestContext(ctx context.Context) (context.Context, requestEnd) {
	d := s.client.requestTimeout
	switch {
	case d <= 0:
		return ctx, requestEnd{}
	case !s.legacy.Load():
		// A 2026-07-28 request never waits on the client: its deadline goes
		// in the session's list, which one timer watches (on the hot path
		// of every call, a context.WithTimeout cost a runtime timer and four
		// allocations).
		rctx, cancel := context.WithCancelCause(ctx)
		p := pendingRequests.Get().(*pendingRequest)
		p.at, p.cancel = time.Now().Add(d), cancel
		s.deadlines.add(p, d)
		return rctx, requestEnd{dl: &s.deadlines, p: p}
	}
	rctx, cancel := s.legacyRequestContext(ctx, d)
	return rctx, requestEnd{legacy: cancel}
}

// requestEnd ends what requestContext started (a struct rather than a
// func, whose closure would cost an allocation per call).
type requestEnd struct {
	dl     *deadlines
	p      *pendingRequest
	legacy context.CancelFunc
}

func (e requestEnd) stop() {
	switch {
	case e.p != nil:
		e.dl.remove(e.p)
		e.p.cancel(nil)
		*e.p = pendingRequest{}
		pendingRequests.Put(e.p)
	case e.legacy != nil:
		e.legacy()
	}
}

// timedOut reports whether the request context rctx, made by
// requestContext from ctx, was ended by the timeout (rather than by ctx).
func timedOut(ctx, rctx context.Context) bool {
	return ctx.Err() == nil && context.Cause(rctx) == errRequestTimeout
}

// deadlines holds a session's pending 2026-07-28 requests in the order they
// were sent, which, with one RequestTimeout for all, is the order of their
// deadlines. One timer watches the first: when it fires, it cancels the
// requests whose time is up (with errRequestTimeout as the cause, as
// context.WithTimeoutCause did) and is set again for the next. A request
// answered in time only leaves the list; the timer, if it was set for that
// request, fires for nothing and is set for the next, so a call costs no
// timer operation while others are pending.
type deadlines struct {
	mu         sync.Mutex
	head, tail *pendingRequest
	t          *time.Timer
	armed      bool // t will fire at or before head's deadline
}

// pendingRequest is one request in a deadlines list.
type pendingRequest struct {
	at         time.Time
	cancel     context.CancelCauseFunc
	prev, next *pendingRequest
	listed     bool
}

var pendingRequests = sync.Pool{New: func() any { return new(pendingRequest) }}

// add appends p, whose deadline is d from now and no earlier than any
// listed one's.
func (dl *deadlines) add(p *pendingRequest, d time.Duration) {
	dl.mu.Lock()
	p.prev, p.next, p.listed = dl.tail, nil, true
	if dl.tail == nil {
		dl.head = p
	} else {
		dl.tail.next = p
	}
	dl.tail = p
	if !dl.armed {
		// Not armed means the list was empty: p is the head.
		dl.armed = true
		if dl.t == nil {
			dl.t = time.AfterFunc(d, dl.fire)
		} else {
			dl.t.Reset(d)
		}
	}
	dl.mu.Unlock()
}

// remove takes p out of the list, if the timer has not already.
func (dl *deadlines) remove(p *pendingRequest) {
	dl.mu.Lock()
	if p.listed {
		dl.unlink(p)
	}
	dl.mu.Unlock()
}

func (dl *deadlines) unlink(p *pendingRequest) {
	if p.prev == nil {
		dl.head = p.next
	} else {
		p.prev.next = p.next
	}
	if p.next == nil {
		dl.tail = p.prev
	} else {
		p.next.prev = p.prev
	}
	p.prev, p.next, p.listed = nil, nil, false
}

// fire cancels the requests whose deadline has passed and sets the timer
// for the next one.
func (dl *deadlines) fire() {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	now := time.Now()
	for p := dl.head; p != nil && !p.at.After(now); p = dl.head {
		dl.unlink(p)
		p.cancel(errRequestTimeout)
	}
	if dl.head == nil {
		dl.armed = false
		return
	}
	dl.armed = true
	dl.t.Reset(dl.head.at.Sub(now))
}

// stop stops the timer when the session closes; the requests still listed
// end with the connection.
func (dl *deadlines) stop() {
	dl.mu.Lock()
	if dl.t != nil {
		dl.t.Stop()
	}
	dl.armed = false
	dl.mu.Unlock()
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
