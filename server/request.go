package server

import (
	"context"

	"github.com/parley-mcp/parley/jsonrpc"
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

	notify NotifyFunc
}

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
