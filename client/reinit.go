package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// A legacy session that the server loses (design record 041).
//
// A 2025-11-25 server over Streamable HTTP keeps its sessions in memory: a
// restart, an expiry or another instance behind a load balancer answers
// the session's id with 404, and the transport fails the request with
// transport.ErrSessionEnded (the server did not act on it). The
// specification has the client start a new session with initialize. The
// session does that itself, once per loss whatever the number of requests
// that found it, and repeats the request that found it when that is safe:
// a read, or a tool the server annotated read-only or idempotent.

// ErrSessionEnded matches (errors.Is) the error of a request on a legacy
// session that the server no longer knows: it restarted, expired the
// session, or another instance took the request. It is
// transport.ErrSessionEnded. The error is a *SessionEndedError, which says
// whether a new session is open.
var ErrSessionEnded = transport.ErrSessionEnded

// SessionEndedError is the error of a request that found its legacy
// session lost by the server (a Streamable HTTP 404 to its Mcp-Session-Id)
// and that the client did not repeat: recovery is off
// (Options.DisableRecovery), opening a new session failed, the request is
// not safe to repeat, or the new session was lost as well. The server did
// not act on the request. It matches ErrSessionEnded.
type SessionEndedError struct {
	Method    string // the request that found the session lost
	SessionID string // the lost session's Mcp-Session-Id, "" if it had none
	// Reinitialized reports that a new session is open on the Session (a
	// new initialize was answered): sending the request again reaches it.
	// The client did not, because the request is not known to be safe to
	// repeat (see Options.DisableRecovery).
	Reinitialized bool
	Err           error // the transport's error, and what else went wrong
}

// Error says which request found which session lost, and what came of it.
func (e *SessionEndedError) Error() string {
	lost := "the server lost the session"
	if e.SessionID != "" {
		lost += " " + e.SessionID
	}
	if e.Reinitialized {
		return fmt.Sprintf("client: %s: %s; a new session is open, but the request was not repeated on it, as it is not known to be safe to repeat: %v", e.Method, lost, e.Err)
	}
	return fmt.Sprintf("client: %s: %s: %v", e.Method, lost, e.Err)
}

// Unwrap returns the transport's error, which matches ErrSessionEnded.
func (e *SessionEndedError) Unwrap() error { return e.Err }

// Reinitialization describes a new legacy session the client opened
// because the server lost the last one. Middleware finds it on the
// requests sent because of it (Request.Reinitialization). It is shared: do
// not modify it.
type Reinitialization struct {
	Method        string                // the request that found the session lost
	LostSessionID string                // the Mcp-Session-Id the server no longer knew, "" if none
	Previous      *mcp.InitializeResult // the lost session's initialize result
}

// incarnation is one legacy session of a Session: what initialize opened,
// until the server loses it and a new initialize opens the next.
type incarnation struct {
	init      *mcp.InitializeResult
	sessionID string            // the transport's session id, "" if none
	reinit    *Reinitialization // what opened it, nil for the first
	lost      atomic.Bool       // the server lost it: reported once
}

// renewal is a new initialize in flight, which every request that found
// the same incarnation lost waits for.
type renewal struct {
	done chan struct{}
	r    *Reinitialization
	err  error // set before done is closed
}

// renewing is the Session's state of renewals.
type renewing struct {
	mu       sync.Mutex
	inFlight *renewal
	wg       sync.WaitGroup // renewal goroutines; Add only under Session.mu while !closing
}

// recoverFrom handles the failure (err) of a request of legacy session inc:
// when the server lost the session, see lost; when its POST failed (a
// connection the server closed, one reset, a stream cut before the
// response: no HTTP status, no answer), the request is sent again once if
// it is safe to repeat, since the server may or may not have acted on it.
// Anything else is the request's own failure.
func (s *Session) recoverFrom(ctx context.Context, inc *incarnation, method string, params any, setMeta func(*mcp.RequestMetaObject), err error) (json.RawMessage, error) {
	if s.client.opts.DisableRecovery || ctx.Err() != nil {
		if errors.Is(err, ErrSessionEnded) {
			e := &SessionEndedError{Method: method, SessionID: inc.sessionID, Err: err}
			s.endIncarnation(inc, e)
			return nil, e
		}
		return nil, err
	}
	if !errors.Is(err, ErrSessionEnded) {
		if !postFailed(err) || !s.repeatable(method, params) {
			return nil, err
		}
		s.client.log.Debug("client: a request's POST failed; sending it again", "method", method, "err", err)
		res, err2 := s.callOnce(s.withRepeat(ctx), method, params, setMeta)
		if err2 == nil || !errors.Is(err2, ErrSessionEnded) {
			return res, err2
		}
		// The server went away and lost the session with it (a restart):
		// the first POST died with the old server's connection.
		err = err2
	}
	return s.lost(ctx, inc, method, params, setMeta, err)
}

