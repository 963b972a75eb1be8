package leakcheck

import (
	"os"
	"strings"
	"testing"
)

func blockedOn(ch chan struct{}) { <-ch }

func TestFindsAndForgetsAGoroutine(t *testing.T) {
	before := snapshot()
	ch := make(chan struct{})
	started := make(chan struct{})
	go func() {
		close(started)
		blockedOn(ch)
	}()
	<-started
	left := leftovers(before)
	if len(left) != 1 || !strings.Contains(left[0], "leakcheck.blockedOn(") {
		t.Fatalf("leftovers = %q, want the one blocked goroutine", left)
	}
	close(ch)
	if s := wait(before); s != "" {
		t.Errorf("after the goroutine returned: %s", s)
	}
}

func TestIgnoresTheHarness(t *testing.T) {
	// This test's own goroutine runs under tRunner and is new to a
	// snapshot taken by Main before the tests: it must not count.
	if left := leftovers(map[uint64]bool{}); len(left) != 0 {
		t.Errorf("leftovers with nothing started: %q", left)
	}
}

func TestGoroutineID(t *testing.T) {
	for _, c := range []struct {
		in string
		id uint64
		ok bool
	}{
		{"goroutine 17 [chan receive]:\nmain.f()", 17, true},
		{"goroutine x [running]:", 0, false},
		{"something else", 0, false},
		{"goroutine 5", 0, false},
	} {
		id, ok := goroutineID(c.in)
		if id != c.id || ok != c.ok {
			t.Errorf("goroutineID(%q) = %d, %v; want %d, %v", c.in, id, ok, c.id, c.ok)
		}
	}
}

func TestMain(m *testing.M) { os.Exit(Main(m)) }
