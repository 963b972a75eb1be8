package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// ServeConn serves one stream connection (stdio, in-memory, a socket) until
// the peer closes it or ctx ends, and returns nil after a clean close by the
// peer. Requests on the connection are served concurrently.
func (s *Server) ServeConn(ctx context.Context, t transport.Conn) error {
	var conn *jsonrpc.Conn
	ready := make(chan struct{}) // conn is set: the read loop starts before NewConn returns
	notify := func(ctx context.Context, method string, params any) error {
		<-ready
		return conn.Notify(ctx, method, params)
	}
	conn = jsonrpc.NewConn(t, &jsonrpc.ConnOptions{
		Logger: s.log,
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			res, err := s.Handle(ctx, req, notify)
			if err != nil || res == nil {
				return res, err
			}
			// Encoded here, where mcp's encoders are known, rather than by
			// the connection through encoding/json: one allocation fewer.
			raw, err := mcp.Marshal(res)
			if err != nil {
				s.log.Error("server: encoding a result", "method", req.Method, "err", err)
				return nil, internalError()
			}
			return json.RawMessage(raw), nil
		}),
	})
	close(ready)
	select {
	case <-conn.Done():
	case <-ctx.Done():
		conn.Close()
		return ctx.Err()
	}
	if err := conn.Err(); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, jsonrpc.ErrConnClosed) {
		return err
	}
	return nil
}
