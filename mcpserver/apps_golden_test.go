package mcpserver_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

var updateApps = flag.Bool("update-apps", false, "rewrite testdata/apps/*.txtar from what the server sends")

// TestAppsGolden replays the exchanges of testdata/apps/*.txtar against
// newAppServer: its file "in" holds the messages to send, one per line,
// and "out" every message the server sent, byte for byte. An archive whose
// first message is an initialize is a 2025-11-25 session; each message
// the server sends is validated against its generation's schema (not held
// to the members it names: tool schemas carry JSON Schema keywords, and a
// 2025-era initialize carries capabilities.extensions, as the extension
// has it). -update-apps rewrites "out" after a deliberate change; review
// the diff.
func TestAppsGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/apps/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var in, out *txtar.File
			for i := range ar.Files {
				switch ar.Files[i].Name {
				case "in":
					in = &ar.Files[i]
				case "out":
					out = &ar.Files[i]
				}
			}
			if in == nil || out == nil {
				t.Fatal(`the archive needs an "in" and an "out" file`)
			}
			got := replayApps(t, in.Data)
			if *updateApps {
				out.Data = got
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !bytes.Equal(got, out.Data) {
				t.Errorf("server sent:\n%s\nwant:\n%s", got, out.Data)
			}
		})
	}
}

func replayApps(t *testing.T, input []byte) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := newAppServer(t)
	clientEnd, serverEnd := transport.NewMemoryPipe()
	done := make(chan error, 1)
	go func() { done <- s.ServeConn(ctx, serverEnd) }()
	version := mcp.LatestVersion
	if bytes.Contains(input, []byte(`"method":"initialize"`)) {
		version = mcp.Version20251125
	}
	var got bytes.Buffer
	for _, line := range bytes.Split(input, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if err := clientEnd.Write(ctx, bytes.Clone(line)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(line, []byte(`"id":`)) {
			continue // a notification: nothing answers it
		}
		msg, err := clientEnd.Read(ctx)
		if err != nil {
			t.Fatalf("reading the answer to %s: %v", line, err)
		}
		method := ""
		if i := bytes.Index(line, []byte(`"method":"`)); i >= 0 {
			rest := line[i+len(`"method":"`):]
			method = string(rest[:bytes.IndexByte(rest, '"')])
		}
		spectest.ValidateMessage(t, version, msg, method)
		got.Write(msg)
		got.WriteByte('\n')
	}
	clientEnd.Close()
	if err := <-done; err != nil {
		t.Errorf("ServeConn: %v", err)
	}
	return got.Bytes()
}
