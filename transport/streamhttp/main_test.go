package streamhttp

import (
	"flag"
	"io"
	"log/slog"
	"os"
	"testing"
)

// TestMain silences the handler's and transport's logs (many tests provoke
// warnings on purpose); run with -v to see them.
func TestMain(m *testing.M) {
	flag.Parse()
	if !testing.Verbose() {
		slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
	os.Exit(m.Run())
}
