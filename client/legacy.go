package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// Legacy sessions (2025-11-25, 2025-06-18, 2025-03-26).
//
// A legacy session begins with initialize and declares the client's
// capabilities once; its requests then carry no envelope, and the server
// asks for input by sending requests of its own while it serves a call.
// Those requests reach the same callbacks, through the same dispatch, as
// the inputRequests of a 2026-07-28 round. Only what differs lives here:
// the handshake, the fall-back from server/discover, the server's
// requests, and Listen mapped onto resources/subscribe and the
// list-change notifications.

// ErrLegacySession is wrapped by the errors of what only a 2026-07-28
// session can do: continue a multi-round-trip call, or send a round's
// input responses or request state. A legacy session has no rounds: the
// server asks for input with requests of its own while it serves the
// call, the callbacks answer them, and CallTool, Begin and CallToolRound
// return the final result.
var ErrLegacySession = errors.New("client: not available on a legacy (initialize) session")

// InitializeResult returns the server's answer to initialize on a legacy
// session, or nil under 2026-07-28, which has no handshake. It is shared:
// do not modify it.
func (s *Session) InitializeResult() *mcp.InitializeResult { return s.initialized.Load() }

// initialize turns s into a legacy session: it offers version, checks the
// version the server answers with, says initialized, and sets the log
// level when one is wanted. r is what a new initialize replaces a session
// the server lost for (nil for the first).
func (s *Session) initialize(ctx context.Context, offer mcp.ProtocolVersion, r *Reinitialization) error {
	c := s.client
	if !s.legacy.Swap(true) {
		s.setVersion(offer)
		s.offer = offer
	}
	p := &mcp.InitializeRequestParams{
		ProtocolVersion: offer,
		Capabilities:    *c.opts.Capabilities,
		ClientInfo:      c.info,
	}
	rctx, end := s.requestContext(ctx)
	raw, err := s.outgoing(rctx, jsonrpc.ID{}, mcp.MethodInitialize, p, nil, func(m *mcp.RequestMetaObject) { p.Meta = m })
	if err != nil && timedOut(ctx, rctx) {
		err = &RequestTimeoutError{Method: mcp.MethodInitialize, Timeout: c.requestTimeout}
	}
	end.stop()
	if err != nil {
		if e, ok := asRPCError(err); ok && e.Code == jsonrpc.CodeMethodNotFound {
			// A server without the handshake speaks no legacy version:
			// nothing in common with a client that asked for one.
			return fmt.Errorf("client: initialize (offering %s): the server has no handshake: %w (%w)", offer, ErrUnsupportedVersion, err)
		}
		return fmt.Errorf("client: initialize (offering %s): %w", offer, err)
	}
	res, err := decodeComplete[mcp.InitializeResult](mcp.MethodInitialize, raw)
	if err != nil {
		return err
	}
	if v := res.ProtocolVersion; !isLegacy(v) || !c.speaks(v) {
		// The specification has the client disconnect: it cannot speak
		// what the server chose.
		return fmt.Errorf("client: the server answered initialize (offering %s) with protocol version %q, which this client does not speak after initialize: %w", offer, v, ErrUnsupportedVersion)
	}
	s.setVersion(res.ProtocolVersion)
	s.initialized.Store(res)
	if err := s.conn.Notify(ctx, mcp.NotificationInitialized, nil); err != nil {
		return fmt.Errorf("client: sending %s: %w", mcp.NotificationInitialized, err)
	}
	s.inc.Store(&incarnation{init: res, sessionID: s.TransportSessionID(), reinit: r})
	if level := c.opts.LogLevel; level != "" && res.Capabilities.Logging != nil {
		p := &mcp.SetLevelRequestParams{Level: level}
		// callOnce: a session lost this early is not renewed from within
		// its own initialize.
		if _, err := s.callOnce(ctx, mcp.MethodSetLoggingLevel, p, func(m *mcp.RequestMetaObject) { p.Meta = m }); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// Log messages are diagnostics: a server that refuses the
			// level costs the session them, not its use.
			c.log.Warn("client: the server refused logging/setLevel", "level", level, "err", err)
		}
	}
	return nil
}

