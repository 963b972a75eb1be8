package server_test

import (
	"os"
	"testing"

	"github.com/parley-mcp/parley/internal/leakcheck"
)

// TestMain fails the package when its tests leave goroutines running: a
// connection served after its peer left, a session never closed.
func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }
