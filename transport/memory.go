package transport

import (
	"context"
	"io"
	"sync"
)

// NewMemoryPipe returns two connected in-memory connections: what one writes,
// the other reads, in order. Messages are handed over without copying, so a
// writer must not reuse a slice after Write (the Conn contract already says so).
//
// Closing either end makes the other end's Read return io.EOF once it has
// read what was already sent, and makes Writes on both ends fail.
func NewMemoryPipe() (Conn, Conn) {
	a := &memoryConn{in: make(chan []byte, memoryPipeBuffer), closed: make(chan struct{})}
	b := &memoryConn{in: make(chan []byte, memoryPipeBuffer), closed: make(chan struct{})}
	a.peer, b.peer = b, a
	return a, b
}

// MemoryTransport is a Transport over an in-memory pipe whose server end has
// already been handed to a server. It connects exactly once.
type MemoryTransport struct {
	once sync.Once
	conn Conn
}

// NewMemoryTransport returns a transport whose Connect yields conn.
func NewMemoryTransport(conn Conn) *MemoryTransport { return &MemoryTransport{conn: conn} }

// Connect returns the client end of the pipe. A second call fails.
func (t *MemoryTransport) Connect(ctx context.Context) (Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var c Conn
	t.once.Do(func() { c = t.conn })
	if c == nil {
		return nil, ErrClosed
	}
	return c, nil
}

// memoryPipeBuffer is how many messages each direction of a memory pipe holds
// before Write waits for the reader.
const memoryPipeBuffer = 16

type memoryConn struct {
	in        chan []byte // messages for this end to read
	closed    chan struct{}
	closeOnce sync.Once
	peer      *memoryConn
}

// Read returns the next message. Messages sent before the peer closed are
// still delivered; after that, Read returns io.EOF. After Close on this end,
// Read returns ErrClosed, even if messages were left unread. A context that
// has already ended wins over a message that is ready.
func (c *memoryConn) Read(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case <-c.closed:
		return nil, ErrClosed
	default:
	}
	select {
	case msg := <-c.in: // drain what was sent before any close
		return msg, nil
	default:
	}
	select {
	case msg := <-c.in:
		return msg, nil
	case <-c.closed:
		return nil, ErrClosed
	case <-c.peer.closed:
		// The peer closed, but it may have sent more before closing:
		// its Writes happen before its Close.
		select {
		case msg := <-c.in:
			return msg, nil
		default:
			return nil, io.EOF
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write hands msg to the peer, waiting while the peer's buffer is full. It
// fails with ErrClosed after Close on this end and with io.ErrClosedPipe once
// the peer has closed. A message is either delivered whole or not at all.
func (c *memoryConn) Write(ctx context.Context, msg []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if isClosed(c.closed) {
		return ErrClosed
	}
	if isClosed(c.peer.closed) {
		return io.ErrClosedPipe
	}
	// The peer's buffer has room nearly always. Single-case selects with a
	// default compile to plain non-blocking channel operations, whereas a
	// select on several channels locks them all: the two-case select here was
	// a twentieth of the CPU profile of an in-memory tools/call.
	select {
	case c.peer.in <- msg:
		return nil
	default:
	}
	select {
	case c.peer.in <- msg:
		return nil
	case <-c.closed:
		return ErrClosed
	case <-c.peer.closed:
		return io.ErrClosedPipe
	case <-ctx.Done():
		return ctx.Err()
	}
}

// isClosed reports whether ch, which is only ever closed, has been.
func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Close closes this end. It always returns nil.
func (c *memoryConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}
