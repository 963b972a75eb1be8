package apps_test

import (
	"strings"
	"testing"

	"github.com/parley-mcp/parley/apps"
	"github.com/parley-mcp/parley/mcp"
)

func TestContentVersion(t *testing.T) {
	a, b := apps.ContentVersion([]byte("<p>one</p>")), apps.ContentVersion([]byte("<p>two</p>"))
	if a == b || !strings.HasPrefix(a, "sha256-") || len(a) != len("sha256-")+43 {
		t.Errorf("versions %q and %q", a, b)
	}
	if a != apps.ContentVersion([]byte("<p>one</p>")) {
		t.Error("the version of the same page changed")
	}
}

func TestViewOf(t *testing.T) {
	const uri = "ui://records/table.html"
	res := &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
		&mcp.TextResourceContents{URI: "ui://other", MIMEType: apps.MIMEType, Text: "other"},
		&mcp.TextResourceContents{URI: uri, MIMEType: apps.MIMEType, Text: "<html></html>", Meta: mcp.MetaObject{
			apps.MetaKey:        map[string]any{"prefersBorder": true},
			apps.VersionMetaKey: "sha256-x",
		}},
	}}
	v, err := apps.ViewOf(res, uri)
	if err != nil {
		t.Fatal(err)
	}
	if v.HTML != "<html></html>" || v.Version != "sha256-x" || v.Meta == nil || !*v.Meta.PrefersBorder || v.MIMEType != apps.MIMEType {
		t.Errorf("view %+v", v)
	}
	blob := &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.BlobResourceContents{URI: uri, MIMEType: apps.MIMEType, Blob: []byte("<p>b</p>")}}}
	if v, err := apps.ViewOf(blob, uri); err != nil || v.HTML != "<p>b</p>" || v.Meta != nil {
		t.Errorf("blob view %+v, %v", v, err)
	}
	for name, c := range map[string]struct {
		res *mcp.ReadResourceResult
		uri string
	}{
		"not ui":       {res, "https://x"},
		"nil result":   {nil, uri},
		"no contents":  {&mcp.ReadResourceResult{}, uri},
		"plain html":   {&mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: uri, MIMEType: "text/html", Text: "x"}}}, uri},
		"bad _meta.ui": {&mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: uri, MIMEType: apps.MIMEType, Meta: mcp.MetaObject{"ui": "x"}}}}, uri},
	} {
		if _, err := apps.ViewOf(c.res, c.uri); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
