package mcp_test

import (
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

// benchElicitParams is a form a tool might ask: a few fields of the
// common kinds, with titles and a default.
var benchElicitParams = []byte(`{"mode":"form","message":"Which region and size?","requestedSchema":{"type":"object","properties":{"region":{"type":"string","title":"Region","enum":["eu-west","us-east","ap-south"]},"size":{"type":"integer","title":"Size","minimum":1,"maximum":64,"default":4},"confirm":{"type":"boolean","title":"Confirm"},"note":{"type":"string","title":"Note","maxLength":200}},"required":["region","size"]}}`)

func BenchmarkDecodeElicitRequestParams(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := mcp.DecodeElicitRequestParams(benchElicitParams); err != nil {
			b.Fatal(err)
		}
	}
}
