package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/parley-mcp/parley/transport"
)

// typedCause stands for a typed error of an http.RoundTripper (an OAuth
// issuer mismatch, say) that a caller wants to match.
type typedCause struct{ issuer string }

func (e *typedCause) Error() string { return "issuer " + e.issuer + " is not the expected one" }

// TestCallErrorFailsItsCall: a *transport.CallError from Read fails the
// one call it names, with an error that matches both the stand-in error
// response (same code and message as without the cause) and the cause,
// and the connection goes on.
func TestCallErrorFailsItsCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeTransport()
		c := NewConn(f, &ConnOptions{Logger: quietLogger()})
		defer c.Close()
		done := make(chan error, 1)
		go func() { done <- c.Call(context.Background(), "tools/call", nil, nil) }()
		m, _, err := DecodeMessage(<-f.writes)
		if err != nil {
			t.Fatal(err)
		}
		id := m.(*Request).ID
		cause := &typedCause{"https://evil.example"}
		f.reads <- fakeRead{err: fmt.Errorf("read: %w", &transport.CallError{
			Response: []byte(`{"jsonrpc":"2.0","id":` + id.Raw() + `,"error":{"code":-32603,"message":"streamhttp: POST failed: boom","data":{"httpStatus":0}}}`),
			Err:      fmt.Errorf("Post: %w", cause),
		})}
		err = <-done
		var rpcErr *Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != CodeInternalError || rpcErr.Message != "streamhttp: POST failed: boom" {
			t.Fatalf("Call = %v, want a -32603 *Error with the stand-in's message", err)
		}
		if err.Error() != rpcErr.Error() {
			t.Errorf("Call's message = %q, want the *Error's %q", err.Error(), rpcErr.Error())
		}
		var got *typedCause
		if !errors.As(err, &got) || got != cause {
			t.Fatalf("Call = %v, want it to match the cause with errors.As", err)
		}
		var te *TransportError
		if !errors.As(err, &te) {
			t.Errorf("Call = %T, want a *TransportError", err)
		}

		// The connection survived: the next call gets its answer.
		go func() { done <- c.Call(context.Background(), "ping", nil, nil) }()
		m, _, err = DecodeMessage(<-f.writes)
		if err != nil {
			t.Fatal(err)
		}
		f.reads <- fakeRead{data: []byte(`{"jsonrpc":"2.0","id":` + m.(*Request).ID.Raw() + `,"result":{}}`)}
		if err := <-done; err != nil {
			t.Fatalf("next Call = %v", err)
		}
		select {
		case <-c.Done():
			t.Fatal("Conn ended")
		default:
		}
	})
}

// TestCallErrorWithoutErrorResponse: a CallError whose Response is not an
// error response is handled as the message it carries (here a result), and
// one with no Response at all ends nothing.
func TestCallErrorWithoutErrorResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeTransport()
		c := NewConn(f, &ConnOptions{Logger: quietLogger()})
		defer c.Close()
		done := make(chan error, 1)
		go func() { done <- c.Call(context.Background(), "m", nil, nil) }()
		m, _, err := DecodeMessage(<-f.writes)
		if err != nil {
			t.Fatal(err)
		}
		f.reads <- fakeRead{err: &transport.CallError{Err: errors.New("no response kept")}}
		f.reads <- fakeRead{err: &transport.CallError{
			Response: []byte(`{"jsonrpc":"2.0","id":` + m.(*Request).ID.Raw() + `,"result":{}}`),
			Err:      errors.New("odd"),
		}}
		if err := <-done; err != nil {
			t.Fatalf("Call = %v, want the result the CallError carried", err)
		}
		select {
		case <-c.Done():
			t.Fatal("Conn ended")
		default:
		}
	})
}
