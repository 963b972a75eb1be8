package browser

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// What TestMain set up, or why not.
var (
	node, modules, chromium string
	exampleBin              string // examples/apps, built once
	work                    string // a temporary folder for the run
	setupErr                error
)

func TestMain(m *testing.M) {
	setupErr = setup()
	code := m.Run()
	if work != "" {
		os.RemoveAll(work)
	}
	os.Exit(code)
}

// setup runs install.sh (Node.js and js/package-lock.json, once, into a
// cache folder), builds the example server and the test host's bundle.
func setup() error {
	cmd := exec.Command("bash", "install.sh")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("install.sh: %v\n%s", err, stderr.Bytes())
	}
	for line := range strings.Lines(string(out)) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		switch k {
		case "NODE":
			node = v
		case "NODE_MODULES":
			modules = v
		case "CHROMIUM":
			chromium = v
		}
	}
	if node == "" || modules == "" || chromium == "" {
		return fmt.Errorf("install.sh printed %q, want NODE=, NODE_MODULES= and CHROMIUM= lines", out)
	}
	if work, err = os.MkdirTemp("", "parley-browser-"); err != nil {
		return err
	}
	exampleBin = filepath.Join(work, "apps-example")
	build := exec.Command("go", "build", "-o", exampleBin, "./examples/apps")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building examples/apps: %v\n%s", err, out)
	}
	// The host page's script, bundled with its imports for the browser.
	// (esbuild's install put its platform's binary, from the registry, in
	// its bin.)
	bundle := exec.Command(filepath.Join(modules, "esbuild", "bin", "esbuild"), filepath.Join("js", "host.js"),
		"--bundle", "--format=esm", "--platform=browser", "--log-level=warning", "--outfile="+filepath.Join(work, "host.bundle.js"))
	bundle.Env = append(os.Environ(), "NODE_PATH="+modules)
	if out, err := bundle.CombinedOutput(); err != nil {
		return fmt.Errorf("bundling js/host.js: %v\n%s", err, out)
	}
	for _, f := range []string{"host.html", "sandbox.html", "drive.mjs"} {
		b, err := os.ReadFile(filepath.Join("js", f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(work, f), b, 0o644); err != nil {
			return err
		}
	}
	// drive.mjs resolves playwright-core from beside it.
	return os.Symlink(modules, filepath.Join(work, "node_modules"))
}

// needBrowser skips t when Node.js, the packages or Chromium could not be
// had, or fails it when PARLEY_REQUIRE_BROWSER=1 (as make test sets it).
func needBrowser(t *testing.T) {
	t.Helper()
	if setupErr == nil {
		return
	}
	if os.Getenv("PARLEY_REQUIRE_BROWSER") == "1" {
		t.Fatalf("the browser tests cannot run and PARLEY_REQUIRE_BROWSER=1: %v", setupErr)
	}
	t.Skipf("the browser tests cannot run (set PARLEY_REQUIRE_BROWSER=1 to fail instead): %v", setupErr)
}

// processTimeout bounds every program a test starts.
const processTimeout = 90 * time.Second

// testWriter sends a program's output to the test's log, line by line.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	for line := range strings.Lines(string(p)) {
		w.t.Log(strings.TrimRight(line, "\n"))
	}
	return len(p), nil
}

// startExample starts examples/apps -serve-http on a free port and returns
// its MCP URL and what it logs (stderr). It stops when the test ends.
func startExample(t *testing.T) (string, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
	cmd := exec.CommandContext(ctx, exampleBin, "-serve-http", "127.0.0.1:0")
	logs := new(syncBuffer)
	cmd.Stderr = io.MultiWriter(logs, testWriter{t})
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		cancel()
	})
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			first <- sc.Text()
		}
		close(first)
		io.Copy(io.Discard, stdout)
	}()
	select {
	case line := <-first:
		u := regexp.MustCompile(`http://\S+/mcp`).FindString(line)
		if u == "" {
			t.Fatalf("examples/apps printed %q, not its URL", line)
		}
		return u, logs
	case <-time.After(30 * time.Second):
		t.Fatal("examples/apps did not print its URL within 30s")
	}
	return "", nil
}

// serveHost serves the test host page and its script on one origin, with
// /mcp proxied to the MCP server (so the page reaches it from its own
// origin), and the sandbox proxy page on another origin (localhost rather
// than 127.0.0.1), as the extension requires of a web host. It returns
// the host page's URL for mode.
func serveHost(t *testing.T, mcpURL, mode string) string {
	t.Helper()
	target, err := url.Parse(mcpURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(&url.URL{Scheme: target.Scheme, Host: target.Host}) },
		FlushInterval: -1, // event streams pass as they come
	}
	files := http.FileServer(http.Dir(work))
	hostMux := http.NewServeMux()
	hostMux.Handle("/mcp", proxy)
	hostMux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/host.html", "/host.bundle.js":
			files.ServeHTTP(w, r)
		case "/favicon.ico":
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	})
	host := httptest.NewServer(hostMux)
	t.Cleanup(host.Close)
	sandbox := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/sandbox.html" {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(sandbox.Close)
	sandboxURL := strings.Replace(sandbox.URL, "127.0.0.1", "localhost", 1) + "/sandbox.html"
	return host.URL + "/host.html?" + url.Values{"mode": {mode}, "sandbox": {sandboxURL}}.Encode()
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// artifacts returns the folder for the run's artefacts (screenshots):
// $PARLEY_ARTIFACTS, or a new temporary folder that outlives the test.
// The test's log names it.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("PARLEY_ARTIFACTS")
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "parley-artifacts-"); err != nil {
			t.Fatal(err)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
