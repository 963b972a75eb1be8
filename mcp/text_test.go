package mcp_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

// Text joins the text blocks of a result, in order, and leaves out every
// other kind of block and the structured content; a decoded result gives
// the same text as the one sent.
func TestCallToolResultText(t *testing.T) {
	res := &mcp.CallToolResult{
		Content: []mcp.ContentBlock{
			&mcp.TextContent{Text: "first"},
			&mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"},
			&mcp.TextContent{Text: "second\nline"},
			&mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{URI: "note://x", Text: "embedded"}},
			&mcp.ResourceLink{URI: "note://y", Name: "y"},
			&mcp.TextContent{Text: ""},
		},
		StructuredContent: map[string]any{"k": "structured"},
	}
	want := "first\nsecond\nline\n"
	if got := res.Text(); got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var back mcp.CallToolResult
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Text(); got != want {
		t.Errorf("decoded: Text() = %q, want %q", got, want)
	}
	for _, r := range []*mcp.CallToolResult{nil, {}, {Content: []mcp.ContentBlock{&mcp.ImageContent{}}}} {
		if got := r.Text(); got != "" {
			t.Errorf("%v: Text() = %q, want none", r, got)
		}
	}
	if got := mcp.ErrorResult("it failed").Text(); got != "it failed" {
		t.Errorf("ErrorResult: Text() = %q", got)
	}
}

func ExampleCallToolResult_Text() {
	res := &mcp.CallToolResult{Content: []mcp.ContentBlock{
		&mcp.TextContent{Text: "Hello, Parley!"},
		&mcp.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"},
	}}
	fmt.Println(res.Text())
	// Output: Hello, Parley!
}
