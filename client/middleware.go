package client

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
)

// Kind says what a middleware [Request] is.
type Kind int

const (
	// KindRequest is a request the client sends: every round of a
	// multi-round-trip call, every list, Discover, initialize, Complete,
	// subscriptions/listen and the rest, whatever the transport. Its
	// Handler returns the raw result (json.RawMessage).
	KindRequest Kind = iota + 1
	// KindInput is a request for input the server made: an input request
	// of a 2026-07-28 round, or a legacy server's elicitation/create,
	// sampling/createMessage or roots/list. Its Handler returns the
	// decoded answer (an mcp.InputResponse such as *mcp.ElicitResult)
	// before it is encoded.
	KindInput
	// KindCall is a whole logical call of CallTool, GetPrompt or
	// ReadResource: every round and every input request fulfilled between
	// them run inside it, with its context. Its Handler returns the final
	// result (an mcp.AnyResult).
	KindCall
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindInput:
		return "input"
	case KindCall:
		return "call"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Request is what a client middleware sees of one request, input request or
// logical call. Middleware may read it and, through Meta, add to an
// outgoing request's _meta; the other fields are for reading.
type Request struct {
	// Kind says which of the three this is.
	Kind Kind
	// Method is the JSON-RPC method: the request's, the input request's
	// (such as "elicitation/create"), or the call's (such as "tools/call").
	Method string
	// Params are, for KindRequest, the params about to be encoded (a
	// pointer to the method's params type, such as
	// *mcp.CallToolRequestParams); for KindInput the input request (an
	// mcp.InputRequest); nil for KindCall.
	Params any
	// Call is the logical call the request belongs to: the call itself
	// (KindCall), one of its rounds (KindRequest), or an input request one
	// of its rounds asked (KindInput). It is nil otherwise, and for a
	// legacy server's requests, which name no call. Do not modify it.
	Call *Call
	// Round is the round of Call: 1 for the first request, 2 for the
	// first Continue, and so on; for KindInput the round whose result
	// asked. 0 when Call is nil and for KindCall.
	Round int
	// Key is the input request's key in its round (KindInput under
	// 2026-07-28; "" for a legacy server's request).
	Key string
	// Session is the session the request goes through.
	Session *Session
	// Reinitialization is set on the requests a legacy session sends
	// because its server lost it (KindRequest): the initialize that opens
	// the new session and the logging/setLevel that follows it, and, with
	// Repeat set, the request that found the loss, sent again on the new
	// session. nil otherwise. See Options.DisableRecovery.
	Reinitialization *Reinitialization
	// Repeat reports that this request repeats one that failed on a
	// legacy session: one that found the session lost, sent again on the
	// new session (Reinitialization says which), or one whose POST failed
	// (Reinitialization nil). See Options.DisableRecovery.
	Repeat bool

	id   jsonrpc.ID
	meta *mcp.RequestMetaObject // the request's own copy of its _meta, set in Params
	run  func(context.Context) (mcp.AnyResult, error)
}

// Meta returns the _meta of an outgoing request (KindRequest) for writing,
// such as a traceparent to propagate: the request's own copy of the _meta
// the session shares among its requests (its Extra map copied too), so a
// write reaches this request only. It returns nil for the other kinds.
func (r *Request) Meta() *mcp.RequestMetaObject {
	if r.Kind != KindRequest {
		return nil
	}
	return r.meta
}

// ID returns the JSON-RPC id of an outgoing request when the session chose
// it (a listen stream's); the zero ID when the connection numbers it.
func (r *Request) ID() jsonrpc.ID { return r.id }

// Handler serves one middleware Request. What it returns depends on the
// Kind (see there): the raw result, the decoded answer to an input
// request, or a call's final result.
type Handler func(ctx context.Context, req *Request) (any, error)

// Middleware wraps a Handler with behaviour around every request the
// client sends, every input request it answers (in both generations) and
// every logical call: tracing, logging, metrics, retries, headers. It is
// the client's counterpart of server.Middleware; see Options.Middleware.
type Middleware func(next Handler) Handler

// buildChain wraps the terminal handler in mw, the first outermost. It
// returns nil for no middleware, and for middleware that all returned the
// handler they were given (as a tracing middleware does with nothing to
// record): the paths check for nil and skip building a Request at all, so
// such a client pays nothing.
func buildChain(mw []Middleware) Handler {
	if len(mw) == 0 {
		return nil
	}
	h := Handler(terminal)
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	if reflect.ValueOf(h).Pointer() == reflect.ValueOf(Handler(terminal)).Pointer() {
		return nil
	}
	return h
}

// terminal is the innermost Handler: it does what the Request stands for.
func terminal(ctx context.Context, req *Request) (any, error) {
	switch req.Kind {
	case KindRequest:
		res, err := req.Session.send(ctx, req.id, req.Method, req.Params)
		if err != nil {
			return nil, err
		}
		return res, nil
	case KindInput:
		r, _ := req.Params.(mcp.InputRequest)
		if r == nil {
			return nil, fmt.Errorf("client: middleware replaced the params of %s", req.Method)
		}
		res, err := req.Session.client.answer(ctx, r)
		if err != nil {
			return nil, err
		}
		return res, nil
	case KindCall:
		res, err := req.run(ctx)
		if err != nil {
			return nil, err
		}
		return res, nil
	}
	return nil, fmt.Errorf("client: unknown middleware request kind %v", req.Kind)
}

// send encodes params and sends one request: the end of every outgoing
// path, with or without middleware.
func (s *Session) send(ctx context.Context, id jsonrpc.ID, method string, params any) (json.RawMessage, error) {
	raw, err := mcp.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("client: encoding %s params: %w", method, err)
	}
	if id.IsValid() {
		return s.conn.CallRawID(ctx, id, method, raw)
	}
	// mcp.Marshal wrote raw: the connection need not check it again.
	return s.conn.CallRawValid(ctx, method, raw)
}

