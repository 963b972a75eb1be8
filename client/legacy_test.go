package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// TestLegacyPinnedHandshake: a pinned legacy version initializes at once,
// declares the derived capabilities, says initialized, sets the log level,
// and then sends requests without the envelope.
func TestLegacyPinnedHandshake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newClient(pinned(client.Options{Elicit: answerRegions(nil, "x"), LogLevel: mcp.LevelInfo}))
		sess, w := dialLegacy(t, c, fixture(&server.Options{Instructions: "use t1 first"}))
		if got := sess.ProtocolVersion(); got != mcp.Version20251125 {
			t.Errorf("ProtocolVersion() = %q", got)
		}
		sent := w.Sent()
		if len(sent) < 3 {
			t.Fatalf("the handshake sent %d messages", len(sent))
		}
		init, initialized, setLevel := sent[0], sent[1], sent[2]
		if init.Method != mcp.MethodInitialize || !init.isRequest() {
			t.Fatalf("first message %s, want initialize", init.Raw)
		}
		var p mcp.InitializeRequestParams
		if err := json.Unmarshal(init.Params, &p); err != nil {
			t.Fatal(err)
		}
		if p.ProtocolVersion != mcp.Version20251125 || p.ClientInfo.Name != testClientInfo.Name ||
			p.Capabilities.Elicitation == nil || p.Capabilities.Sampling != nil {
			t.Errorf("initialize params %s", init.Params)
		}
		if init.meta(t) != nil {
			t.Errorf("initialize carries _meta: %s", init.Raw)
		}
		if initialized.Method != mcp.NotificationInitialized || initialized.isRequest() {
			t.Errorf("second message %s, want notifications/initialized", initialized.Raw)
		}
		var level mcp.LoggingLevel
		if setLevel.Method != mcp.MethodSetLoggingLevel {
			t.Fatalf("third message %s, want logging/setLevel", setLevel.Raw)
		}
		if setLevel.param(t, "level", &level); level != mcp.LevelInfo {
			t.Errorf("logging/setLevel to %q", level)
		}
		if n := len(w.Requests(mcp.MethodDiscover)); n != 0 {
			t.Errorf("a pinned legacy session sent %d server/discover", n)
		}

		// What initialize said is the session's.
		if info := sess.ServerInfo(); info == nil || info.Name != "test-server" {
			t.Errorf("ServerInfo() = %+v", info)
		}
		if caps := sess.ServerCapabilities(); caps.Tools == nil || caps.Resources == nil || !caps.Resources.Subscribe {
			t.Errorf("ServerCapabilities() = %+v", caps)
		}
		if got := sess.Instructions(); got != "use t1 first" {
			t.Errorf("Instructions() = %q", got)
		}
		if r := sess.InitializeResult(); r == nil || r.ProtocolVersion != mcp.Version20251125 {
			t.Errorf("InitializeResult() = %+v", r)
		}
		// Discover answers from initialize, without a request.
		d, err := sess.Discover(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(d.SupportedVersions, []mcp.ProtocolVersion{mcp.Version20251125}) || d.Instructions != "use t1 first" ||
			d.Capabilities.Tools == nil || d.ServerInfo() == nil || d.ServerInfo().Name != "test-server" {
			t.Errorf("Discover() = %+v", d)
		}
		if n := len(w.Requests(mcp.MethodDiscover)); n != 0 {
			t.Errorf("Discover on a legacy session sent %d server/discover", n)
		}

		// Requests carry no envelope; results have no resultType.
		ctx := context.Background()
		var names []string
		for tool, err := range sess.Tools(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tool.Name)
		}
		if len(names) != 5 {
			t.Errorf("tools %v", names)
		}
		res, err := sess.CallTool(ctx, "echo", echoArgs("hi"))
		if err != nil || text(res) != "hi" {
			t.Fatalf("CallTool: %v, %v", res, err)
		}
		for _, m := range w.Requests("") {
			if m.Method != mcp.MethodInitialize && m.meta(t) != nil {
				t.Errorf("%s carries _meta: %s", m.Method, m.Raw)
			}
		}
		for _, m := range w.Received() {
			if strings.Contains(string(m.Result), `"resultType"`) {
				t.Errorf("a legacy result carries resultType: %s", m.Raw)
			}
		}
	})
}

