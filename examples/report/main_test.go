package main

import (
	"testing"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcptest"
)

// TestReportTask runs the report as a task, as a client that declared the
// extension does: the task is started, its question answered from the
// script by key, and awaited to its end.
func TestReportTask(t *testing.T) {
	for name, c := range map[string]struct {
		answer mcptest.Answer
		want   string
	}{
		"yes":     {mcptest.Accept(map[string]any{"include": true}), "Report 2026-Q3: revenue 4.2M (last year 3.9M, +7.7%)."},
		"no":      {mcptest.Accept(map[string]any{"include": false}), "Report 2026-Q3: revenue 4.2M."},
		"decline": {mcptest.Decline(), "Report 2026-Q3: revenue 4.2M."},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := newServer()
			if err != nil {
				t.Fatal(err)
			}
			sess := mcptest.Connect(t, s, &mcptest.Options{Tasks: true, Script: mcptest.Script{"include": c.answer}})
			task := sess.StartTask("quarterly_report", map[string]any{"quarter": "2026-Q3"})
			if got := mcptest.Text(t, sess.AwaitTask(task)); got != c.want {
				t.Errorf("the report: %q, want %q", got, c.want)
			}
		})
	}
}

// TestReportWithoutTasks: a client that does not speak the extension gets
// the report as an ordinary result: on a legacy session the question is
// asked on the back-channel, and in a 2026-07-28 call, which has no way to
// ask mid-body, nothing is asked.
func TestReportWithoutTasks(t *testing.T) {
	for _, v := range mcptest.Generations() {
		t.Run(string(v), func(t *testing.T) {
			s, err := newServer()
			if err != nil {
				t.Fatal(err)
			}
			opts, want := &mcptest.Options{Version: v}, "Report 2026-Q3: revenue 4.2M."
			if v == mcp.Version20251125 {
				opts.Script = mcptest.Script{"include": mcptest.Accept(map[string]any{"include": true})}
				want = "Report 2026-Q3: revenue 4.2M (last year 3.9M, +7.7%)."
			}
			sess := mcptest.Connect(t, s, opts)
			if got := mcptest.Text(t, sess.Call("quarterly_report", map[string]any{"quarter": "2026-Q3"})); got != want {
				t.Errorf("the report: %q, want %q", got, want)
			}
		})
	}
}
