package bridge_test

import (
	"os"
	"testing"

	"github.com/parley-mcp/parley/internal/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }
