package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parley-mcp/parley/apps"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/transport"
)

const boardPage = "<!doctype html><title>board</title><p>the board</p>\n"

// newAppsFixture is a server with one view, a tool shown in it, an
// app-only tool the view calls, a model-only one and a plain tool.
func newAppsFixture() (*mcpserver.Server, error) {
	s, err := mcpserver.New(mcp.Implementation{Name: "apps-fixture", Version: "1.0.0"}, nil)
	if err != nil {
		return nil, err
	}
	border := false
	if err := mcpserver.AddView(s, &mcpserver.View{URI: "ui://board/view.html", Name: "board",
		UI: apps.ResourceMeta{PrefersBorder: &border, Domain: "board.example-content.com",
			CSP:         &apps.CSP{ConnectDomains: []string{"https://api.example.com", "wss://live.example.com"}, ResourceDomains: []string{"https://cdn.example.com"}},
			Permissions: &apps.Permissions{ClipboardWrite: true, Camera: true}}}, boardPage); err != nil {
		return nil, err
	}
	// A ui:// resource that is not a view: plain HTML.
	if err := s.AddResource(&mcp.Resource{URI: "ui://board/raw.html", Name: "raw", MIMEType: "text/html"}, func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: uri, MIMEType: "text/html", Text: "<p>raw</p>"}}}, nil
	}); err != nil {
		return nil, err
	}
	type move struct {
		Cell int `json:"cell" jsonschema:"the cell to play"`
	}
	body := func(ctx context.Context, c *mcpserver.Call, m move) (mcpserver.AppResult[map[string]int], error) {
		return mcpserver.AppResult[map[string]int]{Text: fmt.Sprintf("played %d", m.Cell), Data: map[string]int{"cell": m.Cell}}, nil
	}
	for _, t := range []struct {
		name, desc string
		ui         apps.ToolMeta
	}{
		{"show_board", "Show the board.", apps.ToolMeta{ResourceURI: "ui://board/view.html"}},
		{"play", "Play a cell (the board calls it).", apps.ToolMeta{ResourceURI: "ui://board/view.html", Visibility: []apps.Visibility{apps.VisibilityApp}}},
		{"hint", "Suggest a cell.", apps.ToolMeta{ResourceURI: "ui://board/view.html", Visibility: []apps.Visibility{apps.VisibilityModel}}},
	} {
		if err := mcpserver.AddAppTool(s, &mcp.Tool{Name: t.name, Description: t.desc}, t.ui, body); err != nil {
			return nil, err
		}
	}
	if err := mcpserver.AddTool(s, &mcp.Tool{Name: "reset", Description: "Start again."}, func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
		return "reset", nil
	}); err != nil {
		return nil, err
	}
	return s, nil
}

func runAppsFixture(t *testing.T, args ...string) (result, string) {
	t.Helper()
	srv, err := newAppsFixture()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr lockedBuffer
	a := &app{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
		dial: func(context.Context) (transport.Transport, error) { return srv.InMemoryTransport(), nil }}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := run(ctx, a, append([]string{"--out", out}, args...))
	if ctx.Err() != nil {
		t.Fatalf("parley %s did not finish within 30s", strings.Join(args, " "))
	}
	clean := func(s string) string { return strings.ReplaceAll(s, out, "$OUT") }
	return result{clean(stdout.String()), clean(stderr.String()), code}, out
}

// TestAppsGolden: tools list marks the app tools (a VIEW column only
// when some tool has one), apps list shows them as a host that renders
// apps sees them (app-only tools included), apps view prints a view's
// metadata and saves its page, resources read prints a ui:// page.
func TestAppsGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"apps-tools-list", []string{"tools", "list"}, exitOK},
		{"apps-list", []string{"apps", "list"}, exitOK},
		{"apps-list-json", []string{"--json", "apps", "list"}, exitOK},
		{"apps-view", []string{"apps", "view", "ui://board/view.html"}, exitOK},
		{"apps-view-json", []string{"--json", "apps", "view", "ui://board/view.html"}, exitOK},
		{"apps-view-legacy", []string{"--protocol", "2025-11-25", "apps", "view", "ui://board/view.html"}, exitOK},
		{"apps-view-unknown", []string{"apps", "view", "ui://nowhere"}, exitProtocol},
		{"apps-view-not-a-view", []string{"apps", "view", "ui://board/raw.html"}, exitProtocol},
		{"apps-view-not-ui", []string{"apps", "view", "note://plain"}, exitUsage},
		{"apps-resources-read", []string{"resources", "read", "ui://board/view.html"}, exitOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, out := runAppsFixture(t, c.args...)
			if r.code != c.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, c.code, r.stdout, r.stderr)
			}
			golden(t, c.name, fmt.Sprintf("$ parley %s\n%s--- stderr\n%s--- exit %d\n", strings.Join(c.args, " "), r.stdout, r.stderr, r.code))
			if strings.HasPrefix(c.name, "apps-view") && c.code == exitOK {
				page, err := os.ReadFile(filepath.Join(out, "view.html"))
				if err != nil || string(page) != boardPage {
					t.Errorf("saved page %q, %v", page, err)
				}
			}
		})
	}
}

// TestToolsListWithoutApps: only apps commands declare the extension, so
// tools list leaves out the app-only tool, and a server without app tools
// gets the table without a VIEW column (the fixture's golden files).
func TestToolsListWithoutApps(t *testing.T) {
	r, _ := runAppsFixture(t, "tools", "list")
	if strings.Contains(r.stdout, "play") || !strings.Contains(r.stdout, "VIEW") {
		t.Errorf("tools list:\n%s", r.stdout)
	}
	r, _ = runAppsFixture(t, "apps", "list")
	if !strings.Contains(r.stdout, "ui://board/view.html (app only)") {
		t.Errorf("apps list:\n%s", r.stdout)
	}
	if got := sessionExtensions(context.Background()); got != nil {
		t.Errorf("a plain session declares %v", got)
	}
}
