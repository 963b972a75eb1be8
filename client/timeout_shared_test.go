package client_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
)

// Requests in flight together share the session's one timer: each still
// ends exactly RequestTimeout after it was sent, whether the requests
// before it were answered or timed out themselves.
func TestRequestTimeoutOverlapping(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const d = 5 * time.Second
		sess, f := dialFake(t, newClient(&client.Options{RequestTimeout: d}))
		call := func() (<-chan error, time.Time) {
			start := time.Now()
			return async(func() error { _, err := sess.CallTool(context.Background(), "x", nil); return err }), start
		}
		first, _ := call()
		answered := f.expect(mcp.MethodCallTool)
		time.Sleep(time.Second)
		second, start2 := call()
		f.expect(mcp.MethodCallTool)
		time.Sleep(time.Second)
		third, start3 := call()
		f.expect(mcp.MethodCallTool)
		// The first is answered: the second and third still time out on
		// their own schedule.
		f.reply(answered.ID, completeTool)
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		checkTimeout(t, <-second, mcp.MethodCallTool, d, time.Since(start2))
		checkTimeout(t, <-third, mcp.MethodCallTool, d, time.Since(start3))
		// Each is cancelled on the wire, with the timeout as the reason.
		for range 2 {
			if m := f.next(); m.Method != "notifications/cancelled" || !strings.Contains(string(m.Params), `"reason":"client: request timeout"`) {
				t.Errorf("client sent %s, want the cancellation of a timed-out request", m.Raw)
			}
		}
		// And after a quiet spell, a new request gets its full time.
		time.Sleep(time.Minute)
		fourth, start4 := call()
		f.expect(mcp.MethodCallTool)
		checkTimeout(t, <-fourth, mcp.MethodCallTool, d, time.Since(start4))
	})
}
