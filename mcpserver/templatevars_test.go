package mcpserver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

// Template variables reach the function percent-decoded; values that
// would reach outside what the template names are refused by default
// (design record 017), and a variable's field opts in to each.

// echoTemplate registers uriTemplate with a function that returns its
// variables, and counts its runs.
func echoTemplate[In any](t *testing.T, s *mcpserver.Server, uriTemplate string, show func(In) string, questions ...mcpserver.Dependency) *counter {
	t.Helper()
	runs := new(counter)
	mustOK(t, mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: uriTemplate, Name: uriTemplate},
		func(ctx context.Context, c *mcpserver.Call, in In) (*mcp.ReadResourceResult, error) {
			runs.add("body")
			return textContents(c.ResourceURI(), show(in)), nil
		}, questions...))
	return runs
}

type nameVar struct {
	Name string `json:"name"`
}

type pathVar struct {
	Path string `json:"path"`
}

// readVar reads uri and returns the function's text, or the error.
func readVar(t *testing.T, sess *client.Session, uri string) (string, error) {
	t.Helper()
	res, err := sess.ReadResource(context.Background(), uri)
	if err != nil {
		return "", err
	}
	text := readText(t, res)
	return strings.TrimPrefix(text, uri+" "), nil
}

// wantRefused checks that reading uri is refused with -32602 naming the
// variable and the reason, with the URI in data and without the value.
func wantRefused(t *testing.T, sess *client.Session, owner, uri, variable, reason string) {
	t.Helper()
	_, err := readVar(t, sess, uri)
	e := wantRPCError(t, err, jsonrpc.CodeInvalidParams, fmt.Sprintf("Invalid params: resource template %q: variable %q: %s", owner, variable, reason))
	if string(e.Data) != fmt.Sprintf(`{"uri":%q}`, uri) {
		t.Errorf("%s: data = %s, want the URI", uri, e.Data)
	}
}

