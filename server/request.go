package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
)

// NotifyFunc sends one notification to the client on the channel that
// carries the request being served: the connection for stream transports,
// the request's own event stream on Streamable HTTP.
type NotifyFunc func(ctx context.Context, method string, params any) error

// Request is what a handler knows about the request it serves, beyond its
// typed params: who is asking, with which protocol version and capabilities,
// and how to talk back while serving it.
type Request struct {
	// ID is the JSON-RPC id of the request.
	ID jsonrpc.ID
	// Method is the JSON-RPC method, such as "tools/call".
	Method string
	// Params points to the decoded params, of the type the method's handler
	// takes (for example *mcp.CallToolRequestParams). Middleware may read
	// and change them before the handler runs.
	Params any
	// Meta is the request's _meta. The server has checked that it carries a
	// supported protocol version and client capabilities.
	Meta *mcp.RequestMetaObject
	// Route is what the server registered that serves the request: the
	// tool or prompt name, or the resource template (or a static
	// resource's URI) that a resources/read matched. The handler that
	// resolves the request sets it before it returns (mcpserver does; a
	// handler of this package sets it itself), and middleware reads it
	// once the handler has returned, like net/http's Request.Pattern.
	// It is "" when nothing registered matched, so a name the client
	// made up never reaches it: telemetry keyed by Route stays within
	// what the server registered.
	Route string

	notify     NotifyFunc
	call       CallFunc   // the back-channel of a legacy session, if it has one
	session    *Session   // the legacy session, or nil
	stateProof StateProof // what the echoed requestState proved; see StateSealer
	// annotations are sealed beside the requestState of the request's
	// input_required result (AnnotateState); nil: none.
	annotations []StateAnnotation
	// target and targetMember are an extension method's target (see
	// Target); core methods' targets are in their params.
	target, targetMember string
	ctx                  requestContext // the context Serve runs r under (loghandler.go)
}

// Session returns the legacy session the request belongs to, or nil for a
// 2026-07-28 request (which belongs to no session).
func (r *Request) Session() *Session { return r.session }

// HasBackChannel reports whether the server can send requests to the
// client while serving r: true on a legacy session over stdio, in memory
// or stateful Streamable HTTP; false under 2026-07-28, where a handler
// asks by returning an InputRequiredResult, and on stateless legacy HTTP.
func (r *Request) HasBackChannel() bool { return r.call != nil }

// ProtocolVersion returns the protocol version the request was made with.
func (r *Request) ProtocolVersion() mcp.ProtocolVersion { return r.Meta.ProtocolVersion }

// ClientCapabilities returns the capabilities the client declared on this
// request. It is never nil. Capabilities are per request: never assume an
// earlier request's capabilities still hold.
func (r *Request) ClientCapabilities() *mcp.ClientCapabilities {
	if r.Meta.ClientCapabilities == nil {
		return &mcp.ClientCapabilities{}
	}
	return r.Meta.ClientCapabilities
}

// ClientInfo returns the client's self-description, or nil when the request
// did not carry one (it is optional and informational only).
func (r *Request) ClientInfo() *mcp.Implementation { return r.Meta.ClientInfo }

// LogLevel returns the minimum level of log messages the client asked for on
// this request, or "" when it asked for none (then Log sends nothing).
func (r *Request) LogLevel() mcp.LoggingLevel { return r.Meta.LogLevel }

// Notify sends a notification to the client on the request's channel. Most
// handlers use Progress and Log instead.
func (r *Request) Notify(ctx context.Context, method string, params any) error {
	if r.notify == nil {
		return nil
	}
	return r.notify(ctx, method, params)
}

// Progress reports progress on the request. It sends nothing, and returns
// nil, when the request carried no progress token. total and message are
// optional (zero means absent). Progress should increase with every call.
func (r *Request) Progress(ctx context.Context, progress, total float64, message string) error {
	token := r.Meta.ProgressToken
	if !token.IsValid() {
		return nil
	}
	return r.Notify(ctx, mcp.NotificationProgress, &mcp.ProgressNotificationParams{
		ProgressToken: token,
		Progress:      progress,
		Total:         total,
		Message:       message,
	})
}

// Log sends a notifications/message to the client, if the request asked for
// log messages at level or more severe. Otherwise it sends nothing and
// returns nil. data is any JSON-encodable value.
func (r *Request) Log(ctx context.Context, level mcp.LoggingLevel, logger string, data any) error {
	min := r.Meta.LogLevel
	if min == "" || !level.Enabled(min) {
		return nil
	}
	return r.Notify(ctx, mcp.NotificationMessage, &mcp.LoggingMessageNotificationParams{
		Level:  level,
		Logger: logger,
		Data:   data,
	})
}

