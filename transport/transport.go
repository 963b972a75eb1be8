// Package transport defines how Parley moves JSON-RPC messages between a
// client and a server, and provides the in-memory transport.
//
// A transport deals in whole messages, not bytes: each Read returns exactly one
// JSON-RPC message and each Write sends exactly one. Framing (newlines on
// stdio, HTTP bodies and SSE events on Streamable HTTP) is the transport's
// business; parsing and dispatch belong to package jsonrpc.
//
// Stream transports (in-memory, stdio) implement [Conn]. Streamable HTTP is
// request-scoped rather than a stream and lives in its own package.
package transport

import (
	"context"
	"errors"
)

// Conn is a bidirectional stream of JSON-RPC messages.
//
// Read and Write may be called concurrently with each other; concurrent calls
// to Write are allowed and each message is delivered whole. Close unblocks
// pending Reads and Writes, which then return an error wrapping ErrClosed
// (or io.EOF when the peer closed its side first).
type Conn interface {
	// Read returns the next message. The caller owns the returned slice.
	// Read returns io.EOF once the peer has closed and every message it sent
	// has been read. An error wrapping ErrMessageTooLarge is not fatal: the
	// oversized message was discarded and the next Read continues with the
	// message after it. Neither is a *CallError, which fails one request
	// (see CallError). Any other error ends the stream.
	Read(ctx context.Context) ([]byte, error)
	// Write sends one message. The Conn takes ownership of msg: the caller
	// must not modify it afterwards.
	Write(ctx context.Context, msg []byte) error
	// Close closes the connection. It is safe to call more than once.
	Close() error
}

// Transport opens a client-side connection to a server.
type Transport interface {
	Connect(ctx context.Context) (Conn, error)
}

// ErrClosed is returned by operations on a connection closed on this side.
var ErrClosed = errors.New("transport: connection closed")

// ErrMessageTooLarge is wrapped by errors about a message over a configured
// size limit.
var ErrMessageTooLarge = errors.New("transport: message too large")

// MessageHead is implemented by an error about an oversized message that
// kept the message's first bytes (at most MaxMessageHead of them), so that
// the reader can tell which request or response it was and fail just that
// one instead of leaving it to wait.
type MessageHead interface {
	MessageHead() []byte
}

// MaxMessageHead is how many leading bytes of an oversized message a
// transport keeps for [MessageHead].
const MaxMessageHead = 1024
