package main

import (
	"path/filepath"
	"testing"

	"github.com/parley-mcp/parley/mcptest"
)

// TestGreet calls the low-level server's tool in both protocol
// generations, as its users' clients will, and pins the wire of each
// session (testdata/; MCPTEST_UPDATE=1 go test rewrites it).
func TestGreet(t *testing.T) {
	for _, v := range mcptest.Generations() {
		t.Run(string(v), func(t *testing.T) {
			sess := mcptest.Connect(t, newServer(), &mcptest.Options{
				Version: v,
				Golden:  filepath.Join("testdata", "greet-"+string(v)+".txtar"),
			})
			if got := mcptest.Text(t, sess.Call("greet", map[string]any{"name": "Parley"})); got != "Hello, Parley!" {
				t.Errorf("greet said %q", got)
			}
		})
	}
}

// TestGreetRefuses: a call the tool cannot serve is a protocol error, not
// a result.
func TestGreetRefuses(t *testing.T) {
	sess := mcptest.Connect(t, newServer(), nil)
	for _, c := range []struct {
		tool string
		args any
	}{
		{"wave", map[string]any{"name": "Parley"}},
		{"greet", map[string]any{"name": 7}},
	} {
		if _, err := sess.CallTool(t.Context(), c.tool, c.args); err == nil {
			t.Errorf("%s %v: no error", c.tool, c.args)
		}
	}
}
