package stdio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"sync"

	"github.com/parley-mcp/parley/transport"
)

// DefaultMaxMessageSize is the largest message Read accepts when no limit is
// configured: 4 MiB.
const DefaultMaxMessageSize = 4 << 20

// Options configures a connection made by [NewConn] or [ServerConn]. A nil
// *Options means defaults.
type Options struct {
	// MaxMessageSize is the largest message, in bytes, that Read accepts. It
	// counts the bytes of one line without its "\n" or "\r\n" terminator.
	// Longer lines are reported as a [*MessageTooLargeError] and skipped.
	// Zero or negative means [DefaultMaxMessageSize]. The limit does not apply
	// to Write: the peer enforces its own.
	MaxMessageSize int
}

// MessageTooLargeError is returned by Read for a line longer than the
// configured limit. It wraps [transport.ErrMessageTooLarge], so
// errors.Is(err, transport.ErrMessageTooLarge) holds. The line has been
// discarded and the connection remains usable: the next Read returns the next
// message.
type MessageTooLargeError struct {
	Limit int    // the configured MaxMessageSize
	Size  int    // the length of the discarded line, without its terminator
	Head  []byte // the line's first bytes (at most transport.MaxMessageHead)
}

// MessageHead returns the first bytes of the discarded line, from which
// the JSON-RPC layer reads its id (see transport.MessageHead).
func (e *MessageTooLargeError) MessageHead() []byte { return e.Head }

// Error describes the discarded line and the limit.
func (e *MessageTooLargeError) Error() string {
	return fmt.Sprintf("stdio: discarded a %d-byte message: over the %d-byte limit", e.Size, e.Limit)
}

// Unwrap returns [transport.ErrMessageTooLarge].
func (e *MessageTooLargeError) Unwrap() error { return transport.ErrMessageTooLarge }

// ErrInvalidMessage is wrapped by the error Write returns for a message that
// cannot be framed as one line: one containing a raw newline, ending in a
// carriage return, or blank (empty or only whitespace, which the reader would
// skip). Nothing is written in that case and the connection stays usable.
var ErrInvalidMessage = errors.New("stdio: message cannot be sent as one line")

// NewConn returns a [transport.Conn] that exchanges newline-delimited
// messages: it reads them from r and writes them to w. It works over any
// reliable byte stream, such as pipes, TCP or Unix-domain sockets.
//
// Read returns one message per line, without the trailing "\n" or "\r\n",
// skipping blank lines; a final line without a terminator is still returned
// before io.EOF. Other errors from r end the stream and are returned by every
// later Read. Read honours ctx: a cancelled Read loses nothing, the message it
// was waiting for goes to the next Read.
//
// Write sends msg followed by "\n". Concurrent Writes are serialized, so
// messages never interleave. ctx is honoured while a Write waits for its
// turn, but a write already passed to w runs to completion (or until Close).
// If w fails, the stream may hold a partial line, so that error is returned
// by every later Write.
//
// Close closes r and w if they implement [io.Closer] (once, when they are the
// same value, such as a net.Conn) and makes pending and later Reads and Writes
// return [transport.ErrClosed]. A Read or Write blocked inside r or w that
// closing cannot interrupt (say, a non-closable reader, or a terminal) keeps
// its goroutine until that call returns, after which it exits.
func NewConn(r io.Reader, w io.Writer, opts *Options) transport.Conn {
	c := newConn(r, w, opts, false)
	return c
}

// ServerConn returns a connection over the process's standard input and
// output, for a server launched by an MCP client: NewConn(os.Stdin,
// os.Stdout, opts). When its Read returns io.EOF the client has closed the
// server's stdin and the server should exit. Keep everything but MCP messages
// off stdout; log to stderr. Closing the connection closes os.Stdin and
// os.Stdout.
func ServerConn(opts *Options) transport.Conn {
	return NewConn(os.Stdin, os.Stdout, opts)
}

