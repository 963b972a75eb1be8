package transport

import "context"

// targetKey carries a request's target through the context of a Write.
type targetKey struct{}

// WithTarget returns a copy of ctx that tells the transport the target of
// the request written under it: what the request acts on, for a method
// the transport does not know by name (an extension's, such as the
// tasks extension's params.taskId). Streamable HTTP sends it as the
// Mcp-Name header, as it sends a tools/call's name; stream transports have
// no headers and ignore it. Package client sets it for client.CallMethod.
func WithTarget(ctx context.Context, target string) context.Context {
	return context.WithValue(ctx, targetKey{}, target)
}

// TargetFrom returns the target WithTarget put in ctx.
func TargetFrom(ctx context.Context) (target string, ok bool) {
	target, ok = ctx.Value(targetKey{}).(string)
	return target, ok
}
