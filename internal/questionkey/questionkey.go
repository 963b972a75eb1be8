// Package questionkey carries the key of a question a legacy server asks
// over its back-channel in the context of the request that asks it.
//
// A 2025-11-25 server-to-client request (elicitation/create,
// sampling/createMessage, roots/list) names no key on the wire: the
// protocol has none. server.Request.AskAll knows the key each request
// answers and puts it into the context the request is sent with, which
// reaches the transport's Write. Package mcptest, which owns both ends of
// an in-memory pipe, reads it there, so that a scripted answer by key
// works in both protocol generations. Nothing else reads it; nothing of
// it reaches the wire.
package questionkey

import "context"

type ctxKey struct{}

// With returns ctx carrying key.
func With(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, ctxKey{}, key)
}

// From returns the key ctx carries, if any.
func From(ctx context.Context) (string, bool) {
	key, ok := ctx.Value(ctxKey{}).(string)
	return key, ok
}
