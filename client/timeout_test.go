package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
)

const completeTool = `{"resultType":"complete","content":[{"type":"text","text":"ok"}]}`

// checkTimeout checks that err is the RequestTimeoutError of method after
// d, and that the call took exactly d of the bubble's virtual time.
func checkTimeout(t *testing.T, err error, method string, d time.Duration, took time.Duration) {
	t.Helper()
	var te *client.RequestTimeoutError
	if !errors.As(err, &te) || te.Method != method || te.Timeout != d {
		t.Fatalf("error %v (%T), want a *RequestTimeoutError for %s after %v", err, err, method, d)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%v does not match context.DeadlineExceeded", err)
	}
	if !strings.Contains(err.Error(), "Options.RequestTimeout") {
		t.Errorf("%q does not name the limit", err)
	}
	if took != d {
		t.Errorf("the call ended after %v, want %v", took, d)
	}
}

// A server that never answers cannot hold a call for ever: the default
// RequestTimeout ends it, and the request is cancelled.
func TestRequestTimeoutDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sess, f := dialFake(t, newClient(nil))
		start := time.Now()
		done := async(func() error { _, err := sess.ListTools(context.Background(), ""); return err })
		f.expect(mcp.MethodListTools) // and silence
		checkTimeout(t, <-done, mcp.MethodListTools, client.DefaultRequestTimeout, time.Since(start))
	})
}

func TestRequestTimeoutOption(t *testing.T) {
	t.Run("set", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sess, f := dialFake(t, newClient(&client.Options{RequestTimeout: 5 * time.Second}))
			start := time.Now()
			done := async(func() error { _, err := sess.CallTool(context.Background(), "x", nil); return err })
			f.expect(mcp.MethodCallTool)
			checkTimeout(t, <-done, mcp.MethodCallTool, 5*time.Second, time.Since(start))
		})
	})
	t.Run("negative means none", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sess, f := dialFake(t, newClient(&client.Options{RequestTimeout: -1}))
			done := async(func() error { _, err := sess.CallTool(context.Background(), "x", nil); return err })
			m := f.expect(mcp.MethodCallTool)
			time.Sleep(24 * time.Hour)
			synctest.Wait()
			select {
			case err := <-done:
				t.Fatalf("the call ended (%v) without a timeout", err)
			default:
			}
			f.reply(m.ID, completeTool)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	})
	t.Run("the call's context is earlier", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sess, f := dialFake(t, newClient(nil))
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			done := async(func() error { _, err := sess.CallTool(ctx, "x", nil); return err })
			f.expect(mcp.MethodCallTool)
			err := <-done
			var te *client.RequestTimeoutError
			if errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %v, want the context's deadline, not RequestTimeout", err)
			}
		})
	})
}

// Each round of the multi-round-trip loop is a request of its own: a call
// of many rounds, each answered within the timeout, outlasts it.
func TestRequestTimeoutPerRound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newClient(&client.Options{RequestTimeout: 10 * time.Second, ListRoots: listRoots("file:///w")})
		sess, f := dialFake(t, c)
		start := time.Now()
		done := async(func() error { _, err := sess.CallTool(context.Background(), "slow", nil); return err })
		for range 3 {
			m := f.expect(mcp.MethodCallTool)
			time.Sleep(9 * time.Second)
			f.reply(m.ID, endless(1))
		}
		m := f.expect(mcp.MethodCallTool)
		time.Sleep(9 * time.Second)
		f.reply(m.ID, completeTool)
		if err := <-done; err != nil {
			t.Fatalf("a call whose every round answered in time failed: %v", err)
		}
		if took := time.Since(start); took < 30*time.Second {
			t.Fatalf("the call took %v: the test proves nothing", took)
		}
		// And a round left unanswered ends it.
		done = async(func() error { _, err := sess.CallTool(context.Background(), "slow", nil); return err })
		m = f.expect(mcp.MethodCallTool)
		f.reply(m.ID, endless(1))
		f.expect(mcp.MethodCallTool)
		start = time.Now()
		checkTimeout(t, <-done, mcp.MethodCallTool, 10*time.Second, time.Since(start))
	})
}

// A subscriptions/listen stream lasts as long as its caller wants.
func TestRequestTimeoutSparesListen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sess, f := dialFake(t, newClient(&client.Options{RequestTimeout: time.Second}))
		res := listenAsync(context.Background(), sess, mcp.SubscriptionFilter{ToolsListChanged: true})
		m := f.expect(mcp.MethodSubscriptionsListen)
		f.send(ackFormat, m.ID, `{"toolsListChanged":true}`)
		l := <-res
		if l.err != nil {
			t.Fatal(l.err)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		select {
		case <-l.sub.Done():
			t.Fatalf("the listen stream ended after an hour of quiet: %v", l.sub.Err())
		default:
		}
		l.sub.Close()
	})
}

// On a legacy session, RequestTimeout bounds each request too, but waits
// while a callback answers the server's request for input.
func TestRequestTimeoutLegacy(t *testing.T) {
	t.Run("silent server", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sess, f := dialLegacyFake(t, newClient(pinned(client.Options{RequestTimeout: 7 * time.Second})))
			start := time.Now()
			done := async(func() error { _, err := sess.CallTool(context.Background(), "x", nil); return err })
			f.lexpect(mcp.MethodCallTool)
			checkTimeout(t, <-done, mcp.MethodCallTool, 7*time.Second, time.Since(start))
		})
	})
	t.Run("a callback takes its time", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			elicit := func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
				time.Sleep(time.Minute) // a person fills in the form
				return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
			}
			sess, f := dialLegacyFake(t, newClient(pinned(client.Options{RequestTimeout: 7 * time.Second, Elicit: elicit})))
			done := async(func() error { _, err := sess.CallTool(context.Background(), "x", nil); return err })
			m := f.lexpect(mcp.MethodCallTool)
			f.send("%s", `{"jsonrpc":"2.0","id":"s1",`+strings.TrimPrefix(elicitJSON, "{"))
			f.lnext(mcp.MethodElicit)
			f.reply(m.ID, `{"content":[{"type":"text","text":"ok"}]}`)
			if err := <-done; err != nil {
				t.Fatalf("the call was cut while the client answered the server: %v", err)
			}
		})
	})
}
