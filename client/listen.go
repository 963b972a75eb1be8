package client

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"

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
	// notification of the stream as its subscription id.
	ID jsonrpc.ID
	// Granted is what the server agreed to send, from its acknowledgement.
	// It may be less than what was asked for.
	Granted mcp.SubscriptionFilter

	session *Session
	cancel  context.CancelFunc
	events  chan ListenEvent
	acked   chan struct{}
	ackOnce sync.Once

	mu  sync.Mutex
	err error
}

// ErrListenEnded is Subscription.Err after the server ended the stream
// gracefully with its final result.
var ErrListenEnded = errors.New("client: the server ended the subscription")

// Listen opens a subscriptions/listen stream for the notifications filter
// asks for, and returns once the server has acknowledged it. The stream
// lasts until ctx ends, Close is called, or the server ends it.
func (s *Session) Listen(ctx context.Context, filter mcp.SubscriptionFilter) (*Subscription, error) {
	ctx, cancel := context.WithCancel(ctx)
	sub := &Subscription{
		ID:      jsonrpc.StringID("listen-" + strconv.FormatInt(s.nextSub.Add(1), 10)),
		session: s,
		cancel:  cancel,
		events:  make(chan ListenEvent, 64),
		acked:   make(chan struct{}),
	}
	s.mu.Lock()
	s.subs[sub.ID] = sub
	s.mu.Unlock()

	callDone := make(chan error, 1)
	go func() {
		p := &mcp.SubscriptionsListenRequestParams{Notifications: filter}
		raw, err := s.callID(ctx, sub.ID, mcp.MethodSubscriptionsListen, p, func(m *mcp.RequestMetaObject) { p.Meta = m })
		if err == nil {
			_, err = decodeComplete[mcp.SubscriptionsListenResult](mcp.MethodSubscriptionsListen, raw)
			if err == nil {
				err = ErrListenEnded
			}
		}
		sub.end(err)
		callDone <- err
	}()
	select {
	case <-sub.acked:
		return sub, nil
	case err := <-callDone:
		return nil, err
	}
}

// Events returns the stream's notifications. The channel is closed when the
// stream ends; Err then says why.
func (sub *Subscription) Events() <-chan ListenEvent { return sub.events }

// Err returns why the stream ended: ErrListenEnded when the server ended
// it, context.Canceled after Close, or another error. It is nil while the
// stream is open.
func (sub *Subscription) Err() error {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return sub.err
}

// Close ends the stream: the server is told to stop (on stream transports by
// a cancellation notification).
func (sub *Subscription) Close() error {
	sub.cancel()
	return nil
}

func (sub *Subscription) end(err error) {
	s := sub.session
	s.mu.Lock()
	_, live := s.subs[sub.ID]
	delete(s.subs, sub.ID)
	s.mu.Unlock()
	if !live {
		return
	}
	sub.mu.Lock()
	sub.err = err
	sub.mu.Unlock()
	close(sub.events)
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
