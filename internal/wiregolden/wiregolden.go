// Package wiregolden runs Parley's golden wire tests: txtar archives
// whose file "in" holds the JSON-RPC messages a test sends a server, one
// a line, and whose file "out" holds every message the server sent back,
// byte for byte. A change that alters the wire shows as a diff of "out",
// to be reviewed; `go test -update` (in a package that defines the flag)
// or PARLEY_UPDATE_GOLDEN=1 rewrites "out" after a deliberate change.
//
// Each package keeps its own replay when its archives script more than
// requests (server's back-channel answers and published changes); the
// plain one, Replay, sends each message and reads the answer to each
// request.
package wiregolden

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// UpdateEnv names the environment variable that, set to 1, makes every
// package's golden tests rewrite their archives.
const UpdateEnv = "PARLEY_UPDATE_GOLDEN"

// Updating reports whether golden files are rewritten in this run: the
// test binary's own boolean -update flag, if it defines one, or UpdateEnv.
func Updating() bool {
	if os.Getenv(UpdateEnv) == "1" {
		return true
	}
	if f := flag.Lookup("update"); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			b, _ := g.Get().(bool)
			return b
		}
	}
	return false
}

// Each runs a subtest for every archive that pattern matches (at least
// one must): replay returns what the server sent for the archive's "in",
// which must equal its "out" — or replaces "out" when Updating.
func Each(t *testing.T, pattern string, replay func(t *testing.T, in []byte) []byte) {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files match %s: %v", pattern, err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			in, out := section(ar, "in"), section(ar, "out")
			if in == nil {
				t.Fatal(`the archive has no "in" file`)
			}
			got := replay(t, in.Data)
			if Updating() {
				if out == nil {
					ar.Files = append(ar.Files, txtar.File{Name: "out"})
					out = &ar.Files[len(ar.Files)-1]
				}
				out.Data = got
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if out == nil {
				t.Fatalf(`the archive has no "out" file; rewrite it with %s=1`, UpdateEnv)
			}
			if !bytes.Equal(got, out.Data) {
				t.Errorf("server sent:\n%s\nwant:\n%s", got, out.Data)
			}
		})
	}
}

func section(ar *txtar.Archive, name string) *txtar.File {
	for i := range ar.Files {
		if ar.Files[i].Name == name {
			return &ar.Files[i]
		}
	}
	return nil
}

// Lines returns the messages of an "in" file: its lines, trimmed, but
// blank ones and comments (#).
func Lines(in []byte) [][]byte {
	var lines [][]byte
	for line := range bytes.SplitSeq(in, []byte("\n")) {
		if line = bytes.TrimSpace(line); len(line) > 0 && line[0] != '#' {
			lines = append(lines, line)
		}
	}
	return lines
}

// Version is the generation an exchange speaks: a legacy session
// (2025-11-25) when its first message is an initialize, else the latest.
func Version(lines [][]byte) mcp.ProtocolVersion {
	var first struct{ Method string }
	if len(lines) > 0 && json.Unmarshal(lines[0], &first) == nil && first.Method == mcp.MethodInitialize {
		return mcp.Version20251125
	}
	return mcp.LatestVersion
}

// Replay writes each message to conn, whose other end a server serves,
// and reads the answer to each request (a message with an id; a
// notification has none), returning the answers one a line. check sees
// each answer with the method of the request it answers.
func Replay(t *testing.T, ctx context.Context, conn transport.Conn, lines [][]byte, check func(method string, answer []byte)) []byte {
	t.Helper()
	var got bytes.Buffer
	for _, line := range lines {
		if err := conn.Write(ctx, bytes.Clone(line)); err != nil {
			t.Fatal(err)
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal(line, &req); err != nil {
			t.Fatalf("an \"in\" line is not JSON: %v\n%s", err, line)
		}
		if req.ID == nil {
			continue
		}
		msg, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("reading the answer to %s: %v", line, err)
		}
		if check != nil {
			check(req.Method, msg)
		}
		got.Write(msg)
		got.WriteByte('\n')
	}
	return got.Bytes()
}
