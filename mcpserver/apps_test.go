package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/parley-mcp/parley/apps"
	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/transport"
)

const tableURI = "ui://records/table.html"

const tablePage = "<!doctype html><title>records</title><table id=t></table>"

type recordQuery struct {
	Owner string `json:"owner,omitempty" jsonschema:"whose records to show"`
}

type record struct {
	ID    int    `json:"id"`
	Title string `json:"title"`
}

type recordTable struct {
	Records []record `json:"records"`
}

type editArgs struct {
	ID    int    `json:"id"`
	Title string `json:"title"`
}

// appsHost declares that it renders HTML views.
var appsHost = &client.Options{Extensions: map[string]json.RawMessage{apps.ExtensionID: apps.ClientExtension()}}

func withVersion(o *client.Options, v mcp.ProtocolVersion) *client.Options {
	c := *o
	c.ProtocolVersion = v
	return &c
}

// newAppServer returns a server with the records view, the show_records
// app tool and the app-only edit_record.
func newAppServer(t *testing.T) *mcpserver.Server {
	t.Helper()
	s, _ := newServer(t, nil)
	border := true
	mustOK(t, mcpserver.AddView(s, &mcpserver.View{URI: tableURI, Name: "records", Description: "The records, as a table",
		UI: apps.ResourceMeta{PrefersBorder: &border, CSP: &apps.CSP{ConnectDomains: []string{"https://api.example.com"}}}}, tablePage))
	records := []record{{1, "first"}, {2, "second"}}
	mustOK(t, mcpserver.AddAppTool(s, &mcp.Tool{Name: "show_records", Description: "Show the records."},
		apps.ToolMeta{ResourceURI: tableURI},
		func(ctx context.Context, call *mcpserver.Call, q recordQuery) (mcpserver.AppResult[recordTable], error) {
			text := "2 records: first, second."
			if call.RendersApps() {
				text += " The view shows them."
			}
			return mcpserver.AppResult[recordTable]{Text: text, Data: recordTable{records}}, nil
		}))
	mustOK(t, mcpserver.AddAppTool(s, &mcp.Tool{Name: "edit_record", Description: "Rename a record (from the view)."},
		apps.ToolMeta{ResourceURI: tableURI, Visibility: []apps.Visibility{apps.VisibilityApp}},
		func(ctx context.Context, call *mcpserver.Call, a editArgs) (mcpserver.AppResult[recordTable], error) {
			records[a.ID-1].Title = a.Title
			return mcpserver.AppResult[recordTable]{Text: "Renamed.", Data: recordTable{records}}, nil
		}))
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "plain"}, func(ctx context.Context, call *mcpserver.Call, _ struct{}) (string, error) {
		return "plain", nil
	}))
	return s
}

func appTools(t *testing.T, sess *client.Session) map[string]*mcp.Tool {
	t.Helper()
	res, err := sess.ListTools(context.Background(), "")
	mustOK(t, err)
	out := map[string]*mcp.Tool{}
	for i := range res.Tools {
		out[res.Tools[i].Name] = &res.Tools[i]
	}
	return out
}

// TestAppToolWire: the tool carries _meta.ui, the deprecated flat key
// beside it, and the output schema of AppResult's T; its result carries
// both audiences; the server declares the extension. Both generations.
func TestAppToolWire(t *testing.T) {
	for _, v := range []mcp.ProtocolVersion{mcp.Version20260728, mcp.Version20251125} {
		t.Run(string(v), func(t *testing.T) {
			s := newAppServer(t)
			sess := connect(t, s, withVersion(appsHost, v))
			if settings, ok := sess.ServerExtension(apps.ExtensionID); !ok || string(settings) != "{}" {
				t.Errorf("server extension: %s %v", settings, ok)
			}
			tools := appTools(t, sess)
			show := tools["show_records"]
			if show == nil {
				t.Fatalf("tools: %v", tools)
			}
			meta, err := json.Marshal(show.Meta)
			mustOK(t, err)
			wantJSON(t, "show_records _meta", meta, `{"ui":{"resourceUri":"ui://records/table.html"},"ui/resourceUri":"ui://records/table.html"}`)
			wantContains(t, "output schema", string(show.OutputSchema), `"records"`, `"title"`)
			m, ok, err := apps.ToolMetaOf(tools["edit_record"])
			if err != nil || !ok || !m.AppOnly() || m.ResourceURI != tableURI {
				t.Errorf("edit_record: %+v %v %v", m, ok, err)
			}
			if _, ok, _ := apps.ToolMetaOf(tools["plain"]); ok {
				t.Error("a plain tool has apps metadata")
			}
			res, err := sess.CallTool(context.Background(), "show_records", nil)
			mustOK(t, err)
			wantText(t, res, false, "2 records: first, second. The view shows them.")
			wantJSON(t, "structuredContent", structured(t, res), `{"records":[{"id":1,"title":"first"},{"id":2,"title":"second"}]}`)
		})
	}
}

