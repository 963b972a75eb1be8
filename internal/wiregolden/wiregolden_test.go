package wiregolden

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// echo is a replay whose server answers the in file itself.
func echo(t *testing.T, in []byte) []byte { return in }

func archive(t *testing.T, dir, name, in, out string) string {
	t.Helper()
	path := filepath.Join(dir, name+".txtar")
	ar := &txtar.Archive{Files: []txtar.File{{Name: "in", Data: []byte(in)}, {Name: "out", Data: []byte(out)}}}
	if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestChild runs Each in a child process, so that its failures can be
// observed: the parent tests below run it with WIREGOLDEN_DIR set.
func TestChild(t *testing.T) {
	dir := os.Getenv("WIREGOLDEN_DIR")
	if dir == "" {
		return // not the child
	}
	Each(t, filepath.Join(dir, "*.txtar"), echo)
}

func runChild(t *testing.T, dir string, env ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChild$", "-test.v")
	cmd.Env = append(os.Environ(), append([]string{"WIREGOLDEN_DIR=" + dir}, env...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// A match passes, a difference fails naming both, and updating rewrites
// "out" to what was sent.
func TestEach(t *testing.T) {
	dir := t.TempDir()
	archive(t, dir, "same", "{\"a\":1}\n", "{\"a\":1}\n")
	if out, err := runChild(t, dir); err != nil {
		t.Fatalf("matching archive failed: %v\n%s", err, out)
	}
	diff := archive(t, dir, "diff", "{\"a\":2}\n", "{\"a\":3}\n")
	if out, err := runChild(t, dir); err == nil || !strings.Contains(out, `{"a":2}`) || !strings.Contains(out, "FAIL: TestChild/diff") {
		t.Fatalf("differing archive: %v\n%s", err, out)
	}
	if out, err := runChild(t, dir, UpdateEnv+"=1"); err != nil {
		t.Fatalf("updating: %v\n%s", err, out)
	}
	ar, err := txtar.ParseFile(diff)
	if err != nil || string(section(ar, "out").Data) != "{\"a\":2}\n" {
		t.Fatalf("after the update, out = %q (%v)", section(ar, "out").Data, err)
	}
	if out, err := runChild(t, t.TempDir()); err == nil || !strings.Contains(out, "no golden files") {
		t.Fatalf("no archives: %v\n%s", err, out)
	}
}

func TestLinesAndVersion(t *testing.T) {
	lines := Lines([]byte("  # a comment\n\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}  \n{\"x\":1}\n"))
	if len(lines) != 2 || !bytes.HasPrefix(lines[0], []byte("{")) || !bytes.HasSuffix(lines[0], []byte("}")) {
		t.Fatalf("Lines = %q", lines)
	}
	if v := Version(lines); v != mcp.Version20251125 {
		t.Errorf("an exchange opening with initialize: %s", v)
	}
	if v := Version(lines[1:]); v != mcp.LatestVersion {
		t.Errorf("an exchange without initialize: %s", v)
	}
}

// Replay reads an answer for each request and none for a notification.
func TestReplay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, b := transport.NewMemoryPipe()
	go func() { // answers every request with its own line
		for {
			msg, err := b.Read(ctx)
			if err != nil {
				return
			}
			if bytes.Contains(msg, []byte(`"id"`)) {
				b.Write(ctx, append([]byte("ans:"), msg...))
			}
		}
	}()
	var methods []string
	got := Replay(t, ctx, a, [][]byte{
		[]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
	}, func(method string, _ []byte) { methods = append(methods, method) })
	if string(got) != "ans:{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n" || len(methods) != 1 || methods[0] != "tools/list" {
		t.Errorf("Replay = %q, methods %q", got, methods)
	}
	a.Close()
}
