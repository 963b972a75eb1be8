package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/parley-mcp/parley/internal/jsontext"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
)

// method describes how the server decodes and serves one method.
type method struct {
	// newParams decodes raw params into a fresh params value and returns it
	// with its _meta.
	decode func(raw json.RawMessage) (any, *mcp.RequestMetaObject, error)
	// carrier marks the methods that may answer with an InputRequiredResult.
	carrier bool
}

// decoder builds the decode function of a params type.
func decoder[P any, PP interface {
	*P
	mcp.AnyRequestParams
}]() func(json.RawMessage) (any, *mcp.RequestMetaObject, error) {
	return func(raw json.RawMessage) (any, *mcp.RequestMetaObject, error) {
		p := PP(new(P))
		if err := mcp.UnmarshalParams(raw, p); err != nil {
			return nil, nil, err
		}
		return p, p.RequestMeta(), nil
	}
}

// methods lists every request method of protocol version 2026-07-28. A
// method not in this table (including every method the version removed) is
// answered with -32601.
var methods = map[string]*method{
	mcp.MethodDiscover:              {decode: decoder[mcp.RequestParams]()},
	mcp.MethodListTools:             {decode: decoder[mcp.PaginatedRequestParams]()},
	mcp.MethodCallTool:              {decode: decoder[mcp.CallToolRequestParams](), carrier: true},
	mcp.MethodListPrompts:           {decode: decoder[mcp.PaginatedRequestParams]()},
	mcp.MethodGetPrompt:             {decode: decoder[mcp.GetPromptRequestParams](), carrier: true},
	mcp.MethodListResources:         {decode: decoder[mcp.PaginatedRequestParams]()},
	mcp.MethodListResourceTemplates: {decode: decoder[mcp.PaginatedRequestParams]()},
	mcp.MethodReadResource:          {decode: decoder[mcp.ReadResourceRequestParams](), carrier: true},
	mcp.MethodComplete:              {decode: decoder[mcp.CompleteRequestParams]()},
	mcp.MethodSubscriptionsListen:   {decode: decoder[mcp.SubscriptionsListenRequestParams]()},
}

// Handle serves one message: a request's result (to be sent as the
// response's result) or an error (an *jsonrpc.Error to send as it is). For
// a notification it returns (nil, nil). notify carries the notifications the
// request emits; it may be nil when the transport has nowhere to send them.
//
// Stream transports call Handle through ServeConn; the Streamable HTTP
// handler calls it once per POST.
func (s *Server) Handle(ctx context.Context, msg *jsonrpc.Request, notify NotifyFunc) (any, error) {
	if msg.IsNotification() {
		s.handleNotification(ctx, msg)
		return nil, nil
	}
	req, err := s.Prepare(msg)
	if err != nil {
		return nil, err
	}
	req.notify = notify
	return s.Serve(ctx, req)
}

// Prepare decodes and checks a request without serving it: the method must
// exist, its params must decode, and its _meta must carry a supported
// protocol version and client capabilities. The error is always an
// *jsonrpc.Error. Transports that must look at a request before serving it
// (Streamable HTTP validates headers against the body) call Prepare and then
// Serve.
func (s *Server) Prepare(msg *jsonrpc.Request) (*Request, error) {
	m := methods[msg.Method]
	if m == nil {
		if e := s.extension(msg.Method); e != nil {
			return s.prepareExtension(e, msg)
		}
		if msg.Method == mcp.MethodInitialize {
			// A legacy client starts with initialize, which transports
			// send to Server.Initialize; one that reaches here came with
			// the 2026-07-28 envelope, or to a server without legacy
			// versions. Tell it, in words, what this server speaks.
			return nil, s.noHandshake()
		}
		return nil, methodNotFound(msg.Method)
	}
	if len(msg.Params) == 0 {
		return nil, missingMeta(mcp.MetaKeyProtocolVersion)
	}
	params, meta, err := m.decode(msg.Params)
	if err != nil {
		if m.carrier && badRequestState(msg.Params) {
			// Whatever else is wrong, an unusable requestState gets the
			// one answer every unusable requestState gets, so that its
			// wording never depends on which check caught it.
			return nil, mcp.NewInvalidRequestStateError()
		}
		return nil, wire.InvalidParams("Invalid params: %s", cleanJSONError(err))
	}
	if err := s.checkMeta(meta); err != nil {
		return nil, err
	}
	return &Request{ID: msg.ID, Method: msg.Method, Params: params, Meta: meta}, nil
}