// postFailed reports whether err is a request's POST that failed without
// an answer: a transport's failure with a cause, and no HTTP status.
func postFailed(err error) bool {
	var (
		failed *jsonrpc.TransportError
		status *transport.HTTPStatusError
	)
	return errors.As(err, &failed) && !errors.As(err, &status)
}

// lost handles a request of incarnation inc that failed with cause because
// the server lost the session: it reports the loss (once per incarnation),
// opens a new session (one renewal, whatever the number of requests that
// found the loss), and sends the request again on it when that is safe. A
// request is repeated at most once: if the new session is lost too, the
// request fails, and the next request opens another.
func (s *Session) lost(ctx context.Context, inc *incarnation, method string, params any, setMeta func(*mcp.RequestMetaObject), cause error) (json.RawMessage, error) {
	e := &SessionEndedError{Method: method, SessionID: inc.sessionID, Err: cause}
	s.endIncarnation(inc, e)
	r, err := s.renew(ctx, inc, method)
	if err != nil {
		e.Err = fmt.Errorf("%w; opening a new session failed: %w", cause, err)
		return nil, e
	}
	e.Reinitialized = true
	if !s.repeatable(method, params) {
		return nil, e
	}
	res, err := s.callOnce(s.withReinit(ctx, r, true), method, params, setMeta)
	if err != nil && errors.Is(err, ErrSessionEnded) {
		return nil, &SessionEndedError{Method: method, SessionID: s.inc.Load().sessionID,
			Err: fmt.Errorf("%w; repeated on a new session, which the server lost too: %w", cause, err)}
	}
	return res, err
}

// endIncarnation reports the loss of inc, once: to the log, and to the
// session's Listen streams, which end with e. Their notifications came
// from the lost session, and whatever the server sent between its loss
// and a new session is gone: a caller that keeps state from them must
// read it again, and Listen again, which subscribes on the new session.
func (s *Session) endIncarnation(inc *incarnation, e *SessionEndedError) {
	if !inc.lost.CompareAndSwap(false, true) {
		return
	}
	s.client.log.Warn("client: the server lost the session", "method", e.Method, "session", inc.sessionID, "err", e.Err)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sub := range s.subs {
		sub.sessionLost.Store(e)
		sub.cancel()
	}
}

