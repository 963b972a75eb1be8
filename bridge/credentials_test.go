package bridge_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/parley-mcp/parley/bridge"
	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// lockedLog is a log destination goroutines may write to.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The bridge's configured headers (Options.Header: a bearer token, an API
// key) do not follow the remote server's redirect to another origin (here
// another port of the same host, where net/http alone would forward
// Authorization, and an API key anywhere): the host's call still goes
// through, the server redirected to never sees them, and the bridge's log
// says so.
func TestServeURLHeadersStayAtTheOrigin(t *testing.T) {
	_, remote := modernRemote(t, newRemoteEvents())
	var mu sync.Mutex
	var leaked []string
	mcpHandler := remote.HTTPHandler(nil)
	away := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		for _, k := range []string{"Authorization", "X-Api-Key"} {
			if v := r.Header.Get(k); v != "" {
				leaked = append(leaked, k+": "+v)
			}
		}
		mu.Unlock()
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(away.Close)
	home := httptest.NewServer(http.RedirectHandler(away.URL, http.StatusTemporaryRedirect))
	t.Cleanup(home.Close)

	hostSide, bridgeSide := transport.NewMemoryPipe()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	var logs lockedLog
	served := make(chan error, 1)
	go func() {
		served <- bridge.ServeURL(ctx, bridgeSide, home.URL, &bridge.Options{
			Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			Header: http.Header{"Authorization": {"Bearer t0ken"}, "X-Api-Key": {"k3y"}},
		})
	}()
	sess, err := client.New(mcp.Implementation{Name: "host", Version: "1"}, &client.Options{Logger: quiet, ProtocolVersion: mcp.Version20251125}).
		Connect(ctx, transport.NewMemoryTransport(hostSide))
	if err != nil {
		t.Fatal(err)
	}
	if got := callTool(t, sess, "progress"); got != "done" {
		t.Errorf("progress = %q", got)
	}
	sess.Close()
	testwait.Recv(t, served, "Serve to return")
	mu.Lock()
	defer mu.Unlock()
	if len(leaked) > 0 {
		t.Errorf("the server redirected to received %q", leaked)
	}
	if log := logs.String(); !strings.Contains(log, "another origin") || !strings.Contains(log, "Authorization") {
		t.Errorf("the bridge's log does not say the headers were left out:\n%s", log)
	}
}
