package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// MethodOptions configure one [CallMethod]. A nil *MethodOptions means none.
type MethodOptions struct {
	// Target is what the request acts on, when its method names one (the
	// tasks extension's task id, say): Streamable HTTP sends it in the
	// Mcp-Name header, which the server holds to the params member the
	// method declared.
	Target string
}

// CallMethod sends a request for method, one the SDK does not define (an
// extension's, such as "tasks/get"), with params, and decodes the result
// into a new R. The request is stamped as every request of the session is
// (protocol version and the client's capabilities in _meta, or the legacy
// session's framing), and its errors are the session's: a *jsonrpc.Error
// from the server, a timeout, a closed connection. params is copied, not
// written; its _meta is replaced by the session's. opts may be nil.
//
// The client's capabilities must declare the extension the method belongs
// to (Options.Extensions), or a server requiring it answers -32021.
func CallMethod[R any, P any, PP interface {
	*P
	mcp.AnyRequestParams
}](ctx context.Context, s *Session, method string, params PP, opts *MethodOptions) (*R, error) {
	if params == nil {
		return nil, fmt.Errorf("client: CallMethod(%q) needs params", method)
	}
	if method == "" {
		return nil, errors.New("client: CallMethod needs a method")
	}
	c := *params
	if opts != nil && opts.Target != "" {
		ctx = transport.WithTarget(ctx, opts.Target)
	}
	raw, err := s.call(ctx, method, PP(&c), func(m *mcp.RequestMetaObject) {
		if m == nil {
			// A legacy session's request without a progress token has
			// no _meta of the session's.
			m = new(mcp.RequestMetaObject)
		}
		*PP(&c).RequestMeta() = *m
	})
	if err != nil {
		return nil, err
	}
	r := new(R)
	if err := json.Unmarshal(raw, r); err != nil {
		return nil, fmt.Errorf("client: decoding the %s result: %w", method, err)
	}
	return r, nil
}

// ServerExtension reports whether the server declared the extension id in
// its capabilities, and with which settings (raw JSON, {} when it has
// none). It knows only what the session has learned: a 2026-07-28 session
// learns the capabilities from server/discover, a legacy one from
// initialize.
func (s *Session) ServerExtension(id string) (settings json.RawMessage, ok bool) {
	caps := s.ServerCapabilities()
	if caps == nil {
		return nil, false
	}
	settings, ok = caps.Extensions[id]
	return settings, ok
}