// readResult is one outcome of reading a line: a message, or a
// *MessageTooLargeError.
type readResult struct {
	msg []byte
	err error
}

// conn implements transport.Conn over a reader and a writer.
type conn struct {
	r     io.Reader
	w     io.Writer
	limit int
	// drain makes the read loop consume and discard input after Close
	// instead of returning, so a child process writing to us is not blocked
	// on a full pipe while it shuts down. The owner must then close r to end
	// the loop.
	drain bool

	closed    chan struct{} // closed by markClosed
	closeOnce sync.Once
	closeErr  error

	startRead sync.Once
	results   chan readResult // unbuffered: the loop hands over one result at a time
	readDone  chan struct{}   // closed when the read loop has returned
	readErr   error           // why the read loop returned; set before readDone closes

	wsem chan struct{} // one-slot semaphore serializing writes; guards wbuf, werr
	wbuf []byte
	werr error
}

func newConn(r io.Reader, w io.Writer, opts *Options, drain bool) *conn {
	limit := DefaultMaxMessageSize
	if opts != nil && opts.MaxMessageSize > 0 {
		limit = opts.MaxMessageSize
	}
	return &conn{
		r:        r,
		w:        w,
		limit:    limit,
		drain:    drain,
		closed:   make(chan struct{}),
		results:  make(chan readResult),
		readDone: make(chan struct{}),
		wsem:     make(chan struct{}, 1),
	}
}

