package mcptest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcptest"
)

// TestGoldenTranscripts pins the wire of the fixture's tools in both
// generations (testdata/*.txtar; MCPTEST_UPDATE=1 rewrites them): the
// kit's own transcripts are golden tests like any user's.
func TestGoldenTranscripts(t *testing.T) {
	script := mcptest.Script{
		"region":  mcptest.Accept(regionForm{Region: "eu-west-1"}),
		"primary": mcptest.Accept(map[string]any{"region": "eu-west-1"}),
		"replica": mcptest.Accept(map[string]any{"region": "us-east-2"}),
		"confirm": mcptest.Decline(),
	}
	for _, v := range mcptest.Generations() {
		t.Run(string(v), func(t *testing.T) {
			sess := mcptest.Connect(t, newFixture(t), &mcptest.Options{
				Version: v,
				Script:  script,
				Golden:  filepath.Join("testdata", "fixture-"+string(v)+".txtar"),
			})
			sess.Call("provision", provisionArgs{Name: "orders"})
			sess.Call("replicate", provisionArgs{Name: "orders"})
			sess.Call("confirm", nil)
		})
	}
	t.Run("task", func(t *testing.T) {
		sess := mcptest.Connect(t, newFixture(t), &mcptest.Options{
			Tasks:  true,
			Script: mcptest.Script{"include": mcptest.Accept(map[string]any{"include": true})},
			Golden: filepath.Join("testdata", "task.txtar"),
		})
		sess.AwaitTask(sess.StartTask("report", nil))
	})
}

// TestTranscriptStable: the same test gives the same transcript every
// time, though a legacy server's two questions race on the back-channel
// and a task's polls land when they may.
func TestTranscriptStable(t *testing.T) {
	for _, v := range append(mcptest.Generations(), "task") {
		t.Run(string(v), func(t *testing.T) {
			var first string
			for i := range 10 {
				var got string
				if v == "task" {
					sess := mcptest.Connect(t, newFixture(t), &mcptest.Options{Tasks: true, Script: mcptest.Script{"include": mcptest.Decline()}})
					sess.AwaitTask(sess.StartTask("report", nil))
					got = string(sess.Transcript())
				} else {
					sess := mcptest.Connect(t, newFixture(t), &mcptest.Options{Version: v, Script: mcptest.Script{
						"primary": mcptest.Accept(map[string]any{"region": "eu-west-1"}),
						"replica": mcptest.Accept(map[string]any{"region": "us-east-2"}),
					}})
					sess.Call("replicate", provisionArgs{Name: "orders"})
					got = string(sess.Transcript())
				}
				if i == 0 {
					first = got
				} else if got != first {
					t.Fatalf("run %d differs from the first:\n%s\nfirst:\n%s", i, got, first)
				}
			}
		})
	}
}

// TestTranscriptNormalises: a sealed requestState never reaches the
// transcript, its echo shows the placeholder it was issued under, and a
// task's id and times are placeholders too.
func TestTranscriptNormalises(t *testing.T) {
	sess := mcptest.Connect(t, newFixture(t), &mcptest.Options{Tasks: true, Script: mcptest.Script{
		"region":  mcptest.Accept(regionForm{Region: "eu-west-1"}),
		"include": mcptest.Cancel(),
	}})
	sess.Call("provision", provisionArgs{Name: "orders"})
	task := sess.StartTask("report", nil)
	sess.AwaitTask(task)
	got := string(sess.Transcript())
	if n := strings.Count(got, `"requestState":"<requestState 1>"`); n != 2 {
		t.Errorf("<requestState 1> appears %d times, want issued and echoed:\n%s", n, got)
	}
	if strings.Count(got, `"requestState":"`) != 2 {
		t.Errorf("a requestState that is not a placeholder:\n%s", got)
	}
	if strings.Contains(got, task.ID) || !strings.Contains(got, `"taskId":"<taskId 1>"`) {
		t.Errorf("the task's id %s is not normalised:\n%s", task.ID, got)
	}
	if strings.Contains(got, `"createdAt":"2`) || !strings.Contains(got, `"createdAt":"<time>"`) || !strings.Contains(got, `"lastUpdatedAt":"<time>"`) {
		t.Errorf("a task's times are not normalised:\n%s", got)
	}
	for i, line := range strings.Split(strings.TrimSpace(got), "\n") {
		if !strings.HasPrefix(strings.TrimLeft(line, " "), "client {") && !strings.HasPrefix(strings.TrimLeft(line, " "), "server {") {
			t.Errorf("line %d is not a message: %s", i+1, line)
		}
	}
}

// TestGoldenFile: Update writes the file (and a comment of its own,
// which later updates keep); the next run compares and passes; a change
// fails the test with the lines that differ; a missing file fails it,
// saying how to write it; MCPTEST_UPDATE=1 rewrites it.
func TestGoldenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "greet.txtar")
	run := func(update bool) *fakeT {
		return runFake(t, func(ft testing.TB) {
			sess := mcptest.Connect(ft, newFixture(t), &mcptest.Options{Golden: path, Update: update})
			sess.Call("forecast", map[string]any{"city": "Oslo"})
		})
	}

	f := runFake(t, func(ft testing.TB) {
		mcptest.Connect(ft, newFixture(t), &mcptest.Options{Golden: path})
	})
	f.only(t, "mcptest: no golden transcript "+path+" yet; run the test with MCPTEST_UPDATE=1 to write it")

	f = run(true)
	f.passed(t)
	if len(f.logs) == 0 || !strings.Contains(f.logs[len(f.logs)-1], "mcptest: wrote "+path) {
		t.Errorf("logs %q, want the file written", f.logs)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "-- wire --\nclient {") || !strings.Contains(string(data), `"text":"{\"city\":\"Oslo\",\"tempC\":21.5}"`) && !strings.Contains(string(data), `"structuredContent":{"city":"Oslo","tempC":21.5}`) {
		t.Errorf("the file written:\n%s", data)
	}
	run(false).passed(t)

	edited := strings.Replace(string(data), `"city":"Oslo"`, `"city":"Bergen"`, 1)
	if err := os.WriteFile(path, []byte("my own comment\n"+edited[strings.Index(edited, "-- wire --"):]), 0o644); err != nil {
		t.Fatal(err)
	}
	f = run(false)
	f.only(t, "mcptest: the session's transcript differs from "+path, `- client {"jsonrpc":"2.0","id":2,"method":"tools/call"`, `"city":"Bergen"`, `+ client {"jsonrpc":"2.0","id":2,"method":"tools/call"`)

	t.Setenv(mcptest.UpdateEnv, "1")
	run(false).passed(t)
	t.Setenv(mcptest.UpdateEnv, "")
	run(false).passed(t)
	data, _ = os.ReadFile(path)
	if !strings.HasPrefix(string(data), "my own comment\n") {
		t.Errorf("the update lost the file's comment:\n%s", data)
	}
}

// TestGoldenNotAfterFailure: a test that failed neither compares its
// transcript nor writes it.
func TestGoldenNotAfterFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.txtar")
	f := runFake(t, func(ft testing.TB) {
		mcptest.Connect(ft, newFixture(t), &mcptest.Options{Golden: path, Update: true, Version: mcp.Version20251125})
		ft.Errorf("the test's own failure")
	})
	f.only(t, "the test's own failure")
	if _, err := os.Stat(path); err == nil {
		t.Error("a failed test wrote its transcript")
	}
}
