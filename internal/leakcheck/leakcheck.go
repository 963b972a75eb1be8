// Package leakcheck finds goroutines that tests leave behind: a handler
// still serving a peer that has left, a read loop on a closed transport, a
// reaper of a process that never exited.
//
// A check takes the goroutines running before the code under test started
// and, once that code has been closed, waits a bounded while for every
// goroutine started since to return. It fails with the stacks of those that
// did not. Goroutines of the test framework itself and of the runtime are
// not counted.
//
// Use [Main] in a package's TestMain to check the package's tests as a
// whole, and [Check] in a test that wants its own leaks named. Neither
// works inside a testing/synctest bubble, and neither is needed there:
// synctest.Test already fails when a goroutine of its bubble is left
// blocked. Both assume that the package's tests do not run in parallel,
// since a parallel test's goroutines would count as the checked test's.
package leakcheck

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// settle bounds how long a check waits for goroutines to return. Goroutines
// ending after a close often wait on the operating system (a child process
// exiting, a socket closing), so this is real time, and generous: it only
// delays a test that leaks.
const settle = 10 * time.Second

// Check records the goroutines running now and, when t ends (after its other
// Cleanup functions, so after what they close), fails t if goroutines
// started since are still running once the bounded wait is over. Call it
// first in the test, outside any synctest bubble.
func Check(t testing.TB) {
	t.Helper()
	before := snapshot()
	t.Cleanup(func() {
		if left := wait(before); left != "" {
			t.Errorf("leakcheck: goroutines left running after the test:\n%s", left)
		}
	})
}

// Main runs the tests of m and returns the exit status for os.Exit: m's own,
// or 1 when the tests passed but left goroutines running, whose stacks are
// then printed to standard error. Use it as
//
//	func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }
func Main(m *testing.M) int {
	before := snapshot()
	code := m.Run()
	if code != 0 {
		return code // the failures say more than leftovers would
	}
	if left := wait(before); left != "" {
		fmt.Fprintf(os.Stderr, "leakcheck: goroutines left running after the tests:\n%s", left)
		return 1
	}
	return 0
}

// wait polls until every goroutine not in before has returned, yielding and
// backing off between polls, for at most settle. It returns the stacks of
// the goroutines still running then, or "".
func wait(before map[uint64]bool) string {
	deadline := time.Now().Add(settle)
	pause := time.Millisecond
	for {
		runtime.Gosched()
		left := leftovers(before)
		if len(left) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return strings.Join(left, "\n\n") + "\n"
		}
		time.Sleep(pause)
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// snapshot returns the ids of the goroutines running now.
func snapshot() map[uint64]bool {
	ids := make(map[uint64]bool)
	for _, g := range goroutines() {
		if id, ok := goroutineID(g); ok {
			ids[id] = true
		}
	}
	return ids
}

// leftovers returns the stacks of the goroutines running now that are not in
// before and that belong to the code under test.
func leftovers(before map[uint64]bool) []string {
	var left []string
	for _, g := range goroutines() {
		id, ok := goroutineID(g)
		if !ok || before[id] || ignored(g) {
			continue
		}
		left = append(left, g)
	}
	return left
}

// harness lists frames that mark a goroutine as the test framework's or the
// runtime's: test functions run under tRunner (a running test is not a
// leak), and signal delivery starts its loop once and keeps it.
var harness = []string{
	"\ntesting.tRunner(",
	"\ntesting.(*T).Run(",
	"\ntesting.(*M).",
	"\ntesting.runTests(",
	"\ntesting.runFuzzTests(",
	"\nos/signal.signal_recv(",
	"\nos/signal.loop(",
	"\ncreated by runtime.",
	"\nruntime.goexit(",
}

func ignored(stack string) bool {
	for _, h := range harness {
		if strings.Contains(stack, h) {
			return true
		}
	}
	return false
}

// goroutines returns the stack of every goroutine, one string each.
func goroutines() []string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var gs []string
	for g := range bytes.SplitSeq(buf, []byte("\n\n")) {
		if s := strings.TrimSpace(string(g)); s != "" {
			gs = append(gs, s)
		}
	}
	return gs
}

// goroutineID reads the id from a stack's first line, "goroutine 7 [...]:".
func goroutineID(stack string) (uint64, bool) {
	rest, ok := strings.CutPrefix(stack, "goroutine ")
	if !ok {
		return 0, false
	}
	end := strings.IndexByte(rest, ' ')
	if end < 0 {
		return 0, false
	}
	id, err := strconv.ParseUint(rest[:end], 10, 64)
	return id, err == nil
}
