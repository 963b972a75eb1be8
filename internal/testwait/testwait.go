// Package testwait bounds the waits of Parley's tests: a test that waits
// for something a regression could leave undone (a notification, the end
// of a stream or of a call) fails with a message naming what it waited
// for, in seconds, rather than at go test's timeout. It is for tests only.
package testwait

import (
	"context"
	"testing"
	"time"
)

// FailAfter is how long a test waits before it fails: far longer than
// anything a passing test waits for on a loaded machine.
const FailAfter = 10 * time.Second

// Recv returns the next value on ch (the zero value once ch is closed),
// failing the test when none comes within FailAfter. what names the awaited
// value in the failure message.
func Recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), FailAfter)
	defer cancel()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatalf("waited %v for %s", FailAfter, what)
	}
	var zero T
	return zero
}

// Context returns a context that ends after FailAfter, or when the test
// ends: for a test's calls that would otherwise wait on
// context.Background(), so that a call a regression leaves unanswered
// fails with context.DeadlineExceeded in seconds. Inside a
// testing/synctest bubble the deadline is on the bubble's clock.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), FailAfter)
	t.Cleanup(cancel)
	return ctx
}
