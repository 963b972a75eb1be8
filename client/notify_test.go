package client_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// progressLog collects progress notifications.
type progressLog struct {
	mu    sync.Mutex
	byTok map[string][]float64
	all   []mcp.ProgressNotificationParams
}

func (l *progressLog) record(_ context.Context, p *mcp.ProgressNotificationParams) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byTok == nil {
		l.byTok = map[string][]float64{}
	}
	l.byTok[p.ProgressToken.Raw()] = append(l.byTok[p.ProgressToken.Raw()], p.Progress)
	l.all = append(l.all, *p)
}

func (l *progressLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.all)
}

func progressToken(t testing.TB, m wireMsg) string {
	t.Helper()
	return string(m.meta(t)[mcp.MetaKeyProgressToken])
}

func TestProgressReachesCallbackBeforeReturn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var pl progressLog
		sess, w := connect(t, newClient(&client.Options{OnProgress: pl.record}), fixture(nil))
		if _, err := sess.CallTool(context.Background(), "work", nil); err != nil {
			t.Fatal(err)
		}
		// No synctest.Wait here: the notifications must have been handled
		// by the time CallTool returns.
		pl.mu.Lock()
		all := append([]mcp.ProgressNotificationParams(nil), pl.all...)
		pl.mu.Unlock()
		if len(all) != 2 {
			t.Fatalf("%d progress notifications when CallTool returned, want 2", len(all))
		}
		calls := w.Requests(mcp.MethodCallTool)
		tok := progressToken(t, calls[0])
		for i, p := range all {
			if p.ProgressToken.Raw() != tok {
				t.Errorf("progress token %s, want the request's %s", p.ProgressToken.Raw(), tok)
			}
			if p.Progress != float64(i+1) || p.Total != 2 || p.Message == "" {
				t.Errorf("progress %+v", p)
			}
		}
	})
}

func TestProgressTokensAreUnique(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var pl progressLog
		srv := fixture(nil)
		var mu sync.Mutex
		serverTokens := map[string]string{} // token -> method, as the server saw it
		srv.Use(func(next server.Handler) server.Handler {
			return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
				mu.Lock()
				if prev, dup := serverTokens[req.Meta.ProgressToken.Raw()]; dup || !req.Meta.ProgressToken.IsValid() {
					t.Errorf("%s: progress token %q (already used by %s)", req.Method, req.Meta.ProgressToken.Raw(), prev)
				}
				serverTokens[req.Meta.ProgressToken.Raw()] = req.Method
				mu.Unlock()
				return next(ctx, req)
			}
		})
		ctx := context.Background()
		sess, w := connect(t, newClient(&client.Options{OnProgress: pl.record}), srv)

		// Concurrent calls of the reporting tool, and others besides.
		const n = 8
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				if _, err := sess.CallTool(ctx, "work", nil); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Go(func() {
			for _, err := range sess.Tools(ctx) {
				if err != nil {
					t.Error(err)
				}
			}
		})
		wg.Wait()

		seen := map[string]bool{}
		for _, m := range w.Requests("") {
			tok := progressToken(t, m)
			if tok == "" || seen[tok] {
				t.Errorf("%s request has progress token %q (seen before: %v)", m.Method, tok, seen[tok])
			}
			seen[tok] = true
		}
		// Each call's progress came back under its own token.
		pl.mu.Lock()
		defer pl.mu.Unlock()
		if len(pl.byTok) != n {
			t.Errorf("progress arrived under %d tokens, want %d", len(pl.byTok), n)
		}
		for tok, steps := range pl.byTok {
			if len(steps) != 2 || steps[0] != 1 || steps[1] != 2 || serverTokens[tok] != mcp.MethodCallTool {
				t.Errorf("token %s: steps %v (method %q)", tok, steps, serverTokens[tok])
			}
		}
	})
}

func TestNoProgressWithoutCallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sess, w := connect(t, newClient(nil), fixture(nil))
		if _, err := sess.CallTool(context.Background(), "work", nil); err != nil {
			t.Fatal(err)
		}
		for _, m := range w.Requests("") {
			if tok := progressToken(t, m); tok != "" {
				t.Errorf("%s carries progress token %s without OnProgress", m.Method, tok)
			}
		}
		synctest.Wait()
		for _, m := range w.Received() {
			if m.Method != "" {
				t.Errorf("server sent %s", m.Raw)
			}
		}
	})
}

// logLog collects log notifications.
type logLog struct {
	mu   sync.Mutex
	msgs []mcp.LoggingMessageNotificationParams
}

func (l *logLog) record(_ context.Context, p *mcp.LoggingMessageNotificationParams) {
	l.mu.Lock()
	l.msgs = append(l.msgs, *p)
	l.mu.Unlock()
}

