package resourceserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// tokenWatch re-checks the token of one running request every
// Options.RecheckInterval, from the first time the request asks
// (auth.Revoked) until it ends, and closes done when the verifier refuses
// the token. The checks run on a timer, not a goroutine per request, and
// never under the lock.
//
// A verifier that cannot decide keeps the stream (fail open, design
// record 042): the re-check is an addition to the token's expiry, which
// still bounds the stream, and an authorization server that is down must
// not end every stream of every instance at once, only for their clients
// to reconnect into 503s from the same outage.
type tokenWatch struct {
	rs    *ResourceServer
	ctx   context.Context // the request's: a check under way ends with it
	token string

	mu      sync.Mutex
	done    chan struct{} // made by the first revoked; closed when refused
	timer   *time.Timer
	stopped bool // the request ended, or the token was refused
}

// revoked is the request's auth.Revoked: the first call starts the checks.
func (w *tokenWatch) revoked() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done == nil {
		w.done = make(chan struct{})
		if !w.stopped {
			w.timer = time.AfterFunc(w.rs.recheck, w.check)
		}
	}
	return w.done
}

// check verifies the token again, and schedules the next check unless the
// token was refused or the request has ended.
func (w *tokenWatch) check() {
	info, err := w.rs.verifier.Verify(w.ctx, w.token)
	if err == nil && info == nil {
		err = errors.New("resourceserver: the verifier returned neither an Info nor an error")
	}
	if err == nil {
		if missing := w.rs.missingScope(info); missing != "" {
			err = fmt.Errorf("%w: the token lacks scope %q", ErrInsufficientScope, missing)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || w.ctx.Err() != nil {
		return // the request ended meanwhile: nothing to end, nothing to say
	}
	switch {
	case err == nil:
	case errors.Is(err, ErrInvalidToken), errors.Is(err, ErrInsufficientScope):
		w.rs.log.LogAttrs(w.ctx, slog.LevelDebug, "resourceserver: a re-check refused the token of a running request; it ends", slog.String("err", err.Error()))
		w.stopped = true
		close(w.done)
		return
	default:
		w.rs.log.LogAttrs(w.ctx, slog.LevelWarn, "resourceserver: cannot re-check the token of a running request; it goes on until the next re-check", slog.String("err", err.Error()))
	}
	w.timer.Reset(w.rs.recheck)
}

// stop ends the checks: the request has returned.
func (w *tokenWatch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	if w.timer != nil {
		w.timer.Stop()
	}
}
