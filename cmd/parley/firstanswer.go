package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/transport"
)

// defaultConnectTimeout is how long parley waits for a stdio server's
// first answer before it says what is likely wrong.
const defaultConnectTimeout = 10 * time.Second

// noFirstAnswerError is a stdio server that did not answer the session's
// first request in time: most often a program that is not an MCP server
// on stdio at all (one that serves HTTP, or waits for something else).
type noFirstAnswerError struct{ after time.Duration }

func (e *noFirstAnswerError) Error() string {
	return fmt.Sprintf("the server has not answered in %v; a stdio server must speak JSON-RPC on its standard output (--connect-timeout sets the wait)", e.after)
}

// errNoFirstAnswer is the cause of the connect context's end when the
// deadline passed.
var errNoFirstAnswer = errors.New("no first answer")

// connect opens the session over t. A server run over stdio gets
// --connect-timeout for its first answer; a URL gets no such deadline,
// since connecting to it may include a login in the browser, which takes
// the person's time.
func (a *app) connect(ctx context.Context, c *client.Client, t transport.Transport) (*client.Session, error) {
	d := a.opts.connectTimeout
	if a.opts.url != "" || d <= 0 {
		return c.Connect(ctx, t)
	}
	cctx, cancel := context.WithTimeoutCause(ctx, d, errNoFirstAnswer)
	defer cancel()
	sess, err := c.Connect(cctx, t)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(cctx), errNoFirstAnswer) {
		return nil, &noFirstAnswerError{after: d}
	}
	return sess, err
}
