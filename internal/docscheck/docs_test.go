// Package docscheck runs the commands of README.md and the guides as a new
// user types them: the README's every shell block, and every install line
// (go install, go get, go mod edit) of the README and docs/guide, each in a
// sandbox of its own: a copy of this checkout where a clone would be, a
// fresh module beside it, a GOBIN of its own on PATH and a fresh GOPATH.
// The module cache, the build cache, GOFLAGS and GOPROXY are the
// machine's, so that a warm cache needs no network.
//
// Where a command cannot run as written, the test says what it does
// instead, and nothing else is changed:
//   - "git clone <the Parley repository> parley" is the copy of this
//     checkout, made before the block runs;
//   - "your-module" is a module made before the block runs, whose main
//     package is the README's quick start (and, for the otel module's
//     lines, a program that imports it);
//   - a server started with -serve-http ADDR runs in the background, at a
//     free port that replaces ADDR in the commands after it;
//   - "make test" is the command that runs this test: it is not run again.
//
// It is the docs stage of make test (docs/testing.md).
package docscheck

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// root is the checkout, from this package's directory.
const root = "../.."

// blockTimeout bounds one block, which may build parley from a cold
// build cache on a loaded machine.
const blockTimeout = 10 * time.Minute

// fence is one fenced block of a markdown file.
type fence struct {
	file, lang, body string
	line             int
}

func (f fence) String() string { return fmt.Sprintf("%s:%d", f.file, f.line) }

// fences returns the fenced blocks of a markdown file, in order.
func fences(t *testing.T, file string) []fence {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	var out []fence
	var cur *fence
	var body []string
	for i, line := range strings.Split(string(text), "\n") {
		if !strings.HasPrefix(line, "```") {
			if cur != nil {
				body = append(body, line)
			}
			continue
		}
		if cur == nil {
			cur = &fence{file: file, lang: strings.TrimPrefix(line, "```"), line: i + 1}
			body = nil
			continue
		}
		cur.body = strings.Join(body, "\n")
		out = append(out, *cur)
		cur = nil
	}
	if cur != nil {
		t.Fatalf("%s:%d: a fence is not closed", file, cur.line)
	}
	return out
}

// installCommand matches a line that installs or fetches Parley, or
// points a module at it.
var installCommand = regexp.MustCompile(`\bgo (install|get|mod edit)\b`)

// sandbox is where one block runs.
type sandbox struct {
	dir    string // holds parley (the clone), your-module, bin, gopath
	clone  string
	module string
	bin    string
	env    []string
	// servedAt is the address of the last server started in the
	// background.
	servedAt string
}

// newSandbox copies the checkout to dir/parley. Blocks share it (the
// packages built from one clone's files stay in the build cache for the
// next block), each after a reset.
func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	dir := t.TempDir()
	s := &sandbox{dir: dir, clone: filepath.Join(dir, "parley"), module: filepath.Join(dir, "your-module"), bin: filepath.Join(dir, "bin")}
	if err := copyTree(root, s.clone); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(s.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	modcache := goEnv(t, "GOMODCACHE")
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GOBIN", "GOPATH", "GOMODCACHE", "GOWORK", "PWD", "PATH":
			continue
		}
		s.env = append(s.env, kv)
	}
	s.env = append(s.env,
		"GOBIN="+s.bin,
		"GOPATH="+filepath.Join(dir, "gopath"),
		"GOMODCACHE="+modcache,
		"GOWORK=off",
		"PATH="+s.bin+string(os.PathListSeparator)+os.Getenv("PATH"),
	)
	return s
}