// TestAppOnlyTools: an app-only tool is listed to a client that renders
// apps (its host keeps it from the model and lets the view call it) and
// left out for one that does not; either may call it; a body degrades
// to text for a client without apps. Both generations.
func TestAppOnlyTools(t *testing.T) {
	for _, v := range []mcp.ProtocolVersion{mcp.Version20260728, mcp.Version20251125} {
		for _, rendersApps := range []bool{true, false} {
			opts := &client.Options{}
			if rendersApps {
				opts = appsHost
			}
			s := newAppServer(t)
			sess := connect(t, s, withVersion(opts, v))
			tools := appTools(t, sess)
			if _, listed := tools["edit_record"]; listed != rendersApps {
				t.Errorf("%s, renders apps %v: edit_record listed %v", v, rendersApps, listed)
			}
			if tools["show_records"] == nil || tools["plain"] == nil {
				t.Errorf("%s: tools %v", v, tools)
			}
			res, err := sess.CallTool(context.Background(), "edit_record", map[string]any{"id": 2, "title": "renamed"})
			mustOK(t, err)
			wantText(t, res, false, "Renamed.")
			res, err = sess.CallTool(context.Background(), "show_records", nil)
			mustOK(t, err)
			want := "2 records: first, second."
			if rendersApps {
				want += " The view shows them."
			}
			wantText(t, res, false, want)
		}
	}
}

// TestAppOnlyToolsPages: pages are cut from the tools a client sees, so
// an app-only tool leaves no hole in a page.
func TestAppOnlyToolsPages(t *testing.T) {
	s, _ := newServer(t, &mcpserver.Options{PageSize: 2})
	mustOK(t, mcpserver.AddView(s, &mcpserver.View{URI: tableURI, Name: "records"}, tablePage))
	body := func(ctx context.Context, call *mcpserver.Call, _ struct{}) (string, error) { return "", nil }
	for _, name := range []string{"a", "hidden1", "b", "hidden2", "c"} {
		ui := apps.ToolMeta{ResourceURI: tableURI}
		if strings.HasPrefix(name, "hidden") {
			ui.Visibility = []apps.Visibility{apps.VisibilityApp}
		}
		mustOK(t, mcpserver.AddAppTool(s, &mcp.Tool{Name: name}, ui, body))
	}
	sess := connect(t, s, nil)
	first, err := sess.ListTools(context.Background(), "")
	mustOK(t, err)
	if len(first.Tools) != 2 || first.Tools[0].Name != "a" || first.Tools[1].Name != "b" || first.NextCursor == "" {
		t.Fatalf("first page %+v", first)
	}
	second, err := sess.ListTools(context.Background(), string(first.NextCursor))
	mustOK(t, err)
	if len(second.Tools) != 1 || second.Tools[0].Name != "c" || second.NextCursor != "" {
		t.Fatalf("second page %+v", second)
	}
}

// TestViewRead: a view is served with its MIME type, _meta.ui, a content
// version, ttlMs and cacheScope; listed with the same _meta.
func TestViewRead(t *testing.T) {
	s := newAppServer(t)
	sess := connect(t, s, appsHost)
	res, err := sess.ReadResource(context.Background(), tableURI)
	mustOK(t, err)
	if res.TTLMs != time.Hour.Milliseconds() || res.CacheScope != mcp.CacheScopePublic {
		t.Errorf("ttlMs %d cacheScope %q, want an hour, public", res.TTLMs, res.CacheScope)
	}
	v, err := apps.ViewOf(res, tableURI)
	mustOK(t, err)
	if v.HTML != tablePage || v.MIMEType != apps.MIMEType || v.Version != apps.ContentVersion([]byte(tablePage)) ||
		v.Meta == nil || !*v.Meta.PrefersBorder || v.Meta.CSP.ConnectDomains[0] != "https://api.example.com" {
		t.Errorf("view %+v (meta %+v)", v, v.Meta)
	}
	list, err := sess.ListResources(context.Background(), "")
	mustOK(t, err)
	if len(list.Resources) != 1 || list.Resources[0].MIMEType != apps.MIMEType || list.Resources[0].Size != int64(len(tablePage)) ||
		list.Resources[0].Meta[apps.VersionMetaKey] != v.Version {
		t.Fatalf("listing %+v", list.Resources)
	}
	if m, err := apps.ResourceMetaOf(list.Resources[0].Meta); err != nil || m == nil || !*m.PrefersBorder {
		t.Errorf("listing _meta.ui: %+v %v", m, err)
	}
}