// TestLegacyPinnedOlderVersions: each legacy version the client speaks can
// be pinned, and the server answers with it.
func TestLegacyPinnedOlderVersions(t *testing.T) {
	for _, v := range []mcp.ProtocolVersion{mcp.Version20250618, mcp.Version20250326} {
		synctest.Test(t, func(t *testing.T) {
			sess, _ := dialLegacy(t, newClient(&client.Options{ProtocolVersion: v}), fixture(nil))
			if got := sess.ProtocolVersion(); got != v {
				t.Errorf("pinned %s: ProtocolVersion() = %q", v, got)
			}
			if _, err := sess.CallTool(context.Background(), "echo", echoArgs("x")); err != nil {
				t.Errorf("pinned %s: CallTool: %v", v, err)
			}
		})
	}
}

// TestLegacyAnswerVersion: the client accepts any legacy version it speaks
// in the server's answer, and disconnects on any other.
func TestLegacyAnswerVersion(t *testing.T) {
	for _, tc := range []struct {
		answer mcp.ProtocolVersion
		ok     bool
	}{
		{mcp.Version20250618, true},
		{mcp.Version20250326, true},
		{mcp.Version20241105, false},
		{mcp.LatestVersion, false},
		{"2030-01-01", false},
	} {
		synctest.Test(t, func(t *testing.T) {
			f, tr := newFake(t)
			res := connectAsync(newClient(pinned(client.Options{})), tr)
			init := f.lexpect(mcp.MethodInitialize)
			f.reply(init.ID, `{"protocolVersion":"`+string(tc.answer)+`","capabilities":{},"serverInfo":{"name":"x","version":"1"}}`)
			if !tc.ok {
				r := <-res
				if !errors.Is(r.err, client.ErrUnsupportedVersion) {
					t.Fatalf("answer %s: Connect: %v, want ErrUnsupportedVersion", tc.answer, r.err)
				}
				f.expectClosed() // no initialized, and the connection closed
				return
			}
			f.lexpect(mcp.NotificationInitialized)
			r := <-res
			if r.err != nil {
				t.Fatalf("answer %s: Connect: %v", tc.answer, r.err)
			}
			defer r.sess.Close()
			if got := r.sess.ProtocolVersion(); got != tc.answer {
				t.Errorf("ProtocolVersion() = %q, want the answer %q", got, tc.answer)
			}
		})
	}
}

// TestLegacyPinnedModernServer: a server without the handshake shares no
// version with a client pinned to a legacy one.
func TestLegacyPinnedModernServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn, served := serve(t, newServer(&server.Options{SupportedVersions: []mcp.ProtocolVersion{mcp.LatestVersion}}))
		_, err := newClient(pinned(client.Options{})).Connect(context.Background(), transport.NewMemoryTransport(conn))
		if !errors.Is(err, client.ErrUnsupportedVersion) {
			t.Fatalf("Connect: %v, want ErrUnsupportedVersion", err)
		}
		if err := <-served; err != nil {
			t.Errorf("ServeConn: %v", err)
		}
	})
}

// TestAutoModernOnDualServer: automatic mode against a server that speaks
// both generations lands on 2026-07-28 and never initializes.
func TestAutoModernOnDualServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sess, w := connect(t, newClient(nil), fixture(nil))
		if got := sess.ProtocolVersion(); got != mcp.LatestVersion {
			t.Errorf("ProtocolVersion() = %q", got)
		}
		if sess.InitializeResult() != nil {
			t.Error("InitializeResult() on a 2026-07-28 session")
		}
		if n := len(w.Requests(mcp.MethodInitialize)); n != 0 {
			t.Errorf("sent %d initialize", n)
		}
	})
}

