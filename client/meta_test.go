package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
)

// testCaps are the capabilities the meta tests declare, so that they can
// tell them from the default {}.
var testCaps = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}

const testCapsJSON = `{"elicitation":{}}`

func jsonEqual(t testing.TB, got []byte, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: %v", want, err)
	}
	return reflect.DeepEqual(g, w)
}

// checkMeta checks the reserved _meta keys of one request as it was on the
// wire: version, capabilities and client info present with the right
// values, and nothing the client did not ask for.
func checkMeta(t testing.TB, m wireMsg, version mcp.ProtocolVersion, caps string) {
	t.Helper()
	for _, key := range []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientCapabilities, mcp.MetaKeyClientInfo} {
		if !bytes.Contains(m.Raw, []byte(`"`+key+`":`)) {
			t.Errorf("%s request lacks %s on the wire: %s", m.Method, key, m.Raw)
		}
	}
	meta := m.meta(t)
	if got := string(meta[mcp.MetaKeyProtocolVersion]); got != `"`+string(version)+`"` {
		t.Errorf("%s: protocolVersion %s, want %q", m.Method, got, version)
	}
	if got := meta[mcp.MetaKeyClientCapabilities]; got == nil || !jsonEqual(t, got, caps) {
		t.Errorf("%s: clientCapabilities %s, want %s", m.Method, got, caps)
	}
	info, _ := json.Marshal(testClientInfo)
	if got := meta[mcp.MetaKeyClientInfo]; got == nil || !jsonEqual(t, got, string(info)) {
		t.Errorf("%s: clientInfo %s, want %s", m.Method, got, info)
	}
	for _, key := range []string{mcp.MetaKeyLogLevel, mcp.MetaKeyProgressToken} {
		if v, ok := meta[key]; ok {
			t.Errorf("%s: unrequested %s = %s", m.Method, key, v)
		}
	}
}

