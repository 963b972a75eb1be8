package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-mcp/parley/transport"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the output")

// lockedBuffer is a bytes.Buffer safe for the session's goroutines (logs
// and progress arrive on its read loop).
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// result is what one run of parley left behind.
type result struct {
	stdout, stderr string
	code           int
}

// runFixture runs parley with args against a fresh in-process fixture
// server, with no terminal, saving files under a temporary --out
// directory whose path is printed as $OUT.
func runFixture(t *testing.T, args ...string) result {
	t.Helper()
	srv, err := newFixture()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr lockedBuffer
	a := &app{
		stdin:  strings.NewReader(""),
		stdout: &stdout,
		stderr: &stderr,
		dial: func(context.Context) (transport.Transport, error) {
			return srv.InMemoryTransport(), nil
		},
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := run(ctx, a, append([]string{"--out", out}, args...))
	if ctx.Err() != nil {
		t.Fatalf("parley %s did not finish within 30s", strings.Join(args, " "))
	}
	clean := func(s string) string { return strings.ReplaceAll(s, out, "$OUT") }
	return result{clean(stdout.String()), clean(stderr.String()), code}
}

// golden compares got with testdata/name.golden, or rewrites it with
// -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the output (go test -update rewrites it)\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// TestGolden runs every subcommand, readable and --json, against the
// fixture, and compares stdout, stderr and the exit code with the golden
// files.
func TestGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"info", []string{"info"}, exitOK},
		{"info-json", []string{"--json", "info"}, exitOK},
		{"info-legacy", []string{"--protocol", "2025-11-25", "info"}, exitOK},
		{"tools-list", []string{"tools", "list"}, exitOK},
		{"tools-list-json", []string{"tools", "list", "--json"}, exitOK},
		{"tools-call-add", []string{"tools", "call", "add", "a=2", "b=3", "neg=true"}, exitOK},
		{"tools-call-add-json", []string{"--json", "tools", "call", "add", "a=2", "b=3"}, exitOK},
		{"tools-call-add-bad-number", []string{"tools", "call", "add", "a=two", "b=3"}, exitUsage},
		{"tools-call-echo", []string{"tools", "call", "echo", "--json", `{"items":["x","y"]}`, `opts={"k":1}`}, exitOK},
		{"tools-call-media", []string{"tools", "call", "media"}, exitOK},
		{"tools-call-media-json", []string{"--json", "tools", "call", "media"}, exitOK},
		{"tools-call-fail", []string{"tools", "call", "fail"}, exitToolError},
		{"tools-call-fail-json", []string{"--json", "tools", "call", "fail"}, exitToolError},
		{"tools-call-unknown", []string{"tools", "call", "nosuch"}, exitProtocol},
		{"tools-call-signup-answers", []string{"--log-level", "info", "tools", "call", "signup",
			"--answer", "age=42", "--answer", "email=bob@example.com", "--answer", "name=Bob", "--answer", "plan=pro",
			"--answer", "tags=alpha,beta", "--answer", "newsletter=true"}, exitOK},
		{"tools-call-signup-answers-file", []string{"--json", "--answers", "testdata/answers.json", "tools", "call", "signup"}, exitOK},
		{"tools-call-signup-bad-answer", []string{"tools", "call", "signup", "--answer", "age=12", "--answer", "email=bob@example.com", "--answer", "name=Bob", "--answer", "plan=pro"}, exitUsage},
		{"tools-call-signup-no-terminal", []string{"tools", "call", "signup"}, exitUnanswered},
		{"tools-call-signup-missing", []string{"tools", "call", "signup", "--answer", "age=42"}, exitUnanswered},
		{"tools-call-signup-decline", []string{"--refuse", "decline", "tools", "call", "signup"}, exitRefused},
		{"tools-call-signup-cancel", []string{"--refuse", "cancel", "tools", "call", "signup"}, exitRefused},
		{"tools-call-ask-cmd", []string{"--sampling-cmd", "cat >/dev/null; echo forty-two", "tools", "call", "ask", "question=meaning?"}, exitOK},
		{"tools-call-ask-cmd-json", []string{"--sampling-cmd", `cat >/dev/null; echo '{"role":"assistant","content":{"type":"text","text":"as JSON"},"model":"m"}'`, "tools", "call", "ask", "question=meaning?"}, exitOK},
		{"tools-call-ask-no-terminal", []string{"tools", "call", "ask", "question=meaning?"}, exitUnanswered},
		{"tools-call-visit-no-terminal", []string{"tools", "call", "visit"}, exitUnanswered},
		{"tools-call-visit-decline", []string{"--refuse", "decline", "tools", "call", "visit"}, exitRefused},
		{"tools-call-roots-default", []string{"tools", "call", "roots"}, exitOK},
		{"tools-call-roots", []string{"--root", "testdata", "--root", "..", "tools", "call", "roots"}, exitOK},
		{"prompts-list", []string{"prompts", "list"}, exitOK},
		{"prompts-list-json", []string{"--json", "prompts", "list"}, exitOK},
		{"prompts-get", []string{"prompts", "get", "greet", "name=Ada"}, exitOK},
		{"prompts-get-json", []string{"--json", "prompts", "get", "greet", "name=Ada"}, exitOK},
		{"resources-list", []string{"resources", "list"}, exitOK},
		{"resources-list-json", []string{"--json", "resources", "list"}, exitOK},
		{"resources-read", []string{"resources", "read", "note://readme"}, exitOK},
		{"resources-read-blob", []string{"resources", "read", "note://logo.png"}, exitOK},
		{"resources-read-template", []string{"resources", "read", "note://day/monday"}, exitOK},
		{"resources-read-json", []string{"--json", "resources", "read", "note://readme"}, exitOK},
		{"resources-templates", []string{"resources", "templates"}, exitOK},
		{"resources-templates-json", []string{"--json", "resources", "templates"}, exitOK},
		{"complete", []string{"complete", "prompt", "greet", "name=A"}, exitOK},
		{"complete-json", []string{"--json", "complete", "prompt", "greet", "name=A"}, exitOK},
		{"unknown-command", []string{"tools", "frobnicate"}, exitUsage},
		{"tools-call-unknown-json", []string{"--json", "tools", "call", "nosuch"}, exitProtocol},
		{"resources-read-unknown-json", []string{"--json", "resources", "read", "note://nosuch"}, exitProtocol},
		{"tools-call-signup-no-terminal-json", []string{"--json", "tools", "call", "signup"}, exitUnanswered},
		{"tools-call-signup-unused-answer", []string{"--answers", "testdata/answers.json", "--answer", "nosuch=1", "tools", "call", "signup"}, exitOK},
		{"tools-call-signup-misspelt-answer", []string{"--answers", "testdata/answers.json", "--answer", "nmae=Bob", "tools", "call", "signup"}, exitOK},
		{"info-unused-answer", []string{"--answer", "region=eu", "info"}, exitOK},
		{"help", []string{"--help"}, exitOK},
		{"legacy-tools-call-signup", []string{"--protocol", "2025-11-25", "--answers", "testdata/answers.json", "tools", "call", "signup"}, exitOK},
		{"legacy-tools-call-signup-decline", []string{"--protocol", "2025-11-25", "--refuse", "decline", "tools", "call", "signup"}, exitRefused},
		{"legacy-tools-call-signup-no-terminal", []string{"--protocol", "2025-11-25", "tools", "call", "signup"}, exitUnanswered},
		{"legacy-tools-call-ask-cmd", []string{"--protocol", "2025-11-25", "--sampling-cmd", "cat >/dev/null; echo forty-two", "tools", "call", "ask", "question=meaning?"}, exitOK},
		{"legacy-tools-call-roots", []string{"--protocol", "2025-11-25", "--root", "testdata", "tools", "call", "roots"}, exitOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runFixture(t, c.args...)
			if r.code != c.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, c.code, r.stdout, r.stderr)
			}
			golden(t, c.name, fmt.Sprintf("$ parley %s\n%s--- stderr\n%s--- exit %d\n", strings.Join(c.args, " "), r.stdout, r.stderr, r.code))
		})
	}
}
