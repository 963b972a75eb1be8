package stdio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/parley-mcp/parley/transport"
)

// failAfter bounds waits for things that should happen promptly. It is a
// hang detector, not a timing assertion.
const failAfter = 10 * time.Second

func background() context.Context { return context.Background() }

// pipePair returns two connections joined by io.Pipes.
func pipePair(opts *Options) (a, b transport.Conn) {
	r1, w1 := io.Pipe()
	r2, w2 := io.Pipe()
	return NewConn(r1, w2, opts), NewConn(r2, w1, opts)
}

func mustRead(t *testing.T, c transport.Conn) string {
	t.Helper()
	msg, err := c.Read(background())
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return string(msg)
}

func TestConnRoundTrip(t *testing.T) {
	a, b := pipePair(nil)
	defer a.Close()
	defer b.Close()
	msgs := []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"a":"é ✓"}`, `[1,2,3]`}
	errc := make(chan error, 1)
	go func() {
		for _, m := range msgs {
			if err := a.Write(background(), []byte(m)); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	for _, want := range msgs {
		if got := mustRead(t, b); got != want {
			t.Errorf("Read = %q, want %q", got, want)
		}
	}
	if err := <-errc; err != nil {
		t.Fatalf("Write: %v", err)
	}
	// Closing one end is EOF for the other.
	a.Close()
	if _, err := b.Read(background()); err != io.EOF {
		t.Fatalf("Read after peer Close = %v, want io.EOF", err)
	}
}

// readAll reads until a terminal error, rendering over-size errors as
// "TOOLARGE(size)".
func readAll(t *testing.T, c transport.Conn) ([]string, error) {
	t.Helper()
	var got []string
	for i := 0; ; i++ {
		if i > 100000 {
			t.Fatal("Read never ends")
		}
		msg, err := c.Read(background())
		var tl *MessageTooLargeError
		switch {
		case errors.As(err, &tl):
			if !errors.Is(err, transport.ErrMessageTooLarge) {
				t.Fatalf("%v does not wrap ErrMessageTooLarge", err)
			}
			got = append(got, fmt.Sprintf("TOOLARGE(%d)", tl.Size))
		case err != nil:
			return got, err
		default:
			got = append(got, string(msg))
		}
	}
}

func TestConnFraming(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"lf", "a\nb\n", []string{"a", "b"}},
		{"crlf", "a\r\nb\r\n", []string{"a", "b"}},
		{"blank lines", "\n\na\n\r\n \t \nb\n\n", []string{"a", "b"}},
		{"final unterminated", "a\nb", []string{"a", "b"}},
		{"final unterminated crlf", "a\nb\r", []string{"a", "b"}},
		{"only one cr stripped", "a\r\r\nb\n", []string{"a\r", "b"}},
		{"inner cr kept", "a\rb\n", []string{"a\rb"}},
		{"inner spaces kept", " {\"a\": 1} \n", []string{` {"a": 1} `}},
		{"empty", "", nil},
		{"only blanks", "\n\r\n  \n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, oneByte := range []bool{false, true} {
				var r io.Reader = strings.NewReader(tt.in)
				if oneByte {
					r = iotest.OneByteReader(r)
				}
				c := NewConn(r, io.Discard, nil)
				got, err := readAll(t, c)
				if err != io.EOF {
					t.Fatalf("final error = %v, want io.EOF", err)
				}
				if fmt.Sprint(got) != fmt.Sprint(tt.want) || len(got) != len(tt.want) {
					t.Fatalf("messages = %q, want %q", got, tt.want)
				}
				// EOF is sticky.
				if _, err := c.Read(background()); err != io.EOF {
					t.Fatalf("second Read at end = %v, want io.EOF", err)
				}
				c.Close()
			}
		})
	}
}

func TestConnTooLarge(t *testing.T) {
	const limit = 16
	x := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name, in string
		want     []string
	}{
		{"at limit", x(16) + "\n", []string{x(16)}},
		{"at limit crlf", x(16) + "\r\n", []string{x(16)}},
		{"one over", x(17) + "\nok\n", []string{"TOOLARGE(17)", "ok"}},
		{"one over crlf", x(17) + "\r\nok\n", []string{"TOOLARGE(17)", "ok"}},
		{"between messages", "a\n" + x(100) + "\nb\n", []string{"a", "TOOLARGE(100)", "b"}},
		{"two in a row", x(40) + "\n" + x(50) + "\nb\n", []string{"TOOLARGE(40)", "TOOLARGE(50)", "b"}},
		{"final unterminated", "a\n" + x(30), []string{"a", "TOOLARGE(30)"}},
		{"blank but long", x(0) + strings.Repeat(" ", 20) + "\nb\n", []string{"TOOLARGE(20)", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, oneByte := range []bool{false, true} {
				var r io.Reader = strings.NewReader(tt.in)
				if oneByte {
					r = iotest.OneByteReader(r)
				}
				c := NewConn(r, io.Discard, &Options{MaxMessageSize: limit})
				got, err := readAll(t, c)
				if err != io.EOF {
					t.Fatalf("final error = %v, want io.EOF", err)
				}
				if fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Fatalf("messages = %q, want %q", got, tt.want)
				}
			}
		})
	}
}

func TestConnTooLargeErrorText(t *testing.T) {
	c := NewConn(strings.NewReader(strings.Repeat("x", 11)+"\n"), io.Discard, &Options{MaxMessageSize: 10})
	_, err := c.Read(background())
	var tl *MessageTooLargeError
	if !errors.As(err, &tl) || tl.Limit != 10 || tl.Size != 11 {
		t.Fatalf("Read error = %#v, want MessageTooLargeError{10, 11}", err)
	}
	if !strings.Contains(err.Error(), "10") {
		t.Errorf("error %q does not name the limit", err)
	}
}

func TestConnDefaultLimit(t *testing.T) {
	big := strings.Repeat("y", DefaultMaxMessageSize)
	in := big + "\n" + big + "y\nz\n"
	got, err := readAll(t, NewConn(strings.NewReader(in), io.Discard, nil))
	if err != io.EOF {
		t.Fatalf("final error = %v", err)
	}
	if len(got) != 3 || got[0] != big || got[1] != fmt.Sprintf("TOOLARGE(%d)", DefaultMaxMessageSize+1) || got[2] != "z" {
		t.Fatalf("unexpected messages (lengths %d)", len(got))
	}
}

// longLineReader yields a line of n 'x' bytes, then tail, without holding the
// line in memory.
type longLineReader struct {
	n    int
	tail *strings.Reader
}

func (r *longLineReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return r.tail.Read(p)
	}
	k := min(len(p), r.n)
	for i := range k {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}

func TestConnTooLargeNotBuffered(t *testing.T) {
	const lineLen = 64 << 20
	r := &longLineReader{n: lineLen, tail: strings.NewReader("\n{\"next\":1}\n")}
	c := NewConn(r, io.Discard, &Options{MaxMessageSize: 1 << 10})
	defer c.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := c.Read(background())
	runtime.ReadMemStats(&after)
	var tl *MessageTooLargeError
	if !errors.As(err, &tl) || tl.Size != lineLen {
		t.Fatalf("Read = %v, want a MessageTooLargeError of size %d", err, lineLen)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("reading a discarded %d-byte line allocated %d bytes", lineLen, alloc)
	}
	if got := mustRead(t, c); got != `{"next":1}` {
		t.Fatalf("Read after over-size line = %q", got)
	}
}

func TestConnReadError(t *testing.T) {
	boom := errors.New("boom")
	c := NewConn(io.MultiReader(strings.NewReader("a\nb"), iotest.ErrReader(boom)), io.Discard, nil)
	if got := mustRead(t, c); got != "a" {
		t.Fatalf("Read = %q", got)
	}
	if got := mustRead(t, c); got != "b" {
		t.Fatalf("Read = %q", got)
	}
	for range 2 {
		if _, err := c.Read(background()); !errors.Is(err, boom) {
			t.Fatalf("Read = %v, want %v", err, boom)
		}
	}
}

func TestConnWriteFraming(t *testing.T) {
	var buf bytes.Buffer
	c := NewConn(strings.NewReader(""), &buf, nil)
	big := `"` + strings.Repeat("b", writeBufMax) + `"`
	for _, m := range []string{`{"a":1}`, big, `{"b":2}`} {
		if err := c.Write(background(), []byte(m)); err != nil {
			t.Fatalf("Write: %v", err)
		}
	}
	if want := `{"a":1}` + "\n" + big + "\n" + `{"b":2}` + "\n"; buf.String() != want {
		t.Fatalf("wrote %.80q..., want %.80q...", buf.String(), want)
	}
}

func TestConnWriteInvalid(t *testing.T) {
	var buf bytes.Buffer
	c := NewConn(strings.NewReader(""), &buf, nil)
	for _, m := range []string{"{\"a\":\n1}", "\n", "{}\n", "", "  ", "{}\r"} {
		err := c.Write(background(), []byte(m))
		if !errors.Is(err, ErrInvalidMessage) {
			t.Errorf("Write(%q) = %v, want ErrInvalidMessage", m, err)
		}
	}
	if buf.Len() != 0 {
		t.Fatalf("rejected messages wrote %q", buf.String())
	}
	if err := c.Write(background(), []byte(`{"ok":true}`)); err != nil {
		t.Fatalf("Write after rejection: %v", err)
	}
	if buf.String() != "{\"ok\":true}\n" {
		t.Fatalf("wrote %q", buf.String())
	}
}

// unsyncWriter records writes with no locking of its own, so that -race
// catches unserialized Writes.
type unsyncWriter struct {
	buf    []byte
	writes int
}

func (w *unsyncWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	w.writes++
	return len(p), nil
}

func TestConnConcurrentWrites(t *testing.T) {
	w := &unsyncWriter{}
	c := NewConn(strings.NewReader(""), w, nil)
	const writers, each = 16, 100
	want := map[string]bool{}
	var wg sync.WaitGroup
	for g := range writers {
		var msgs [][]byte
		for i := range each {
			pad := strings.Repeat("p", (g*each+i)%300)
			if i == 0 && g%4 == 0 {
				pad = strings.Repeat("P", writeBufMax+g) // the two-call path
			}
			m := fmt.Sprintf(`{"g":%d,"i":%d,"pad":%q}`, g, i, pad)
			want[m] = true
			msgs = append(msgs, []byte(m))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, m := range msgs {
				if err := c.Write(background(), m); err != nil {
					t.Errorf("Write: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(string(w.buf), "\n")
	if lines[len(lines)-1] != "" {
		t.Fatalf("output does not end with a newline")
	}
	lines = lines[:len(lines)-1]
	if len(lines) != writers*each {
		t.Fatalf("got %d lines, want %d", len(lines), writers*each)
	}
	for _, l := range lines {
		if !want[l] {
			t.Fatalf("interleaved or unknown line %.100q", l)
		}
		delete(want, l)
	}
}

func TestConnReadCancel(t *testing.T) {
	r, w := io.Pipe()
	c := NewConn(r, io.Discard, nil)
	defer c.Close()

	ctx, cancel := context.WithCancel(background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Read(ctx)
		errc <- err
	}()
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled Read = %v, want context.Canceled", err)
		}
	case <-time.After(failAfter):
		t.Fatal("Read ignores cancellation")
	}

	ctx, cancel = context.WithTimeout(background(), 20*time.Millisecond)
	defer cancel()
	if _, err := c.Read(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Read past deadline = %v", err)
	}

	// Nothing was lost: the message arriving now goes to the next Read.
	go w.Write([]byte("{\"after\":1}\n"))
	if got := mustRead(t, c); got != `{"after":1}` {
		t.Fatalf("Read = %q", got)
	}
}

func TestConnCloseUnblocksRead(t *testing.T) {
	r, _ := io.Pipe()
	c := NewConn(r, io.Discard, nil)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Read(background())
		errc <- err
	}()
	// Make sure the reader goroutine is running and blocked.
	c.(*conn).startReader()
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, transport.ErrClosed) {
			t.Fatalf("Read after Close = %v, want ErrClosed", err)
		}
	case <-time.After(failAfter):
		t.Fatal("Close did not unblock Read")
	}
	select {
	case <-c.(*conn).readDone:
	case <-time.After(failAfter):
		t.Fatal("read goroutine still running after Close")
	}
	if _, err := c.Read(background()); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("Read on closed conn = %v", err)
	}
	if err := c.Write(background(), []byte("{}")); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("Write on closed conn = %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestConnCloseWithPendingMessage(t *testing.T) {
	// The read goroutine holds a message nobody takes; Close must still end it.
	c := NewConn(strings.NewReader("a\nb\n"), io.Discard, nil)
	c.(*conn).startReader()
	c.Close()
	select {
	case <-c.(*conn).readDone:
	case <-time.After(failAfter):
		t.Fatal("read goroutine still running after Close")
	}
}

func TestConnCloseUnblocksWrite(t *testing.T) {
	_, w := io.Pipe() // nobody reads: Write blocks
	c := NewConn(strings.NewReader(""), w, nil)
	errc := make(chan error, 2)
	for range 2 { // one blocked in w.Write, one waiting for its turn
		go func() { errc <- c.Write(background(), []byte("{}")) }()
	}
	time.Sleep(20 * time.Millisecond) // let them block (not required for correctness)
	c.Close()
	for range 2 {
		select {
		case err := <-errc:
			if !errors.Is(err, transport.ErrClosed) {
				t.Fatalf("Write after Close = %v, want ErrClosed", err)
			}
		case <-time.After(failAfter):
			t.Fatal("Close did not unblock Write")
		}
	}
}

func TestConnWriteCancelWhileWaiting(t *testing.T) {
	pr, pw := io.Pipe()
	defer pr.Close()
	c := NewConn(strings.NewReader(""), pw, nil)
	defer c.Close()
	go c.Write(background(), []byte("{}")) // blocks inside pw.Write, holding the turn
	// Wait until it holds the turn.
	for len(c.(*conn).wsem) == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithCancel(background())
	cancel()
	if err := c.Write(ctx, []byte("{}")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Write with cancelled ctx = %v", err)
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errors.New("disk on fire")
}

func TestConnWriteErrorSticky(t *testing.T) {
	w := &failWriter{}
	c := NewConn(strings.NewReader(""), w, nil)
	err1 := c.Write(background(), []byte("{}"))
	err2 := c.Write(background(), []byte("{}"))
	if err1 == nil || err2 == nil || err1.Error() != err2.Error() {
		t.Fatalf("Write errors = %v, %v; want the same error twice", err1, err2)
	}
	if w.n != 1 {
		t.Fatalf("writer called %d times after failing, want 1", w.n)
	}
}

// rwCloser is one value used as both reader and writer.
type rwCloser struct {
	io.Reader
	io.Writer
	closes int
}

func (c *rwCloser) Close() error { c.closes++; return nil }

// valueRW is an incomparable type used by value as reader and writer.
type valueRW struct{ junk []int }

func (valueRW) Read([]byte) (int, error)    { return 0, io.EOF }
func (valueRW) Write(p []byte) (int, error) { return len(p), nil }
func (valueRW) Close() error                { return nil }

func TestConnCloseClosesOnce(t *testing.T) {
	rw := &rwCloser{Reader: strings.NewReader(""), Writer: io.Discard}
	c := NewConn(rw, rw, nil)
	c.Close()
	c.Close()
	if rw.closes != 1 {
		t.Fatalf("shared reader/writer closed %d times, want 1", rw.closes)
	}
	// Incomparable values must not make Close panic.
	v := valueRW{junk: []int{1}}
	if err := NewConn(v, v, nil).Close(); err != nil {
		t.Fatal(err)
	}
}

// model is the reference framing: split on "\n", drop one trailing "\r",
// skip blank lines, flag lines over limit.
func model(data []byte, limit int) []string {
	var out []string
	lines := bytes.Split(data, []byte("\n"))
	for i, l := range lines {
		if i == len(lines)-1 && len(l) == 0 {
			break
		}
		l = bytes.TrimSuffix(l, []byte("\r"))
		switch {
		case len(l) > limit:
			out = append(out, fmt.Sprintf("TOOLARGE(%d)", len(l)))
		case len(bytes.Trim(l, " \t\r")) == 0:
		default:
			out = append(out, string(l))
		}
	}
	return out
}

func FuzzConnRead(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"b\":2}\r\n\n"), uint16(8), false)
	f.Add([]byte("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nok"), uint16(4), true)
	f.Add([]byte("\r\r\n\r\n \t\n"), uint16(1), false)
	f.Add([]byte{0xff, 0xfe, '\n', 0, '\r'}, uint16(300), true)
	f.Fuzz(func(t *testing.T, data []byte, limit uint16, oneByte bool) {
		lim := int(limit%512) + 1
		var r io.Reader = bytes.NewReader(data)
		if oneByte {
			r = iotest.OneByteReader(r)
		}
		c := NewConn(r, io.Discard, &Options{MaxMessageSize: lim})
		defer c.Close()
		got, err := readAll(t, c)
		if err != io.EOF {
			t.Fatalf("final error = %v, want io.EOF", err)
		}
		want := model(data, lim)
		if len(got) != len(want) {
			t.Fatalf("got %d messages %q, want %d %q", len(got), got, len(want), want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("message %d = %q, want %q", i, got[i], want[i])
			}
		}
	})
}
