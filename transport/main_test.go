package transport_test

import (
	"os"
	"testing"

	"github.com/parley-mcp/parley/internal/leakcheck"
)

// TestMain fails the package when its tests leave goroutines running, such
// as a Read or Write still waiting on a pipe whose ends were closed.
func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }
