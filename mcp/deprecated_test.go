package mcp_test

import (
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

// TestDeprecatedNamesStillCompile holds the names that programs written
// against earlier versions use: they must keep compiling, and mean the
// same types as their replacements, until CHANGELOG.md records their
// removal.
func TestDeprecatedNamesStillCompile(t *testing.T) {
	var p mcp.CallToolParams = mcp.CallToolRequestParams{Name: "greet"}
	var q *mcp.CallToolRequestParams = &p
	var id mcp.RequestId = mcp.RequestID{}
	var id2 mcp.RequestID = id
	if q.Name != "greet" || id2 != (mcp.RequestID{}) {
		t.Fatalf("aliases do not denote the same types: %+v %v", q, id2)
	}
}
