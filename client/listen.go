package client

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
)

// ListenEvent is one notification received on a subscriptions/listen stream.
type ListenEvent struct {
	// Method is the notification, such as
	// "notifications/tools/list_changed".
	Method string
	// URI is the resource that changed, for
	// "notifications/resources/updated".
	URI string
	// Params are the notification's raw params.
	Params json.RawMessage
}

// Subscription is an open subscriptions/listen stream.
type Subscription struct {
	// ID is the listen request's id, which the server puts in every
	// notification of the stream as its subscription id. On a legacy
	// session, where no listen request exists, it only tells streams apart.
	ID jsonrpc.ID
	// Granted is what the server agreed to send, from its acknowledgement.
	// It may be less than what was asked for.
	Granted mcp.SubscriptionFilter

	session *Session
	cancel  context.CancelFunc
	events  chan ListenEvent
	acked   chan struct{}
	ackOnce sync.Once
	done    chan struct{} // closed once the stream has ended and err is set

	// serverCancelled is set when the server ended the stream with
	// notifications/cancelled rather than with its result.
	serverCancelled atomic.Bool
	// sessionClosed is set when Session.Close ends the stream: it then
	// ends with jsonrpc.ErrConnClosed, as when the connection dropped.
	sessionClosed atomic.Bool
	// sessionLost is set when the server lost the legacy session the
	// stream listened on: the stream then ends with it (reinit.go).
	sessionLost atomic.Pointer[SessionEndedError]

	mu  sync.Mutex
	err error
}

// ErrListenEnded is Subscription.Err after the server ended the stream
// gracefully with its final result.
var ErrListenEnded = errors.New("client: the server ended the subscription")

// register makes a subscription, registered on the session before anything
// is sent, so that an event the server sends at once is not lost; granted
// is what it was granted, when that is known up front. It fails once Close
// has begun. The caller runs the stream and calls s.streams.Done when it
// ends.
func (s *Session) register(cancel context.CancelFunc, granted *mcp.SubscriptionFilter) (*Subscription, error) {
	sub := &Subscription{
		ID:      jsonrpc.StringID("listen-" + strconv.FormatInt(s.nextSub.Add(1), 10)),
		session: s,
		cancel:  cancel,
		events:  make(chan ListenEvent, 64),
		acked:   make(chan struct{}),
		done:    make(chan struct{}),
	}
	if granted != nil {
		sub.Granted = *granted
		close(sub.acked) // nothing to wait for: the grant is the client's own
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		cancel()
		return nil, jsonrpc.ErrConnClosed
	}
	s.subs[sub.ID] = sub
	s.streams.Add(1)
	return sub, nil
}

// Listen opens a subscriptions/listen stream for the notifications filter
// asks for, and returns once the server has acknowledged it. The stream
// lasts until ctx ends, Close is called, the session closes, or the server
// ends it. If the server fails the request before acknowledging it, Listen
// returns the error.
//
// A legacy session has no subscriptions/listen, so Listen maps the filter
// onto what it has: the stream is granted the list changes the server
// declared (listChanged), which a legacy server sends to the whole
// session, and the resources it can subscribe to, for which Listen sends
// resources/subscribe before it returns (and resources/unsubscribe when
// the last stream wanting one ends). Such a stream ends only from the
// client's side; its ID names no request.
func (s *Session) Listen(ctx context.Context, filter mcp.SubscriptionFilter) (*Subscription, error) {
	if s.legacy.Load() {
		return s.listenLegacy(ctx, filter)
	}
	ctx, cancel := context.WithCancel(ctx)
	sub, err := s.register(cancel, nil)
	if err != nil {
		return nil, err
	}

	go func() {
		defer s.streams.Done()
		defer cancel()
		p := &mcp.SubscriptionsListenRequestParams{Notifications: filter}
		raw, err := s.callID(ctx, sub.ID, mcp.MethodSubscriptionsListen, p, func(m *mcp.RequestMetaObject) { p.Meta = m })
		switch {
		case err == nil:
			_, err = decodeComplete[mcp.SubscriptionsListenResult](mcp.MethodSubscriptionsListen, raw)
			if err == nil {
				err = ErrListenEnded
			}
		case sub.serverCancelled.Load():
			err = ErrListenEnded
		}
		sub.end(sub.closedBySession(err))
	}()
	select {
	case <-sub.acked:
		return sub, nil
	case <-sub.done:
		select {
		case <-sub.acked:
			// Acknowledged and ended at once: the caller still gets the
			// stream, with what it delivered, and Err says why it ended.
			return sub, nil
		default:
			return nil, sub.Err()
		}
	}
}

