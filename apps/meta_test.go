package apps_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/apps"
	"github.com/parley-mcp/parley/mcp"
)

func TestCheckURI(t *testing.T) {
	good := []string{"ui://records/table.html", "ui://weather-server/dashboard-template", "ui://x", "ui:///path/only", "ui://a/b?v=1#top"}
	for _, uri := range good {
		if err := apps.CheckURI(uri); err != nil {
			t.Errorf("CheckURI(%q) = %v, want nil", uri, err)
		}
	}
	bad := map[string]string{
		"":                                  "does not start",
		"https://example.com/view":          "does not start",
		"UI://records/table.html":           "does not start",
		"ui:records":                        "does not start",
		"ui:/records":                       "does not start",
		"ui://":                             "names nothing",
		"ui:///":                            "names nothing",
		"ui://records/ table":               "whitespace",
		"ui://records/\x00":                 "control",
		"ui://records/\ntable":              "whitespace",
		"ui://%zz":                          "invalid URL escape",
		"ui://" + strings.Repeat("a", 2044): "longer than 2048",
	}
	for uri, want := range bad {
		err := apps.CheckURI(uri)
		if !errors.Is(err, apps.ErrNotUIURI) || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckURI(%.40q) = %v, want ErrNotUIURI saying %q", uri, err, want)
		}
	}
	if err := apps.CheckURI("ui://" + strings.Repeat("a", 2043)); err != nil {
		t.Errorf("a URI of exactly 2048 bytes: %v", err)
	}
}

func TestToolMetaCheck(t *testing.T) {
	good := []apps.ToolMeta{
		{ResourceURI: "ui://v"},
		{ResourceURI: "ui://v", Visibility: []apps.Visibility{apps.VisibilityModel, apps.VisibilityApp}},
		{Visibility: []apps.Visibility{apps.VisibilityApp}},
		{ResourceURI: "ui://v", Visibility: []apps.Visibility{apps.VisibilityModel}},
	}
	for _, m := range good {
		if err := m.Check(); err != nil {
			t.Errorf("%+v: %v", m, err)
		}
	}
	bad := map[string]apps.ToolMeta{
		`"agent" is not one of`: {ResourceURI: "ui://v", Visibility: []apps.Visibility{"agent"}},
		`"App" is not one of`:   {Visibility: []apps.Visibility{"App"}},
		"listed twice":          {Visibility: []apps.Visibility{apps.VisibilityApp, apps.VisibilityApp}},
		"empty visibility":      {Visibility: []apps.Visibility{}},
	}
	for want, m := range bad {
		err := m.Check()
		if !errors.Is(err, apps.ErrVisibility) || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want ErrVisibility saying %q", m, err, want)
		}
	}
	if err := (apps.ToolMeta{ResourceURI: "https://x"}).Check(); !errors.Is(err, apps.ErrNotUIURI) {
		t.Errorf("an https view: %v, want ErrNotUIURI", err)
	}
}

func TestVisibilityDefaults(t *testing.T) {
	cases := []struct {
		v                   []apps.Visibility
		model, app, appOnly bool
	}{
		{nil, true, true, false},
		{[]apps.Visibility{apps.VisibilityModel, apps.VisibilityApp}, true, true, false},
		{[]apps.Visibility{apps.VisibilityModel}, true, false, false},
		{[]apps.Visibility{apps.VisibilityApp}, false, true, true},
	}
	for _, c := range cases {
		m := apps.ToolMeta{Visibility: c.v}
		if m.VisibleToModel() != c.model || m.CallableByApp() != c.app || m.AppOnly() != c.appOnly {
			t.Errorf("%v: model %v app %v appOnly %v, want %v %v %v", c.v, m.VisibleToModel(), m.CallableByApp(), m.AppOnly(), c.model, c.app, c.appOnly)
		}
	}
}

func TestSetToolMetaWritesTheLegacyKeyBeside(t *testing.T) {
	orig := mcp.MetaObject{"other": 1.0, apps.LegacyResourceURIKey: "ui://stale"}
	meta := apps.SetToolMeta(orig, apps.ToolMeta{ResourceURI: "ui://records/table.html", Visibility: []apps.Visibility{apps.VisibilityModel, apps.VisibilityApp}})
	b, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"other":1,"ui":{"resourceUri":"ui://records/table.html","visibility":["model","app"]},"ui/resourceUri":"ui://records/table.html"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if orig[apps.LegacyResourceURIKey] != "ui://stale" || len(orig) != 2 {
		t.Errorf("SetToolMeta wrote the caller's map: %v", orig)
	}
	// A tool without a view of its own has no flat key, not even a stale one.
	meta = apps.SetToolMeta(orig, apps.ToolMeta{Visibility: []apps.Visibility{apps.VisibilityApp}})
	if _, ok := meta[apps.LegacyResourceURIKey]; ok {
		t.Errorf("an app-only tool without a view got the flat key: %v", meta)
	}
}

// decodedTool is a tool as a client decodes it from tools/list.
func decodedTool(t *testing.T, js string) *mcp.Tool {
	t.Helper()
	var tool mcp.Tool
	if err := json.Unmarshal([]byte(js), &tool); err != nil {
		t.Fatal(err)
	}
	return &tool
}

