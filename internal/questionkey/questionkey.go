// Package questionkey carries the key of a question a legacy server asks
// over its back-channel in the context of the request that asks it.
//
// A 2025-11-25 server-to-client request (elicitation/create,
// sampling/createMessage, roots/list) names no key on the wire: the
// protocol has none. server.Request.AskAll knows the key each request
// answers, and which requests it sends together, and puts both into the
// context the request is sent with, which reaches the transport's Write.
// Package mcptest, which owns both ends of an in-memory pipe, reads them
// there, so that a scripted answer by key works in both protocol
// generations and a transcript can order the questions of one round.
// Nothing else reads them; nothing of them reaches the wire.
package questionkey

import (
	"context"
	"sync/atomic"
)

// enabled is set by Enable: until a reader exists in the process,
// server.Request.AskAll adds nothing to the context, so that a program
// that never imports mcptest pays nothing for it (not even an
// allocation per question: the allocation budgets of legacy flows hold).
var enabled atomic.Bool

// Enable makes server.Request.AskAll carry question keys from now on, in
// the whole process. mcptest calls it when it connects a session.
func Enable() { enabled.Store(true) }

// Enabled reports whether Enable has been called.
func Enabled() bool { return enabled.Load() }

// Round stands for the requests one AskAll sends together; compare
// pointers.
type Round struct{ _ byte }

type ctxKey struct{}

type value struct {
	key   string
	round *Round
}

// With returns ctx carrying key, of round.
func With(ctx context.Context, key string, round *Round) context.Context {
	return context.WithValue(ctx, ctxKey{}, value{key, round})
}

// From returns the key ctx carries and its round, if any.
func From(ctx context.Context) (key string, round *Round, ok bool) {
	v, ok := ctx.Value(ctxKey{}).(value)
	return v.key, v.round, ok
}
