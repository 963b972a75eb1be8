package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/mcptest"
)

// The Provisioner tested as its users reach it, with package mcptest: one
// script answers the region question by its key in both generations, a
// decline or cancel ends the call with a tool error, an answer that does
// not fit the form is refused, and the wire of each generation is pinned
// (testdata/; MCPTEST_UPDATE=1 go test rewrites it).

func TestProvisionKit(t *testing.T) {
	for _, v := range mcptest.Generations() {
		t.Run(string(v), func(t *testing.T) {
			s, err := newProvisioner()
			if err != nil {
				t.Fatal(err)
			}
			sess := mcptest.Connect(t, s, &mcptest.Options{
				Version: v,
				Script:  mcptest.Script{"region": mcptest.Accept(regionForm{Region: "eu-west-1"})},
				Golden:  filepath.Join("testdata", "provision-"+string(v)+".txtar"),
			})
			res := sess.Call("provision", provisionArgs{Name: "orders"})
			if got := mcptest.Text(t, res); got != "Provisioned 'orders' in eu-west-1." {
				t.Errorf("provision said %q", got)
			}
			if qs := sess.Questions(); len(qs) != 1 || qs[0].Message() != "Which region should orders live in?" {
				t.Errorf("the server asked %v", qs)
			}
		})
	}
}

func TestProvisionRefusals(t *testing.T) {
	for _, v := range mcptest.Generations() {
		for name, answer := range map[string]mcptest.Answer{
			"decline":    mcptest.Decline(),
			"cancel":     mcptest.Cancel(),
			"wrong type": mcptest.Accept(map[string]any{"region": 42}),
			"wrong form": mcptest.Accept(map[string]any{"zone": "eu-west-1"}),
		} {
			t.Run(string(v)+"/"+name, func(t *testing.T) {
				s, err := newProvisioner()
				if err != nil {
					t.Fatal(err)
				}
				sess := mcptest.Connect(t, s, &mcptest.Options{Version: v, Script: mcptest.Script{"region": answer}})
				msg := mcptest.ToolError(t, sess.Call("provision", provisionArgs{Name: "orders"}))
				if !strings.Contains(msg, "region") {
					t.Errorf("the tool error does not name the question: %q", msg)
				}
			})
		}
	}
}