func TestToolMetaOf(t *testing.T) {
	cases := []struct {
		name, tool string
		want       apps.ToolMeta
		ok         bool
		err        string
	}{
		{"nested", `{"name":"a","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"ui://v","visibility":["app"]}}}`,
			apps.ToolMeta{ResourceURI: "ui://v", Visibility: []apps.Visibility{"app"}}, true, ""},
		{"flat only", `{"name":"a","inputSchema":{"type":"object"},"_meta":{"ui/resourceUri":"ui://old"}}`,
			apps.ToolMeta{ResourceURI: "ui://old"}, true, ""},
		{"nested wins", `{"name":"a","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"ui://new"},"ui/resourceUri":"ui://old"}}`,
			apps.ToolMeta{ResourceURI: "ui://new"}, true, ""},
		{"visibility only, flat view", `{"name":"a","inputSchema":{"type":"object"},"_meta":{"ui":{"visibility":["model"]},"ui/resourceUri":"ui://old"}}`,
			apps.ToolMeta{ResourceURI: "ui://old", Visibility: []apps.Visibility{"model"}}, true, ""},
		{"no apps", `{"name":"a","inputSchema":{"type":"object"},"_meta":{"other":1}}`, apps.ToolMeta{}, false, ""},
		{"no meta", `{"name":"a","inputSchema":{"type":"object"}}`, apps.ToolMeta{}, false, ""},
		{"https view", `{"name":"a","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"https://evil"}}}`, apps.ToolMeta{}, false, "not a ui:// URI"},
		{"bad visibility", `{"name":"a","inputSchema":{"type":"object"},"_meta":{"ui":{"visibility":["everyone"]}}}`, apps.ToolMeta{}, false, "invalid visibility"},
		{"ui not an object", `{"name":"a","inputSchema":{"type":"object"},"_meta":{"ui":"ui://v"}}`, apps.ToolMeta{}, false, "_meta.ui"},
		{"flat not a string", `{"name":"a","inputSchema":{"type":"object"},"_meta":{"ui/resourceUri":7}}`, apps.ToolMeta{}, false, "not a string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok, err := apps.ToolMetaOf(decodedTool(t, c.tool))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil || ok != c.ok || got.ResourceURI != c.want.ResourceURI || len(got.Visibility) != len(c.want.Visibility) {
				t.Fatalf("got %+v, %v, %v; want %+v, %v", got, ok, err, c.want, c.ok)
			}
			for i := range got.Visibility {
				if got.Visibility[i] != c.want.Visibility[i] {
					t.Fatalf("visibility %v, want %v", got.Visibility, c.want.Visibility)
				}
			}
		})
	}
	// A server-side tool (typed values in _meta, not decoded maps) reads the same.
	tool := &mcp.Tool{Name: "a", Meta: apps.SetToolMeta(nil, apps.ToolMeta{ResourceURI: "ui://v"})}
	if m, ok, err := apps.ToolMetaOf(tool); err != nil || !ok || m.ResourceURI != "ui://v" {
		t.Errorf("typed _meta: %+v %v %v", m, ok, err)
	}
}

func TestResourceMetaWire(t *testing.T) {
	border := true
	m := apps.ResourceMeta{
		CSP:           &apps.CSP{ConnectDomains: []string{"https://api.example.com"}, ResourceDomains: []string{"https://cdn.example.com"}, FrameDomains: []string{"https://player.example.com"}, BaseURIDomains: []string{"https://base.example.com"}},
		Permissions:   &apps.Permissions{Camera: true, ClipboardWrite: true},
		Domain:        "abc.example-content.com",
		PrefersBorder: &border,
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"csp":{"connectDomains":["https://api.example.com"],"resourceDomains":["https://cdn.example.com"],"frameDomains":["https://player.example.com"],"baseUriDomains":["https://base.example.com"]},"permissions":{"camera":{},"clipboardWrite":{}},"domain":"abc.example-content.com","prefersBorder":true}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	var meta mcp.MetaObject
	if err := json.Unmarshal([]byte(`{"ui":`+want+`}`), &meta); err != nil {
		t.Fatal(err)
	}
	back, err := apps.ResourceMetaOf(meta)
	if err != nil || back == nil {
		t.Fatalf("ResourceMetaOf: %v, %v", back, err)
	}
	if *back.Permissions != (apps.Permissions{Camera: true, ClipboardWrite: true}) || back.Domain != m.Domain || !*back.PrefersBorder || back.CSP.BaseURIDomains[0] != "https://base.example.com" {
		t.Errorf("round trip: %+v", back)
	}
	// prefersBorder false is sent: it is a request, not the absence of one.
	no := false
	if b, _ := json.Marshal(apps.ResourceMeta{PrefersBorder: &no}); string(b) != `{"prefersBorder":false}` {
		t.Errorf("prefersBorder false: %s", b)
	}
	if got, err := apps.ResourceMetaOf(mcp.MetaObject{"other": 1}); got != nil || err != nil {
		t.Errorf("no _meta.ui: %v, %v", got, err)
	}
	if _, err := apps.ResourceMetaOf(mcp.MetaObject{"ui": []any{1}}); err == nil {
		t.Error("a _meta.ui that is an array was accepted")
	}
}