func TestViewOptions(t *testing.T) {
	s, _ := newServer(t, nil)
	files := fstest.MapFS{"views/table.html": {Data: []byte(tablePage)}}
	mustOK(t, mcpserver.AddViewFile(s, &mcpserver.View{URI: "ui://a", Name: "a", TTL: -time.Minute, CacheScope: mcp.CacheScopePrivate}, files, "views/table.html"))
	mustOK(t, mcpserver.AddView(s, &mcpserver.View{URI: "ui://b", Name: "b", TTL: time.Minute, MIMEType: "text/html;profile=mcp-app;charset=utf-8"}, []byte("<p>b</p>")))
	sess := connect(t, s, nil)
	a, err := sess.ReadResource(context.Background(), "ui://a")
	mustOK(t, err)
	if a.TTLMs != 0 || a.CacheScope != mcp.CacheScopePrivate || a.Contents[0].(*mcp.TextResourceContents).Text != tablePage {
		t.Errorf("ui://a: %+v", a)
	}
	if _, ok := a.Contents[0].(*mcp.TextResourceContents).Meta[apps.MetaKey]; ok {
		t.Error("a view without UI metadata sent _meta.ui")
	}
	b, err := sess.ReadResource(context.Background(), "ui://b")
	mustOK(t, err)
	if b.TTLMs != time.Minute.Milliseconds() || b.CacheScope != mcp.CacheScopePublic || b.Contents[0].(*mcp.TextResourceContents).MIMEType != "text/html;profile=mcp-app;charset=utf-8" {
		t.Errorf("ui://b: %+v", b)
	}
	if err := mcpserver.AddViewFile(s, &mcpserver.View{URI: "ui://c", Name: "c"}, files, "missing.html"); err == nil || !strings.Contains(err.Error(), "missing.html") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestAppRefusals: registration refuses each mistake with an error that
// names it.
func TestAppRefusals(t *testing.T) {
	s, _ := newServer(t, nil)
	body := func(ctx context.Context, call *mcpserver.Call, _ struct{}) (string, error) { return "", nil }
	mustOK(t, mcpserver.AddView(s, &mcpserver.View{URI: tableURI, Name: "records"}, tablePage))
	mustOK(t, s.AddResource(&mcp.Resource{URI: "file:///notes.txt", Name: "notes"}, func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	}))
	cases := []struct {
		name   string
		err    error
		target error
		says   string
	}{
		{"view URI not ui://", mcpserver.AddView(s, &mcpserver.View{URI: "https://example.com/v.html", Name: "v"}, "x"), apps.ErrNotUIURI, `"https://example.com/v.html" does not start with "ui://"`},
		{"view without a name", mcpserver.AddView(s, &mcpserver.View{URI: "ui://nameless"}, "x"), nil, `"ui://nameless" needs a name`},
		{"two views on one URI", mcpserver.AddView(s, &mcpserver.View{URI: tableURI, Name: "again"}, "y"), mcpserver.ErrViewExists, `view "ui://records/table.html"`},
		{"a view on a resource's URI", mcpserver.AddView(s, &mcpserver.View{URI: "ui://x", Name: "x"}, "x"), nil, ""},
		{"tool view not ui://", mcpserver.AddAppTool(s, &mcp.Tool{Name: "t1"}, apps.ToolMeta{ResourceURI: "file:///v.html"}, body), apps.ErrNotUIURI, `app tool "t1"`},
		{"undefined visibility", mcpserver.AddAppTool(s, &mcp.Tool{Name: "t2"}, apps.ToolMeta{ResourceURI: tableURI, Visibility: []apps.Visibility{"user"}}, body), apps.ErrVisibility, `"user" is not one of`},
		{"empty visibility", mcpserver.AddAppTool(s, &mcp.Tool{Name: "t3"}, apps.ToolMeta{ResourceURI: tableURI, Visibility: []apps.Visibility{}}, body), apps.ErrVisibility, "empty visibility"},
		{"nothing of apps", mcpserver.AddAppTool(s, &mcp.Tool{Name: "t4"}, apps.ToolMeta{}, body), nil, "neither a view"},
	}
	for _, c := range cases {
		if c.says == "" {
			if c.err != nil {
				t.Errorf("%s: %v", c.name, c.err)
			}
			continue
		}
		if c.err == nil || (c.target != nil && !errors.Is(c.err, c.target)) || !strings.Contains(c.err.Error(), c.says) {
			t.Errorf("%s: %v, want %v saying %q", c.name, c.err, c.target, c.says)
		}
	}
	// None of the refused tools was registered.
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "plain"}, body))
	sess := connect(t, s, appsHost)
	for _, name := range []string{"t1", "t2", "t3", "t4"} {
		if _, ok := appTools(t, sess)[name]; ok {
			t.Errorf("refused tool %s is listed", name)
		}
	}
	// A view with the same URI as a plain resource is refused too.
	if err := mcpserver.AddView(s, &mcpserver.View{URI: "ui://x", Name: "x2"}, "x"); !errors.Is(err, mcpserver.ErrViewExists) {
		t.Errorf("a second view on ui://x: %v", err)
	}
}

