package stdio

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/transport"
)

func TestTooLargeKeepsTheHead(t *testing.T) {
	line := `{"jsonrpc":"2.0","id":3,"result":"` + strings.Repeat("x", 5000) + `"}`
	c := NewConn(strings.NewReader(line+"\n"), io.Discard, &Options{MaxMessageSize: 100})
	_, err := c.Read(background())
	var h transport.MessageHead
	if !errors.As(err, &h) {
		t.Fatalf("Read = %v, want an error with the message's head", err)
	}
	if got := string(h.MessageHead()); got != line[:transport.MaxMessageHead] {
		t.Errorf("head = %q (%d bytes), want the first %d bytes", got, len(got), transport.MaxMessageHead)
	}
	// A limit below the head size keeps what was read up to the limit and
	// the chunk that crossed it, never more than MaxMessageHead.
	c = NewConn(strings.NewReader(line[:300]+"\n"), io.Discard, &Options{MaxMessageSize: 10})
	_, err = c.Read(background())
	if !errors.As(err, &h) || !strings.HasPrefix(line, string(h.MessageHead())) || len(h.MessageHead()) < 11 {
		t.Errorf("head = %q, want a prefix of the line past the limit", h.MessageHead())
	}
}

// TestOversizedResponseFailsTheCallAtOnce: over stdio, a response line
// over the limit fails its call with ErrMessageTooLarge, rather than
// leaving it to wait for its context.
func TestOversizedResponseFailsTheCallAtOnce(t *testing.T) {
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	clientConn := jsonrpc.NewConn(NewConn(toClient, fromClient, &Options{MaxMessageSize: 1024}), nil)
	defer clientConn.Close()
	serverConn := jsonrpc.NewConn(NewConn(toServer, fromServer, nil), &jsonrpc.ConnOptions{
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			return strings.Repeat("y", 4096), nil
		}),
	})
	defer serverConn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := clientConn.Call(ctx, "big", nil, nil)
	if !errors.Is(err, transport.ErrMessageTooLarge) {
		t.Fatalf("Call = %v, want ErrMessageTooLarge", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the call waited for its context")
	}
	select {
	case <-clientConn.Done():
		t.Error("the connection ended")
	default:
	}
}
