package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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
	demoTestsRun(t, "TestGeneratedEncodersMatchEncodingJSON/DemoTaskResult")
}

// demoFiles are the files laid over package mcp for the tests of the
// generator's output: the types a contributor declares, and tests of the
// package's own that hold their encoders to the rules.
func demoFiles() map[string][]byte {
	return map[string][]byte{
		"zz_demo.go":         []byte(strings.Replace(demoType, "package mcp\n", "package mcp\n\nimport \"encoding/json\"\n", 1)),
		"zz_present.go":      []byte(presentType),
		"zz_present_test.go": []byte(presentTest),
	}
}

// demoRun is the one run of package mcp's tests with demoFiles: building
// the package with an overlay costs seconds, so the tests share it.
var demoRun struct {
	once sync.Once
	out  string
	err  error
}

// demoTestsRun fails t unless each of tests (a test of package mcp, or a
// subtest) ran and passed with demoFiles and the generator's output for
// them laid over the package (go test -overlay), so the tree is never
// written.
func demoTestsRun(t *testing.T, tests ...string) {
	t.Helper()
	demoRun.once.Do(func() { demoRun.out, demoRun.err = runWithDemoFiles(t.TempDir()) })
	if demoRun.out == "" {
		t.Fatalf("package mcp with the demo types: %v", demoRun.err)
	}
	for _, name := range tests {
		if !strings.Contains(demoRun.out, "--- PASS: "+name+" ") {
			t.Errorf("%s did not pass with the demo types (%v):\n%s", name, demoRun.err, demoRun.out)
		}
	}
}

// runWithDemoFiles generates the encoders with demoFiles' declarations,
// checks that each demo type got one, and runs package mcp's tests of
// them with everything laid over the package, writing only into tmp.
func runWithDemoFiles(tmp string) (string, error) {
	files := demoFiles()
	decls := map[string][]byte{}
	for name, b := range files {
		if !strings.HasSuffix(name, "_test.go") {
			decls[name] = b
		}
	}
	src, list, err := generate("../../mcp", "json_gen.go", decls)
	if err != nil {
		return "", err
	}
	for _, typ := range []string{"DemoTaskResult", "DemoRoundParams"} {
		if !strings.Contains(string(src), "func (v "+typ+") MarshalJSON()") || !strings.Contains(string(list), typ) {
			return "", fmt.Errorf("no encoder generated for %s", typ)
		}
	}
	abs, err := filepath.Abs("../../mcp")
	if err != nil {
		return "", err
	}
	files["json_gen.go"], files["json_gen_test.go"] = src, list
	replace := map[string]string{}
	for name, b := range files {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return "", err
		}
		replace[filepath.Join(abs, name)] = p
	}
	overlay, _ := json.Marshal(map[string]any{"Replace": replace})
	op := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(op, overlay, 0o644); err != nil {
		return "", err
	}
	cmd := exec.Command("go", "test", "-count=1", "-overlay", op, "-v", "-run",
		"TestGeneratedEncodersMatchEncodingJSON/Demo|TestDemo", ".")
	cmd.Dir = abs
	out, err := cmd.CombinedOutput()
	if err != nil {
		err = fmt.Errorf("go test: %w", err)
	}
	return string(out), err
}

// presentType declares a field under the present= rule, as requestState
// is: a string that is written when it is not empty, and also, empty,
// when its flag is set.
const presentType = `package mcp

// DemoRoundParams are a round's params whose state may be present and
// empty.
//
//mcp:json present=State:ForceState
type DemoRoundParams struct {
	// Meta is the request's _meta.
	Meta *RequestMetaObject ` + "`json:\"_meta,omitempty\"`" + `
	// Name names the round.
	Name string ` + "`json:\"name\"`" + `
	// State is the round's state.
	State string ` + "`json:\"state,omitempty\"`" + `
	// ForceState makes an empty State present.
	ForceState bool ` + "`json:\"-\"`" + `
}
`

