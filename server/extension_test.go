package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// The test extension: one method acting on a named thing.
const (
	extID     = "com.example/echo"
	extMethod = "echo/get"
)

type echoParams struct {
	mcp.RequestParams
	ThingID string `json:"thingId"`
	Text    string `json:"text,omitempty"`
}

type echoResult struct {
	mcp.Result
	Echo string `json:"echo"`
}

// extCall is a 2026-07-28 request to method with the given params members
// (a JSON object's inside) and the client's extensions.
func extCall(method, members string, extensions ...string) *jsonrpc.Request {
	exts := ""
	for i, e := range extensions {
		if i > 0 {
			exts += ","
		}
		exts += `"` + e + `":{}`
	}
	params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{` + exts + `}}}`
	if members != "" {
		params += "," + members
	}
	return &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: method, Params: json.RawMessage(params + "}")}
}

func newEchoServer(t *testing.T, opts *server.MethodOptions) (*server.Server, *[]string) {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "ext", Version: "1"}, nil)
	var seen []string
	s.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			seen = append(seen, "mw:"+req.Method)
			return next(ctx, req)
		}
	})
	err := server.HandleMethod(s, extMethod, opts, func(ctx context.Context, req *server.Request, p *echoParams) (*echoResult, error) {
		target, member, ok := req.Target()
		seen = append(seen, "handler:"+p.ThingID+":"+target+":"+member+":"+string(req.Meta.ProtocolVersion))
		if !ok {
			seen = append(seen, "no target")
		}
		if p.Text == "fail" {
			return nil, errors.New("internal detail")
		}
		return &echoResult{Echo: p.Text}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, &seen
}

// TestHandleMethod: an extension method is served like a core one: typed
// params, the middleware chain, _meta required, the result stamped, a Go
// error kept off the wire; its target is read as the handler reads the
// params; a client that did not declare the extension gets -32021 naming
// it before any middleware runs.
func TestHandleMethod(t *testing.T) {
	s, seen := newEchoServer(t, &server.MethodOptions{Extension: extID, Target: "thingId"})
	ctx := context.Background()

	res, err := s.Handle(ctx, extCall(extMethod, `"thingId":"t-1","text":"hi"`, extID), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), `"echo":"hi"`) || !strings.Contains(string(b), `"resultType":"complete"`) {
		t.Errorf("result %s", b)
	}
	if got := strings.Join(*seen, " "); got != "mw:echo/get handler:t-1:t-1:thingId:2026-07-28" {
		t.Errorf("ran %q", got)
	}

	*seen = nil
	_, err = s.Handle(ctx, extCall(extMethod, `"thingId":"t-1"`), nil)
	wantCode(t, err, -32021)
	if !strings.Contains(errData(err), extID) {
		t.Errorf("-32021 does not name the extension: %s", errData(err))
	}
	if len(*seen) != 0 {
		t.Errorf("an undeclared client reached %v", *seen)
	}

	// The target is what the handler sees: encoding/json's matching, the
	// last member winning.
	*seen = nil
	if _, err := s.Handle(ctx, extCall(extMethod, `"thingId":"a","THINGID":"b"`, extID), nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(*seen, " "); got != "mw:echo/get handler:b:b:thingId:2026-07-28" {
		t.Errorf("ran %q", got)
	}

	for name, members := range map[string]string{"no target": `"text":"x"`, "null": `"thingId":null`} {
		_, err := s.Handle(ctx, extCall(extMethod, members, extID), nil)
		wantCode(t, err, jsonrpc.CodeInvalidParams)
		if !strings.Contains(errMessage(err), "params.thingId must be a string") {
			t.Errorf("%s: %v", name, err)
		}
	}
	_, err = s.Handle(ctx, extCall(extMethod, `"thingId":7`, extID), nil)
	wantCode(t, err, jsonrpc.CodeInvalidParams) // the params' own decoding says so first
	_, err = s.Handle(ctx, extCall(extMethod, `"thingId":"t","text":5`, extID), nil)
	wantCode(t, err, jsonrpc.CodeInvalidParams)

	_, err = s.Handle(ctx, &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: extMethod, Params: json.RawMessage(`{"thingId":"t"}`)}, nil)
	wantCode(t, err, jsonrpc.CodeInvalidParams) // no _meta

	_, err = s.Handle(ctx, extCall(extMethod, `"thingId":"t","text":"fail"`, extID), nil)
	wantCode(t, err, jsonrpc.CodeInternalError)
	if strings.Contains(errMessage(err), "internal detail") {
		t.Errorf("a Go error reached the wire: %v", err)
	}

	_, err = s.Handle(ctx, extCall("echo/other", `"thingId":"t"`, extID), nil)
	wantCode(t, err, jsonrpc.CodeMethodNotFound)
}

// TestHandleMethodWithoutOptions: a method that needs no extension and
// names no target.
func TestHandleMethodWithoutOptions(t *testing.T) {
	s, seen := newEchoServer(t, nil)
	if _, err := s.Handle(context.Background(), extCall(extMethod, `"text":"x"`), nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(*seen, " "); got != "mw:echo/get handler::::2026-07-28 no target" {
		t.Errorf("ran %q", got)
	}
}

// TestHandleMethodRefusesCoreMethods: an extension cannot take a method of
// either generation, a back-channel request's or a notification's name.
func TestHandleMethodRefusesCoreMethods(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "ext", Version: "1"}, nil)
	h := func(ctx context.Context, req *server.Request, p *echoParams) (*echoResult, error) {
		return &echoResult{}, nil
	}
	for _, m := range []string{mcp.MethodCallTool, mcp.MethodDiscover, mcp.MethodSubscriptionsListen, mcp.MethodInitialize, mcp.MethodPing,
		mcp.MethodSetLoggingLevel, mcp.MethodElicit, mcp.MethodListRoots, mcp.MethodCreateMessage} {
		if err := server.HandleMethod(s, m, nil, h); !errors.Is(err, server.ErrMethodDefined) {
			t.Errorf("%s: %v, want ErrMethodDefined", m, err)
		}
	}
	for _, m := range []string{"", "notifications/echo"} {
		if err := server.HandleMethod(s, m, nil, h); err == nil || errors.Is(err, server.ErrMethodDefined) {
			t.Errorf("%q: %v, want an error", m, err)
		}
	}
	if err := server.HandleMethod[echoParams, *echoParams, *echoResult](s, extMethod, nil, nil); err == nil {
		t.Error("a nil handler was accepted")
	}
}

// TestDeclareExtension: declared extensions appear in server/discover's
// capabilities with their settings; an id without its prefix is refused.
func TestDeclareExtension(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "ext", Version: "1"}, nil)
	if err := s.DeclareExtension(extID, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.DeclareExtension("io.modelcontextprotocol/tasks", map[string]int{"maxTtlMs": 60000}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeclareExtension("com.example-corp/my_ext.v2", nil); err != nil {
		t.Errorf("a valid id refused: %v", err)
	}
	for _, bad := range []string{"", "tasks", "/tasks", "io.mcp/", "io..mcp/x", "io.mcp/a/b", "-io.mcp/x", "io-.mcp/x", "io mcp/x", "io.mcp/a b", "io.mcp/ä"} {
		if err := s.DeclareExtension(bad, nil); err == nil {
			t.Errorf("id %q accepted", bad)
		}
	}
	if err := s.DeclareExtension("com.example/x", func() {}); err == nil {
		t.Error("settings that do not encode were accepted")
	}
	res, err := s.Handle(context.Background(), extCall(mcp.MethodDiscover, ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), `"extensions":{"com.example-corp/my_ext.v2":{},"com.example/echo":{},"io.modelcontextprotocol/tasks":{"maxTtlMs":60000}}`) {
		t.Errorf("discover: %s", b)
	}
}

// TestExtensionOnLegacySession: a legacy session serves an extension
// method with the capabilities the client declared in initialize.
func TestExtensionOnLegacySession(t *testing.T) {
	s, seen := newEchoServer(t, &server.MethodOptions{Extension: extID, Target: "thingId"})
	s2, _ := newEchoServer(t, &server.MethodOptions{Extension: extID, Target: "thingId"})
	ctx := context.Background()
	for _, c := range []struct {
		s    *server.Server
		caps string
		ok   bool
	}{{s, `{"extensions":{"` + extID + `":{}}}`, true}, {s2, `{}`, false}} {
		sess, _, err := c.s.Initialize(ctx, &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: mcp.MethodInitialize,
			Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":` + c.caps + `,"clientInfo":{"name":"x","version":"1"}}`)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = sess.Handle(ctx, &jsonrpc.Request{ID: jsonrpc.Int64ID(2), Method: extMethod, Params: json.RawMessage(`{"thingId":"t-9","text":"x"}`)}, nil, nil)
		if c.ok && err != nil {
			t.Fatal(err)
		}
		if !c.ok {
			wantCode(t, err, -32021)
		}
		sess.Close()
	}
	if got := strings.Join(*seen, " "); got != "mw:echo/get handler:t-9:t-9:thingId:2025-11-25" {
		t.Errorf("ran %q", got)
	}
}

func wantCode(t *testing.T, err error, code int64) {
	t.Helper()
	var e *jsonrpc.Error
	if !errors.As(err, &e) || int64(e.Code) != code {
		t.Fatalf("err = %v, want code %d", err, code)
	}
}

func errMessage(err error) string {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return ""
}

func errData(err error) string {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return string(e.Data)
	}
	return ""
}
