package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// listenEnds reports, on the channel, the error each subscriptions/listen
// handler of s returned with.
func listenEnds(s *server.Server) <-chan error {
	ch := make(chan error, 16)
	s.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			res, err := next(ctx, req)
			if req.Method == mcp.MethodSubscriptionsListen {
				ch <- err
			}
			return res, err
		}
	})
	return ch
}

// pending returns the events a subscription holds right now, without
// waiting, and whether its channel is closed.
func pending(sub *client.Subscription) (events []client.ListenEvent, closed bool) {
	for {
		select {
		case e, ok := <-sub.Events():
			if !ok {
				return events, true
			}
			events = append(events, e)
		default:
			return events, false
		}
	}
}

// methodsOf lists the methods of events.
func methodsOf(events []client.ListenEvent) []string {
	var ms []string
	for _, e := range events {
		ms = append(ms, e.Method)
	}
	return ms
}

// subscriptionID returns the subscription id in an event's _meta.
func subscriptionID(t testing.TB, e client.ListenEvent) string {
	t.Helper()
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(e.Params, &p); err != nil {
		t.Fatal(err)
	}
	return string(p.Meta[mcp.MetaKeySubscriptionID])
}

func TestListen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fixture(nil)
		ends := listenEnds(srv)
		sess, w := connect(t, newClient(nil), srv)

		sub, err := sess.Listen(context.Background(), mcp.SubscriptionFilter{ToolsListChanged: true})
		if err != nil {
			t.Fatal(err)
		}
		if g := sub.Granted; !g.ToolsListChanged || g.PromptsListChanged || g.ResourcesListChanged || len(g.ResourceSubscriptions) != 0 {
			t.Errorf("Granted = %+v, want tools only", g)
		}
		if sub.Err() != nil {
			t.Errorf("Err() = %v on an open stream", sub.Err())
		}
		listens := w.Requests(mcp.MethodSubscriptionsListen)
		if len(listens) != 1 || string(listens[0].ID) != sub.ID.Raw() {
			t.Fatalf("listen requests %v, want one with id %s", listens, sub.ID.Raw())
		}
		var filter map[string]any
		listens[0].param(t, "notifications", &filter)
		if fmt.Sprint(filter) != "map[toolsListChanged:true]" {
			t.Errorf("filter on the wire %v", filter)
		}

		// Only what was asked for arrives.
		srv.NotifyPromptListChanged()
		srv.NotifyResourceListChanged()
		srv.NotifyResourceUpdated("file:///r1")
		srv.NotifyToolListChanged()
		e := <-sub.Events()
		if e.Method != mcp.NotificationToolListChanged {
			t.Errorf("first event %s, want %s", e.Method, mcp.NotificationToolListChanged)
		}
		if id := subscriptionID(t, e); id != sub.ID.Raw() {
			t.Errorf("event tagged %s, want %s", id, sub.ID.Raw())
		}
		synctest.Wait()
		if more, closed := pending(sub); len(more) > 0 || closed {
			t.Errorf("unrequested events %v (closed %v)", methodsOf(more), closed)
		}

		srv.NotifyToolListChanged()
		srv.NotifyToolListChanged()
		synctest.Wait()
		if got, _ := pending(sub); len(got) != 2 {
			t.Errorf("events %v, want two tool list changes", methodsOf(got))
		}

		// Close ends the stream at once, here and at the server.
		if err := sub.Close(); err != nil {
			t.Fatal(err)
		}
		if _, closed := pending(sub); !closed {
			t.Error("Events not closed after Close")
		}
		if err := sub.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("Err() = %v after Close, want context.Canceled", err)
		}
		select {
		case <-sub.Done():
		default:
			t.Error("Done not closed after Close")
		}
		if err := <-ends; !errors.Is(err, context.Canceled) {
			t.Errorf("server's listen handler ended with %v, want context.Canceled", err)
		}
		sub.Close() // again: nothing happens

		// Changes after the end go nowhere, and the server sent no result
		// for the cancelled request.
		srv.NotifyToolListChanged()
		synctest.Wait()
		for _, m := range w.Received() {
			if string(m.ID) == sub.ID.Raw() {
				t.Errorf("server answered the cancelled listen request: %s", m.Raw)
			}
		}
		// The session still works.
		if _, err := sess.CallTool(context.Background(), "echo", echoArgs("x")); err != nil {
			t.Fatal(err)
		}
	})
}