// legacyFallback decides whether the failure of the server/discover probe
// (probeErr) means a server of the legacy generation, and which version to
// offer it: the newest legacy version the server listed in a -32022 that
// the client speaks, else the client's newest legacy version. The rule
// (docs/design/014-detecting-legacy-servers.md) follows the
// specification's: only an answer that is positively of the 2026-07-28
// generation keeps the client from the handshake, and what is not an
// answer about the generation at all never sends it there.
//
//   - An answer with HTTP 401 or 403 belongs to authorization, and a 5xx
//     to an outage: neither says anything about the generation, and
//     initializing would hide them (or handshake, as legacy, with a modern
//     server behind an authorization wall).
//   - A request the transport failed to deliver (a POST that failed: a
//     network error, an OAuth RoundTripper's refusal) was not answered,
//     and neither was a probe left waiting until the RequestTimeout or
//     the caller's context ended.
//   - A connection that failed or closed before any answer is a legacy
//     sign: a stdio server that exits on an unknown first request.
//   - Of the errors the server answered with (in-band, or in the body of
//     any other HTTP status, or the empty or non-JSON-RPC body of one),
//     the codes only 2026-07-28 defines are modern: -32020, -32021, and
//     -32022 naming a 2026-07-28-generation version the client speaks
//     (the probe already retried with it) or none it can read. A -32022
//     naming only other versions sends the client to the handshake.
//     Every other code is a legacy server's, whatever it is: deployed
//     ones answer a request before initialize with -32601, -32602, -32600
//     or -32000 ("Bad Request: Server not initialized"), and the
//     specification warns against keying the fallback on any one code.
func (c *Client) legacyFallback(ctx context.Context, probeErr error) (mcp.ProtocolVersion, bool) {
	newest := c.mutualVersion(c.versions, true)
	if newest == "" || ctx.Err() != nil {
		return "", false
	}
	var (
		status *transport.HTTPStatusError
		failed *jsonrpc.TransportError
	)
	switch {
	case errors.As(probeErr, &status):
		if !statusMayBeLegacy(status.StatusCode) {
			return "", false
		}
	case errors.As(probeErr, &failed):
		return "", false // the POST failed: no answer at all
	}
	if data, ok := mcp.AsUnsupportedProtocolVersion(probeErr); ok {
		if c.mutualVersion(data.Supported, false) != "" {
			// The server lists a version the client speaks without a
			// handshake, and refused anyway: a refusal after negotiation,
			// not a legacy server.
			return "", false
		}
		if v := c.mutualVersion(data.Supported, true); v != "" {
			return v, true
		}
		return newest, true
	}
	if e, ok := asRPCError(probeErr); ok {
		if modernCode(e.Code) {
			return "", false
		}
		return newest, true
	}
	return newest, connectionLost(probeErr)
}

// statusMayBeLegacy reports whether an HTTP status other than 2xx that
// answered the probe may come from a legacy server refusing a request it
// does not know (400, 404, 405 and the other 4xx), rather than from an
// authorization layer (401, 403) or an outage (5xx).
// (The numbers are spelt out: the client package does not link net/http.)
func statusMayBeLegacy(code int) bool {
	return code != 401 && code != 403 && code < 500
}

// modernCode reports whether code is one of the error codes that only the
// 2026-07-28 generation defines, and so names a server of it.
func modernCode(code int64) bool {
	switch code {
	case mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredClientCapability, mcp.CodeUnsupportedProtocolVersion:
		return true
	}
	return false
}