func (c *conn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// markClosed makes Read and Write fail from now on without touching r or w.
func (c *conn) markClosed() {
	select {
	case <-c.closed:
	default:
		close(c.closed)
	}
}

func (c *conn) startReader() { c.startRead.Do(func() { go c.readLoop() }) }

// Read returns the next message. See NewConn.
func (c *conn) Read(ctx context.Context) ([]byte, error) {
	if c.isClosed() {
		return nil, transport.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.startReader()
	select {
	case res := <-c.results:
		return res.msg, res.err
	case <-c.readDone:
		if c.readErr == io.EOF {
			return nil, io.EOF
		}
		if c.isClosed() {
			// The reader failed because we closed it.
			return nil, transport.ErrClosed
		}
		return nil, c.readErr
	case <-c.closed:
		return nil, transport.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// readLoop reads lines until the reader fails, handing each message (or
// over-size report) to Read through c.results.
func (c *conn) readLoop() {
	defer close(c.readDone)
	size := 64 << 10
	if c.limit < size-2 {
		size = c.limit + 2 // room for a whole line and its "\r\n"
	}
	br := bufio.NewReaderSize(c.r, size)
	for {
		msg, n, head, err := readLine(br, c.limit)
		var res readResult
		switch {
		case n > c.limit:
			res.err = &MessageTooLargeError{Limit: c.limit, Size: n, Head: head}
		case n > 0 && !isBlank(msg):
			res.msg = msg
		}
		if res.msg != nil || res.err != nil {
			select {
			case c.results <- res:
			case <-c.closed:
				if c.drain && err == nil {
					_, err = io.Copy(io.Discard, br)
				}
				if err == nil {
					err = transport.ErrClosed
				}
				c.readErr = err
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				err = fmt.Errorf("stdio: read: %w", err)
			}
			c.readErr = err
			return
		}
	}
}

// readLine reads one line from br and returns it without its "\n" or "\r\n"
// terminator, together with its length n. A line longer than limit is
// discarded as it is read, so it never occupies more than about limit bytes:
// then n > limit, line is nil and head holds its first bytes (at most
// transport.MaxMessageHead). err is the reader's error (io.EOF at the end
// of the stream); a final line without a terminator comes with it.
func readLine(br *bufio.Reader, limit int) (line []byte, n int, head []byte, err error) {
	var (
		raw    int  // bytes of the line so far, excluding "\n"
		lastCR bool // whether the last of those bytes is '\r'
		over   bool // whether the line is known to be too long
	)
	for {
		chunk, rerr := br.ReadSlice('\n')
		end := len(chunk) > 0 && chunk[len(chunk)-1] == '\n'
		if end {
			chunk = chunk[:len(chunk)-1]
		}
		if len(chunk) > 0 {
			raw += len(chunk)
			lastCR = chunk[len(chunk)-1] == '\r'
			if raw < 0 { // overflow on a stream longer than maxInt
				raw = int(^uint(0) >> 1)
			}
		}
		switch {
		case over:
			// Past the limit, only the head is kept: enough to read the
			// message's id.
			head = append(head, chunk[:min(len(chunk), transport.MaxMessageHead-len(head))]...)
		case raw-1 > limit: // up to limit+1 bytes are kept: the extra one may be a '\r'
			head = append(make([]byte, 0, transport.MaxMessageHead), line[:min(len(line), transport.MaxMessageHead)]...)
			head = append(head, chunk[:min(len(chunk), transport.MaxMessageHead-len(head))]...)
			over, line = true, nil
		default:
			line = append(line, chunk...)
		}
		if end || (rerr != nil && rerr != bufio.ErrBufferFull) {
			if rerr == bufio.ErrBufferFull {
				rerr = nil
			}
			n = raw
			if lastCR {
				n--
				if line != nil {
					line = line[:len(line)-1]
				}
			}
			if n > limit {
				if head == nil {
					head = bytes.Clone(line[:min(len(line), transport.MaxMessageHead)])
				}
				line = nil
			}
			return line, n, head, rerr
		}
	}
}

// isBlank reports whether b holds only JSON whitespace.
func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// writeBufMax bounds the scratch buffer Write keeps between calls; larger
// messages are written in two calls instead of being copied.
const writeBufMax = 64 << 10

// Write sends msg as one line. See NewConn.
func (c *conn) Write(ctx context.Context, msg []byte) error {
	if i := bytes.IndexByte(msg, '\n'); i >= 0 {
		return fmt.Errorf("%w: raw newline at byte %d", ErrInvalidMessage, i)
	}
	if isBlank(msg) {
		return fmt.Errorf("%w: blank message", ErrInvalidMessage)
	}
	if msg[len(msg)-1] == '\r' {
		return fmt.Errorf("%w: trailing carriage return", ErrInvalidMessage)
	}
	if c.isClosed() {
		return transport.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case c.wsem <- struct{}{}:
	case <-c.closed:
		return transport.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-c.wsem }()
	if c.isClosed() {
		return transport.ErrClosed
	}
	if c.werr != nil {
		return c.werr
	}
	var err error
	if len(msg) < writeBufMax {
		buf := append(append(c.wbuf[:0], msg...), '\n')
		_, err = c.w.Write(buf)
		c.wbuf = buf[:0]
	} else {
		_, err = c.w.Write(msg)
		if err == nil {
			_, err = c.w.Write([]byte{'\n'})
		}
	}
	if err != nil {
		if c.isClosed() {
			return transport.ErrClosed
		}
		c.werr = fmt.Errorf("stdio: write: %w", err)
		return c.werr
	}
	return nil
}

// Close closes the connection and the reader and writer beneath it. See
// NewConn.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		c.markClosed()
		var errs []error
		if rc, ok := c.r.(io.Closer); ok {
			errs = append(errs, rc.Close())
		}
		if wc, ok := c.w.(io.Closer); ok && !same(c.r, c.w) {
			errs = append(errs, wc.Close())
		}
		for i, err := range errs {
			if errors.Is(err, os.ErrClosed) || errors.Is(err, net.ErrClosed) {
				errs[i] = nil
			}
		}
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}

// same reports whether r and w are the same value, without panicking on
// values of incomparable types.
func same(r io.Reader, w io.Writer) bool {
	if r == nil || w == nil {
		return false
	}
	vr, vw := reflect.ValueOf(r), reflect.ValueOf(w)
	if vr.Type() != vw.Type() || !vr.Comparable() || !vw.Comparable() {
		return false
	}
	return any(r) == any(w)
}