func TestListenGrantIsNarrowed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newServer(nil)
		s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
			return mcp.TextResult("ok"), nil
		})
		sess, _ := connect(t, newClient(nil), s)
		sub, err := sess.Listen(context.Background(), mcp.SubscriptionFilter{
			ToolsListChanged: true, PromptsListChanged: true, ResourcesListChanged: true,
			ResourceSubscriptions: []string{"file:///a"},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		if g := sub.Granted; !g.ToolsListChanged || g.PromptsListChanged || g.ResourcesListChanged || g.ResourceSubscriptions != nil {
			t.Errorf("Granted = %+v, want tools only", g)
		}
		s.NotifyPromptListChanged()
		s.NotifyResourceUpdated("file:///a")
		synctest.Wait()
		if got, _ := pending(sub); len(got) != 0 {
			t.Errorf("ungranted events %v", methodsOf(got))
		}
	})
}

func TestListenEndedByServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fixture(nil)
		ends := listenEnds(srv)
		sess, _ := connect(t, newClient(nil), srv)
		sub, err := sess.Listen(context.Background(), mcp.SubscriptionFilter{ToolsListChanged: true})
		if err != nil {
			t.Fatal(err)
		}
		srv.NotifyToolListChanged()
		synctest.Wait() // the event is delivered before the end
		srv.EndSubscriptions()
		var got []string
		for e := range sub.Events() { // ends when the stream does
			got = append(got, e.Method)
		}
		if len(got) != 1 || got[0] != mcp.NotificationToolListChanged {
			t.Errorf("events %v before the end", got)
		}
		<-sub.Done()
		if err := sub.Err(); !errors.Is(err, client.ErrListenEnded) {
			t.Errorf("Err() = %v, want ErrListenEnded", err)
		}
		if err := <-ends; err != nil {
			t.Errorf("server's listen handler: %v", err)
		}
		if err := sub.Close(); err != nil {
			t.Errorf("Close after the end: %v", err)
		}
		if err := sub.Err(); !errors.Is(err, client.ErrListenEnded) {
			t.Errorf("Err() = %v after Close of an ended stream, want ErrListenEnded still", err)
		}
	})
}

func TestListenConcurrentSubscriptions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fixture(nil)
		ends := listenEnds(srv)
		sess, _ := connect(t, newClient(nil), srv)
		filters := []mcp.SubscriptionFilter{
			{ToolsListChanged: true},
			{ToolsListChanged: true, ResourceSubscriptions: []string{"file:///r1"}},
			{PromptsListChanged: true},
		}
		subs := make([]*client.Subscription, len(filters))
		errs := make(chan error, len(filters))
		for i, f := range filters { // opened concurrently
			go func() {
				var err error
				subs[i], err = sess.Listen(context.Background(), f)
				errs <- err
			}()
		}
		for range filters {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if subs[0].ID == subs[1].ID || subs[1].ID == subs[2].ID || subs[0].ID == subs[2].ID {
			t.Fatalf("subscriptions share ids: %v %v %v", subs[0].ID, subs[1].ID, subs[2].ID)
		}

		check := func(step string, want ...[]string) {
			t.Helper()
			synctest.Wait()
			for i, sub := range subs {
				got, _ := pending(sub)
				if fmt.Sprint(methodsOf(got)) != fmt.Sprint(want[i]) {
					t.Errorf("%s: subscription %d got %v, want %v", step, i, methodsOf(got), want[i])
				}
				for _, e := range got {
					if id := subscriptionID(t, e); id != sub.ID.Raw() {
						t.Errorf("%s: subscription %d got an event tagged %s", step, i, id)
					}
				}
			}
		}
		tools, prompts, updated := []string{mcp.NotificationToolListChanged}, []string{mcp.NotificationPromptListChanged}, []string{mcp.NotificationResourceUpdated}

		srv.NotifyToolListChanged()
		check("tools", tools, tools, nil)
		srv.NotifyResourceUpdated("file:///r1")
		srv.NotifyResourceUpdated("file:///r2")
		check("resource", nil, updated, nil)
		srv.NotifyPromptListChanged()
		check("prompts", nil, nil, prompts)

		// Closing one leaves the others alone.
		subs[0].Close()
		if err := <-ends; !errors.Is(err, context.Canceled) {
			t.Errorf("server handler ended with %v", err)
		}
		srv.NotifyToolListChanged()
		synctest.Wait()
		if got, closed := pending(subs[0]); len(got) != 0 || !closed {
			t.Errorf("closed subscription: %v, closed %v", methodsOf(got), closed)
		}
		if got, _ := pending(subs[1]); fmt.Sprint(methodsOf(got)) != fmt.Sprint(tools) {
			t.Errorf("subscription 1 after closing 0: %v", methodsOf(got))
		}
		subs[1].Close()
		subs[2].Close()
		for range 2 {
			<-ends
		}
	})
}

func TestListenResourceUpdatedURI(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fixture(nil)
		sess, _ := connect(t, newClient(nil), srv)
		sub, err := sess.Listen(context.Background(), mcp.SubscriptionFilter{ResourceSubscriptions: []string{"file:///r1", "file:///r2"}})
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		if got := sub.Granted.ResourceSubscriptions; len(got) != 2 {
			t.Errorf("granted %v", got)
		}
		srv.NotifyResourceUpdated("file:///r2")
		e := <-sub.Events()
		if e.Method != mcp.NotificationResourceUpdated || e.URI != "file:///r2" {
			t.Errorf("event %+v", e)
		}
	})
}

func TestListenEndsWithSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fixture(nil)
		sess, _ := connect(t, newClient(nil), srv)
		var subs []*client.Subscription
		for range 3 {
			sub, err := sess.Listen(context.Background(), mcp.SubscriptionFilter{ToolsListChanged: true})
			if err != nil {
				t.Fatal(err)
			}
			subs = append(subs, sub)
		}
		sess.Close()
		// By the time Close returns, every stream has ended.
		for i, sub := range subs {
			if _, closed := pending(sub); !closed {
				t.Errorf("subscription %d: Events open after Session.Close", i)
			}
			if err := sub.Err(); !errors.Is(err, jsonrpc.ErrConnClosed) {
				t.Errorf("subscription %d: Err() = %v, want ErrConnClosed", i, err)
			}
		}
		if _, err := sess.Listen(context.Background(), mcp.SubscriptionFilter{ToolsListChanged: true}); !errors.Is(err, jsonrpc.ErrConnClosed) {
			t.Errorf("Listen after Close: %v, want ErrConnClosed", err)
		}
	})
}

func TestListenContextEndsStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fixture(nil)
		ends := listenEnds(srv)
		sess, _ := connect(t, newClient(nil), srv)
		ctx, cancel := context.WithCancel(context.Background())
		sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true})
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		<-sub.Done()
		if err := sub.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("Err() = %v, want context.Canceled", err)
		}
		if err := <-ends; !errors.Is(err, context.Canceled) {
			t.Errorf("server handler: %v", err)
		}
	})
}

// listenAsync opens a stream in the background.
func listenAsync(ctx context.Context, sess *client.Session, filter mcp.SubscriptionFilter) <-chan listened {
	ch := make(chan listened, 1)
	go func() {
		sub, err := sess.Listen(ctx, filter)
		ch <- listened{sub, err}
	}()
	return ch
}

type listened struct {
	sub *client.Subscription
	err error
}

const ackFormat = `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%s},"notifications":%s}}`

func TestListenFake(t *testing.T) {
	filter := mcp.SubscriptionFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"file:///a"}}

	t.Run("cancelled by the server", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sess, f := dialFake(t, newClient(nil))
			res := listenAsync(context.Background(), sess, filter)
			m := f.expect(mcp.MethodSubscriptionsListen)
			f.send(ackFormat, m.ID, `{"toolsListChanged":true}`)
			l := <-res
			if l.err != nil {
				t.Fatal(l.err)
			}
			if !l.sub.Granted.ToolsListChanged || l.sub.Granted.ResourceSubscriptions != nil {
				t.Errorf("Granted = %+v", l.sub.Granted)
			}
			f.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"shutting down"}}`, m.ID)
			<-l.sub.Done()
			if err := l.sub.Err(); !errors.Is(err, client.ErrListenEnded) {
				t.Errorf("Err() = %v, want ErrListenEnded", err)
			}
		})
	})

	t.Run("refused before the acknowledgement", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sess, f := dialFake(t, newClient(nil))
			res := listenAsync(context.Background(), sess, filter)
			m := f.expect(mcp.MethodSubscriptionsListen)
			f.fail(m.ID, jsonrpc.CodeMethodNotFound, "Method not found", "")
			l := <-res
			var rpcErr *jsonrpc.Error
			if l.sub != nil || !errors.As(l.err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMethodNotFound {
				t.Fatalf("Listen = %v, %v; want the server's -32601", l.sub, l.err)
			}
		})
	})

	t.Run("acknowledged and ended at once", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sess, f := dialFake(t, newClient(nil))
			res := listenAsync(context.Background(), sess, filter)
			m := f.expect(mcp.MethodSubscriptionsListen)
			f.send(ackFormat, m.ID, `{"toolsListChanged":true}`)
			f.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%s}}}`, m.ID)
			f.reply(m.ID, fmt.Sprintf(`{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":%s}}`, m.ID))
			synctest.Wait() // both the ack and the end are in before Listen looks
			l := <-res
			if l.err != nil {
				t.Fatalf("Listen: %v, want the (already ended) stream", l.err)
			}
			var got []string
			for e := range l.sub.Events() {
				got = append(got, e.Method)
			}
			if len(got) != 1 || got[0] != mcp.NotificationToolListChanged {
				t.Errorf("events %v", got)
			}
			if err := l.sub.Err(); !errors.Is(err, client.ErrListenEnded) {
				t.Errorf("Err() = %v, want ErrListenEnded", err)
			}
		})
	})

	t.Run("routing", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sess, f := dialFake(t, newClient(nil))
			res := listenAsync(context.Background(), sess, filter)
			m := f.expect(mcp.MethodSubscriptionsListen)
			// Events before the acknowledgement are kept.
			f.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%s}}}`, m.ID)
			f.send(ackFormat, m.ID, `{"toolsListChanged":true,"resourceSubscriptions":["file:///a"]}`)
			l := <-res
			if l.err != nil {
				t.Fatal(l.err)
			}
			defer l.sub.Close()
			// A second acknowledgement changes nothing.
			f.send(ackFormat, m.ID, `{}`)
			// Wrong, missing or malformed subscription ids are dropped.
			f.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"other"}}}`)
			f.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`)
			f.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}`)
			f.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
			f.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":[]}}}`)
			f.send(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%s},"uri":"file:///a"}}`, m.ID)
			synctest.Wait()
			got, closed := pending(l.sub)
			if closed || len(got) != 2 || got[0].Method != mcp.NotificationToolListChanged || got[1].URI != "file:///a" {
				t.Errorf("events %+v (closed %v)", got, closed)
			}
			if !l.sub.Granted.ToolsListChanged || len(l.sub.Granted.ResourceSubscriptions) != 1 {
				t.Errorf("Granted = %+v, want the first acknowledgement", l.sub.Granted)
			}
		})
	})

	t.Run("context ends before the acknowledgement", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sess, f := dialFake(t, newClient(nil))
			ctx, cancel := context.WithCancel(context.Background())
			res := listenAsync(ctx, sess, filter)
			m := f.expect(mcp.MethodSubscriptionsListen)
			cancel()
			l := <-res
			if l.sub != nil || !errors.Is(l.err, context.Canceled) {
				t.Fatalf("Listen = %v, %v; want context.Canceled", l.sub, l.err)
			}
			n := f.next()
			var id json.RawMessage
			n.param(t, "requestId", &id)
			if n.Method != "notifications/cancelled" || string(id) != string(m.ID) {
				t.Errorf("client sent %s, want the listen request's cancellation", n.Raw)
			}
			// A late acknowledgement finds nothing.
			f.send(ackFormat, m.ID, `{"toolsListChanged":true}`)
		})
	})

	t.Run("invalid final result", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sess, f := dialFake(t, newClient(nil))
			res := listenAsync(context.Background(), sess, filter)
			m := f.expect(mcp.MethodSubscriptionsListen)
			f.send(ackFormat, m.ID, `{"toolsListChanged":true}`)
			l := <-res
			if l.err != nil {
				t.Fatal(l.err)
			}
			f.reply(m.ID, `{"resultType":"input_required","requestState":"x"}`)
			<-l.sub.Done()
			wantInvalid(t, l.sub.Err(), mcp.MethodSubscriptionsListen)
		})
	})

	t.Run("failed by the server after the acknowledgement", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sess, f := dialFake(t, newClient(nil))
			res := listenAsync(context.Background(), sess, filter)
			m := f.expect(mcp.MethodSubscriptionsListen)
			f.send(ackFormat, m.ID, `{"toolsListChanged":true}`)
			l := <-res
			if l.err != nil {
				t.Fatal(l.err)
			}
			f.fail(m.ID, jsonrpc.CodeInternalError, "Internal error", "")
			<-l.sub.Done()
			var rpcErr *jsonrpc.Error
			if err := l.sub.Err(); !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError {
				t.Errorf("Err() = %v, want the server's -32603", err)
			}
		})
	})

	t.Run("negotiated", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f, tr := newFake(t)
			cres := connectAsync(aheadClient(nil), tr)
			m := f.expect(mcp.MethodDiscover)
			f.reply(m.ID, fakeDiscoverResult)
			r := <-cres
			if r.err != nil {
				t.Fatal(r.err)
			}
			defer r.sess.Close()
			res := listenAsync(context.Background(), r.sess, filter)
			first := f.expect(mcp.MethodSubscriptionsListen)
			f.unsupported(first.ID, futureVersion, mcp.LatestVersion)
			second := f.expect(mcp.MethodSubscriptionsListen)
			if v := version(t, second); v != mcp.LatestVersion {
				t.Fatalf("listen retry speaks %q", v)
			}
			f.send(ackFormat, second.ID, `{"toolsListChanged":true}`)
			l := <-res
			if l.err != nil {
				t.Fatal(l.err)
			}
			defer l.sub.Close()
			if l.sub.ID.Raw() != string(second.ID) {
				t.Errorf("subscription id %s, want the id of the request that was acknowledged, %s", l.sub.ID.Raw(), second.ID)
			}
			f.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%s}}}`, second.ID)
			if e := <-l.sub.Events(); e.Method != mcp.NotificationToolListChanged {
				t.Errorf("event %+v", e)
			}
		})
	})

	t.Run("a consumer that falls behind", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sess, f := dialFake(t, newClient(nil))
			res := listenAsync(context.Background(), sess, filter)
			m := f.expect(mcp.MethodSubscriptionsListen)
			f.send(ackFormat, m.ID, `{"toolsListChanged":true}`)
			l := <-res
			if l.err != nil {
				t.Fatal(l.err)
			}
			for range 200 {
				f.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%s}}}`, m.ID)
			}
			// The session is not blocked by the unread events.
			done := async(func() error { _, err := sess.ListTools(context.Background(), ""); return err })
			lm := f.expect(mcp.MethodListTools)
			f.reply(lm.ID, `{"resultType":"complete","tools":[]}`)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			got, closed := pending(l.sub)
			if closed || len(got) == 0 || len(got) >= 200 {
				t.Errorf("%d events buffered (closed %v), want some dropped", len(got), closed)
			}
			l.sub.Close()
		})
	})
}

// TestListenRaces opens, closes and ends streams from many goroutines while
// the server publishes, for the race detector; synctest then checks that no
// goroutine is left behind.
func TestListenRaces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fixture(nil)
		sess, _ := connect(t, newClient(nil), srv)
		ctx := context.Background()
		const n = 12
		subs := make(chan *client.Subscription, n)
		for i := range n {
			go func() {
				sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true, PromptsListChanged: i%2 == 0})
				if err != nil {
					t.Error(err)
					subs <- nil
					return
				}
				subs <- sub
			}()
		}
		var all []*client.Subscription
		for range n {
			if sub := <-subs; sub != nil {
				all = append(all, sub)
			}
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range 20 {
				srv.NotifyToolListChanged()
				srv.NotifyPromptListChanged()
			}
		}()
		for i, sub := range all {
			go func() {
				for range sub.Events() {
				}
			}()
			if i%3 == 0 {
				go sub.Close()
			}
		}
		go srv.EndSubscriptions()
		<-done
		sess.Close()
		for _, sub := range all {
			<-sub.Done()
			err := sub.Err()
			if !errors.Is(err, context.Canceled) && !errors.Is(err, client.ErrListenEnded) && !errors.Is(err, jsonrpc.ErrConnClosed) {
				t.Errorf("Err() = %v", err)
			}
		}
	})
}