// reset empties GOBIN and makes your-module afresh, a module whose main
// package is program (nil: no module), for the next block.
func (s *sandbox) reset(t *testing.T, program map[string]string) {
	t.Helper()
	for _, dir := range []string{s.bin, s.module} {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(s.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	s.servedAt = ""
	if program != nil {
		if err := os.MkdirAll(s.module, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, src := range program {
			p := filepath.Join(s.module, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s.run(t, s.module, "go mod init example.com/your-module")
	}
}

// goEnv is one value of go env.
func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// copyTree copies the files of src to dst, without .git (a directory, or
// a worktree's file) and the local caches: what a clone holds, as the
// working tree has it now.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if name := d.Name(); rel != "." && (name == ".git" || name == ".cache") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case !d.Type().IsRegular():
			return nil // sockets and links left by other tools
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// run runs a shell script in dir and returns its output; a failure fails
// the test with the output.
func (s *sandbox) run(t *testing.T, dir, script string) string {
	t.Helper()
	out, err := s.try(dir, script)
	if err != nil {
		t.Fatalf("in %s:\n%s\n%v\n%s", dir, script, err, out)
	}
	return out
}

// try runs a shell script (with set -e) in dir.
func (s *sandbox) try(dir, script string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), blockTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -e\n"+script)
	cmd.Dir = dir
	cmd.Env = s.env
	// Killing bash at the timeout leaves what it started holding the
	// output pipe; WaitDelay stops waiting for them, so that the timeout
	// bounds the block.
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// serveLine matches a command that starts a server over HTTP.
var serveLine = regexp.MustCompile(`-serve-http (127\.0\.0\.1:\d+)`)

// runBlock runs f's commands in s, as the package documentation says:
// from the sandbox's top (where the clone and your-module are) when the
// block clones or changes directory first, else in the clone.
func (s *sandbox) runBlock(t *testing.T, f fence) {
	t.Helper()
	dir := s.clone
	body := strings.TrimSpace(f.body)
	if strings.HasPrefix(body, "cd ") || strings.Contains(body, "git clone") {
		dir = s.dir
	}
	var chunk []string
	addr := ""
	flush := func() {
		if len(chunk) > 0 {
			if out, err := s.try(dir, strings.Join(chunk, "\n")); err != nil {
				t.Fatalf("%s: the commands fail as written:\n%s\n%v\n%s", f, strings.Join(chunk, "\n"), err, out)
			}
		}
		chunk = nil
	}
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "git clone ") {
			continue // the sandbox's copy of the checkout
		}
		if m := serveLine.FindStringSubmatch(line); m != nil {
			flush()
			addr = m[1]
			s.serve(t, dir, strings.Replace(line, m[1], "127.0.0.1:0", 1), f)
			continue
		}
		if addr != "" {
			line = strings.ReplaceAll(line, addr, s.servedAt)
		}
		chunk = append(chunk, line)
	}
	flush()
}

// servedURL is the address a server started with -serve-http prints.
var servedURL = regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/mcp`)

// serve starts line (a server with -serve-http 127.0.0.1:0) in the
// background, until the test ends, and waits for the address it prints.
func (s *sandbox) serve(t *testing.T, dir, line string, f fence) {
	t.Helper()
	cmd := exec.Command("bash", "-c", "exec "+line)
	cmd.Dir = dir
	cmd.Env = s.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(s.dir, "serve.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := servedURL.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		io.Copy(io.Discard, stdout)
		close(found)
	}()
	select {
	case a, ok := <-found:
		if !ok {
			out, _ := os.ReadFile(logPath)
			t.Fatalf("%s: %s printed no address\n%s", f, line, out)
		}
		s.servedAt = a
	case <-time.After(blockTimeout):
		t.Fatalf("%s: %s did not serve within %v", f, line, blockTimeout)
	}
}

// quickStart is the README's quick start as a program: its first Go block
// of "## Quick start", in a main function with the imports it uses.
func quickStart(t *testing.T) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(text), "## Quick start")
	if !ok {
		t.Fatal(`README.md has no "## Quick start"`)
	}
	_, block, ok := strings.Cut(after, "```go\n")
	if !ok {
		t.Fatal("the quick start has no Go block")
	}
	block, _, _ = strings.Cut(block, "```")
	return `package main

import (
	"context"
	"fmt"
	"log"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

func main() {
	ctx := context.Background()
` + block + "}\n"
}

// refuseLegacy is the README's sentence on refusing legacy clients.
var refuseLegacy = regexp.MustCompile("To refuse legacy clients, set `(\\w+)\\.Options\\.SupportedVersions` to\\s+`([^`]+)`")

// refuseProgram builds the server of the quick start with the option
// README.md names for refusing legacy clients, set as it says, and
// checks that a client of the 2025-11-25 generation is refused.
func refuseProgram(t *testing.T) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := refuseLegacy.FindStringSubmatch(string(text))
	if m == nil {
		t.Fatal("README.md no longer says how to refuse legacy clients in the words this test reads: " + refuseLegacy.String())
	}
	pkg, value := m[1], m[2]
	imp := ""
	if pkg != "mcpserver" {
		imp = "\t\"github.com/parley-mcp/parley/" + pkg + "\"\n"
	}
	return `package main

import (
	"context"
	"fmt"
	"log"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
` + imp + `)

func main() {
	s := mcpserver.MustNew(mcp.Implementation{Name: "hello-server", Version: "1.0.0"}, &` + pkg + `.Options{SupportedVersions: ` + value + `})
	c := client.New(mcp.Implementation{Name: "legacy", Version: "1"}, &client.Options{ProtocolVersion: mcp.Version20251125})
	if _, err := c.Connect(context.Background(), s.InMemoryTransport()); err == nil {
		log.Fatal("a 2025-11-25 client was served")
	}
	fmt.Println("legacy client refused")
}
`
}

// otelProgram imports the otel module, for its install lines.
const otelProgram = `package main

import (
	"fmt"
	"log"

	parleyotel "github.com/parley-mcp/parley/otel"
)

func main() {
	if _, err := parleyotel.New(nil); err != nil {
		log.Fatal(err)
	}
	fmt.Println("otel ok")
}
`

// check verifies what a block that installs left behind.
func (s *sandbox) check(t *testing.T, f fence) {
	t.Helper()
	if strings.Contains(f.body, "go install ./cmd/parley") {
		if out := s.run(t, s.dir, "parley --version"); !strings.HasPrefix(out, "parley ") {
			t.Errorf("%s: parley --version printed %q", f, out)
		}
	}
	if !strings.Contains(f.body, "cd your-module") {
		return
	}
	if strings.Contains(f.body, "/otel") {
		if out := s.run(t, s.module, "go run ."); strings.TrimSpace(out) != "otel ok" {
			t.Errorf("%s: the module does not build with otel: %q", f, out)
		}
		return
	}
	if out := s.run(t, s.module, "go run ."); strings.TrimSpace(out) != "Hello, Parley!" {
		t.Errorf("%s: the quick start printed %q, want Hello, Parley!", f, out)
	}
	if out := s.run(t, s.module, "go run ./refuse"); strings.TrimSpace(out) != "legacy client refused" {
		t.Errorf("%s: the README's way of refusing legacy clients: %q", f, out)
	}
}

// inlineCommand matches a command in a code span of running text.
var inlineCommand = regexp.MustCompile("`((?:cd [^`&]+ && )?go (?:install|get|run) [^`]+)`")

// TestDocCommands runs every shell block of README.md, and every install
// line of the README and the guides (go install, go get, go mod edit, in a
// shell block or a code span of running text), as written (see the
// package documentation), and checks what each leaves: parley installed,
// the quick start printing its greeting, the README's way of refusing
// legacy clients refusing one, a module built with otel. A sentence that
// speaks of the time once Parley is published names commands that cannot
// work yet: none may be in a code span. A go run of running text must
// name a program that is there (the examples and otel stages run them).
func TestDocCommands(t *testing.T) {
	type block struct {
		f       fence
		program map[string]string
	}
	var blocks []block
	for _, f := range fences(t, "README.md") {
		if f.lang == "sh" && strings.TrimSpace(f.body) != "make test" { // make test runs this test
			blocks = append(blocks, block{f, map[string]string{"main.go": quickStart(t), "refuse/main.go": refuseProgram(t)}})
		}
	}
	guides, err := filepath.Glob(filepath.Join(root, "docs", "guide", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, g := range guides {
		rel, err := filepath.Rel(root, g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.ToSlash(rel))
	}
	for _, file := range files {
		if file != "README.md" {
			for _, f := range fences(t, file) {
				if f.lang == "sh" && installCommand.MatchString(f.body) {
					program := map[string]string{"main.go": quickStart(t)}
					if strings.Contains(f.body, "/otel") {
						program = map[string]string{"main.go": otelProgram}
					}
					blocks = append(blocks, block{f, program})
				}
			}
		}
		text, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(text), "\n") {
			for _, m := range inlineCommand.FindAllStringSubmatch(line, -1) {
				f := fence{file: file, line: n + 1, lang: "sh", body: m[1]}
				if strings.Contains(m[1], "go run ") {
					checkRunSpan(t, f)
					continue
				}
				blocks = append(blocks, block{f, nil})
			}
		}
	}
	if len(blocks) < 6 {
		t.Fatalf("%d blocks and install lines found; the test no longer reads the docs as written", len(blocks))
	}
	s := newSandbox(t)
	for _, b := range blocks {
		t.Run(b.f.String(), func(t *testing.T) {
			s.reset(t, b.program)
			s.runBlock(t, b.f)
			s.check(t, b.f)
		})
	}
}

// checkRunSpan checks a go run command of running text names a program
// that is there; the examples stage (and the otel stage, for the otel
// module's) runs every one of them.
func checkRunSpan(t *testing.T, f fence) {
	t.Helper()
	dir := root
	body := f.body
	if cd, rest, ok := strings.Cut(body, " && "); ok {
		dir = filepath.Join(root, strings.TrimPrefix(cd, "cd "))
		body = rest
	}
	fields := strings.Fields(body)
	if len(fields) < 3 {
		t.Errorf("%s: %q runs nothing", f, f.body)
		return
	}
	if _, err := os.Stat(filepath.Join(dir, fields[2], "main.go")); err != nil {
		t.Errorf("%s: %q: %v", f, f.body, err)
	}
}