// TestAutoLegacyOnLegacyServer: automatic mode against a 2025-11-25-only
// server probes server/discover, gets -32022, and initializes on the same
// connection.
func TestAutoLegacyOnLegacyServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sess, w := dialLegacy(t, newClient(nil), fixture(legacyOnly()))
		if got := sess.ProtocolVersion(); got != mcp.Version20251125 {
			t.Errorf("ProtocolVersion() = %q", got)
		}
		var methods []string
		for _, m := range w.Sent() {
			methods = append(methods, m.Method)
		}
		want := []string{mcp.MethodDiscover, mcp.MethodInitialize, mcp.NotificationInitialized}
		if !slices.Equal(methods, want) {
			t.Errorf("Connect sent %v, want %v", methods, want)
		}
		if info := sess.ServerInfo(); info == nil || info.Name != "test-server" {
			t.Errorf("ServerInfo() = %+v", info)
		}
		res, err := sess.CallTool(context.Background(), "echo", echoArgs("legacy"))
		if err != nil || text(res) != "legacy" {
			t.Fatalf("CallTool: %v, %v", res, err)
		}
	})
}

// TestAutoLegacyOnErrorCodes: any error code that 2026-07-28 does not
// define makes automatic mode initialize on the same connection: -32601
// (no server/discover), the -32602, -32600 and -32000 deployed legacy
// servers answer a request before initialize with (the TypeScript SDK's
// "Bad Request: Server not initialized" is -32000), the -32001 of a
// session it does not know, and codes no one uses, since the
// specification warns against keying the fallback on any one code.
func TestAutoLegacyOnErrorCodes(t *testing.T) {
	for _, code := range []int64{jsonrpc.CodeMethodNotFound, jsonrpc.CodeInvalidParams, jsonrpc.CodeInvalidRequest,
		-32000, -32001, jsonrpc.CodeInternalError, jsonrpc.CodeParseError, -32023, 0, 42} {
		synctest.Test(t, func(t *testing.T) {
			f, tr := newFake(t)
			res := connectAsync(newClient(nil), tr)
			m := f.expect(mcp.MethodDiscover)
			f.fail(m.ID, code, "no", "")
			init := f.handshake(legacyInit)
			var offered mcp.ProtocolVersion
			if init.param(t, "protocolVersion", &offered); offered != mcp.Version20251125 {
				t.Errorf("%d: initialize offers %q", code, offered)
			}
			r := <-res
			if r.err != nil {
				t.Fatalf("%d: Connect: %v", code, r.err)
			}
			defer r.sess.Close()
			if got := r.sess.ProtocolVersion(); got != mcp.Version20251125 {
				t.Errorf("%d: ProtocolVersion() = %q", code, got)
			}
			if got := r.sess.Instructions(); got != "old school" {
				t.Errorf("Instructions() = %q", got)
			}
		})
	}
}

// TestAutoReconnects: a stdio-like server that exits on an unknown first
// request, without answering or after answering -32601, makes automatic
// mode connect again and initialize on the fresh connection.
func TestAutoReconnects(t *testing.T) {
	for _, answerFirst := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			s := fixture(legacyOnly())
			var wires []*legacyWire
			tr := &redialTransport{dial: func(n int) transport.Conn {
				clientEnd, serverEnd := transport.NewMemoryPipe()
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() {
					defer close(done)
					s.ServeConn(ctx, &legacyProcess{Conn: serverEnd, answerFirst: answerFirst})
				}()
				t.Cleanup(func() { cancel(); <-done })
				w := newLegacyWire(t, clientEnd)
				wires = append(wires, w)
				return w
			}}
			sess, err := newClient(nil).Connect(context.Background(), tr)
			if err != nil {
				t.Fatalf("answerFirst=%v: Connect: %v", answerFirst, err)
			}
			defer sess.Close()
			if n := tr.n.Load(); n != 2 {
				t.Errorf("answerFirst=%v: %d connections, want 2", answerFirst, n)
			}
			if got := sess.ProtocolVersion(); got != mcp.Version20251125 {
				t.Errorf("ProtocolVersion() = %q", got)
			}
			if first := wires[0].Requests(""); len(first) == 0 || first[0].Method != mcp.MethodDiscover {
				t.Errorf("the first connection carried %v", first)
			}
			if second := wires[1].Requests(""); len(second) != 1 || second[0].Method != mcp.MethodInitialize {
				t.Errorf("the second connection carried %v, want initialize alone", second)
			}
			res, err := sess.CallTool(context.Background(), "echo", echoArgs("again"))
			if err != nil || text(res) != "again" {
				t.Fatalf("CallTool: %v, %v", res, err)
			}
		})
	}
}

