package browser

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// driven is what drive.mjs saw.
type driven struct {
	Before, After             []row
	StatusBefore, StatusAfter string
	Host                      struct {
		ProtocolVersion string   `json:"protocolVersion"`
		AllTools        []string `json:"allTools"`
		AgentTools      []string `json:"agentTools"`
		Tool, View      string
		ViewCalls       []string `json:"viewCalls"`
		Refused         []string
		Errors          []string
		Done            bool
	}
	Console []string
	Error   string
}

type row struct {
	ID     int
	Title  string
	Status string
}

// TestViewInChromium: the records app of examples/apps, served over
// Streamable HTTP, rendered by a web host built on the extension's host
// library (AppBridge) in headless Chromium, in both protocol generations.
// It fails unless the view shows the tool's result, the view's call of
// the app-only edit_record reaches the server (a client of the test reads
// the renamed record there), and the answer comes back to the view. A
// screenshot of each run is kept in the artefacts folder the log names.
func TestViewInChromium(t *testing.T) {
	needBrowser(t)
	shots := artifacts(t)
	t.Logf("screenshots in %s", shots)
	for _, mode := range []string{"auto", "legacy"} {
		t.Run(mode, func(t *testing.T) {
			mcpURL, logs := startExample(t)
			hostURL := serveHost(t, mcpURL, mode)
			shot := filepath.Join(shots, "apps-"+mode+".png")
			ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, filepath.Join(work, "drive.mjs"), hostURL, shot)
			cmd.Env = append(os.Environ(), "CHROMIUM="+chromium)
			cmd.Stderr = testWriter{t}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("drive.mjs: %v\n%s", err, out)
			}
			var d driven
			if err := json.Unmarshal(out, &d); err != nil {
				t.Fatalf("drive.mjs printed %q: %v", out, err)
			}
			defer func() {
				if t.Failed() {
					for _, line := range d.Console {
						t.Logf("page console: %s", line)
					}
				}
			}()
			if d.Error != "" || len(d.Host.Errors) > 0 {
				t.Fatalf("in the browser: %s %v", d.Error, d.Host.Errors)
			}

			wantVersion := map[string]string{"auto": string(mcp.Version20260728), "legacy": string(mcp.Version20251125)}[mode]
			if d.Host.ProtocolVersion != wantVersion {
				t.Errorf("the host spoke %q, want %s", d.Host.ProtocolVersion, wantVersion)
			}
			// The host renders apps, so the server lists the app-only tool
			// to it; the host keeps it from its agent.
			if strings.Join(d.Host.AllTools, ",") != "show_records,edit_record" || strings.Join(d.Host.AgentTools, ",") != "show_records" {
				t.Errorf("tools %v, the agent's %v", d.Host.AllTools, d.Host.AgentTools)
			}
			if d.Host.Tool != "show_records" || d.Host.View != "ui://records/table.html" || !d.Host.Done {
				t.Errorf("host state %+v", d.Host)
			}
			// The view showed the tool's result.
			if d.StatusBefore != "Showing 3 records." || len(d.Before) != 3 || d.Before[1] != (row{2, "Fix the flaky test", "open"}) {
				t.Errorf("the view showed %q, rows %+v", d.StatusBefore, d.Before)
			}
			// The view's call went through the host to the server, and its
			// answer came back to the view.
			if strings.Join(d.Host.ViewCalls, ",") != "edit_record" || len(d.Host.Refused) > 0 {
				t.Errorf("the view called %v (refused %v)", d.Host.ViewCalls, d.Host.Refused)
			}
			if d.StatusAfter != "Saved record 2." || len(d.After) != 3 || d.After[1].Title != "Edited in Chromium" {
				t.Errorf("after the edit the view showed %q, rows %+v", d.StatusAfter, d.After)
			}
			if !strings.Contains(logs.String(), `msg="records: renamed" id=2 title="Edited in Chromium"`) {
				t.Errorf("the server did not log the rename:\n%s", logs.String())
			}
			sess, err := client.New(mcp.Implementation{Name: "browser-test", Version: "1"}, nil).
				Connect(ctx, streamhttp.NewClientTransport(mcpURL, nil))
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			res, err := sess.CallTool(ctx, "show_records", nil)
			if err != nil {
				t.Fatal(err)
			}
			var table struct{ Records []row }
			if _, err := res.DecodeStructuredContent(&table); err != nil || len(table.Records) != 3 || table.Records[1].Title != "Edited in Chromium" {
				t.Errorf("the server holds %+v (%v)", table.Records, err)
			}
			if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
				t.Errorf("no screenshot: %v", err)
			}
		})
	}
}

// TestInspectorAppInfo: the MCP Inspector's headless probe (its CLI,
// --app-info) reports the app: show_records with its view, and with
// --advertise-apps (a client that claims to render apps) the app-only
// edit_record too.
func TestInspectorAppInfo(t *testing.T) {
	needBrowser(t)
	mcpURL, _ := startExample(t)
	probe := func(extra ...string) map[string]map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
		defer cancel()
		args := append([]string{filepath.Join(modules, "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js"),
			"--cli", mcpURL, "--method", "tools/list", "--app-info"}, extra...)
		cmd := exec.CommandContext(ctx, node, args...)
		cmd.Stderr = testWriter{t}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("inspector %v: %v\n%s", extra, err, out)
		}
		tools := map[string]map[string]any{}
		for line := range strings.Lines(string(out)) {
			var info map[string]any
			if err := json.Unmarshal([]byte(line), &info); err != nil {
				t.Fatalf("inspector printed %q: %v", line, err)
			}
			name, _ := info["toolName"].(string)
			tools[name] = info
		}
		return tools
	}
	plain := probe()
	show := plain["show_records"]
	if len(plain) != 1 || show["hasApp"] != true || show["resourceUri"] != "ui://records/table.html" ||
		show["resourceMimeType"] != "text/html;profile=mcp-app" || show["prefersBorder"] != true {
		t.Errorf("inspector --app-info: %v", plain)
	}
	apps := probe("--advertise-apps")
	edit := apps["edit_record"]
	if len(apps) != 2 || edit["hasApp"] != true || edit["resourceUri"] != "ui://records/table.html" {
		t.Errorf("inspector --app-info --advertise-apps: %v", apps)
	}
	if v, _ := edit["visibility"].([]any); len(v) != 1 || v[0] != "app" {
		t.Errorf("edit_record's visibility: %v", edit["visibility"])
	}
}