// prepareExtension is Prepare for an extension method: the same checks,
// and the client's declaration of the method's extension.
func (s *Server) prepareExtension(e *extMethod, msg *jsonrpc.Request) (*Request, error) {
	if len(msg.Params) == 0 {
		return nil, missingMeta(mcp.MetaKeyProtocolVersion)
	}
	params, meta, target, err := e.prepare(msg.Params)
	if err != nil {
		return nil, err
	}
	if err := s.checkMeta(meta); err != nil {
		return nil, err
	}
	if err := requireExtension(e, meta.ClientCapabilities); err != nil {
		return nil, err
	}
	return &Request{ID: msg.ID, Method: msg.Method, Params: params, Meta: meta, target: target, targetMember: e.opts.Target}, nil
}

// SetNotify sets where the request's notifications go.
func (r *Request) SetNotify(notify NotifyFunc) { r.notify = notify }

// Serve runs a prepared request through the middleware and its handler and
// returns the stamped result, or an *jsonrpc.Error.
func (s *Server) Serve(ctx context.Context, req *Request) (any, error) {
	s.mu.RLock()
	chain := s.chain
	s.mu.RUnlock()
	ctx = req.bind(ctx) // for RequestFromContext
	res, err := chain(ctx, req)
	if err != nil {
		return nil, s.wireError(req, err)
	}
	if res == nil || reflect.ValueOf(res).IsNil() {
		s.log.Error("server: handler returned neither a result nor an error", "method", req.Method)
		return nil, wire.Internal("")
	}
	if ir, ok := res.(*mcp.InputRequiredResult); ok {
		if req.session != nil && s.opts.Bridge != nil {
			if res, err = s.bridge(ctx, chain, req, ir); err != nil {
				return nil, err
			}
		} else if err := s.checkInputRequired(req, ir); err != nil {
			return nil, err
		}
	}
	return s.stamp(req, res), nil
}

// checkMeta enforces the per-request _meta rules of 2026-07-28.
func (s *Server) checkMeta(meta *mcp.RequestMetaObject) error {
	if meta == nil || meta.ProtocolVersion == "" {
		return missingMeta(mcp.MetaKeyProtocolVersion)
	}
	if !s.supports(meta.ProtocolVersion) || meta.ProtocolVersion.Era() != mcp.EraModern {
		// A legacy version cannot ride on a request without a
		// handshake; data lists every supported version, so that a
		// client learns it may initialize instead.
		e := mcp.NewUnsupportedProtocolVersionError(meta.ProtocolVersion, s.opts.SupportedVersions)
		if s.supports(meta.ProtocolVersion) {
			e.Message += "; legacy versions are served after initialize, on requests without the _meta envelope"
		}
		return e
	}
	if meta.ClientCapabilities == nil {
		return missingMeta(mcp.MetaKeyClientCapabilities)
	}
	return nil
}

// route sends a checked request to its slot. It is the innermost Handler.
func (s *Server) route(ctx context.Context, req *Request) (mcp.AnyResult, error) {
	s.mu.RLock()
	hs := s.handlers
	s.mu.RUnlock()
	switch p := req.Params.(type) {
	case *mcp.CallToolRequestParams:
		if hs.callTool != nil {
			return outcome(hs.callTool(ctx, req, p))
		}
	case *mcp.GetPromptRequestParams:
		if hs.getPrompt != nil {
			return outcome(hs.getPrompt(ctx, req, p))
		}
	case *mcp.ReadResourceRequestParams:
		if hs.readResource != nil {
			return outcome(hs.readResource(ctx, req, p))
		}
	case *mcp.CompleteRequestParams:
		if hs.complete != nil {
			return result(hs.complete(ctx, req, p))
		}
	case *mcp.SubscriptionsListenRequestParams:
		return s.listen(ctx, req, p)
	case *mcp.RequestParams: // server/discover
		return s.discover(), nil
	case *mcp.PaginatedRequestParams:
		switch req.Method {
		case mcp.MethodListTools:
			if hs.listTools != nil {
				return result(hs.listTools(ctx, req, p))
			}
		case mcp.MethodListPrompts:
			if hs.listPrompts != nil {
				return result(hs.listPrompts(ctx, req, p))
			}
		case mcp.MethodListResources:
			if hs.listResources != nil {
				return result(hs.listResources(ctx, req, p))
			}
		case mcp.MethodListResourceTemplates:
			if hs.listResourceTemplates != nil {
				return result(hs.listResourceTemplates(ctx, req, p))
			}
		}
	}
	if e := s.extension(req.Method); e != nil {
		return e.handler(ctx, req)
	}
	// A method whose slot is empty is a capability the server did not
	// declare: the protocol answers that with method-not-found.
	return nil, methodNotFound(req.Method)
}