// connectionLost reports whether err says the connection failed or closed
// before the server answered, rather than that the server answered (with an
// error or with something the client could not read).
func connectionLost(err error) bool {
	var bad *InvalidResponseError
	_, rpc := asRPCError(err)
	return !rpc && !errors.As(err, &bad) && !errors.Is(err, ErrUnsupportedVersion) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// connectLegacy initializes after the server/discover probe of s failed
// with probeErr, offering version offer: on the same connection when the
// server answered the probe, and on a fresh connection from t when it did
// not, or when it answered and then went away before initialize (a stdio
// server that reports the unknown method and exits). It connects afresh at
// most once.
func (c *Client) connectLegacy(ctx context.Context, t transport.Transport, s *Session, offer mcp.ProtocolVersion, probeErr error) (*Session, error) {
	c.log.Debug("client: the server does not speak 2026-07-28; initializing", "offer", offer, "probe", probeErr)
	fresh := connectionLost(probeErr)
	for {
		if fresh {
			// The old connection's Close reports how a server process
			// ended, which is no news here: the server went away.
			_ = s.Close()
			tc, err := t.Connect(ctx)
			if err != nil {
				return nil, fmt.Errorf("client: server/discover failed (%w), and connecting again to initialize failed: %w", probeErr, err)
			}
			s = newSession(c, tc, offer, false)
		}
		err := s.initialize(ctx, offer, nil)
		if err == nil {
			return s, nil
		}
		if !fresh && connectionLost(err) && ctx.Err() == nil {
			fresh = true
			continue
		}
		_ = s.Close()
		return nil, fmt.Errorf("client: server/discover failed (%w), and so did the legacy handshake: %w", probeErr, err)
	}
}

// serveLegacy answers a request the server sends on a legacy session:
// ping, and the requests for input, which go through the same dispatch as
// the inputRequests of a 2026-07-28 round. It runs on its own goroutine,
// with a context that ends when the server cancels the request or the
// session closes.
func (s *Session) serveLegacy(ctx context.Context, req *jsonrpc.Request) (any, error) {
	switch req.Method {
	case mcp.MethodPing:
		return &mcp.EmptyResult{}, nil
	case mcp.MethodElicit, mcp.MethodCreateMessage, mcp.MethodListRoots:
	default:
		return nil, wire.MethodNotFound("Method not found: %s", req.Method)
	}
	r, err := decodeServerRequest(req)
	if err != nil {
		// The decoder's text is Go's; the server learns which request.
		s.client.log.Warn("client: a server request's params do not decode", "method", req.Method, "err", err)
		return nil, wire.InvalidParams("Invalid params: the params of %s do not fit its schema", req.Method)
	}
	s.answering.Add(1)
	raw, err := s.dispatch(ctx, nil, "", r)
	s.answering.Add(-1)
	if err == nil {
		return json.RawMessage(raw), nil
	}
	var (
		missing    *MissingCallbackError
		undeclared *UndeclaredCapabilityError
	)
	switch {
	case errors.As(err, &missing):
		return nil, wire.MethodNotFound("%s", "Method not found: "+req.Method+" (the client has no handler for it)")
	case errors.As(err, &undeclared):
		return nil, wire.InvalidParams("%s", "Invalid params: "+mcp.NewMissingRequiredClientCapabilityError(undeclared.Required).Message+", which the client did not declare")
	case ctx.Err() != nil:
		// The server cancelled its request, or the session is closing:
		// no answer goes out.
		return nil, ctx.Err()
	}
	// The callback's error may carry the host's details: they stay in the
	// client's log, and the server learns only that there is no answer.
	s.client.log.Warn("client: a callback failed to answer the server", "method", req.Method, "err", err)
	return nil, wire.Internal("Internal error: the client could not answer %s", req.Method)
}

// decodeServerRequest reads a server's request as the input request it
// embeds under 2026-07-28, so that one decoder serves both generations.
func decodeServerRequest(req *jsonrpc.Request) (mcp.InputRequest, error) {
	env, err := json.Marshal(struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params,omitempty"`
	}{req.Method, req.Params})
	if err != nil {
		return nil, err
	}
	return mcp.DecodeInputRequest(env)
}

