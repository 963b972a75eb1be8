package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/parley-mcp/parley/jsonrpc/wire"
)

// panicError is a panic in user code, recovered.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v", e.value) }

// guardErr runs f and turns a panic in it into a *panicError.
func guardErr(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &panicError{value: v, stack: debug.Stack()}
		}
	}()
	return f()
}

// guard runs user code (a body, a completion function) for owner. A panic
// is logged with its stack and answered with a generic internal error, so
// that nothing of it reaches the client and the server keeps serving. The
// one exception is a question read without being declared: guard returns
// its *undeclaredError, whose message the caller sends.
func (s *Server) guard(ctx context.Context, owner string, f func() error) error {
	err := guardErr(f)
	if pe, ok := err.(*panicError); ok {
		if u := asUndeclared(pe); u != nil {
			logUndeclared(ctx, s.log, u, pe.stack)
			return u
		}
		s.log.LogAttrs(ctx, slog.LevelError, "mcpserver: handler panicked",
			slog.String("owner", owner), slog.Any("panic", pe.value), slog.String("stack", string(pe.stack)))
		return wire.Internal("")
	}
	return err
}