// renew opens a new session in place of inc, or waits for the renewal
// another request began, and returns what opened it. A request that finds
// inc already replaced just gets the new session.
func (s *Session) renew(ctx context.Context, inc *incarnation, method string) (*Reinitialization, error) {
	s.renewing.mu.Lock()
	if cur := s.inc.Load(); cur != inc {
		s.renewing.mu.Unlock()
		return cur.reinit, nil
	}
	f := s.renewing.inFlight
	if f == nil {
		f = &renewal{done: make(chan struct{}), r: &Reinitialization{Method: method, LostSessionID: inc.sessionID, Previous: inc.init}}
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			s.renewing.mu.Unlock()
			return nil, fmt.Errorf("client: the session is closing")
		}
		s.renewing.wg.Add(1)
		s.mu.Unlock()
		s.renewing.inFlight = f
		// The renewal is the session's, not this caller's: a caller that
		// gives up must not fail it for the others waiting. It keeps the
		// caller's values (a trace), and RequestTimeout bounds it.
		go s.runRenewal(context.WithoutCancel(ctx), f)
	}
	s.renewing.mu.Unlock()
	select {
	case <-f.done:
		return f.r, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// runRenewal runs renewal f to its end.
func (s *Session) runRenewal(ctx context.Context, f *renewal) {
	defer s.renewing.wg.Done()
	err := s.reinitialize(ctx, f.r)
	s.renewing.mu.Lock()
	f.err = err
	s.renewing.inFlight = nil
	s.renewing.mu.Unlock()
	close(f.done)
}

// reinitialize opens a new session with initialize, offering the version
// the first one offered, and reports it: to the log, with what the
// restarted server now says differently (another version, other
// capabilities), and to middleware, on the requests it sends. The log
// level is set again (initialize does it). The session's cache is
// emptied: what it held came from the lost session.
func (s *Session) reinitialize(ctx context.Context, r *Reinitialization) error {
	s.cache.clear()
	if err := s.initialize(s.withReinit(ctx, r, false), s.offer, r); err != nil {
		s.client.log.Warn("client: the server lost the session, and opening a new one failed", "method", r.Method, "lostSession", r.LostSessionID, "err", err)
		return err
	}
	cur := s.inc.Load()
	attrs := []any{"method", r.Method, "lostSession", r.LostSessionID, "session", cur.sessionID, "protocolVersion", cur.init.ProtocolVersion}
	if changed := initChanges(r.Previous, cur.init); len(changed) > 0 {
		attrs = append(attrs, "changed", changed)
	}
	s.client.log.Warn("client: the server lost the session; a new one is open", attrs...)
	return nil
}

// initChanges names what a server's answer to initialize says differently
// from its answer before.
func initChanges(before, after *mcp.InitializeResult) []string {
	if before == nil || after == nil {
		return nil
	}
	var changed []string
	if before.ProtocolVersion != after.ProtocolVersion {
		changed = append(changed, "protocolVersion")
	}
	if before.ServerInfo.Name != after.ServerInfo.Name || before.ServerInfo.Version != after.ServerInfo.Version {
		changed = append(changed, "serverInfo")
	}
	b, errB := json.Marshal(before.Capabilities)
	a, errA := json.Marshal(after.Capabilities)
	if errB != nil || errA != nil || string(a) != string(b) {
		changed = append(changed, "capabilities")
	}
	if before.Instructions != after.Instructions {
		changed = append(changed, "instructions")
	}
	return changed
}

// repeatable reports whether a request that found the session lost may be
// sent again on a new one without the caller's say. The server did not act
// on it, but the new session is not the one the caller sent it to: what
// the session had built up (on the server, and the caller's own view of
// it) is gone. Reads are repeated: a read in a new session is what the
// caller would do. A tool call is repeated only when the server annotated
// the tool read-only or idempotent in the session's tools/list: the
// server's own word that calling it again has no further effect, as HTTP
// lets a client repeat its safe and idempotent methods. Anything else
// (another tool, a subscription, an extension's method) is the caller's
// decision: it fails with a *SessionEndedError whose Reinitialized says a
// new session is open.
func (s *Session) repeatable(method string, params any) bool {
	switch method {
	case mcp.MethodPing, mcp.MethodListTools, mcp.MethodListPrompts, mcp.MethodListResources,
		mcp.MethodListResourceTemplates, mcp.MethodReadResource, mcp.MethodGetPrompt, mcp.MethodComplete:
		return true
	case mcp.MethodCallTool:
		p, ok := params.(*mcp.CallToolRequestParams)
		if !ok {
			return false
		}
		v, ok := s.toolRepeat.Load(p.Name)
		return ok && v.(bool)
	}
	return false
}

// noteTools records, from a tools/list page of a legacy session, which
// tools the server annotated read-only or idempotent.
func (s *Session) noteTools(tools []mcp.Tool) {
	for i := range tools {
		a := tools[i].Annotations
		s.toolRepeat.Store(tools[i].Name, a != nil && (isTrue(a.ReadOnlyHint) || isTrue(a.IdempotentHint)))
	}
}

func isTrue(b *bool) bool { return b != nil && *b }

// reinitScope tells the outgoing path that a request is sent because the
// server lost the session: to open the new one, or to repeat (repeat)
// the request that found the loss.
type reinitScope struct {
	r      *Reinitialization
	repeat bool
}

type reinitKey struct{}

// withRepeat marks ctx for middleware: the request repeats one whose POST
// failed (Request.Repeat, without a Reinitialization).
func (s *Session) withRepeat(ctx context.Context) context.Context {
	if s.client.chain == nil {
		return ctx
	}
	return context.WithValue(ctx, reinitKey{}, reinitScope{repeat: true})
}

// withReinit marks ctx for middleware (see Request.Reinitialization); a
// request that opens the new session belongs to no call. Without
// middleware it returns ctx as it is.
func (s *Session) withReinit(ctx context.Context, r *Reinitialization, repeat bool) context.Context {
	if s.client.chain == nil {
		return ctx
	}
	if !repeat {
		ctx = context.WithValue(ctx, roundKey{}, (*roundScope)(nil))
	}
	return context.WithValue(ctx, reinitKey{}, reinitScope{r: r, repeat: repeat})
}