// legacyDiscover is what Discover returns on a legacy session: the
// initialize result in the shape of server/discover's, without a request,
// since a legacy server has no server/discover and its answer cannot
// change during the session.
func (s *Session) legacyDiscover() (*mcp.DiscoverResult, error) {
	r := s.initialized.Load()
	if r == nil {
		return nil, fmt.Errorf("client: %s before initialize has been answered: %w", mcp.MethodDiscover, ErrLegacySession)
	}
	info := r.ServerInfo
	return &mcp.DiscoverResult{
		CacheableResult: mcp.CacheableResult{Result: mcp.Result{
			Meta:       &mcp.ResultMetaObject{ServerInfo: &info},
			ResultType: mcp.ResultTypeComplete,
		}},
		SupportedVersions: []mcp.ProtocolVersion{r.ProtocolVersion},
		Capabilities:      r.Capabilities,
		Instructions:      r.Instructions,
	}, nil
}

// legacyRound refuses what a legacy session cannot send: a round's input
// responses or request state, which only a multi-round-trip server reads.
// A legacy server would ignore them and ask again, so the caller's mistake
// would go unnoticed.
func (s *Session) legacyRound(method string, p mcp.RequestStateParams) error {
	if !s.legacy.Load() {
		return nil
	}
	responses, _ := p.Continuation()
	if _, stated := p.LookupRequestState(); len(*responses) > 0 || stated {
		return fmt.Errorf("client: %s with input responses or requestState on protocol version %s: %w", method, s.ProtocolVersion(), ErrLegacySession)
	}
	return nil
}

// legacyOutcome reports an input_required result on a legacy session as
// the protocol violation it is: a legacy server asks with requests.
func (s *Session) legacyOutcome(method string, out any) error {
	if _, ok := out.(*mcp.InputRequiredResult); ok && s.legacy.Load() {
		return &InvalidResponseError{Method: method, Err: fmt.Errorf("input_required on protocol version %s, which has no multi-round-trip requests", s.ProtocolVersion())}
	}
	return nil
}

// unsubscribeTimeout bounds the resources/unsubscribe that ends a legacy
// Listen stream, so that Subscription.Close returns even when the server
// does not answer.
const unsubscribeTimeout = 5 * time.Second

