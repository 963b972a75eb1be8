package streamhttp

import (
	"flag"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/parley-mcp/parley/internal/leakcheck"
)

// TestMain silences the handler's and transport's logs (many tests provoke
// warnings on purpose; run with -v to see them), and fails the package when
// its tests leave goroutines running: a session, a stream or a connection
// still served after its server or client closed.
func TestMain(m *testing.M) {
	flag.Parse()
	if !testing.Verbose() {
		slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
	os.Exit(leakcheck.Main(m))
}