// ErrNoBackChannel is wrapped by the error of [Request.Ask] when the
// request has no back-channel (see [Request.HasBackChannel]).
var ErrNoBackChannel = errors.New("server: no back-channel for server-to-client requests")

// Ask sends q to the client as a server-to-client request tied to r, and
// returns the client's raw result: the legacy way to elicit, sample or
// list roots. Decode the result as what was asked, for example with
// mcp.InputResponses{"k": raw}.Elicit("k").
//
// Ask refuses, before sending anything, a request the client's declared
// capabilities do not allow (a -32021 *jsonrpc.Error naming what is
// missing), and a request without a back-channel (an *jsonrpc.Error with
// code -32600 that wraps ErrNoBackChannel and says why). A URL elicitation
// without an elicitationId, which legacy sessions require, is given one.
func (r *Request) Ask(ctx context.Context, q mcp.InputRequest) (json.RawMessage, error) {
	if r.call == nil {
		return nil, noBackChannel(q.Method(), r.session == nil)
	}
	if !r.ClientCapabilities().Allows(q) {
		return nil, mcp.NewMissingRequiredClientCapabilityError(mcp.RequiredCapabilities(q))
	}
	params, err := backChannelParams(q)
	if err != nil {
		return nil, fmt.Errorf("server: encoding %s: %w", q.Method(), err)
	}
	d := DefaultAnswerTimeout
	if r.session != nil {
		if t := r.session.s.opts.AnswerTimeout; t != 0 {
			d = t
		}
	}
	if d < 0 {
		return r.call(ctx, q.Method(), params)
	}
	actx, cancel := context.WithTimeoutCause(ctx, d, errAnswerTimeout)
	defer cancel()
	res, err := r.call(actx, q.Method(), params)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), errAnswerTimeout) {
		return nil, &AnswerTimeoutError{Method: q.Method(), Timeout: d}
	}
	return res, err
}

// errAnswerTimeout is the cause of an Ask that ran out of time.
var errAnswerTimeout = errors.New("server: no answer in time")

// AnswerTimeoutError is returned by Request.Ask when a legacy client kept
// its connection but did not answer within Options.AnswerTimeout. It
// matches context.DeadlineExceeded; sent as it is, it is a -32603 whose
// message says what went unanswered and for how long.
type AnswerTimeoutError struct {
	Method  string
	Timeout time.Duration
}

func (e *AnswerTimeoutError) Error() string {
	return fmt.Sprintf("server: the client did not answer %s within %v", e.Method, e.Timeout)
}

// Unwrap returns the wire error and context.DeadlineExceeded.
func (e *AnswerTimeoutError) Unwrap() []error {
	return []error{wire.Internal("Internal error: the client did not answer %s within %v", e.Method, e.Timeout), context.DeadlineExceeded}
}

// noBackChannel is the one error of a server-to-client request that has
// no channel to go on. modern says why: a 2026-07-28 request never has one
// (the handler asks by returning an InputRequiredResult); a legacy one
// lacks it when served without session state.
func noBackChannel(method string, modern bool) error {
	why := "this session has no back-channel for server-to-client requests " +
		"(stateless Streamable HTTP); use protocol version 2026-07-28 or a stateful session"
	if modern {
		why = "a 2026-07-28 request has no back-channel; return an InputRequiredResult to ask the client instead"
	}
	return &noBackChannelError{wire.InvalidRequest("%s", "Cannot send "+method+": "+why)}
}

// noBackChannelError is the wire error that also matches ErrNoBackChannel.
type noBackChannelError struct{ wire *jsonrpc.Error }

func (e *noBackChannelError) Error() string   { return e.wire.Error() }
func (e *noBackChannelError) Unwrap() []error { return []error{e.wire, ErrNoBackChannel} }

// backChannelParams encodes the params of an input request as a legacy
// server-to-client request carries them.
func backChannelParams(q mcp.InputRequest) (json.RawMessage, error) {
	var params any
	switch r := q.(type) {
	case *mcp.ElicitRequest:
		params = r.Params
		if u, ok := r.Params.(*mcp.ElicitRequestURLParams); ok && u.ElicitationID == "" {
			c := *u
			c.ElicitationID = newElicitationID()
			params = &c
		}
	case *mcp.CreateMessageRequest:
		params = &r.Params
	case *mcp.ListRootsRequest:
		if r.Params == nil {
			return nil, nil
		}
		params = r.Params
	default:
		return nil, fmt.Errorf("%w: %T", mcp.ErrUnknownInputRequest, q)
	}
	return mcp.Marshal(params)
}

// newElicitationID returns a fresh random elicitation id.
func newElicitationID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