// TestAutoReconnectImpossible: a transport that connects only once turns
// a server that went away into an error naming both failures.
func TestAutoReconnectImpossible(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, tr := newFake(t)
		res := connectAsync(newClient(nil), tr)
		f.expect(mcp.MethodDiscover)
		f.conn.Close()
		r := <-res
		if r.err == nil {
			r.sess.Close()
			t.Fatal("Connect succeeded")
		}
		if !errors.Is(r.err, transport.ErrClosed) || !errors.Is(r.err, jsonrpc.ErrConnClosed) {
			t.Errorf("Connect: %v, want the closed connection and the failed reconnect", r.err)
		}
	})
}

// TestOneSetOfCallbacks: the same Options.Elicit, Sample and ListRoots
// answer a 2026-07-28 server's input_required rounds and a legacy server's
// own requests (req.Ask), and the caller gets the same result from both.
func TestOneSetOfCallbacks(t *testing.T) {
	for _, tc := range []struct{ tool, want string }{
		{"elicit", "accept eu-west-1"},
		{"sample", "sampled Frankfurt"},
		{"roots", "roots file:///src file:///docs"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int32
				count := func() { calls.Add(1) }
				elicit := answerRegions(nil, "eu-west-1")
				sample, roots := sampleText("Frankfurt"), listRoots("file:///src", "file:///docs")
				c := newClient(&client.Options{
					Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
						count()
						return elicit(ctx, p)
					},
					Sample: func(ctx context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
						count()
						return sample(ctx, p)
					},
					ListRoots: func(ctx context.Context) (*mcp.ListRootsResult, error) {
						count()
						return roots(ctx)
					},
				})
				modern, mw := connect(t, c, askingServer(nil))
				legacy, lw := dialLegacy(t, c, askingServer(legacyOnly()))
				if modern.ProtocolVersion().Era() != mcp.EraModern || legacy.ProtocolVersion().Era() != mcp.EraLegacy {
					t.Fatalf("sessions speak %s and %s", modern.ProtocolVersion(), legacy.ProtocolVersion())
				}
				for _, sess := range []*client.Session{modern, legacy} {
					res, err := sess.CallTool(context.Background(), tc.tool, nil)
					if err != nil {
						t.Fatalf("%s: CallTool: %v", sess.ProtocolVersion(), err)
					}
					if res.IsError || text(res) != tc.want {
						t.Errorf("%s: result %q, want %q", sess.ProtocolVersion(), text(res), tc.want)
					}
				}
				if n := calls.Load(); n != 2 {
					t.Errorf("the callbacks ran %d times, want once per generation", n)
				}
				// The modern session answered in a retry; the legacy one
				// answered the server's request.
				if n := len(mw.Requests(mcp.MethodCallTool)); n != 2 {
					t.Errorf("2026-07-28: %d tools/call, want 2 rounds", n)
				}
				if n := len(lw.Requests(mcp.MethodCallTool)); n != 1 {
					t.Errorf("legacy: %d tools/call, want 1", n)
				}
				if a := lw.Answers(); len(a) != 1 || a[0].Error != nil {
					t.Errorf("legacy: answers to the server %v", a)
				}
			})
		})
	}
}

// TestMissingCallbackBothGenerations: a kind the client declared but has
// no callback for ends a 2026-07-28 call with a *MissingCallbackError, and
// is answered -32601 on a legacy session, so the server's Ask fails.
func TestMissingCallbackBothGenerations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newClient(&client.Options{Capabilities: &mcp.ClientCapabilities{
			Elicitation: &mcp.ElicitationCapability{}, Sampling: &mcp.SamplingCapability{}, Roots: &mcp.RootsCapability{},
		}})
		modern, _ := connect(t, c, askingServer(nil))
		legacy, _ := dialLegacy(t, c, askingServer(legacyOnly()))
		for _, tool := range []string{"elicit", "sample", "roots"} {
			_, err := modern.CallTool(context.Background(), tool, nil)
			var missing *client.MissingCallbackError
			if !errors.As(err, &missing) || !errors.Is(err, client.ErrInputRequired) {
				t.Errorf("2026-07-28 %s: %v, want a MissingCallbackError", tool, err)
			}
			res, err := legacy.CallTool(context.Background(), tool, nil)
			if err != nil {
				t.Fatalf("legacy %s: %v", tool, err)
			}
			if !res.IsError || !strings.HasPrefix(text(res), "ask failed: -32601") {
				t.Errorf("legacy %s: %q, want the server's Ask to fail with -32601", tool, text(res))
			}
		}
	})
}