// TestUnknownViewCheckedWhenServing: a tool may name a view registered
// later; when the server starts serving, a view still missing is refused
// by every transport, and after that AddAppTool refuses it at once.
func TestUnknownViewCheckedWhenServing(t *testing.T) {
	body := func(ctx context.Context, call *mcpserver.Call, _ struct{}) (string, error) { return "", nil }
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddAppTool(s, &mcp.Tool{Name: "early"}, apps.ToolMeta{ResourceURI: tableURI}, body))
	mustOK(t, mcpserver.AddAppTool(s, &mcp.Tool{Name: "lost"}, apps.ToolMeta{ResourceURI: "ui://nowhere"}, body))
	mustOK(t, mcpserver.AddView(s, &mcpserver.View{URI: tableURI, Name: "records"}, tablePage)) // after its tool: fine
	err := s.Check()
	if !errors.Is(err, mcpserver.ErrUnknownView) || !strings.Contains(err.Error(), `tool "lost" names the view "ui://nowhere"`) || strings.Contains(err.Error(), "early") {
		t.Fatalf("Check: %v", err)
	}
	if _, err := s.InMemoryTransport().Connect(context.Background()); !errors.Is(err, mcpserver.ErrUnknownView) {
		t.Errorf("InMemoryTransport: %v", err)
	}
	// The client end is closed: a ServeConn that served anyway ends at
	// once, with another error.
	clientEnd, serverEnd := transport.NewMemoryPipe()
	clientEnd.Close()
	if err := s.ServeConn(testwait.Context(t), serverEnd); !errors.Is(err, mcpserver.ErrUnknownView) {
		t.Errorf("ServeConn: %v", err)
	}
	func() {
		defer func() {
			r := recover()
			if err, _ := r.(error); !errors.Is(err, mcpserver.ErrUnknownView) {
				t.Errorf("HTTPHandler: recovered %v, want the Check error", r)
			}
		}()
		s.HTTPHandler(nil)
	}()

	// A tool naming a resource that is not a view is refused too.
	mustOK(t, s.AddResource(&mcp.Resource{URI: "ui://nowhere", Name: "plain", MIMEType: "text/html"}, func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	}))
	if err := s.Check(); !errors.Is(err, mcpserver.ErrUnknownView) || !strings.Contains(err.Error(), `MIME type "text/html", not a view`) {
		t.Fatalf("Check with a non-view resource: %v", err)
	}
	s.RemoveResources("ui://nowhere")
	mustOK(t, mcpserver.AddView(s, &mcpserver.View{URI: "ui://nowhere", Name: "found"}, "x"))
	mustOK(t, s.Check())
	srv := httptest.NewServer(s.HTTPHandler(nil))
	defer srv.Close()
	// Serving: an app tool naming a missing view is refused at once.
	if err := mcpserver.AddAppTool(s, &mcp.Tool{Name: "late"}, apps.ToolMeta{ResourceURI: "ui://later"}, body); !errors.Is(err, mcpserver.ErrUnknownView) {
		t.Errorf("AddAppTool while serving: %v", err)
	}
	mustOK(t, mcpserver.AddView(s, &mcpserver.View{URI: "ui://later", Name: "later"}, "x"))
	mustOK(t, mcpserver.AddAppTool(s, &mcp.Tool{Name: "late"}, apps.ToolMeta{ResourceURI: "ui://later"}, body))
	// An app-only tool without a view of its own needs no view.
	mustOK(t, mcpserver.AddAppTool(s, &mcp.Tool{Name: "viewless"}, apps.ToolMeta{Visibility: []apps.Visibility{apps.VisibilityApp}}, body))
}