// outgoing sends one request through the middleware, if any. meta is the
// _meta setMeta has just put into params.
func (s *Session) outgoing(ctx context.Context, id jsonrpc.ID, method string, params any, meta *mcp.RequestMetaObject, setMeta func(*mcp.RequestMetaObject)) (json.RawMessage, error) {
	chain := s.client.chain
	if chain == nil {
		return s.send(ctx, id, method, params)
	}
	// The request gets its own _meta, for Meta to hand out: copied here,
	// not when Meta is called, so that setMeta is never kept (a kept
	// closure would escape, and cost every request an allocation even
	// without middleware).
	own := new(mcp.RequestMetaObject)
	if meta != nil {
		*own = *meta
		own.Extra = maps.Clone(own.Extra) // shared too: a write into it would reach every request
	}
	setMeta(own)
	req := &Request{Kind: KindRequest, Method: method, Params: params, Session: s, id: id, meta: own}
	if sc, ok := ctx.Value(roundKey{}).(*roundScope); ok && sc != nil {
		req.Call, req.Round = sc.call, sc.round
	}
	if rs, ok := ctx.Value(reinitKey{}).(reinitScope); ok {
		req.Reinitialization, req.Repeat = rs.r, rs.repeat
	}
	res, err := chain(ctx, req)
	if err != nil {
		return nil, err
	}
	raw, ok := res.(json.RawMessage)
	if !ok {
		return nil, fmt.Errorf("client: middleware answered %s with %T, not json.RawMessage", method, res)
	}
	return raw, nil
}

// roundScope tells the outgoing path which call and round a request is.
type roundScope struct {
	call  *Call
	round int
}

type roundKey struct{}

// withRound marks ctx as carrying round round of call, for the middleware;
// without middleware it returns ctx as it is.
func (s *Session) withRound(ctx context.Context, call *Call, round int) context.Context {
	if s.client.chain == nil {
		return ctx
	}
	return context.WithValue(ctx, roundKey{}, &roundScope{call: call, round: round})
}

// input answers one input request through the middleware, if any: p is
// the round that asked (nil for a legacy server's request).
func (s *Session) input(ctx context.Context, p *Pending, key string, r mcp.InputRequest) (mcp.InputResponse, error) {
	chain := s.client.chain
	if chain == nil {
		return s.client.answer(ctx, r)
	}
	req := &Request{Kind: KindInput, Method: r.Method(), Params: r, Key: key, Session: s}
	if p != nil {
		req.Call, req.Round = &p.Call, p.Round
	}
	res, err := chain(ctx, req)
	if err != nil {
		return nil, err
	}
	ans, ok := res.(mcp.InputResponse)
	if !ok || ans == nil {
		return nil, fmt.Errorf("middleware answered %s with %T, not an mcp.InputResponse", r.Method(), res)
	}
	return ans, nil
}

// run drives call to completion (runRounds) through the middleware, if
// any, as one KindCall request.
func (s *Session) run(ctx context.Context, call *Call) (mcp.AnyResult, error) {
	chain := s.client.chain
	if chain == nil {
		return s.runRounds(ctx, call)
	}
	req := &Request{Kind: KindCall, Method: call.Method, Call: call, Session: s}
	req.run = func(ctx context.Context) (mcp.AnyResult, error) { return s.runRounds(ctx, call) }
	res, err := chain(ctx, req)
	if err != nil {
		return nil, err
	}
	out, ok := res.(mcp.AnyResult)
	if !ok || out == nil {
		return nil, fmt.Errorf("client: middleware answered %s with %T, not an mcp.AnyResult", call.Method, res)
	}
	return out, nil
}

// TransportSessionID returns the session id the transport carries (the
// Mcp-Session-Id of a legacy Streamable HTTP session), or "" when it has
// none: what telemetry records as the session's id.
func (s *Session) TransportSessionID() string {
	if c, ok := s.tc.Conn.(interface{ SessionID() string }); ok {
		return c.SessionID()
	}
	return ""
}