func TestTemplateVariablesRefusedByDefault(t *testing.T) {
	s, logs := newServer(t, nil)
	const simple, reserved, mapped = "file:///{name}", "tree:///{+path}", "map://{name}/x"
	runs := echoTemplate(t, s, simple, func(v nameVar) string { return fmt.Sprintf("%q", v.Name) })
	runs2 := echoTemplate(t, s, reserved, func(v pathVar) string { return fmt.Sprintf("%q", v.Path) })
	// A map takes every variable, with the defaults.
	runs3 := echoTemplate(t, s, mapped, func(v map[string]string) string { return fmt.Sprintf("%q", v["name"]) })
	const segment, query, fragment = "seg://x{/seg}", "q://s{?q}", "f://s{#frag}"
	byName := func(v map[string]string) string { return fmt.Sprintf("%q", v) }
	echoTemplate(t, s, segment, byName)
	echoTemplate(t, s, query, byName)
	echoTemplate(t, s, fragment, byName)
	sess := connect(t, s, nil)

	for _, c := range []struct{ uri, reason string }{
		{"file:///..%2F..%2Fetc%2Fpasswd", "holds a '/'"},
		{"file:///a%2Fb", "holds a '/'"},
		{"file:///..", `holds a "." or ".." segment`},
		{"file:///.", `holds a "." or ".." segment`},
		{"file:///%2E%2E", `holds a "." or ".." segment`},
		{"file:///a%00b", "holds a control character"},
		{"file:///a%1Fb", "holds a control character"},
		{"file:///a%7F", "holds a control character"},
		{"file:///a%C2%85", "holds a control character"}, // U+0085, a C1 control
		{"file:///a%0Ab", "holds a control character"},
		{"file:///a%5Cb", `holds a '\'`},
		{"file:///..%5Cwin.ini", `holds a '\'`},
		{"file:///%FF", "is not valid UTF-8"},
		{"file:///a,..", `holds a "." or ".." segment`}, // each element of a list
	} {
		wantRefused(t, sess, simple, c.uri, "name", c.reason)
	}
	for _, c := range []struct{ uri, reason string }{
		{"tree:///a/../b", `holds a "." or ".." segment`},
		{"tree:///../etc/passwd", `holds a "." or ".." segment`},
		{"tree:///a/..", `holds a "." or ".." segment`},
		{"tree:///a/./b", `holds a "." or ".." segment`},
		{"tree:///a%2F..%2Fb", `holds a "." or ".." segment`},
		{"tree:////etc/passwd", "starts with a '/'"},
		{"tree:///%2Fetc", "starts with a '/'"},
		{"tree:///a/b%00", "holds a control character"},
		{`tree:///a%5C..%5Cb`, `holds a '\'`},
	} {
		wantRefused(t, sess, reserved, c.uri, "path", c.reason)
	}
	wantRefused(t, sess, mapped, "map://..%2Fx/x", "name", "holds a '/'")
	wantRefused(t, sess, segment, "seg://x/a%2Fb", "seg", "holds a '/'")
	wantRefused(t, sess, segment, "seg://x/..", "seg", `holds a "." or ".." segment`)
	wantRefused(t, sess, query, "q://s?q=..%2Fx", "q", "holds a '/'")
	wantRefused(t, sess, fragment, "f://s#/etc", "frag", "starts with a '/'")
	wantRefused(t, sess, mapped, "map://../x", "name", `holds a "." or ".." segment`)
	if n := runs.get("body") + runs2.get("body") + runs3.get("body"); n != 0 {
		t.Fatalf("a function ran %d times on a refused variable", n)
	}
	wantContains(t, "log", logs.String(), "refused a resource template variable", `uri=file:///..%2F..%2Fetc%2Fpasswd`)

	// What is not refused arrives decoded.
	for uri, want := range map[string]string{
		"file:///a.b":               `"a.b"`,
		"file:///...":               `"..."`,
		"file:///a..b":              `"a..b"`,
		"file:///hello%20world":     `"hello world"`,
		"file:///%E2%9C%93":         `"✓"`,
		"file:///a,b":               `"a,b"`, // a list: its elements joined
		"file:///":                  `""`,
		"tree:///a/b/c.txt":         `"a/b/c.txt"`,
		"tree:///a%2Fb":             `"a/b"`,
		"tree:///a/b..c/.d":         `"a/b..c/.d"`,
		"map://hello%20there/x":     `"hello there"`,
		"tree:///with%20space/x%3F": `"with space/x?"`,
		"seg://x/a.b":               `map["seg":"a.b"]`,
		"q://s?q=a%20b":             `map["q":"a b"]`,
		"f://s#a/b":                 `map["frag":"a/b"]`,
	} {
		got, err := readVar(t, sess, uri)
		mustOK(t, err)
		if got != want {
			t.Errorf("%s: the function got %s, want %s", uri, got, want)
		}
	}
}

// A variable that appears in a reserved expansion and in a simple one is
// matched under both rules: '/' is refused.
func TestTemplateVariableReservedOnlyEverywhere(t *testing.T) {
	s, _ := newServer(t, nil)
	const both = "both://{+path}/{path}"
	echoTemplate(t, s, both, func(v pathVar) string { return v.Path })
	sess := connect(t, s, nil)
	wantRefused(t, sess, both, "both://a%2Fb/a%2Fb", "path", "holds a '/'")
}

type allowedVars struct {
	Path    string `json:"path" mcp:"allow=slash"`
	Dots    string `json:"dots,omitempty" mcp:"allow=dots"`
	Control string `json:"control,omitempty" mcp:"allow=control"`
	Back    string `json:"back,omitempty" mcp:"allow=backslash"`
	All     string `json:"all,omitempty" mcp:"allow=slash, allow=dots, allow=control, allow=backslash"`
}

