package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

func staticText(uri, text string) mcpserver.StaticResource {
	return mcpserver.StaticResource{
		Resource: mcp.Resource{URI: uri, Name: uri, MIMEType: "text/plain"},
		Read: func(ctx context.Context, u string) (*mcp.ReadResourceResult, error) {
			return textContents(u, text), nil
		},
	}
}

// ChangeResources removes and adds in one step, announced once.
func TestChangeResources(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	// No resource yet: the first call declares the capability all the same.
	mustOK(t, s.ChangeResources(nil, nil))
	addTools(t, s, "first") // so that the stream is granted tool changes
	sess := connect(t, s, nil)
	if caps := sess.ServerCapabilities(); caps == nil || caps.Resources == nil || !caps.Resources.ListChanged {
		t.Fatalf("capabilities = %+v, want resources with listChanged", caps)
	}
	sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ResourcesListChanged: true, ToolsListChanged: true})
	mustOK(t, err)
	defer sub.Close()

	mustOK(t, s.ChangeResources(nil, []mcpserver.StaticResource{staticText("file:///a", "a1"), staticText("file:///b", "b1"), staticText("file:///c", "c1")}))
	if got := nextEvent(t, sub); got != mcp.NotificationResourceListChanged {
		t.Errorf("after adding three: %s", got)
	}
	mustOK(t, s.ChangeResources([]string{"file:///a", "file:///nope"}, []mcpserver.StaticResource{staticText("file:///b", "b2"), staticText("file:///d", "d1")}))
	if got := nextEvent(t, sub); got != mcp.NotificationResourceListChanged {
		t.Errorf("after a removal and two additions: %s", got)
	}
	// Changing nothing announces nothing: the next event is the tool's.
	mustOK(t, s.ChangeResources([]string{"file:///nope"}, nil))
	addTools(t, s, "second")
	if got := nextEvent(t, sub); got != mcp.NotificationToolListChanged {
		t.Errorf("after a change of nothing and AddTool: %s (each ChangeResources announced once, or nothing announced nothing)", got)
	}

	list, err := sess.ListResources(ctx, "")
	mustOK(t, err)
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
	}
	if got := strings.Join(uris, ","); got != "file:///b,file:///c,file:///d" {
		t.Errorf("resources = %s", got)
	}
	res, err := sess.ReadResource(ctx, "file:///b")
	mustOK(t, err)
	if got := readText(t, res); got != "file:///b b2" {
		t.Errorf("read b = %q, want the replacement", got)
	}
	_, err = sess.ReadResource(ctx, "file:///a")
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, "Resource not found: file:///a")
}

// A bad resource in add changes nothing.
func TestChangeResourcesChecksFirst(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	mustOK(t, s.ChangeResources(nil, []mcpserver.StaticResource{staticText("file:///a", "a")}))
	bad := staticText("file:///c", "c")
	bad.Read = nil
	for _, add := range [][]mcpserver.StaticResource{
		{staticText("file:///b", "b"), bad},
		{staticText("file:///b", "b"), {Resource: mcp.Resource{URI: "file:///d"}, Read: staticText("", "").Read}},
		{{Resource: mcp.Resource{Name: "no-uri"}, Read: staticText("", "").Read}},
	} {
		if err := s.ChangeResources([]string{"file:///a"}, add); err == nil || !strings.Contains(err.Error(), "ChangeResources") {
			t.Errorf("ChangeResources(%+v) = %v, want an error", add, err)
		}
	}
	sess := connect(t, s, nil)
	list, err := sess.ListResources(ctx, "")
	mustOK(t, err)
	if len(list.Resources) != 1 || list.Resources[0].URI != "file:///a" {
		t.Errorf("resources = %+v, want only file:///a (nothing changed)", list.Resources)
	}
}