// TestEveryRequestCarriesMeta drives every call of the session against the
// real server and checks each request the client wrote: the wire recorder
// has validated it against the 2026-07-28 schema, and checkMeta looks at
// its reserved keys.
func TestEveryRequestCarriesMeta(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		srv := fixture(nil)
		sess, w := connect(t, newClient(&client.Options{Capabilities: testCaps}), srv)

		if _, err := sess.ListTools(ctx, ""); err != nil {
			t.Fatal(err)
		}
		for _, err := range sess.Tools(ctx) { // three pages
			if err != nil {
				t.Fatal(err)
			}
		}
		if _, err := sess.ListPrompts(ctx, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := sess.ListResources(ctx, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := sess.ListResourceTemplates(ctx, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := sess.CallTool(ctx, "echo", map[string]any{"text": "hi"}); err != nil {
			t.Fatal(err)
		}
		if _, err := sess.GetPrompt(ctx, "greeting", map[string]string{"name": "Ada"}); err != nil {
			t.Fatal(err)
		}
		if _, err := sess.ReadResource(ctx, "file:///readme.txt"); err != nil {
			t.Fatal(err)
		}
		if _, err := sess.Complete(ctx, &mcp.CompleteRequestParams{
			Ref:      &mcp.PromptReference{Name: "greeting"},
			Argument: mcp.CompleteArgument{Name: "name", Value: "A"},
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := sess.Discover(ctx); err != nil {
			t.Fatal(err)
		}
		sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true})
		if err != nil {
			t.Fatal(err)
		}
		sub.Close()
		synctest.Wait() // the cancellation has been written

		var methods []string
		for _, m := range w.Requests("") {
			checkMeta(t, m, mcp.LatestVersion, testCapsJSON)
			if !slices.Contains(methods, m.Method) {
				methods = append(methods, m.Method)
			}
		}
		slices.Sort(methods)
		want := []string{
			mcp.MethodComplete, mcp.MethodGetPrompt, mcp.MethodListPrompts, mcp.MethodListResourceTemplates,
			mcp.MethodListResources, mcp.MethodReadResource, mcp.MethodDiscover, mcp.MethodSubscriptionsListen,
			mcp.MethodCallTool, mcp.MethodListTools,
		}
		slices.Sort(want)
		if !slices.Equal(methods, want) {
			t.Errorf("requests sent for %v, want %v", methods, want)
		}
		// The only notification is the listen cancellation, and it names
		// the listen request.
		for _, m := range w.Sent() {
			if m.isRequest() {
				continue
			}
			if m.Method != "notifications/cancelled" {
				t.Errorf("client sent notification %s", m.Raw)
				continue
			}
			var id json.RawMessage
			m.param(t, "requestId", &id)
			if string(id) != sub.ID.Raw() {
				t.Errorf("cancellation for %s, want the listen request %s", id, sub.ID.Raw())
			}
		}
	})
}

// TestMetaOnTheWire checks the raw bytes of every kind of request against a
// fake server, which answers with minimal results, and checks that the
// default capabilities are sent as {}.
func TestMetaOnTheWire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		f, tr := newFake(t)
		res := connectAsync(newClient(nil), tr)
		discover := f.expect(mcp.MethodDiscover)
		checkMeta(t, discover, mcp.LatestVersion, `{}`)
		if got := string(discover.Params); !bytes.HasPrefix([]byte(got), []byte(`{"_meta":{`)) {
			t.Errorf("discover params %s, want only _meta", got)
		}
		f.reply(discover.ID, fakeDiscoverResult)
		r := <-res
		if r.err != nil {
			t.Fatal(r.err)
		}
		sess := r.sess
		defer sess.Close()

		calls := []struct {
			method string
			call   func() error
			result string
		}{
			{mcp.MethodListTools, func() error { _, err := sess.ListTools(ctx, "c1"); return err }, `{"resultType":"complete","tools":[]}`},
			{mcp.MethodListPrompts, func() error { _, err := sess.ListPrompts(ctx, ""); return err }, `{"resultType":"complete","prompts":[]}`},
			{mcp.MethodListResources, func() error { _, err := sess.ListResources(ctx, ""); return err }, `{"resultType":"complete","resources":[]}`},
			{mcp.MethodListResourceTemplates, func() error { _, err := sess.ListResourceTemplates(ctx, ""); return err }, `{"resultType":"complete","resourceTemplates":[]}`},
			{mcp.MethodCallTool, func() error { _, err := sess.CallTool(ctx, "x", nil); return err }, `{"resultType":"complete","content":[]}`},
			{mcp.MethodGetPrompt, func() error { _, err := sess.GetPrompt(ctx, "p", nil); return err }, `{"resultType":"complete","messages":[]}`},
			{mcp.MethodReadResource, func() error { _, err := sess.ReadResource(ctx, "file:///x"); return err }, `{"resultType":"complete","contents":[]}`},
			{mcp.MethodComplete, func() error {
				_, err := sess.Complete(ctx, &mcp.CompleteRequestParams{Ref: &mcp.PromptReference{Name: "p"}, Argument: mcp.CompleteArgument{Name: "a"}})
				return err
			}, `{"resultType":"complete","completion":{"values":[]}}`},
			{mcp.MethodDiscover, func() error { _, err := sess.Discover(ctx); return err }, fakeDiscoverResult},
		}
		for _, c := range calls {
			done := async(c.call)
			m := f.expect(c.method)
			checkMeta(t, m, mcp.LatestVersion, `{}`)
			f.reply(m.ID, c.result)
			if err := <-done; err != nil {
				t.Errorf("%s: %v", c.method, err)
			}
		}

		// subscriptions/listen too, and the cancellation that ends it.
		type listened struct {
			sub *client.Subscription
			err error
		}
		lres := make(chan listened, 1)
		go func() {
			sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true})
			lres <- listened{sub, err}
		}()
		m := f.expect(mcp.MethodSubscriptionsListen)
		checkMeta(t, m, mcp.LatestVersion, `{}`)
		f.send(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%s},"notifications":{"toolsListChanged":true}}}`, m.ID)
		l := <-lres
		if l.err != nil {
			t.Fatal(l.err)
		}
		l.sub.Close()
		n := f.next()
		var id json.RawMessage
		n.param(t, "requestId", &id)
		if n.Method != "notifications/cancelled" || string(id) != string(m.ID) {
			t.Errorf("after Close the client sent %s, want notifications/cancelled for %s", n.Raw, m.ID)
		}
	})
}

// TestMetaLogLevelAndToken checks the optional keys: the log level and a
// progress token go on every request when the options ask for them.
func TestMetaLogLevelAndToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c := newClient(&client.Options{
			LogLevel:   mcp.LevelWarning,
			OnProgress: func(context.Context, *mcp.ProgressNotificationParams) {},
		})
		sess, w := connect(t, c, fixture(nil))
		if _, err := sess.ListTools(ctx, ""); err != nil {
			t.Fatal(err)
		}
		for _, m := range w.Requests("") {
			meta := m.meta(t)
			if got := string(meta[mcp.MetaKeyLogLevel]); got != `"warning"` {
				t.Errorf("%s: logLevel %s, want \"warning\"", m.Method, got)
			}
			if _, ok := meta[mcp.MetaKeyProgressToken]; !ok {
				t.Errorf("%s: no progressToken though OnProgress is set", m.Method)
			}
		}
	})
}
