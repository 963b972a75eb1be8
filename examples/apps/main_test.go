package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// TestRun: the in-process host sees both app tools, reads the view, gets
// both audiences of show_records, and its edit reaches the store; a host
// without apps is shown show_records only.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"tool show_records: view ui://records/table.html, called by the model and the view",
		"tool edit_record: view ui://records/table.html, called by the view only",
		"of text/html;profile=mcp-app, version sha256-",
		"cacheable for 1h0m0s (public)",
		"They are shown to the person as an editable table.",
		"show_records, for the view: 3 records",
		"a host without apps lists: show_records\n",
		`edit_record: Record 2 is now "Fix the flaky test for good".`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