// Each allowance lets exactly its kind of value through, and nothing else.
func TestTemplateVariableAllowances(t *testing.T) {
	s, _ := newServer(t, nil)
	const tmpl = "opt://{path}/{dots}/{control}/{back}/{all}"
	const rooted = "rooted:///{+path}"
	show := func(v allowedVars) string {
		return fmt.Sprintf("%q %q %q %q %q", v.Path, v.Dots, v.Control, v.Back, v.All)
	}
	echoTemplate(t, s, tmpl, show)
	type rootedVar struct {
		Path string `json:"path" mcp:"allow=slash"`
	}
	echoTemplate(t, s, rooted, func(v rootedVar) string { return fmt.Sprintf("%q", v.Path) })
	sess := connect(t, s, nil)

	got, err := readVar(t, sess, "opt://a%2Fb/../a%00b/a%5Cb/..%2F%00%5C")
	mustOK(t, err)
	if want := `"a/b" ".." "a\x00b" "a\\b" "../\x00\\"`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	for _, c := range []struct{ uri, variable, reason string }{
		{"opt://../x/x/x/x", "path", `holds a "." or ".." segment`},
		{"opt://a%00/x/x/x/x", "path", "holds a control character"},
		{"opt://x/a%2Fb/x/x/x", "dots", "holds a '/'"},
		{"opt://x/x/a%2Fb/x/x", "control", "holds a '/'"},
		{"opt://x/x/x/..%5Cb/x", "back", `holds a "." or ".." segment`},
		{"opt://x/x/x/x/%FF", "all", "is not valid UTF-8"},
	} {
		wantRefused(t, sess, tmpl, c.uri, c.variable, c.reason)
	}
	// allow=slash also lets a reserved variable start with '/'.
	got, err = readVar(t, sess, "rooted:////etc/hosts")
	mustOK(t, err)
	if got != `"/etc/hosts"` {
		t.Errorf("got %s", got)
	}
}

type prefixVars struct {
	ID string `json:"id"`
}

// A prefixed variable ({id:3}) reaches its field, and so do the rules.
func TestTemplatePrefixVariable(t *testing.T) {
	s, _ := newServer(t, nil)
	echoTemplate(t, s, "p://{id:3}", func(v prefixVars) string { return v.ID })
	sess := connect(t, s, nil)
	got, err := readVar(t, sess, "p://abc")
	mustOK(t, err)
	if got != "abc" {
		t.Errorf("got %q", got)
	}
	wantRefused(t, sess, "p://{id:3}", "p://..", "id", `holds a "." or ".." segment`)
}

// Refusal comes before any question is asked.
func TestTemplateVariableRefusedBeforeQuestions(t *testing.T) {
	s, _ := newServer(t, nil)
	confirm := mcpserver.Elicit[yesNo]("confirm", func(v nameVar, _ *mcpserver.Call) string { return "Read " + v.Name + "?" })
	runs := echoTemplate(t, s, "ask:///{name}", func(v nameVar) string { return v.Name }, confirm)
	el := &elicitor{answer: func(string) *mcp.ElicitResult { return accept(map[string]any{"ok": true}) }}
	sess := connect(t, s, &client.Options{Elicit: el.elicit})
	wantRefused(t, sess, "ask:///{name}", "ask:///..%2Fsecret", "name", "holds a '/'")
	if el.count() != 0 || runs.get("body") != 0 {
		t.Errorf("asked %d questions and ran %d times for a refused variable", el.count(), runs.get("body"))
	}
}

type badAllow struct {
	Name string `json:"name" mcp:"allow=everything"`
}

type allowOnPrompt struct {
	Name string `json:"name" mcp:"allow=slash"`
}

func TestTemplateVariableAllowRegistrationErrors(t *testing.T) {
	s, _ := newServer(t, nil)
	noop := func(ctx context.Context, c *mcpserver.Call, v badAllow) (*mcp.ReadResourceResult, error) {
		return nil, nil
	}
	err := mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "x://{name}", Name: "x"}, noop)
	wantContains(t, "error", fmt.Sprint(err), "field Name", "allow=everything: want slash, backslash, dots or control")
	err = mcpserver.AddPrompt(s, &mcp.Prompt{Name: "p"}, func(ctx context.Context, c *mcpserver.Call, v allowOnPrompt) (*mcp.GetPromptResult, error) {
		return nil, nil
	})
	wantContains(t, "error", fmt.Sprint(err), "field Name", "allow applies to resource template variables only")
}