// listenLegacy is Listen on a legacy session, which has no
// subscriptions/listen: the list changes a legacy server declares
// (listChanged) it sends to the whole session unasked, and resource
// updates after resources/subscribe. The stream grants what the server
// declared of filter, subscribes its resources, and hands it the session's
// matching notifications until it ends, when it unsubscribes the resources
// no other stream still wants.
func (s *Session) listenLegacy(ctx context.Context, filter mcp.SubscriptionFilter) (*Subscription, error) {
	caps := s.ServerCapabilities()
	granted := mcp.SubscriptionFilter{
		ToolsListChanged:     filter.ToolsListChanged && caps.Tools != nil && caps.Tools.ListChanged,
		PromptsListChanged:   filter.PromptsListChanged && caps.Prompts != nil && caps.Prompts.ListChanged,
		ResourcesListChanged: filter.ResourcesListChanged && caps.Resources != nil && caps.Resources.ListChanged,
	}
	if caps.Resources != nil && caps.Resources.Subscribe {
		for _, uri := range filter.ResourceSubscriptions {
			if !slices.Contains(granted.ResourceSubscriptions, uri) {
				granted.ResourceSubscriptions = append(granted.ResourceSubscriptions, uri)
			}
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	// Registered before subscribing, so an update the server sends as soon
	// as it has subscribed is not lost.
	sub, err := s.register(cancel, &granted)
	if err != nil {
		return nil, err
	}
	// Read once registered: if the server loses this session from here
	// on, the stream is told (endIncarnation).
	inc := s.inc.Load()

	for i, uri := range granted.ResourceSubscriptions {
		if err := s.subscribeResource(ctx, inc, uri); err != nil {
			s.releaseResources(inc, granted.ResourceSubscriptions[:i])
			cancel()
			err = sub.closedBySession(err)
			sub.end(err)
			s.streams.Done()
			return nil, err
		}
	}
	go func() {
		defer s.streams.Done()
		var err error
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-s.conn.Done():
			err = jsonrpc.ErrConnClosed
		}
		cancel()
		s.releaseResources(inc, granted.ResourceSubscriptions)
		sub.end(sub.closedBySession(err))
	}()
	return sub, nil
}

// subscribeResource subscribes the session to uri unless an open stream
// already has. inc is the legacy session the stream opened on. The counts
// are those of the current one: a new session starts from none, since the
// lost one's subscriptions went with it.
func (s *Session) subscribeResource(ctx context.Context, inc *incarnation, uri string) error {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	if cur := s.inc.Load(); s.subsInc != cur {
		s.subsInc = cur
		clear(s.resourceSubs)
	}
	if inc != s.subsInc {
		// The stream opened on a session that has been replaced since.
		return &SessionEndedError{Method: mcp.MethodSubscribeResource, SessionID: inc.sessionID, Reinitialized: true, Err: ErrSessionEnded}
	}
	if s.resourceSubs[uri] == 0 {
		p := &mcp.SubscribeRequestParams{URI: uri}
		if _, err := s.call(ctx, mcp.MethodSubscribeResource, p, func(m *mcp.RequestMetaObject) { p.Meta = m }); err != nil {
			return fmt.Errorf("client: subscribing to %s: %w", uri, err)
		}
	}
	s.resourceSubs[uri]++
	return nil
}

// releaseResources gives up one stream's hold on uris, unsubscribing the
// ones no open stream wants any more. A failure is only logged: the stream
// is ending either way, and at worst the server sends updates no stream
// takes. A stream of a session the server lost (inc no longer the one the
// counts are for) holds nothing: the lost session's subscriptions went
// with it.
func (s *Session) releaseResources(inc *incarnation, uris []string) {
	if len(uris) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), unsubscribeTimeout)
	defer cancel()
	s.subMu.Lock()
	defer s.subMu.Unlock()
	if s.subsInc != inc || inc.lost.Load() {
		return
	}
	for _, uri := range uris {
		if s.resourceSubs[uri]--; s.resourceSubs[uri] > 0 {
			continue
		}
		delete(s.resourceSubs, uri)
		if s.isClosing() {
			// The session's end ends its subscriptions on the server;
			// Close should not wait for an answer to say so.
			continue
		}
		p := &mcp.UnsubscribeRequestParams{URI: uri}
		// callOnce: a session the server lost is not renewed to tidy up.
		if _, err := s.callOnce(ctx, mcp.MethodUnsubscribeResource, p, func(m *mcp.RequestMetaObject) { p.Meta = m }); err != nil {
			s.client.log.Debug("client: unsubscribing failed", "uri", uri, "err", err)
		}
	}
}

// routeLegacy hands a legacy server's list change or resource update to
// every open stream that was granted it. Other notifications are dropped.
func (s *Session) routeLegacy(req *jsonrpc.Request) {
	var uri string
	switch req.Method {
	case mcp.NotificationToolListChanged, mcp.NotificationPromptListChanged, mcp.NotificationResourceListChanged:
	case mcp.NotificationResourceUpdated:
		var p mcp.ResourceUpdatedNotificationParams
		if err := json.Unmarshal(req.Params, &p); err != nil || p.URI == "" {
			s.client.log.Debug("client: dropping a resource update without a uri", "err", err)
			return
		}
		uri = p.URI
	default:
		s.client.log.Debug("client: dropping notification", "method", req.Method)
		return
	}
	// Under s.mu, as in routeSubscription: end removes a stream under it
	// before closing its channel.
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sub := range s.subs {
		if !grants(&sub.Granted, req.Method, uri) {
			continue
		}
		select {
		case sub.events <- ListenEvent{Method: req.Method, URI: uri, Params: req.Params}:
		default:
			s.client.log.Warn("client: listen events not consumed; dropping one", "method", req.Method)
		}
	}
}

// grants reports whether filter f covers the notification method (about
// uri, for a resource update).
func grants(f *mcp.SubscriptionFilter, method, uri string) bool {
	switch method {
	case mcp.NotificationToolListChanged:
		return f.ToolsListChanged
	case mcp.NotificationPromptListChanged:
		return f.PromptsListChanged
	case mcp.NotificationResourceListChanged:
		return f.ResourcesListChanged
	case mcp.NotificationResourceUpdated:
		return slices.Contains(f.ResourceSubscriptions, uri)
	}
	return false
}