// TestURLElicitationNotDeclared: a client with an Elicit callback declares
// form mode only, and refuses URL mode in both generations without running
// the callback: an *UndeclaredCapabilityError under 2026-07-28, -32602 to a
// legacy server's request. Declared, URL mode reaches the callback.
func TestURLElicitationNotDeclared(t *testing.T) {
	var ran atomic.Int32
	elicit := func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
		ran.Add(1)
		return &mcp.ElicitResult{Action: mcp.ActionAccept}, nil
	}
	const urlElicit = `{"method":"elicitation/create","params":{"mode":"url","message":"Sign in","url":"https://example.com/login","elicitationId":"e1"}}`
	synctest.Test(t, func(t *testing.T) {
		sess, f := dialFake(t, newClient(&client.Options{Elicit: elicit}))
		done := async(func() error { _, err := sess.CallTool(context.Background(), "x", nil); return err })
		m := f.expect(mcp.MethodCallTool)
		f.reply(m.ID, `{"resultType":"input_required","inputRequests":{"login":`+urlElicit+`}}`)
		err := <-done
		var undeclared *client.UndeclaredCapabilityError
		if !errors.As(err, &undeclared) || undeclared.Key != "login" || !errors.Is(err, client.ErrInputRequired) {
			t.Errorf("2026-07-28: %v, want an UndeclaredCapabilityError for login", err)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		_, f := dialLegacyFake(t, newClient(pinned(client.Options{Elicit: elicit})))
		f.send("%s", `{"jsonrpc":"2.0","id":"s1",`+strings.TrimPrefix(urlElicit, "{"))
		resp := f.lnext(mcp.MethodElicit)
		if string(resp.ID) != `"s1"` || resp.Error == nil || resp.Error.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("legacy answer %s, want -32602", resp.Raw)
		}
	})
	if n := ran.Load(); n != 0 {
		t.Errorf("the callback ran %d times for an undeclared mode", n)
	}
	synctest.Test(t, func(t *testing.T) {
		c := newClient(pinned(client.Options{Elicit: elicit, Capabilities: &mcp.ClientCapabilities{
			Elicitation: &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}},
		}}))
		sess, _ := dialLegacy(t, c, askingServer(nil))
		res, err := sess.CallTool(context.Background(), "url", nil)
		if err != nil || res.IsError || text(res) != "accept <nil>" {
			t.Errorf("declared URL mode: %v, %v", res, err)
		}
	})
}

// TestLegacyCallbackError: a failing callback gives the server an internal
// error without the callback's details, which stay in the client.
func TestLegacyCallbackError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newClient(pinned(client.Options{Sample: func(ctx context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
			return nil, errors.New("secret model key expired")
		}}))
		sess, _ := dialLegacy(t, c, askingServer(nil))
		res, err := sess.CallTool(context.Background(), "sample", nil)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(text(res), "ask failed: -32603") || strings.Contains(text(res), "secret") {
			t.Errorf("result %q, want -32603 without the callback's error", text(res))
		}
	})
}

// TestLegacyPingAndUnknownRequests: the client answers a legacy server's
// ping with an empty result and an unknown request with -32601.
func TestLegacyPingAndUnknownRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, f := dialLegacyFake(t, newClient(pinned(client.Options{})))
		f.send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
		resp := f.lnext(mcp.MethodPing)
		if string(resp.ID) != "7" || resp.Error != nil || string(resp.Result) != "{}" {
			t.Errorf("answer to ping %s", resp.Raw)
		}
		f.send(`{"jsonrpc":"2.0","id":8,"method":"tasks/list","params":{}}`)
		resp = f.lnext("")
		if string(resp.ID) != "8" || resp.Error == nil || resp.Error.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("answer to an unknown request %s", resp.Raw)
		}
	})
}

// TestLegacyProgressAndLog: OnProgress and OnLog work on a legacy session;
// a request carries only its progress token.
func TestLegacyProgressAndLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var pl progressLog
		var ll logLog
		c := newClient(pinned(client.Options{OnProgress: pl.record, OnLog: ll.record, LogLevel: mcp.LevelDebug}))
		sess, w := dialLegacy(t, c, fixture(nil))
		res, err := sess.CallTool(context.Background(), "work", nil)
		if err != nil || text(res) != "done" {
			t.Fatalf("CallTool: %v, %v", res, err)
		}
		if n := pl.count(); n != 2 {
			t.Errorf("%d progress notifications, want 2", n)
		}
		if got := ll.get(); len(got) != 2 {
			t.Errorf("log messages %v, want info and debug", got)
		}
		calls := w.Requests(mcp.MethodCallTool)
		if len(calls) != 1 {
			t.Fatalf("%d tools/call", len(calls))
		}
		meta := calls[0].meta(t)
		if _, ok := meta[mcp.MetaKeyProgressToken]; !ok || len(meta) != 1 {
			t.Errorf("tools/call _meta %v, want the progress token alone", meta)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		// No level asked for: no logging/setLevel, and no log messages.
		var ll logLog
		sess, w := dialLegacy(t, newClient(pinned(client.Options{OnLog: ll.record})), fixture(nil))
		if _, err := sess.CallTool(context.Background(), "work", nil); err != nil {
			t.Fatal(err)
		}
		if n := len(w.Requests(mcp.MethodSetLoggingLevel)); n != 0 {
			t.Errorf("sent %d logging/setLevel", n)
		}
		if got := ll.get(); len(got) != 0 {
			t.Errorf("log messages %v", got)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		// A server that did not declare logging is not asked.
		f, tr := newFake(t)
		res := connectAsync(newClient(pinned(client.Options{LogLevel: mcp.LevelDebug})), tr)
		f.handshake(`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"x","version":"1"}}`)
		r := <-res
		if r.err != nil {
			t.Fatal(r.err)
		}
		defer r.sess.Close()
		done := async(func() error { _, err := r.sess.ListTools(context.Background(), ""); return err })
		m := f.lexpect(mcp.MethodListTools) // not logging/setLevel
		f.reply(m.ID, `{"tools":[]}`)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// TestLegacyWireEveryMethod: on a legacy session, the client's request of
// every method (each with a progress token in its _meta, the one key a
// legacy request carries) and the server's every answer name only what
// 2025-11-25 defines: legacyWire holds each message to it, both ways. The
// server's requests and the client's answers to them are held to it in
// TestOneSetOfCallbacks, subscriptions and list changes in
// TestLegacyListen.
func TestLegacyWireEveryMethod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var pl progressLog
		c := newClient(pinned(client.Options{OnProgress: pl.record, LogLevel: mcp.LevelInfo}))
		sess, w := dialLegacy(t, c, fixture(nil))
		ctx := context.Background()
		for _, err := range sess.Tools(ctx) {
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, err := range sess.Prompts(ctx) {
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, err := range sess.Resources(ctx) {
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, err := range sess.ResourceTemplates(ctx) {
			if err != nil {
				t.Fatal(err)
			}
		}
		if res, err := sess.CallTool(ctx, "work", nil); err != nil || text(res) != "done" {
			t.Fatalf("CallTool: %v, %v", res, err)
		}
		if _, err := sess.GetPrompt(ctx, "greeting", map[string]string{"name": "Ada"}); err != nil {
			t.Fatal(err)
		}
		if _, err := sess.ReadResource(ctx, "file:///readme.txt"); err != nil {
			t.Fatal(err)
		}
		if _, err := sess.Complete(ctx, &mcp.CompleteRequestParams{Ref: &mcp.PromptReference{Name: "greeting"}, Argument: mcp.CompleteArgument{Name: "name", Value: "A"}}); err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{mcp.MethodInitialize, mcp.MethodSetLoggingLevel, mcp.MethodListTools, mcp.MethodListPrompts,
			mcp.MethodListResources, mcp.MethodListResourceTemplates, mcp.MethodCallTool, mcp.MethodGetPrompt,
			mcp.MethodReadResource, mcp.MethodComplete} {
			if len(w.Requests(m)) == 0 {
				t.Errorf("no %s went out", m)
			}
		}
		if n := pl.count(); n != 2 {
			t.Errorf("%d progress notifications, want 2", n)
		}
	})
}

// TestLegacyInputRequiredIsInvalid: a legacy server cannot answer with
// input_required.
func TestLegacyInputRequiredIsInvalid(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sess, f := dialLegacyFake(t, newClient(pinned(client.Options{Elicit: answerRegions(nil, "x")})))
		done := async(func() error { _, err := sess.CallTool(context.Background(), "x", nil); return err })
		m := f.lexpect(mcp.MethodCallTool)
		f.reply(m.ID, `{"resultType":"input_required","inputRequests":{"k":{"method":"roots/list"}},"requestState":"s"}`)
		var bad *client.InvalidResponseError
		if err := <-done; !errors.As(err, &bad) || bad.Method != mcp.MethodCallTool {
			t.Errorf("CallTool: %v, want an InvalidResponseError", err)
		}
	})
}

// TestLegacyManualLoop: a legacy session has no rounds. Begin and
// CallToolRound return the final result (the callbacks answer the server
// meanwhile); Continue, and a round carrying responses or state, fail with
// ErrLegacySession and send nothing.
func TestLegacyManualLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rounds atomic.Int32
		c := newClient(pinned(client.Options{
			Elicit: answerRegions(nil, "eu-west-1"),
			Loop:   &client.LoopOptions{OnRound: func(context.Context, *client.Pending) error { rounds.Add(1); return nil }},
		}))
		sess, w := dialLegacy(t, c, askingServer(nil))
		ctx := context.Background()
		call, err := client.ToolCall("elicit", nil)
		if err != nil {
			t.Fatal(err)
		}
		res, p, err := sess.Begin(ctx, call)
		if err != nil || p != nil {
			t.Fatalf("Begin: %v, %+v, %v", res, p, err)
		}
		if r, ok := res.(*mcp.CallToolResult); !ok || text(r) != "accept eu-west-1" {
			t.Errorf("Begin: %+v", res)
		}
		out, err := sess.CallToolRound(ctx, &mcp.CallToolRequestParams{Name: "elicit"})
		if r, ok := out.(*mcp.CallToolResult); err != nil || !ok || text(r) != "accept eu-west-1" {
			t.Errorf("CallToolRound: %+v, %v", out, err)
		}
		sent := len(w.Requests(""))
		if _, _, err := sess.Continue(ctx, &client.Pending{Call: *call, RequestState: "asked", Round: 1}, nil); !errors.Is(err, client.ErrLegacySession) {
			t.Errorf("Continue: %v, want ErrLegacySession", err)
		}
		if _, err := sess.CallToolRound(ctx, &mcp.CallToolRequestParams{Name: "elicit", RequestState: "asked"}); !errors.Is(err, client.ErrLegacySession) {
			t.Errorf("CallToolRound with requestState: %v, want ErrLegacySession", err)
		}
		// An empty state is a state too.
		if _, _, err := sess.Continue(ctx, &client.Pending{Call: *call, ForceRequestState: true, Round: 1}, nil); !errors.Is(err, client.ErrLegacySession) {
			t.Errorf("Continue with an empty state: %v, want ErrLegacySession", err)
		}
		if _, err := sess.CallToolRound(ctx, &mcp.CallToolRequestParams{Name: "elicit", ForceRequestState: true}); !errors.Is(err, client.ErrLegacySession) {
			t.Errorf("CallToolRound with an empty requestState: %v, want ErrLegacySession", err)
		}
		if n := len(w.Requests("")); n != sent {
			t.Errorf("the refused calls sent %d requests", n-sent)
		}
		if n := rounds.Load(); n != 0 {
			t.Errorf("OnRound ran %d times on a session without rounds", n)
		}
	})
}