// TestAppResult: Text and Data are each set on their own; an empty Text
// falls back to Data's JSON; a nil *AppResult is an error, not a panic.
func TestAppResult(t *testing.T) {
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddView(s, &mcpserver.View{URI: tableURI, Name: "records"}, tablePage))
	ui := apps.ToolMeta{ResourceURI: tableURI}
	mustOK(t, mcpserver.AddAppTool(s, &mcp.Tool{Name: "data_only"}, ui, func(ctx context.Context, call *mcpserver.Call, _ struct{}) (mcpserver.AppResult[recordTable], error) {
		return mcpserver.AppResult[recordTable]{Data: recordTable{[]record{{7, "x"}}}}, nil
	}))
	mustOK(t, mcpserver.AddAppTool(s, &mcp.Tool{Name: "text_only"}, ui, func(ctx context.Context, call *mcpserver.Call, _ struct{}) (mcpserver.AppResult[map[string]int], error) {
		return mcpserver.AppResult[map[string]int]{Text: "nothing to show"}, nil
	}))
	mustOK(t, mcpserver.AddAppTool(s, &mcp.Tool{Name: "nil"}, ui, func(ctx context.Context, call *mcpserver.Call, _ struct{}) (*mcpserver.AppResult[recordTable], error) {
		return nil, nil
	}))
	mustOK(t, mcpserver.AddAppTool(s, &mcp.Tool{Name: "pointer"}, ui, func(ctx context.Context, call *mcpserver.Call, _ struct{}) (*mcpserver.AppResult[recordTable], error) {
		return &mcpserver.AppResult[recordTable]{Text: "one", Data: recordTable{[]record{{1, "a"}}}}, nil
	}))
	sess := connect(t, s, nil)
	res, err := sess.CallTool(context.Background(), "data_only", nil)
	mustOK(t, err)
	wantText(t, res, false, `{"records":[{"id":7,"title":"x"}]}`)
	wantJSON(t, "structuredContent", structured(t, res), `{"records":[{"id":7,"title":"x"}]}`)
	res, err = sess.CallTool(context.Background(), "text_only", nil)
	mustOK(t, err)
	wantText(t, res, false, "nothing to show")
	if res.StructuredContent != nil {
		t.Errorf("a nil map sent structuredContent %s", res.StructuredContent)
	}
	_, err = sess.CallTool(context.Background(), "nil", nil)
	wantRPCError(t, err, -32603, "")
	res, err = sess.CallTool(context.Background(), "pointer", nil)
	mustOK(t, err)
	wantText(t, res, false, "one")
	tools := appTools(t, sess)
	wantContains(t, "pointer's output schema", string(tools["pointer"].OutputSchema), `"records"`)
	if len(tools["text_only"].OutputSchema) != 0 {
		t.Errorf("a map's AppResult advertises an output schema: %s", tools["text_only"].OutputSchema)
	}
}

// TestHandWrittenAppMeta: a tool registered with AddTool and a _meta.ui
// written by hand is treated as an app tool too (its visibility counts).
func TestHandWrittenAppMeta(t *testing.T) {
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddView(s, &mcpserver.View{URI: tableURI, Name: "records"}, tablePage))
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "by_hand", Meta: mcp.MetaObject{"ui": map[string]any{"visibility": []any{"app"}}}},
		func(ctx context.Context, call *mcpserver.Call, _ struct{}) (string, error) { return "", nil }))
	if _, ok := appTools(t, connect(t, s, nil))["by_hand"]; ok {
		t.Error("a hand-written app-only tool is listed to a client without apps")
	}
	if _, ok := appTools(t, connect(t, s, appsHost))["by_hand"]; !ok {
		t.Error("a hand-written app-only tool is not listed to a client with apps")
	}
}

func structured(t *testing.T, res *mcp.CallToolResult) []byte {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	mustOK(t, err)
	return b
}
