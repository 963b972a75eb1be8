package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func mustWrite(t *testing.T, c Conn, msg string) {
	t.Helper()
	if err := c.Write(context.Background(), []byte(msg)); err != nil {
		t.Fatalf("Write(%s): %v", msg, err)
	}
}

func mustRead(t *testing.T, c Conn, want string) {
	t.Helper()
	got, err := c.Read(context.Background())
	if err != nil || string(got) != want {
		t.Fatalf("Read = %q, %v; want %q", got, err, want)
	}
}

func TestMemoryPipeOrder(t *testing.T) {
	a, b := NewMemoryPipe()
	defer a.Close()
	defer b.Close()
	const n = 1000 // far more than the buffer: Write waits for Read
	go func() {
		for i := range n {
			if err := a.Write(context.Background(), fmt.Appendf(nil, "%d", i)); err != nil {
				t.Errorf("Write %d: %v", i, err)
				return
			}
		}
	}()
	for i := range n {
		mustRead(t, b, fmt.Sprint(i))
	}
}

func TestMemoryPipeBothDirections(t *testing.T) {
	a, b := NewMemoryPipe()
	defer a.Close()
	defer b.Close()
	mustWrite(t, a, "to b")
	mustWrite(t, b, "to a")
	mustRead(t, a, "to a")
	mustRead(t, b, "to b")
}

func TestMemoryPipeConcurrentWriters(t *testing.T) {
	a, b := NewMemoryPipe()
	defer a.Close()
	defer b.Close()
	const writers, each = 8, 100
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := a.Write(context.Background(), fmt.Appendf(nil, "%d/%d", w, i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	// Each writer's messages arrive whole and in its order.
	next := make([]int, writers)
	for range writers * each {
		msg, err := b.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var w, i int
		if _, err := fmt.Sscanf(string(msg), "%d/%d", &w, &i); err != nil {
			t.Fatalf("bad message %q", msg)
		}
		if i != next[w] {
			t.Fatalf("writer %d: got message %d, want %d", w, i, next[w])
		}
		next[w]++
	}
	wg.Wait()
}

func TestMemoryPipePeerCloseDrainsThenEOF(t *testing.T) {
	a, b := NewMemoryPipe()
	defer b.Close()
	for i := range 3 {
		mustWrite(t, a, fmt.Sprint(i))
	}
	a.Close()
	for i := range 3 {
		mustRead(t, b, fmt.Sprint(i))
	}
	for range 2 { // EOF is sticky
		if _, err := b.Read(context.Background()); err != io.EOF {
			t.Fatalf("Read after drain = %v, want io.EOF", err)
		}
	}
	// Writing towards a closed peer fails.
	if err := b.Write(context.Background(), []byte("x")); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("Write to closed peer = %v, want io.ErrClosedPipe", err)
	}
}

func TestMemoryPipeLocalClose(t *testing.T) {
	a, b := NewMemoryPipe()
	defer b.Close()
	mustWrite(t, b, "unread")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if err := a.Write(context.Background(), []byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
	if _, err := a.Read(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close = %v, want ErrClosed", err)
	}
}

func TestMemoryPipeCloseUnblocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := NewMemoryPipe()
		defer b.Close()
		readErr := make(chan error)
		go func() {
			_, err := a.Read(context.Background())
			readErr <- err
		}()
		// Fill b's direction so that the next Write from a waits.
		for range memoryPipeBuffer {
			mustWrite(t, a, "fill")
		}
		writeErr := make(chan error)
		go func() { writeErr <- a.Write(context.Background(), []byte("blocked")) }()
		synctest.Wait()
		select {
		case err := <-readErr:
			t.Fatalf("Read returned %v before Close", err)
		case err := <-writeErr:
			t.Fatalf("Write returned %v before Close", err)
		default:
		}
		a.Close()
		if err := <-readErr; !errors.Is(err, ErrClosed) {
			t.Errorf("blocked Read = %v, want ErrClosed", err)
		}
		if err := <-writeErr; !errors.Is(err, ErrClosed) {
			t.Errorf("blocked Write = %v, want ErrClosed", err)
		}
	})
}

func TestMemoryPipePeerCloseUnblocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := NewMemoryPipe()
		readErr := make(chan error)
		go func() {
			_, err := a.Read(context.Background())
			readErr <- err
		}()
		for range memoryPipeBuffer {
			mustWrite(t, a, "fill")
		}
		writeErr := make(chan error)
		go func() { writeErr <- a.Write(context.Background(), []byte("blocked")) }()
		synctest.Wait()
		b.Close()
		if err := <-readErr; err != io.EOF {
			t.Errorf("blocked Read = %v, want io.EOF", err)
		}
		if err := <-writeErr; !errors.Is(err, io.ErrClosedPipe) {
			t.Errorf("blocked Write = %v, want io.ErrClosedPipe", err)
		}
		a.Close()
	})
}

func TestMemoryPipeContextCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := NewMemoryPipe()
		defer a.Close()
		defer b.Close()

		ctx, cancel := context.WithCancel(context.Background())
		readErr := make(chan error)
		go func() {
			_, err := a.Read(ctx)
			readErr <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-readErr; err != context.Canceled {
			t.Errorf("Read = %v, want context.Canceled", err)
		}

		for range memoryPipeBuffer {
			mustWrite(t, a, "fill")
		}
		ctx, cancel = context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := a.Write(ctx, []byte("blocked")); err != context.DeadlineExceeded {
			t.Errorf("Write = %v, want context.DeadlineExceeded", err)
		}
		// The cancelled Write delivered nothing.
		for range memoryPipeBuffer {
			mustRead(t, b, "fill")
		}
		mustWrite(t, a, "after")
		mustRead(t, b, "after")
	})
}

func TestMemoryPipeEndedContext(t *testing.T) {
	a, b := NewMemoryPipe()
	defer a.Close()
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// An ended context wins even when the operation could proceed.
	if err := a.Write(ctx, []byte("x")); err != context.Canceled {
		t.Errorf("Write = %v, want context.Canceled", err)
	}
	mustWrite(t, b, "ready")
	if _, err := a.Read(ctx); err != context.Canceled {
		t.Errorf("Read = %v, want context.Canceled", err)
	}
	mustRead(t, a, "ready")
}

func TestMemoryTransportConnectsOnce(t *testing.T) {
	a, b := NewMemoryPipe()
	defer a.Close()
	defer b.Close()
	tr := NewMemoryTransport(a)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tr.Connect(ctx); err != context.Canceled {
		t.Errorf("Connect with an ended context = %v", err)
	}
	c, err := tr.Connect(context.Background())
	if err != nil || c != a {
		t.Fatalf("Connect = %v, %v", c, err)
	}
	if _, err := tr.Connect(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("second Connect = %v, want ErrClosed", err)
	}
}
