package mcp_test

import (
	"slices"
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

func TestSpokenVersions(t *testing.T) {
	want := []mcp.ProtocolVersion{mcp.Version20260728, mcp.Version20251125, mcp.Version20250618, mcp.Version20250326}
	if got := mcp.SpokenVersions(); !slices.Equal(got, want) {
		t.Errorf("SpokenVersions() = %v, want %v", got, want)
	}
	for _, v := range []mcp.ProtocolVersion{mcp.Version20241105, "1900-01-01", ""} {
		if v.Spoken() {
			t.Errorf("%q.Spoken() = true", v)
		}
	}
}
