package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// guidePath is the guide whose commands TestCurlGuide runs.
const guidePath = "../../docs/guide/curl.md"

// guideAddr is the address the guide serves at; the test serves at a free
// one and puts it in the commands' place.
const guideAddr = "127.0.0.1:8080"

// fence is one fenced block of the guide.
type fence struct {
	lang, body string
	line       int
}

// fences returns the fenced blocks of a markdown text, in order.
func fences(t *testing.T, text string) []fence {
	t.Helper()
	var out []fence
	var cur *fence
	var body []string
	for i, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "```") {
			if cur != nil {
				body = append(body, line)
			}
			continue
		}
		if cur == nil {
			cur = &fence{lang: strings.TrimPrefix(line, "```"), line: i + 1}
			body = nil
			continue
		}
		cur.body = strings.Join(body, "\n")
		out = append(out, *cur)
		cur = nil
	}
	if cur != nil {
		t.Fatalf("%s:%d: a fence is not closed", guidePath, cur.line)
	}
	return out
}

// buildProvision builds the example's command, as the guide's readers do.
func buildProvision(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the example: %v", err)
	}
	exe := filepath.Join(t.TempDir(), "provision")
	cmd := exec.Command(gobin, "build", "-o", exe, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return exe
}

// TestCurlGuide runs every shell block of docs/guide/curl.md, in order and
// in one shell, against the Provisioner served over HTTP, and holds each
// answer to the block the guide shows after the command ("…" stands for
// any text within a line). A guide whose commands drift from the server
// fails here, not in a reader's terminal.
func TestCurlGuide(t *testing.T) {
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to run the guide (scripts/deps.sh installs curl): %v", tool, err)
		}
	}
	text, err := os.ReadFile(guidePath)
	if err != nil {
		t.Fatal(err)
	}
	exe := buildProvision(t)

	// The server, as the guide's first block starts it, at a free port.
	srv := exec.Command(exe, "-serve-http", "127.0.0.1:0")
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Signal(os.Interrupt)
		_ = srv.Wait()
	})
	first, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the server printed no address: %v", err)
	}
	addr := regexp.MustCompile(`http://([^/]+)/mcp`).FindStringSubmatch(first)
	if addr == nil {
		t.Fatalf("no address in %q", first)
	}

	type step struct {
		cmd  fence
		want *fence
	}
	var steps []step
	all := fences(t, string(text))
	served := false
	for i, f := range all {
		if f.lang != "sh" {
			continue
		}
		switch {
		case strings.Contains(f.body, "-serve-http "+guideAddr):
			served = true // the test started it
			continue
		case strings.HasPrefix(f.body, "go build"):
			continue // the desktop section: TestDesktopConfig
		}
		s := step{cmd: f}
		if i+1 < len(all) && (all[i+1].lang == "json" || all[i+1].lang == "text") && !strings.Contains(all[i+1].body, "mcpServers") {
			s.want = &all[i+1]
		}
		steps = append(steps, s)
	}
	if !served || len(steps) < 10 {
		t.Fatalf("the guide has %d commands and served=%v; the test no longer reads it as written", len(steps), served)
	}

	// One shell for all of it, as a reader's terminal: variables carry
	// over. Each block's output follows a marker line.
	var script strings.Builder
	script.WriteString("set -e\n")
	for i, s := range steps {
		fmt.Fprintf(&script, "printf '\\n@@@ %d\\n'\n%s\n", i, strings.ReplaceAll(s.cmd.body, guideAddr, addr[1]))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sh := exec.CommandContext(ctx, "bash", "-c", script.String())
	sh.Dir = t.TempDir()
	var errBuf bytes.Buffer
	sh.Stderr = &errBuf
	out, err := sh.Output()
	if err != nil {
		t.Fatalf("the guide's commands failed: %v\nstderr: %s\nstdout: %s", err, errBuf.Bytes(), out)
	}
	outputs := regexp.MustCompile(`(?m)^@@@ \d+\n`).Split(string(out), -1)[1:]
	if len(outputs) != len(steps) {
		t.Fatalf("%d outputs for %d commands:\n%s", len(outputs), len(steps), out)
	}
	for i, s := range steps {
		got := strings.TrimSpace(outputs[i])
		if s.want == nil {
			if got != "" {
				t.Errorf("%s:%d: the command printed %q, and the guide shows nothing", guidePath, s.cmd.line, got)
			}
			continue
		}
		if !matchShown(strings.TrimSpace(s.want.body), got) {
			t.Errorf("%s:%d: the command printed\n%s\nthe guide shows (line %d)\n%s", guidePath, s.cmd.line, got, s.want.line, s.want.body)
		}
	}
}

// matchShown reports whether got is what the guide shows, "…" standing for
// any text within a line.
func matchShown(shown, got string) bool {
	parts := strings.Split(shown, "…")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(`^` + strings.Join(parts, `[^\n]*`) + `$`).MatchString(got)
}

// TestDesktopConfig: the command and arguments the guide's mcpServers entry
// names start a server that answers a desktop host's initialize on stdio.
func TestDesktopConfig(t *testing.T) {
	text, err := os.ReadFile(guidePath)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	for _, f := range fences(t, string(text)) {
		if f.lang == "json" && strings.Contains(f.body, "mcpServers") {
			if err := json.Unmarshal([]byte(f.body), &cfg); err != nil {
				t.Fatalf("%s:%d: the host configuration is not JSON: %v", guidePath, f.line, err)
			}
		}
	}
	entry, ok := cfg.MCPServers["provision"]
	if !ok || !filepath.IsAbs(entry.Command) || filepath.Base(entry.Command) != "provision" {
		t.Fatalf("the guide's mcpServers entry is %+v; want an absolute path to the provision command", cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, buildProvision(t), entry.Args...)
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"desktop-host","version":"1"}}}` + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v", entry.Command, entry.Args, err)
	}
	line, _, _ := strings.Cut(string(out), "\n")
	var resp struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
			ServerInfo      struct {
				Name string `json:"name"`
			} `json:"serverInfo"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &resp); err != nil || resp.Result.ProtocolVersion != "2025-06-18" || resp.Result.ServerInfo.Name != "provisioner" {
		t.Fatalf("the server's answer to initialize: %s (%v)", line, err)
	}
}