func (l *logLog) get() []mcp.LoggingMessageNotificationParams {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]mcp.LoggingMessageNotificationParams(nil), l.msgs...)
}

func TestLogMessages(t *testing.T) {
	for _, tc := range []struct {
		level mcp.LoggingLevel
		want  []string // data of the messages, in order
	}{
		{mcp.LevelInfo, []string{"halfway"}},
		{mcp.LevelDebug, []string{"halfway", "details"}},
		{mcp.LevelError, nil},
		{"", nil}, // no level: the server sends none
	} {
		t.Run(string(tc.level), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var ll logLog
				sess, w := connect(t, newClient(&client.Options{LogLevel: tc.level, OnLog: ll.record}), fixture(nil))
				if _, err := sess.CallTool(context.Background(), "work", nil); err != nil {
					t.Fatal(err)
				}
				msgs := ll.get() // delivered before CallTool returned
				if len(msgs) != len(tc.want) {
					t.Fatalf("%d log messages %+v, want %v", len(msgs), msgs, tc.want)
				}
				for i, m := range msgs {
					if m.Data != tc.want[i] || m.Logger != "work" || !m.Level.Enabled(tc.level) {
						t.Errorf("message %d: %+v, want data %q", i, m, tc.want[i])
					}
				}
				// What was on the wire agrees: nothing more was sent.
				synctest.Wait()
				n := 0
				for _, m := range w.Received() {
					if m.Method == mcp.NotificationMessage {
						n++
						var level mcp.LoggingLevel
						m.param(t, "level", &level)
						if !level.Enabled(tc.level) {
							t.Errorf("server sent %s though the client asked for %q", m.Raw, tc.level)
						}
					}
				}
				if n != len(tc.want) {
					t.Errorf("%d notifications/message on the wire, want %d", n, len(tc.want))
				}
				for _, m := range w.Requests("") {
					if raw, ok := m.meta(t)[mcp.MetaKeyLogLevel]; ok != (tc.level != "") {
						t.Errorf("%s: logLevel %s with LogLevel %q", m.Method, raw, tc.level)
					}
				}
			})
		})
	}
}

// TestBadNotificationsAreIgnored: malformed or unexpected notifications from
// a server reach no callback and do not break the session.
func TestBadNotificationsAreIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var pl progressLog
		var ll logLog
		sess, f := dialFake(t, newClient(&client.Options{OnProgress: pl.record, OnLog: ll.record, LogLevel: mcp.LevelDebug}))
		f.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":{},"progress":"lots"}}`)
		f.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":7}}`)
		f.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}`) // no listen stream
		f.send(`{"jsonrpc":"2.0","method":"notifications/whatever"}`)
		f.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nothing"}}`)
		// A request from the server is answered with method-not-found.
		f.send(`{"jsonrpc":"2.0","id":"s1","method":"roots/list","params":{}}`)
		resp := f.next()
		if string(resp.ID) != `"s1"` || resp.Error == nil || resp.Error.Code != -32601 {
			t.Errorf("answer to a server request: %s", resp.Raw)
		}
		done := async(func() error { _, err := sess.ListTools(context.Background(), ""); return err })
		m := f.expect(mcp.MethodListTools)
		f.reply(m.ID, `{"resultType":"complete","tools":[]}`)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if pl.count() != 0 || len(ll.get()) != 0 {
			t.Errorf("callbacks got %d progress and %d log notifications", pl.count(), len(ll.get()))
		}
	})
}

// TestCallbacksSeeWhatWasSent: the callbacks receive the params as sent.
func TestCallbacksSeeWhatWasSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var pl progressLog
		var ll logLog
		sess, f := dialFake(t, newClient(&client.Options{OnProgress: pl.record, OnLog: ll.record, LogLevel: mcp.LevelDebug}))
		done := async(func() error { _, err := sess.CallTool(context.Background(), "x", nil); return err })
		m := f.expect(mcp.MethodCallTool)
		tok := m.meta(t)[mcp.MetaKeyProgressToken]
		f.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":0.5,"total":1,"message":"half"}}`, tok)
		f.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"db","data":{"rows":3}}}`)
		f.reply(m.ID, `{"resultType":"complete","content":[]}`)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		pl.mu.Lock()
		if len(pl.all) != 1 || pl.all[0].ProgressToken.Raw() != string(tok) || pl.all[0].Progress != 0.5 || pl.all[0].Message != "half" {
			t.Errorf("progress %+v", pl.all)
		}
		pl.mu.Unlock()
		msgs := ll.get()
		if len(msgs) != 1 || msgs[0].Level != mcp.LevelWarning || msgs[0].Logger != "db" {
			t.Fatalf("logs %+v", msgs)
		}
		if b, _ := json.Marshal(msgs[0].Data); string(b) != `{"rows":3}` {
			t.Errorf("log data %s", b)
		}
	})
}
