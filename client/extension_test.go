package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

const (
	noteExt    = "com.example/notes"
	noteMethod = "notes/get"
)

type noteParams struct {
	mcp.RequestParams
	NoteID string `json:"noteId"`
}

type noteResult struct {
	mcp.Result
	Text string `json:"text"`
}

func notesServer(t *testing.T) *server.Server {
	t.Helper()
	s := newServer(nil)
	if err := s.DeclareExtension(noteExt, map[string]int{"max": 3}); err != nil {
		t.Fatal(err)
	}
	err := server.HandleMethod(s, noteMethod, &server.MethodOptions{Extension: noteExt, Target: "noteId"},
		func(ctx context.Context, req *server.Request, p *noteParams) (*noteResult, error) {
			if p.RequestMeta().ClientCapabilities == nil {
				t.Error("no client capabilities in the handler's _meta")
			}
			return &noteResult{Text: "note " + p.NoteID}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCallMethod: a client that declares the extension calls its method
// with typed params and result; _meta is the session's; the server's
// declaration is readable; a client that does not declare it gets -32021.
func TestCallMethod(t *testing.T) {
	s := notesServer(t)
	c := newClient(&client.Options{Extensions: map[string]json.RawMessage{noteExt: nil}})
	sess, w := connect(t, c, s)
	ctx := context.Background()
	in := &noteParams{NoteID: "n-1"}
	res, err := client.CallMethod[noteResult](ctx, sess, noteMethod, in, &client.MethodOptions{Target: "n-1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "note n-1" || res.ResultType != mcp.ResultTypeComplete {
		t.Errorf("result %+v", res)
	}
	if in.Meta != nil {
		t.Error("CallMethod wrote into the caller's params")
	}
	sent := w.Requests(noteMethod)
	if len(sent) != 1 {
		t.Fatalf("sent %d %s requests", len(sent), noteMethod)
	}
	var caps mcp.ClientCapabilities
	if err := json.Unmarshal(sent[0].meta(t)["io.modelcontextprotocol/clientCapabilities"], &caps); err != nil {
		t.Fatal(err)
	}
	if string(caps.Extensions[noteExt]) != "{}" {
		t.Errorf("declared extensions %v", caps.Extensions)
	}
	if _, err := sess.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	if settings, ok := sess.ServerExtension(noteExt); !ok || string(settings) != `{"max":3}` {
		t.Errorf("ServerExtension = %s, %v", settings, ok)
	}
	if _, ok := sess.ServerExtension("com.example/other"); ok {
		t.Error("an undeclared extension reported")
	}

	plain, _ := connect(t, newClient(nil), s)
	_, err = client.CallMethod[noteResult](ctx, plain, noteMethod, &noteParams{NoteID: "n-1"}, nil)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32021 {
		t.Fatalf("undeclared client: %v, want -32021", err)
	}
	if _, err := client.CallMethod[noteResult](ctx, plain, noteMethod, (*noteParams)(nil), nil); err == nil {
		t.Error("nil params accepted")
	}
}

// TestCallMethodLegacySession: a legacy session calls an extension's
// method too, with no _meta of 2026-07-28 (its request carries none of its
// own: CallMethod used to dereference that missing _meta and panic).
func TestCallMethodLegacySession(t *testing.T) {
	s := newServer(nil)
	if err := server.HandleMethod(s, noteMethod, nil, func(ctx context.Context, req *server.Request, p *noteParams) (*noteResult, error) {
		return &noteResult{Text: "note " + p.NoteID}, nil
	}); err != nil {
		t.Fatal(err)
	}
	c := newClient(&client.Options{ProtocolVersion: mcp.Version20251125})
	sess, w := connect(t, c, s)
	res, err := client.CallMethod[noteResult](context.Background(), sess, noteMethod, &noteParams{NoteID: "n-2"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "note n-2" || res.ResultType != "" {
		t.Errorf("result %+v, want a legacy result", res)
	}
	sent := w.Requests(noteMethod)
	if len(sent) != 1 {
		t.Fatalf("sent %d %s requests", len(sent), noteMethod)
	}
	if meta := sent[0].meta(t); meta[mcp.MetaKeyProtocolVersion] != nil || meta[mcp.MetaKeyClientCapabilities] != nil {
		t.Errorf("a legacy request carries %v", meta)
	}
}

// TestExtensionsOptionKeepsCapabilities: Options.Extensions adds to the
// declared capabilities without writing into the caller's value.
func TestExtensionsOptionKeepsCapabilities(t *testing.T) {
	caps := &mcp.ClientCapabilities{Roots: &mcp.RootsCapability{}}
	s := notesServer(t)
	var got *mcp.ClientCapabilities
	if err := server.HandleMethod(s, "notes/caps", nil, func(ctx context.Context, req *server.Request, p *noteParams) (*noteResult, error) {
		got = req.Meta.ClientCapabilities
		return &noteResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	c := newClient(&client.Options{Capabilities: caps, Extensions: map[string]json.RawMessage{noteExt: json.RawMessage(`{"v":1}`)}})
	sess, _ := connect(t, c, s)
	if _, err := client.CallMethod[noteResult](context.Background(), sess, "notes/caps", &noteParams{}, nil); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Roots == nil || string(got.Extensions[noteExt]) != `{"v":1}` {
		t.Errorf("server saw %+v", got)
	}
	if caps.Extensions != nil {
		t.Error("the caller's Capabilities were written")
	}
}

// TestExtensionsOptionKeepsTheCallersMap: when the caller's Capabilities
// declare extensions of their own, Options.Extensions adds to a copy of
// that map: the server sees both, and the caller's map keeps only its own.
func TestExtensionsOptionKeepsTheCallersMap(t *testing.T) {
	const mine = "com.example/mine"
	caps := &mcp.ClientCapabilities{Extensions: map[string]json.RawMessage{mine: json.RawMessage(`{"a":1}`)}}
	s := notesServer(t)
	var got *mcp.ClientCapabilities
	if err := server.HandleMethod(s, "notes/caps", nil, func(ctx context.Context, req *server.Request, p *noteParams) (*noteResult, error) {
		got = req.Meta.ClientCapabilities
		return &noteResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	c := newClient(&client.Options{Capabilities: caps, Extensions: map[string]json.RawMessage{noteExt: nil}})
	sess, _ := connect(t, c, s)
	if _, err := client.CallMethod[noteResult](context.Background(), sess, "notes/caps", &noteParams{}, nil); err != nil {
		t.Fatal(err)
	}
	if got == nil {
		t.Fatal("the handler saw no capabilities")
	}
	if string(got.Extensions[mine]) != `{"a":1}` || string(got.Extensions[noteExt]) != "{}" {
		t.Errorf("server saw extensions %v, want both", got.Extensions)
	}
	if len(caps.Extensions) != 1 || string(caps.Extensions[mine]) != `{"a":1}` {
		t.Errorf("the caller's Extensions map was written: %v", caps.Extensions)
	}
}
