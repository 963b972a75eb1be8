package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/parley-mcp/parley/transport"
)

// waitBuffer polls b until it holds want, or fails when ctx ends.
func waitBuffer(t *testing.T, ctx context.Context, b *lockedBuffer, want string) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(b.String(), want) {
		select {
		case <-ctx.Done():
			t.Fatalf("never saw %q; got:\n%s", want, b.String())
		case <-tick.C:
		}
	}
}

// TestListen prints each notification of the stream as it arrives, until
// interrupted, which is the normal end (exit 0).
func TestListen(t *testing.T) {
	for _, c := range []struct {
		name      string
		flags     []string
		wantTools string
		wantURI   string
	}{
		{"readable", nil, "notifications/tools/list_changed\n", "notifications/resources/updated note://readme\n"},
		{"json", []string{"--json"}, `{"method":"notifications/tools/list_changed"`, `"uri":"note://readme"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, err := newFixture()
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr lockedBuffer
			a := &app{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
				dial: func(context.Context) (transport.Transport, error) { return srv.InMemoryTransport(), nil }}
			deadline, cancelDeadline := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancelDeadline()
			ctx, interrupt := context.WithCancel(deadline)
			defer interrupt()
			done := make(chan int, 1)
			go func() { done <- run(ctx, a, append(c.flags, "listen", "note://readme")) }()

			waitBuffer(t, deadline, &stderr, "listening for changes to the lists of tools, prompts, resources and updates of note://readme")
			srv.LowLevel().NotifyToolListChanged()
			waitBuffer(t, deadline, &stdout, c.wantTools)
			srv.LowLevel().NotifyResourceUpdated("note://readme")
			waitBuffer(t, deadline, &stdout, c.wantURI)

			interrupt() // ctrl+c
			select {
			case code := <-done:
				if code != exitOK {
					t.Fatalf("exit %d after the interrupt, want 0; stderr:\n%s", code, stderr.String())
				}
			case <-deadline.Done():
				t.Fatal("listen did not end when interrupted")
			}
		})
	}
}
