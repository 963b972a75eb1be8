package mcptest_test

import (
	"os"
	"testing"

	"github.com/parley-mcp/parley/internal/leakcheck"
)

// TestMain holds the kit to its cleanup: every session a test opened, and
// the server goroutine serving it, ends with the test.
func TestMain(m *testing.M) {
	os.Exit(leakcheck.Main(m))
}