// TestLegacyListen: Listen on a legacy session maps onto what it has:
// list changes the server declared, and resources/subscribe. Each stream
// gets what it was granted, and the last stream wanting a resource
// unsubscribes it when it ends.
func TestLegacyListen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := fixture(nil)
		sess, w := dialLegacy(t, newClient(pinned(client.Options{})), s)
		ctx := context.Background()
		a, err := sess.Listen(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: []string{"file:///r1", "file:///r1"}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := sess.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"file:///r1"}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Granted.ResourceSubscriptions, []string{"file:///r1"}) || a.Granted.ToolsListChanged || !b.Granted.ToolsListChanged {
			t.Errorf("granted %+v and %+v", a.Granted, b.Granted)
		}
		if n := len(w.Requests(mcp.MethodSubscribeResource)); n != 1 {
			t.Errorf("%d resources/subscribe for one URI, want 1", n)
		}

		s.NotifyToolListChanged()
		s.NotifyResourceUpdated("file:///r1")
		if e := <-b.Events(); e.Method != mcp.NotificationToolListChanged {
			t.Errorf("b's first event %+v", e)
		}
		for _, sub := range []*client.Subscription{a, b} {
			if e := <-sub.Events(); e.Method != mcp.NotificationResourceUpdated || e.URI != "file:///r1" {
				t.Errorf("event %+v, want the update of file:///r1", e)
			}
		}
		synctest.Wait()
		if len(a.Events()) != 0 {
			t.Errorf("a got %d events it was not granted", len(a.Events()))
		}

		a.Close()
		if n := len(w.Requests(mcp.MethodUnsubscribeResource)); n != 0 {
			t.Errorf("unsubscribed while b still wants the resource")
		}
		if !errors.Is(a.Err(), context.Canceled) {
			t.Errorf("a.Err() = %v", a.Err())
		}
		b.Close()
		unsubs := w.Requests(mcp.MethodUnsubscribeResource)
		if len(unsubs) != 1 {
			t.Fatalf("%d resources/unsubscribe, want 1", len(unsubs))
		}
		var uri string
		if unsubs[0].param(t, "uri", &uri); uri != "file:///r1" {
			t.Errorf("unsubscribed %q", uri)
		}

		// A stream that outlives the session ends with it.
		c, err := sess.Listen(ctx, mcp.SubscriptionFilter{PromptsListChanged: true})
		if err != nil {
			t.Fatal(err)
		}
		sess.Close()
		<-c.Done()
		if !errors.Is(c.Err(), jsonrpc.ErrConnClosed) {
			t.Errorf("c.Err() = %v after Close", c.Err())
		}
	})
}

// TestLegacyClose: closing a legacy session ends it on the server too.
func TestLegacyClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn, served := serve(t, fixture(nil))
		sess, err := newClient(pinned(client.Options{})).Connect(context.Background(), transport.NewMemoryTransport(conn))
		if err != nil {
			t.Fatal(err)
		}
		if err := sess.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		<-sess.Done()
		if err := <-served; err != nil {
			t.Errorf("ServeConn: %v", err)
		}
	})
}

// TestSamplingWithToolsNotDeclared: a client whose sampling capability has
// no tools refuses a sampling request that uses tools, in both
// generations, before its callback runs.
func TestSamplingWithToolsNotDeclared(t *testing.T) {
	var ran atomic.Int32
	sample := func(ctx context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
		ran.Add(1)
		return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: mcp.SamplingContent{&mcp.TextContent{Text: "x"}}, Model: "m"}, nil
	}
	const withTools = `{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10,"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}`
	synctest.Test(t, func(t *testing.T) {
		sess, f := dialFake(t, newClient(&client.Options{Sample: sample}))
		done := async(func() error { _, err := sess.CallTool(context.Background(), "x", nil); return err })
		m := f.expect(mcp.MethodCallTool)
		f.reply(m.ID, `{"resultType":"input_required","inputRequests":{"draft":`+withTools+`}}`)
		var undeclared *client.UndeclaredCapabilityError
		if err := <-done; !errors.As(err, &undeclared) || undeclared.Key != "draft" {
			t.Errorf("2026-07-28: %v, want an UndeclaredCapabilityError for draft", err)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		_, f := dialLegacyFake(t, newClient(pinned(client.Options{Sample: sample})))
		f.send("%s", `{"jsonrpc":"2.0","id":"s2",`+strings.TrimPrefix(withTools, "{"))
		resp := f.lnext(mcp.MethodCreateMessage)
		if string(resp.ID) != `"s2"` || resp.Error == nil || resp.Error.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("legacy answer %s, want -32602", resp.Raw)
		}
	})
	if n := ran.Load(); n != 0 {
		t.Errorf("the callback ran %d times for an undeclared capability", n)
	}
}