// presentTest holds the generated encoders of DemoRoundParams to what the
// present= rule says, each of the three (MarshalJSON, appendJSON, and the
// reference encoding through encoding/json the differential test compares
// them with), so that a rule the generator drops in both is caught too.
const presentTest = `package mcp

import "testing"

func TestDemoPresentRule(t *testing.T) {
	for _, c := range []struct {
		v    DemoRoundParams
		want string
	}{
		{DemoRoundParams{Name: "n"}, ` + "`" + `{"name":"n"}` + "`" + `},
		{DemoRoundParams{Name: "n", ForceState: true}, ` + "`" + `{"name":"n","state":""}` + "`" + `},
		{DemoRoundParams{Name: "n", State: "s"}, ` + "`" + `{"name":"n","state":"s"}` + "`" + `},
		{DemoRoundParams{Name: "n", State: "s", ForceState: true}, ` + "`" + `{"name":"n","state":"s"}` + "`" + `},
	} {
		m, err := c.v.MarshalJSON()
		if err != nil || string(m) != c.want {
			t.Errorf("MarshalJSON(%+v) = %s, %v; want %s", c.v, m, err, c.want)
		}
		a, err := c.v.appendJSON(nil)
		if err != nil || string(a) != c.want {
			t.Errorf("appendJSON(%+v) = %s, %v; want %s", c.v, a, err, c.want)
		}
		r, err := c.v.marshalReference()
		if err != nil || string(r) != c.want {
			t.Errorf("marshalReference(%+v) = %s, %v; want %s", c.v, r, err, c.want)
		}
	}
}
`

// TestPresentRule: present=F:G writes the string F, declared with
// omitempty, also when it is empty and the bool G is set, in the generated
// encoder and in its reference alike; that is how requestState's
// ForceRequestState sends "requestState":"", a state, not none. Without a
// test of its own the rule was held only by make vet's check that the
// checked-in output is what the generator writes now.
func TestPresentRule(t *testing.T) {
	demoTestsRun(t, "TestDemoPresentRule", "TestGeneratedEncodersMatchEncodingJSON/DemoRoundParams")
}

// TestRefusals: what the generator cannot do right is an error naming the
// type, not a silent encoding/json fallback.
func TestRefusals(t *testing.T) {
	for name, decl := range map[string]string{
		"unknown option":        "//mcp:json frobnicate=x\ntype Bad struct{ A string `json:\"a\"` }",
		"tag option":            "//mcp:json\ntype Bad struct{ A int `json:\"a,string\"` }",
		"undeclared struct":     "type inner struct{ B string }\n\n//mcp:json\ntype Bad struct{ A inner `json:\"a\"` }",
		"twice the same name":   "//mcp:json\ntype Bad struct{ A string `json:\"a\"`; B string `json:\"a\"` }",
		"nonnil of nothing":     "//mcp:json nonnil=Nope\ntype Bad struct{ A []string `json:\"a\"` }",
		"embedded elsewhere":    "//mcp:json\ntype Bad struct{ A string `json:\"a\"` }\n\ntype Outer struct{ Bad }",
		"unknown without type":  "//mcp:json unknown=ErrUnknownContentType\ntype Bad struct{ A string `json:\"a\"` }",
		"present of nothing":    "//mcp:json present=Nope:F\ntype Bad struct{ A string `json:\"a,omitempty\"`; F bool `json:\"-\"` }",
		"present without flag":  "//mcp:json present=A:Nope\ntype Bad struct{ A string `json:\"a,omitempty\"`; F bool `json:\"-\"` }",
		"present not a pair":    "//mcp:json present=A\ntype Bad struct{ A string `json:\"a,omitempty\"`; F bool `json:\"-\"` }",
		"present not last":      "//mcp:json present=A:F\ntype Bad struct{ A string `json:\"a,omitempty\"`; B string `json:\"b\"`; F bool `json:\"-\"` }",
		"present not a string":  "//mcp:json present=A:F\ntype Bad struct{ A int `json:\"a,omitempty\"`; F bool `json:\"-\"` }",
		"present not omitted":   "//mcp:json present=A:F\ntype Bad struct{ A string `json:\"a\"`; F bool `json:\"-\"` }",
		"present flag not bool": "//mcp:json present=A:F\ntype Bad struct{ A string `json:\"a,omitempty\"`; F int `json:\"-\"` }",
	} {
		_, _, err := generate("../../mcp", "json_gen.go", map[string][]byte{"zz_bad.go": []byte("package mcp\n\n" + decl + "\n")})
		if err == nil || !strings.Contains(err.Error(), "Bad") {
			t.Errorf("%s: err = %v, want an error naming the type", name, err)
		}
	}
}