// result adapts a typed handler's return values, keeping a typed nil from
// becoming a non-nil interface.
func result[R mcp.AnyResult](r R, err error) (mcp.AnyResult, error) {
	if err != nil {
		return nil, err
	}
	return r, nil
}

// outcome adapts a carrier's union result.
func outcome[O any](o O, err error) (mcp.AnyResult, error) {
	if err != nil {
		return nil, err
	}
	r, _ := any(o).(mcp.AnyResult)
	return r, nil
}

// stamp returns a shallow copy of res with the fields every result of this
// server carries: resultType, serverInfo and, on cacheable results, the
// caching hints. It copies so that a handler may return a shared value (a
// static tool list, say) without the server writing into it.
//
// A legacy session's result carries none of them, nor anything else of
// 2026-07-28 that its handler set: it goes out through mcp.LegacyResult,
// which writes nothing into res either. The session's initialize said who
// the server is.
func (s *Server) stamp(req *Request, res mcp.AnyResult) mcp.AnyResult {
	if req.session != nil {
		return mcp.LegacyResult(res)
	}
	if r, ok := res.(*mcp.CallToolResult); ok {
		// The result of nearly every request: copied without reflection.
		if r != nil {
			c := *r
			res = &c
		}
	} else if v := reflect.ValueOf(res); v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct {
		c := reflect.New(v.Elem().Type())
		c.Elem().Set(v.Elem())
		res = c.Interface().(mcp.AnyResult)
	}
	h := res.ResultHeader()
	if _, ok := res.(*mcp.InputRequiredResult); ok {
		h.ResultType = mcp.ResultTypeInputRequired
	} else if h.ResultType == "" {
		h.ResultType = mcp.ResultTypeComplete
	}
	switch {
	case h.Meta == nil:
		h.Meta = s.resultMeta // shared and never written
	case h.Meta.ServerInfo == nil:
		meta := *h.Meta
		meta.ServerInfo = &s.info
		h.Meta = &meta
	}
	if c, ok := res.(interface{ CacheHeader() *mcp.CacheableResult }); ok {
		if ch := c.CacheHeader(); ch.CacheScope == "" {
			ch.CacheScope = s.opts.CacheScope
			if ch.TTLMs == 0 {
				ch.TTLMs = s.opts.ListTTL.Milliseconds()
			}
		}
	}
	return res
}

// wireError turns a handler's error into what goes on the wire. A
// *jsonrpc.Error (wrapped or not) is sent as it is; anything else is an
// internal error whose detail is logged, not sent, since it may hold
// whatever the handler's dependencies put in it.
func (s *Server) wireError(req *Request, err error) error {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return rpcErr
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return wire.Internal("Request cancelled")
	}
	s.log.Error("server: handler failed", "method", req.Method, "err", err)
	return wire.Internal("")
}

func (s *Server) handleNotification(ctx context.Context, msg *jsonrpc.Request) {
	// notifications/cancelled is obeyed by the connection. The core defines
	// no other client notification in 2026-07-28; unknown ones are ignored,
	// as JSON-RPC requires.
	if msg.Method != jsonrpc.CancelMethod {
		s.log.Debug("server: ignoring notification", "method", msg.Method)
	}
}

func methodNotFound(name string) *jsonrpc.Error {
	return wire.MethodNotFound("Method not found: %s", name)
}

func missingMeta(key string) *jsonrpc.Error {
	return wire.InvalidParams("Invalid params: missing required _meta key %q", key)
}

func joinVersions(vs []mcp.ProtocolVersion) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = string(v)
	}
	return strings.Join(parts, ", ")
}

// cleanJSONError keeps a decode error's message short and free of Go type
// names, which mean nothing to a client.
func cleanJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("field %q has the wrong type (got %s)", te.Field, te.Value)
		}
		return "params have the wrong type (got " + te.Value + ")"
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "malformed JSON"
	}
	return strings.TrimPrefix(err.Error(), "mcp: ")
}

// badRequestState reports whether params (valid JSON: the message decoded)
// carry a requestState that is neither a string nor null. It runs only
// when decoding the params failed.
func badRequestState(params []byte) bool {
	bad := false
	jsontext.Members(params, func(key, value []byte) {
		if string(key) == "requestState" {
			bad = value[0] != '"' && string(value) != "null"
		}
	})
	return bad
}
