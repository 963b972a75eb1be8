package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEverythingServer runs parley against the conformance suite's
// everything-server (conformance/everything-server, built here and run
// over stdio, as a person runs a server), one golden file per command:
// the commands the guide docs/guide/cli.md shows.
func TestEverythingServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the everything-server")
	}
	server := filepath.Join(t.TempDir(), "everything")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", server, "../../conformance/everything-server")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the everything-server: %v\n%s", err, out)
	}
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"info", []string{"info"}, exitOK},
		{"simple-text", []string{"tools", "call", "test_simple_text"}, exitOK},
		{"simple-text-json", []string{"--json", "tools", "call", "test_simple_text"}, exitOK},
		{"multiple-content", []string{"tools", "call", "test_multiple_content_types"}, exitOK},
		{"progress", []string{"tools", "call", "test_tool_with_progress"}, exitOK},
		{"logging", []string{"--log-level", "info", "tools", "call", "test_tool_with_logging"}, exitOK},
		{"error", []string{"tools", "call", "test_error_handling"}, exitToolError},
		{"elicitation", []string{"--answer", "username=ada", "--answer", "email=ada@example.com", "tools", "call", "test_elicitation", "message=Who?"}, exitOK},
		{"elicitation-no-terminal", []string{"tools", "call", "test_elicitation", "message=Who?"}, exitUnanswered},
		{"elicitation-enums", []string{"--answer", "untitledSingle=option2", "--answer", "titledMulti=value1,value3", "tools", "call", "test_elicitation_sep1330_enums"}, exitOK},
		{"sampling", []string{"--sampling-cmd", "cat >/dev/null; echo Paris", "tools", "call", "test_sampling", "prompt=Capital of France?"}, exitOK},
		{"mrtr-multiple-inputs", []string{"--answer", "name=ada", "--sampling-cmd", "cat >/dev/null; echo yes", "--root", "testdata", "tools", "call", "test_input_required_result_multiple_inputs"}, exitOK},
		{"prompt", []string{"prompts", "get", "test_prompt_with_arguments", "arg1=tea", "arg2=cake"}, exitOK},
		{"resource-template", []string{"resources", "read", "test://template/42/data"}, exitOK},
		{"complete", []string{"complete", "resource", "test://template/{id}/data", "id=1"}, exitOK},
		{"legacy-elicitation", []string{"--protocol", "2025-11-25", "--answer", "username=ada", "--answer", "email=ada@example.com", "tools", "call", "test_elicitation", "message=Who?"}, exitOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"--out", out}, c.args...)
			r := runApp(t, &app{}, append(args, "--", server, "-stdio")...)
			if r.code != c.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, c.code, r.stdout, r.stderr)
			}
			wd, err := os.Getwd()
			if err != nil {
				t.Fatal(err)
			}
			clean := func(s string) string {
				return strings.ReplaceAll(strings.ReplaceAll(s, out, "$OUT"), wd, "$PWD")
			}
			golden(t, "everything-"+c.name, fmt.Sprintf("$ parley %s -- everything-server -stdio\n%s--- stderr\n%s--- exit %d\n",
				strings.Join(c.args, " "), clean(r.stdout), clean(r.stderr), r.code))
		})
	}
}
