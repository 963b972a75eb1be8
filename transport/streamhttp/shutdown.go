package streamhttp

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
)

// shutdownState counts a Handler's streams, the responses that last until
// something ends them (subscriptions/listen, a legacy session's GET), and,
// once Shutdown has begun, refuses new ones. Ordinary requests are not
// counted: http.Server.Shutdown waits for them, and they end on their own.
type shutdownState struct {
	mu      sync.RWMutex
	closing bool
	streams sync.WaitGroup
	idle    chan struct{} // closed when the streams have ended after closing; made by begin
}

// enter admits a stream, unless shutdown has begun.
func (st *shutdownState) enter() bool {
	st.mu.RLock()
	defer st.mu.RUnlock()
	if st.closing {
		return false
	}
	st.streams.Add(1)
	return true
}

// leave ends a stream that enter admitted.
func (st *shutdownState) leave() { st.streams.Done() }

// closed reports whether shutdown has begun.
func (st *shutdownState) closed() bool {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.closing
}

// begin refuses every later stream and returns a channel closed once the
// admitted ones have ended. Every call returns the same channel.
func (st *shutdownState) begin() <-chan struct{} {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.closing {
		st.closing = true
		st.idle = make(chan struct{})
		// No stream is admitted from here on, so the WaitGroup only
		// counts down: waiting for it is safe.
		go func() {
			st.streams.Wait()
			close(st.idle)
		}()
	}
	return st.idle
}

// shuttingDown refuses what would outlive a shutdown: a new stream or a new
// legacy session. Connection: close sends the client elsewhere.
func shuttingDown(w http.ResponseWriter, id jsonrpc.ID) {
	w.Header()["Connection"] = connectionClose
	writeError(w, http.StatusServiceUnavailable, id, wire.Internal("Service Unavailable: the server is shutting down"))
}

// Shutdown ends what would keep http.Server.Shutdown waiting until its
// context runs out, and waits for it to end: every subscriptions/listen
// stream of the server ends with its final result
// (server.Server.EndSubscriptions: a server whose endpoint shuts down is
// going away, so its listen streams on every transport end), and every
// legacy session ends (its requests in progress are cancelled, its GET
// streams close, and a client that comes back gets 404). From then on the
// handler refuses, with 503 Service Unavailable, what would outlive the
// shutdown: a new listen stream, a new legacy session, a GET stream.
// Ordinary requests are still served, so that requests that reach the
// handler between its Shutdown and the server's are answered; the server's
// Shutdown then waits for them.
//
// It returns nil once the streams have ended, or ctx's error if ctx ends
// first. Call it just before http.Server.Shutdown, with the same context:
//
//	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
//	defer cancel()
//	err := errors.Join(h.Shutdown(ctx), srv.Shutdown(ctx))
//
// Because the *Handler is what NewHandler returns, middleware wrapped
// around it for serving cannot hide it from Shutdown. Shutdown may be
// called more than once and from several goroutines; a handler that has
// been shut down does not open streams or sessions again.
func (h *Handler) Shutdown(ctx context.Context) error {
	idle := h.shutdown.begin()
	h.endSessions("server shutting down")
	// A listen request admitted just before begin may not have reached
	// the server's hub when EndSubscriptions runs; ending them again until
	// the streams are gone closes that window without a lock across the
	// handler.
	tick := time.NewTicker(shutdownRecheck)
	defer tick.Stop()
	for {
		h.s.EndSubscriptions()
		select {
		case <-idle:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// shutdownRecheck is how often Shutdown ends listen streams again while it
// waits.
const shutdownRecheck = 50 * time.Millisecond

// endSessions ends every legacy session of h with reason.
func (h *Handler) endSessions(reason string) {
	if h.sessions == nil {
		return
	}
	h.sessions.mu.Lock()
	all := make([]*serverSession, 0, len(h.sessions.byID))
	for _, ls := range h.sessions.byID {
		all = append(all, ls)
	}
	h.sessions.mu.Unlock()
	for _, ls := range all {
		h.sessions.closeSession(ls, reason)
	}
}
