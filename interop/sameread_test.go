package interop

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport/stdio"
)

// TestProgressInSameReadAsResult pins down a bug of the TypeScript SDK
// clients that tool authors meet (modelcontextprotocol/typescript-sdk#2580,
// documented in README.md and docs/guide/clients.md): progress that
// reaches the client in the same read as the call's response is dropped.
// The SDK dispatches a read's messages in one loop; it hands notifications
// to their handlers from a promise callback, which runs after the loop,
// while it handles the response at once and forgets the request's
// progress callback with it. So the notifications find no callback.
//
// The fixture's "progress" tool is served over stdio with every progress
// notification held back and written together with the next message
// (fixture-same-read), so that one read carries all three and the
// response. Parley's client delivers all three, in both generations; the
// TypeScript clients at the pinned versions, v1 and v2 alike (v2 in both
// of its modes), deliver none. Should a new pin fix the bug, this test
// fails: then say so in the documents above and make the v1 progress
// check (checkProgress) strict.
func TestProgressInSameReadAsResult(t *testing.T) {
	needNode(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []mcp.ProtocolVersion{mcp.Version20251125, mcp.LatestVersion} {
		t.Run("parley/"+string(version), func(t *testing.T) {
			var mu sync.Mutex
			var got []float64
			c := client.New(mcp.Implementation{Name: "parley-interop", Version: "1.0.0"}, &client.Options{
				ProtocolVersion: version,
				Logger:          slog.New(slog.DiscardHandler),
				OnProgress: func(_ context.Context, p *mcp.ProgressNotificationParams) {
					mu.Lock()
					defer mu.Unlock()
					got = append(got, p.Progress)
				},
			})
			cmd := exec.Command(self)
			cmd.Env = append(os.Environ(), serveEnv+"=fixture-same-read")
			ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
			defer cancel()
			sess, err := c.Connect(ctx, stdio.NewCommandTransport(cmd, &stdio.CommandOptions{Stderr: testWriter{t}}))
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer sess.Close()
			res, err := sess.CallTool(ctx, "progress", nil)
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if text(res) != "done" {
				t.Errorf("progress answered %q", text(res))
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(got, []float64{1, 2, 3}) {
				t.Errorf("Parley's client delivered progress %v, want [1 2 3]", got)
			}
		})
	}
	for _, sdk := range []string{"v1", "v2-legacy", "v2-auto"} {
		t.Run("typescript-"+sdk, func(t *testing.T) {
			cmd := nodeCommand(t, "progress-same-read.mjs", sdk, self)
			cmd.Env = append(os.Environ(), serveEnv+"=fixture-same-read")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("progress-same-read.mjs %s: %v", sdk, err)
			}
			var got struct {
				Text string `json:"text"`
				v1Progress
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("progress-same-read.mjs printed %q: %v", out, err)
			}
			if got.Text != "done" {
				t.Errorf("progress answered %q", got.Text)
			}
			// The premise: Parley sent all three, and they arrived in
			// the response's read.
			for _, w := range got.Wire {
				if w.Turn != got.ResultTurn {
					t.Errorf("progress %v arrived in turn %d, the response in turn %d: the fixture did not write them together", w.Progress, w.Turn, got.ResultTurn)
				}
			}
			if len(got.Wire) != 3 {
				t.Errorf("the wire carried %d progress notifications, want 3", len(got.Wire))
			}
			if len(got.Delivered) != 0 {
				t.Errorf("the TypeScript %s client delivered %v: it no longer drops progress that shares a read with the response; update README.md, docs/guide/clients.md and checkProgress", sdk, got.Delivered)
			}
		})
	}
}
