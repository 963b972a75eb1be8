package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// demoType is a result type as a contributor adds one: its declaration,
// its doc comment and the directive, nothing else.
const demoType = `package mcp

// DemoTaskResult reports a long-running operation's state.
//
//mcp:json nonnil=Steps
type DemoTaskResult struct {
	Result
	// TaskID names the operation.
	TaskID string ` + "`json:\"taskId\"`" + `
	// Status is where it stands.
	Status string ` + "`json:\"status\"`" + `
	// Steps are the steps done so far; never null.
	Steps []string ` + "`json:\"steps\"`" + `
	// PollInterval, when set, is how long to wait before asking again.
	PollInterval *int64 ` + "`json:\"pollInterval,omitempty\"`" + `
	// Error, when set, is the error the operation ended with, raw.
	Error json.RawMessage ` + "`json:\"error,omitempty\"`" + `
}
`

// TestNewTypeInOneDeclaration: a new result type declared in one file with
// //mcp:json gets generated encoders that the package's differential test
// (TestGeneratedEncodersMatchEncodingJSON) picks up and holds to
// encoding/json, with no other line written. The package is built with
// the new file and the regenerated output laid over it (go test -overlay),
// so the tree is never written.
func TestNewTypeInOneDeclaration(t *testing.T) {
	demo := strings.Replace(demoType, "package mcp\n", "package mcp\n\nimport \"encoding/json\"\n", 1)
	src, list, err := generate("../../mcp", "json_gen.go", map[string][]byte{"zz_demo.go": []byte(demo)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "func (v DemoTaskResult) MarshalJSON()") || !strings.Contains(string(list), "DemoTaskResult") {
		t.Fatal("no encoder generated for the new type")
	}
	tmp := t.TempDir()
	abs, err := filepath.Abs("../../mcp")
	if err != nil {
		t.Fatal(err)
	}
	replace := map[string]string{}
	for name, b := range map[string][]byte{"zz_demo.go": []byte(demo), "json_gen.go": src, "json_gen_test.go": list} {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		replace[filepath.Join(abs, name)] = p
	}
	overlay, _ := json.Marshal(map[string]any{"Replace": replace})
	op := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(op, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "test", "-count=1", "-overlay", op, "-v", "-run", "TestGeneratedEncodersMatchEncodingJSON/DemoTaskResult", ".")
	cmd.Dir = abs
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test with the new type: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestGeneratedEncodersMatchEncodingJSON/DemoTaskResult") {
		t.Fatalf("the differential test did not run on the new type:\n%s", out)
	}
}

// TestRefusals: what the generator cannot do right is an error naming the
// type, not a silent encoding/json fallback.
func TestRefusals(t *testing.T) {
	for name, decl := range map[string]string{
		"unknown option":       "//mcp:json frobnicate=x\ntype Bad struct{ A string `json:\"a\"` }",
		"tag option":           "//mcp:json\ntype Bad struct{ A int `json:\"a,string\"` }",
		"undeclared struct":    "type inner struct{ B string }\n\n//mcp:json\ntype Bad struct{ A inner `json:\"a\"` }",
		"twice the same name":  "//mcp:json\ntype Bad struct{ A string `json:\"a\"`; B string `json:\"a\"` }",
		"nonnil of nothing":    "//mcp:json nonnil=Nope\ntype Bad struct{ A []string `json:\"a\"` }",
		"embedded elsewhere":   "//mcp:json\ntype Bad struct{ A string `json:\"a\"` }\n\ntype Outer struct{ Bad }",
		"unknown without type": "//mcp:json unknown=ErrUnknownContentType\ntype Bad struct{ A string `json:\"a\"` }",
	} {
		_, _, err := generate("../../mcp", "json_gen.go", map[string][]byte{"zz_bad.go": []byte("package mcp\n\n" + decl + "\n")})
		if err == nil || !strings.Contains(err.Error(), "Bad") {
			t.Errorf("%s: err = %v, want an error naming the type", name, err)
		}
	}
}
