package client

import (
	"context"

	"github.com/parley-mcp/parley/mcp"
)

// RequestOptions change what the requests sent under one context declare
// and where their progress goes, for a caller that acts for several
// parties through one session: a bridge or a proxy forwards each of its
// host's requests with the host's own capabilities, log level and progress
// token, which Options fixes for the whole client. Attach them with
// [WithRequestOptions]; the zero value changes nothing.
type RequestOptions struct {
	// Capabilities, when not nil, are declared on these requests instead
	// of Options.Capabilities. Under 2026-07-28 only: a legacy session
	// declared its capabilities once, in initialize, and keeps them.
	Capabilities *mcp.ClientCapabilities
	// LogLevel, when set, asks for log messages of that level and above on
	// these requests instead of Options.LogLevel. Under 2026-07-28 only,
	// for the same reason (a legacy session's level is logging/setLevel's).
	LogLevel mcp.LoggingLevel
	// OnProgress, when set, gives each of these requests a progress token
	// of its own and receives the progress the server reports for it,
	// instead of Options.OnProgress. It runs on the connection's read loop
	// and has OnProgress's restrictions.
	OnProgress func(ctx context.Context, p *mcp.ProgressNotificationParams)
}

type requestOptionsKey struct{}

// WithRequestOptions returns a copy of ctx under which every request a
// Session sends follows o: the rounds of CallTool and Begin/Continue, the
// lists, Complete, CallMethod. A nil o removes any options ctx carried.
func WithRequestOptions(ctx context.Context, o *RequestOptions) context.Context {
	return context.WithValue(ctx, requestOptionsKey{}, o)
}

// requestOptionsFrom returns the options ctx carries, or nil.
func requestOptionsFrom(ctx context.Context) *RequestOptions {
	o, _ := ctx.Value(requestOptionsKey{}).(*RequestOptions)
	return o
}
