package interop

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// What TestMain set up: the node binary and a folder holding the programs
// of ts/ beside the pinned packages (a node_modules link), or why not.
var (
	node     string
	scripts  string
	setupErr error
)

// serveEnv, when set in the environment, makes the test binary a Parley
// server instead of running tests: the TypeScript client starts it as its
// stdio server. "stdio" serves newParleyServer; "bridge" is `parley
// bridge`, the bridge package on stdin and stdout, to the URL in
// bridgeURLEnv; "tasks" serves newParleyTasksServer; "fixture" serves the
// fixture (fixture_test.go), and "fixture-same-read" serves it writing
// each progress notification together with the next message.
const serveEnv = "PARLEY_INTEROP_SERVE"

// bridgeURLEnv is the remote server's URL of the "bridge" stdio server.
const bridgeURLEnv = "PARLEY_INTEROP_BRIDGE_URL"

func TestMain(m *testing.M) {
	switch os.Getenv(serveEnv) {
	case "stdio":
		os.Exit(serveStdio())
	case "bridge":
		os.Exit(serveBridge())
	case "tasks":
		os.Exit(serveTasksStdio())
	case "fixture", "fixture-same-read":
		os.Exit(serveFixtureStdio(os.Getenv(serveEnv) == "fixture-same-read"))
	}
	dir, err := setup()
	setupErr = err
	code := m.Run()
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// setup runs install.sh, which installs Node.js and the pinned TypeScript
// SDK once into a cache folder, and lays out the programs of ts/ in a
// temporary folder beside a link to the installed packages, where node
// resolves their imports.
func setup() (string, error) {
	cmd := exec.Command("bash", "install.sh")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("install.sh: %v\n%s", err, stderr.Bytes())
	}
	var modules string
	for line := range strings.Lines(string(out)) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		switch k {
		case "NODE":
			node = v
		case "NODE_MODULES":
			modules = v
		}
	}
	if node == "" || modules == "" {
		return "", fmt.Errorf("install.sh printed %q, want NODE= and NODE_MODULES= lines", out)
	}
	dir, err := os.MkdirTemp("", "parley-interop-")
	if err != nil {
		return "", err
	}
	files, err := filepath.Glob(filepath.Join("ts", "*.mjs"))
	if err != nil || len(files) == 0 {
		return dir, fmt.Errorf("no programs in ts/ (%v)", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return dir, err
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			return dir, err
		}
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		return dir, err
	}
	scripts = dir
	return dir, nil
}

// needNode skips t when Node.js or the TypeScript SDK could not be
// installed, or fails it when PARLEY_REQUIRE_INTEROP=1 (as make test sets
// it): there the interop tests must run.
func needNode(t *testing.T) {
	t.Helper()
	if setupErr == nil {
		return
	}
	if os.Getenv("PARLEY_REQUIRE_INTEROP") == "1" {
		t.Fatalf("the TypeScript peers are not available and PARLEY_REQUIRE_INTEROP=1: %v", setupErr)
	}
	t.Skipf("the TypeScript peers are not available (set PARLEY_REQUIRE_INTEROP=1 to fail instead): %v", setupErr)
}

// processTimeout bounds every program a test starts, so that a peer that
// hangs fails its test instead of the whole run.
const processTimeout = 60 * time.Second

// nodeCommand returns a command that runs the program script of ts/ with
// args, killed when the test ends; its stderr goes to the test's log.
func nodeCommand(t *testing.T, script string, args ...string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(scripts, script)}, args...)...)
	cmd.Stderr = testWriter{t}
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// startHTTPServer starts server-http.mjs in mode and returns its URL. The
// server exits when the test ends (its stdin closes).
func startHTTPServer(t *testing.T, mode string) string {
	t.Helper()
	cmd := nodeCommand(t, "server-http.mjs", mode)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Logf("server-http.mjs %s: %v", mode, err)
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("server-http.mjs %s did not start: %v", mode, err)
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok {
		t.Fatalf("server-http.mjs %s printed %q", mode, line)
	}
	go io.Copy(io.Discard, stdout)
	return url
}

// testWriter writes a program's stderr to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s", bytes.TrimRight(p, "\n"))
	return len(p), nil
}