// Events returns the stream's notifications. The channel is closed when the
// stream ends; Err then says why. Up to 64 notifications are buffered; when
// the buffer is full, further ones are dropped (and logged), so a consumer
// that falls behind should re-list what it watches.
func (sub *Subscription) Events() <-chan ListenEvent { return sub.events }

// Err returns why the stream ended: ErrListenEnded when the server ended
// it, context.Canceled after Close (or the error of Listen's context when
// that ended), jsonrpc.ErrConnClosed when the session closed, a
// *SessionEndedError (matching ErrSessionEnded) when the server lost the
// legacy session the stream listened on, or another error. It is nil while
// the stream is open.
func (sub *Subscription) Err() error {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return sub.err
}

// Done is closed when the stream has ended, after Events is closed and Err
// is set.
func (sub *Subscription) Done() <-chan struct{} { return sub.done }

// Close ends the stream: the server is told to stop (on stream transports by
// a cancellation notification). It returns once the stream has ended, so
// Events is closed and Err is set by then. Closing a stream that has
// already ended does nothing.
func (sub *Subscription) Close() error {
	sub.cancel()
	<-sub.done
	return nil
}

// closedBySession turns the cancellation by which Session.Close ended the
// stream into jsonrpc.ErrConnClosed, and the one by which the loss of a
// legacy session ended it into the *SessionEndedError that reported it.
func (sub *Subscription) closedBySession(err error) error {
	if !errors.Is(err, context.Canceled) {
		return err
	}
	if sub.sessionClosed.Load() {
		return jsonrpc.ErrConnClosed
	}
	if e := sub.sessionLost.Load(); e != nil {
		return e
	}
	return err
}

func (sub *Subscription) end(err error) {
	s := sub.session
	s.mu.Lock()
	delete(s.subs, sub.ID)
	s.mu.Unlock()
	// From here on routeSubscription cannot find the stream, so nothing
	// sends on events any more.
	sub.mu.Lock()
	sub.err = err
	sub.mu.Unlock()
	close(sub.events)
	close(sub.done)
}

// cancelledByServer ends the listen stream whose request the server
// cancelled, if it is one.
func (s *Session) cancelledByServer(req *jsonrpc.Request) {
	var p struct {
		RequestID jsonrpc.ID `json:"requestId"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil || !p.RequestID.IsValid() {
		return
	}
	s.mu.Lock()
	sub := s.subs[p.RequestID]
	s.mu.Unlock()
	if sub != nil {
		sub.serverCancelled.Store(true)
		sub.cancel()
	}
}

// routeSubscription hands a notification tagged with a subscription id to
// its stream. Notifications for no open stream are dropped.
func (s *Session) routeSubscription(req *jsonrpc.Request) {
	var p struct {
		Meta          *mcp.NotificationMetaObject `json:"_meta"`
		URI           string                      `json:"uri"`
		Notifications mcp.SubscriptionFilter      `json:"notifications"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil || p.Meta == nil || !p.Meta.SubscriptionID.IsValid() {
		s.client.log.Debug("client: dropping notification", "method", req.Method)
		return
	}
	// The send happens under s.mu so that end, which removes the stream
	// under the same lock before closing its channel, cannot close it
	// in between.
	s.mu.Lock()
	defer s.mu.Unlock()
	sub := s.subs[p.Meta.SubscriptionID]
	if sub == nil {
		return
	}
	if req.Method == mcp.NotificationSubscriptionsAcknowledged {
		sub.ackOnce.Do(func() {
			sub.Granted = p.Notifications
			close(sub.acked)
		})
		return
	}
	select {
	case sub.events <- ListenEvent{Method: req.Method, URI: p.URI, Params: req.Params}:
	default:
		s.client.log.Warn("client: listen events not consumed; dropping one", "method", req.Method)
	}
}
