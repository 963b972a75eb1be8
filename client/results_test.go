package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

func TestSessionReflectsDiscover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sess, _ := connect(t, newClient(nil), fixture(&server.Options{Instructions: "use t1 first"}))
		if got := sess.ProtocolVersion(); got != mcp.LatestVersion {
			t.Errorf("ProtocolVersion() = %q, want %q", got, mcp.LatestVersion)
		}
		info := sess.ServerInfo()
		if info == nil || info.Name != "test-server" || info.Version != "9.8.7" {
			t.Errorf("ServerInfo() = %+v", info)
		}
		caps := sess.ServerCapabilities()
		if caps.Tools == nil || !caps.Tools.ListChanged {
			t.Errorf("tools capability %+v", caps.Tools)
		}
		if caps.Prompts == nil || caps.Resources == nil || !caps.Resources.Subscribe || caps.Completions == nil {
			t.Errorf("capabilities %+v", caps)
		}
		d, err := sess.Discover(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// The server lists its legacy versions too, after the preferred one.
		if d.Instructions != "use t1 first" || len(d.SupportedVersions) == 0 || d.SupportedVersions[0] != mcp.LatestVersion {
			t.Errorf("discover result %+v", d)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		// A server with tools only declares nothing else.
		s := newServer(nil)
		s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
			return mcp.TextResult("ok"), nil
		})
		sess, _ := connect(t, newClient(nil), s)
		caps := sess.ServerCapabilities()
		if caps.Tools == nil || caps.Prompts != nil || caps.Resources != nil || caps.Completions != nil {
			t.Errorf("capabilities %+v", caps)
		}
	})
}

