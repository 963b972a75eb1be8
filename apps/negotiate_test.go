package apps_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/parley-mcp/parley/apps"
	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// pipe connects a client to a low-level server in the same process.
type pipe struct{ s *server.Server }

func (p pipe) Connect(ctx context.Context) (transport.Conn, error) {
	c, s := transport.NewMemoryPipe()
	go p.s.ServeConn(context.WithoutCancel(ctx), s)
	return c, nil
}

func TestDeclared(t *testing.T) {
	ext := func(raw string) *mcp.ClientCapabilities {
		return &mcp.ClientCapabilities{Extensions: map[string]json.RawMessage{apps.ExtensionID: json.RawMessage(raw)}}
	}
	cases := []struct {
		name string
		caps *mcp.ClientCapabilities
		want bool
	}{
		{"nil", nil, false},
		{"no extensions", &mcp.ClientCapabilities{}, false},
		{"another extension", &mcp.ClientCapabilities{Extensions: map[string]json.RawMessage{"io.modelcontextprotocol/tasks": json.RawMessage("{}")}}, false},
		{"html", ext(string(apps.ClientExtension())), true},
		{"html among others", ext(`{"mimeTypes":["text/uri-list","text/html;profile=mcp-app"]}`), true},
		{"no mime types", ext(`{}`), false},
		{"other mime types only", ext(`{"mimeTypes":["text/html+mcp"]}`), false},
		{"settings that do not decode", ext(`{"mimeTypes":"text/html;profile=mcp-app"}`), false},
	}
	for _, c := range cases {
		if got := apps.Declared(c.caps); got != c.want {
			t.Errorf("%s: Declared = %v, want %v", c.name, got, c.want)
		}
	}
	if _, ok := apps.SettingsOf(ext(`{}`)); !ok {
		t.Error("SettingsOf: a declaration without settings is still a declaration")
	}
	if apps.RendersApps(nil) {
		t.Error("RendersApps(nil) = true")
	}
}

// TestRendersAppsBothGenerations: a tool body asks whether its caller
// renders apps; under 2026-07-28 the request's own capabilities say, on a
// 2025-11-25 session those of its initialize.
func TestRendersAppsBothGenerations(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "apps", Version: "1"}, nil)
	if err := apps.Enable(s); err != nil {
		t.Fatal(err)
	}
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if apps.RendersApps(req) {
			return mcp.TextResult("view"), nil
		}
		return mcp.TextResult("text"), nil
	})
	for _, version := range []mcp.ProtocolVersion{mcp.Version20260728, mcp.Version20251125} {
		for _, declare := range []bool{true, false} {
			opts := &client.Options{ProtocolVersion: version}
			if declare {
				opts.Extensions = map[string]json.RawMessage{apps.ExtensionID: apps.ClientExtension()}
			}
			ctx := context.Background()
			sess, err := client.New(mcp.Implementation{Name: "host", Version: "1"}, opts).Connect(ctx, pipe{s})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := sess.ServerExtension(apps.ExtensionID); !ok {
				t.Errorf("%s: the server does not declare %s", version, apps.ExtensionID)
			}
			res, err := sess.CallTool(ctx, "any", nil)
			if err != nil {
				t.Fatal(err)
			}
			want := "text"
			if declare {
				want = "view"
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != want {
				t.Errorf("%s, declared %v: the body saw %q, want %q", version, declare, got, want)
			}
			sess.Close()
		}
	}
}