func TestServerInfoFromFake(t *testing.T) {
	for _, tc := range []struct {
		name, result string
		wantInfo     string // name of the server, "" for none
	}{
		{"in _meta", fakeDiscoverResult, "fake"},
		{"legacy top-level field", `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"1"}}`, "old"},
		{"_meta wins", `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"1"},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"new","version":"2"}}}`, "new"},
		{"none", `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f, tr := newFake(t)
				res := connectAsync(newClient(nil), tr)
				m := f.expect(mcp.MethodDiscover)
				f.reply(m.ID, tc.result)
				r := <-res
				if r.err != nil {
					t.Fatal(r.err)
				}
				defer r.sess.Close()
				info := r.sess.ServerInfo()
				switch {
				case tc.wantInfo == "" && info != nil:
					t.Errorf("ServerInfo() = %+v, want nil", info)
				case tc.wantInfo != "" && (info == nil || info.Name != tc.wantInfo):
					t.Errorf("ServerInfo() = %+v, want %s", info, tc.wantInfo)
				}
				if r.sess.ServerCapabilities().Tools == nil {
					t.Errorf("capabilities %+v lack tools", r.sess.ServerCapabilities())
				}
			})
		})
	}
}

func TestDiscoverRefreshesServerInfo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sess, f := dialFake(t, newClient(nil))
		done := async(func() error { _, err := sess.Discover(context.Background()); return err })
		m := f.expect(mcp.MethodDiscover)
		f.reply(m.ID, strings.Replace(fakeDiscoverResult, `"0.0.1"`, `"0.0.2"`, 1))
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if info := sess.ServerInfo(); info == nil || info.Version != "0.0.2" {
			t.Errorf("ServerInfo() = %+v after a new discover", info)
		}
	})
}

// resultCall is one session call and the method it sends.
type resultCall struct {
	method   string
	call     func(*client.Session) error
	complete string // a valid complete result without resultType
	carrier  bool   // may answer input_required
}

func resultCalls() []resultCall {
	ctx := context.Background()
	return []resultCall{
		{mcp.MethodListTools, func(s *client.Session) error { _, err := s.ListTools(ctx, ""); return err }, `"tools":[]`, false},
		{mcp.MethodListPrompts, func(s *client.Session) error { _, err := s.ListPrompts(ctx, ""); return err }, `"prompts":[]`, false},
		{mcp.MethodListResources, func(s *client.Session) error { _, err := s.ListResources(ctx, ""); return err }, `"resources":[]`, false},
		{mcp.MethodListResourceTemplates, func(s *client.Session) error { _, err := s.ListResourceTemplates(ctx, ""); return err }, `"resourceTemplates":[]`, false},
		{mcp.MethodComplete, func(s *client.Session) error {
			_, err := s.Complete(ctx, &mcp.CompleteRequestParams{Ref: &mcp.PromptReference{Name: "p"}, Argument: mcp.CompleteArgument{Name: "a"}})
			return err
		}, `"completion":{"values":["x"]}`, false},
		{mcp.MethodDiscover, func(s *client.Session) error { _, err := s.Discover(ctx); return err }, `"supportedVersions":["2026-07-28"],"capabilities":{}`, false},
		{mcp.MethodCallTool, func(s *client.Session) error { _, err := s.CallTool(ctx, "x", nil); return err }, `"content":[{"type":"text","text":"hi"}]`, true},
		{mcp.MethodGetPrompt, func(s *client.Session) error { _, err := s.GetPrompt(ctx, "p", nil); return err }, `"messages":[]`, true},
		{mcp.MethodReadResource, func(s *client.Session) error { _, err := s.ReadResource(ctx, "file:///x"); return err }, `"contents":[]`, true},
	}
}

// answer sends c's request and answers it with result.
func answer(t *testing.T, sess *client.Session, f *fake, c resultCall, result string) error {
	t.Helper()
	done := async(func() error { return c.call(sess) })
	m := f.expect(c.method)
	f.reply(m.ID, result)
	return <-done
}

func wantInvalid(t *testing.T, err error, method string) *client.InvalidResponseError {
	t.Helper()
	var ire *client.InvalidResponseError
	if !errors.As(err, &ire) {
		t.Errorf("%s: error %v (%T), want an *InvalidResponseError", method, err, err)
		return nil
	}
	if ire.Method != method {
		t.Errorf("InvalidResponseError.Method = %q, want %q", ire.Method, method)
	}
	return ire
}

func TestResultTypes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sess, f := dialFake(t, newClient(nil))
		for _, c := range resultCalls() {
			// Missing resultType is complete; so is an explicit one.
			if err := answer(t, sess, f, c, `{`+c.complete+`}`); err != nil {
				t.Errorf("%s without resultType: %v", c.method, err)
			}
			if err := answer(t, sess, f, c, `{"resultType":"complete",`+c.complete+`}`); err != nil {
				t.Errorf("%s: %v", c.method, err)
			}
			if err := answer(t, sess, f, c, `{"resultType":null,`+c.complete+`}`); err != nil {
				t.Errorf("%s with resultType null: %v", c.method, err)
			}
			// Unknown values are invalid, whatever else the result holds.
			for _, rt := range []string{`"task"`, `"Complete"`, `42`, `{}`} {
				err := answer(t, sess, f, c, `{"resultType":`+rt+`,`+c.complete+`}`)
				wantInvalid(t, err, c.method)
				if rt == `"task"` && !errors.Is(err, mcp.ErrUnknownResultType) {
					t.Errorf("%s: error %v does not match mcp.ErrUnknownResultType", c.method, err)
				}
			}
			// input_required: only the three carriers may send it. A
			// round with only state is retried with the state echoed; a
			// round asking for a kind the client has no callback for ends
			// the call.
			if c.carrier {
				done := async(func() error { return c.call(sess) })
				m := f.expect(c.method)
				f.reply(m.ID, `{"resultType":"input_required","requestState":"s"}`)
				retry := f.expect(c.method)
				if !strings.Contains(string(retry.Params), `"requestState":"s"`) || string(retry.ID) == string(m.ID) {
					t.Errorf("%s retry %s does not echo the state under a new id", c.method, retry.Raw)
				}
				f.reply(retry.ID, `{"resultType":"complete",`+c.complete+`}`)
				if err := <-done; err != nil {
					t.Errorf("%s: state-only round then complete: %v", c.method, err)
				}
				err := answer(t, sess, f, c, `{"resultType":"input_required","inputRequests":{"k":{"method":"roots/list"}}}`)
				if !errors.Is(err, client.ErrInputRequired) {
					t.Errorf("%s input_required without a callback: %v, want ErrInputRequired", c.method, err)
				}
				// An input_required result with nothing in it is broken.
				wantInvalid(t, answer(t, sess, f, c, `{"resultType":"input_required"}`), c.method)
			} else {
				err := answer(t, sess, f, c, `{"resultType":"input_required","requestState":"s"}`)
				wantInvalid(t, err, c.method)
				if errors.Is(err, client.ErrInputRequired) {
					t.Errorf("%s: input_required reported as ErrInputRequired", c.method)
				}
			}
			// Results that are not objects, or do not decode.
			wantInvalid(t, answer(t, sess, f, c, `[1,2]`), c.method)
			wantInvalid(t, answer(t, sess, f, c, `"complete"`), c.method)
		}
		// A member of the wrong type.
		wantInvalid(t, answer(t, sess, f, resultCalls()[0], `{"resultType":"complete","tools":"nope"}`), mcp.MethodListTools)
	})
}

func TestDiscoverInvalidResultFailsConnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, tr := newFake(t)
		res := connectAsync(newClient(nil), tr)
		m := f.expect(mcp.MethodDiscover)
		f.reply(m.ID, `{"resultType":"input_required","requestState":"x"}`)
		r := <-res
		wantInvalid(t, r.err, mcp.MethodDiscover)
		f.expectClosed()
	})
}

// The fixture's "ask" only ever answers with state: the loop retries it,
// with backoff, until the round limit.
func TestInputRequiredFromRealServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sess, _ := connect(t, newClient(nil), fixture(nil))
		if _, err := sess.CallTool(ctx, "ask", nil); !errors.Is(err, client.ErrTooManyRounds) {
			t.Errorf("CallTool: %v, want ErrTooManyRounds", err)
		}
		if _, err := sess.GetPrompt(ctx, "ask", nil); !errors.Is(err, client.ErrTooManyRounds) {
			t.Errorf("GetPrompt: %v, want ErrTooManyRounds", err)
		}
		if _, err := sess.ReadResource(ctx, "file:///ask"); !errors.Is(err, client.ErrTooManyRounds) {
			t.Errorf("ReadResource: %v, want ErrTooManyRounds", err)
		}
		// The session is still good afterwards.
		if _, err := sess.CallTool(ctx, "echo", echoArgs("still here")); err != nil {
			t.Fatal(err)
		}
	})
}

func TestCallsAgainstRealServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sess, w := connect(t, newClient(nil), fixture(nil))

		res, err := sess.CallTool(ctx, "echo", struct {
			Text string `json:"text"`
		}{"from a struct"})
		if err != nil || text(res) != "from a struct" || res.IsError {
			t.Errorf("CallTool(struct) = %+v, %v", res, err)
		}
		res, err = sess.CallTool(ctx, "echo", echoArgs("raw"))
		if err != nil || text(res) != "raw" {
			t.Errorf("CallTool(raw) = %+v, %v", res, err)
		}

		// No arguments: nil, and a nil map, send no arguments member.
		for _, args := range []any{nil, map[string]any(nil)} {
			if res, err = sess.CallTool(ctx, "echo", args); err != nil || text(res) != "" {
				t.Errorf("CallTool(%#v) = %+v, %v", args, res, err)
			}
			reqs := w.Requests(mcp.MethodCallTool)
			last := reqs[len(reqs)-1]
			if strings.Contains(string(last.Params), `"arguments"`) {
				t.Errorf("CallTool(%#v) sent %s", args, last.Params)
			}
		}

		// Arguments that are not an object are refused before sending.
		before := len(w.Requests(""))
		for _, args := range []any{[]int{1}, "text", 42, make(chan int)} {
			if _, err := sess.CallTool(ctx, "echo", args); err == nil {
				t.Errorf("CallTool(%T) succeeded", args)
			}
		}
		if n := len(w.Requests("")) - before; n != 0 {
			t.Errorf("bad arguments sent %d requests", n)
		}

		// Protocol errors come back as *jsonrpc.Error.
		_, err = sess.CallTool(ctx, "nope", nil)
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, "nope") {
			t.Errorf("unknown tool: %v", err)
		}

		p, err := sess.GetPrompt(ctx, "greeting", map[string]string{"name": "Ada"})
		if err != nil || len(p.Messages) != 1 {
			t.Fatalf("GetPrompt = %+v, %v", p, err)
		}
		if tc, ok := p.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Say hello to Ada" {
			t.Errorf("prompt message %+v", p.Messages[0])
		}

		r, err := sess.ReadResource(ctx, "file:///readme.txt")
		if err != nil || len(r.Contents) != 1 {
			t.Fatalf("ReadResource = %+v, %v", r, err)
		}
		if tc, ok := r.Contents[0].(*mcp.TextResourceContents); !ok || tc.Text != "hello" {
			t.Errorf("contents %+v", r.Contents[0])
		}
		_, err = sess.ReadResource(ctx, "file:///missing")
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("missing resource: %v", err)
		}

		cr, err := sess.Complete(ctx, &mcp.CompleteRequestParams{
			Ref:      &mcp.ResourceTemplateReference{URI: "file:///tpl1/{x}"},
			Argument: mcp.CompleteArgument{Name: "x", Value: ""},
		})
		if err != nil || len(cr.Completion.Values) != 2 || cr.Completion.Values[0] != "Alice" {
			t.Errorf("Complete = %+v, %v", cr, err)
		}
		if _, err := sess.Complete(ctx, nil); err == nil {
			t.Error("Complete(nil) succeeded")
		}
	})
}

// TestCompleteKeepsCallerParams: Complete stamps _meta on a copy.
func TestCompleteKeepsCallerParams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sess, _ := connect(t, newClient(nil), fixture(nil))
		p := &mcp.CompleteRequestParams{Ref: &mcp.PromptReference{Name: "greeting"}, Argument: mcp.CompleteArgument{Name: "name"}}
		if _, err := sess.Complete(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		if p.Meta != nil {
			t.Errorf("Complete wrote _meta into the caller's params: %+v", p.Meta)
		}
	})
}
