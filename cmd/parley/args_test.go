package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

// TestParseArgs: flags anywhere before --, a URL as the first word, the
// server's command after --, and --json's two meanings told apart by its
// value.
func TestParseArgs(t *testing.T) {
	cases := []struct {
		args     []string
		words    []string
		jsonOut  bool
		jsonArgs string
		url      string
		command  []string
	}{
		{args: []string{"tools", "list", "--json"}, words: []string{"tools", "list"}, jsonOut: true},
		{args: []string{"--json", "tools", "call", "x", "a=1"}, words: []string{"tools", "call", "x", "a=1"}, jsonOut: true},
		{args: []string{"tools", "call", "x", "--json", `{"a":1}`}, words: []string{"tools", "call", "x"}, jsonArgs: `{"a":1}`},
		{args: []string{"tools", "call", "x", "--json", "@args.json", "--json"}, words: []string{"tools", "call", "x"}, jsonArgs: "@args.json", jsonOut: true},
		{args: []string{"tools", "call", "x", "--json={}"}, words: []string{"tools", "call", "x"}, jsonArgs: "{}"},
		{args: []string{"https://example.com/mcp", "info"}, words: []string{"info"}, url: "https://example.com/mcp"},
		{args: []string{"info", "--url", "http://127.0.0.1:1/mcp"}, words: []string{"info"}, url: "http://127.0.0.1:1/mcp"},
		{args: []string{"info", "--", "./server", "--json", "-x"}, words: []string{"info"}, command: []string{"./server", "--json", "-x"}},
	}
	for _, c := range cases {
		o, words, err := parseArgs(c.args)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if !slices.Equal(words, c.words) || o.jsonOut != c.jsonOut || o.jsonArgs != c.jsonArgs || o.url != c.url || !slices.Equal(o.command, c.command) {
			t.Errorf("%q: words %q json %v args %q url %q command %q; want %q %v %q %q %q",
				c.args, words, o.jsonOut, o.jsonArgs, o.url, o.command, c.words, c.jsonOut, c.jsonArgs, c.url, c.command)
		}
	}
	for _, bad := range [][]string{
		{"info", "--"},
		{"info", "--frobnicate"},
		{"info", "--protocol"},
		{"--answer", "novalue", "info"},
		{"--refuse", "maybe", "info"},
		{"https://a/mcp", "info", "--", "./server"},
		{"https://a/mcp", "--url", "https://b/mcp", "info"},
	} {
		if _, _, err := parseArgs(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestTypedArgs: values are typed by the input schema's property types;
// a property without one gets JSON when the value parses as JSON.
func TestTypedArgs(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"s":{"type":"string"},"i":{"type":"integer"},"n":{"type":"number"},"b":{"type":"boolean"},
		"arr":{"type":["null","array"]},"obj":{"type":"object"},"any":{}}}`)
	types := schemaTypes(schema)
	got, err := typedArgs([]string{"s=42", "i=7", "n=2.5", "b=true", `arr=["x"]`, `obj={"k":1}`, "any=3", "other=word", "eq=a=b"}, types, map[string]any{"s": "overridden", "kept": true})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(got)
	want := `{"any":3,"arr":["x"],"b":true,"eq":"a=b","i":7,"kept":true,"n":2.5,"obj":{"k":1},"other":"word","s":"42"}`
	if string(raw) != want {
		t.Errorf("got %s\nwant %s", raw, want)
	}
	for _, bad := range []string{"i=1.5", "i=x", "n=1e", "b=yes please", "arr={}", "obj=[]", "obj={", "noequals", "=v"} {
		if _, err := typedArgs([]string{bad}, types, nil); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// TestReadJSONArgs: inline, from a file, from stdin; never anything but an
// object.
func TestReadJSONArgs(t *testing.T) {
	file := filepath.Join(t.TempDir(), "args.json")
	if err := os.WriteFile(file, []byte(`{"a": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for spec, stdin := range map[string]string{`{"a": 1}`: "", "@" + file: "", "@-": `{"a": 1}`} {
		m, err := readJSONArgs(spec, strings.NewReader(stdin))
		if err != nil || !reflect.DeepEqual(m, map[string]any{"a": json.Number("1")}) {
			t.Errorf("%s: %v, %v", spec, m, err)
		}
	}
	for _, bad := range []string{`[1]`, `{"a":1} {}`, `{`, "@" + file + ".missing"} {
		if _, err := readJSONArgs(bad, strings.NewReader("")); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// TestConvertAnswer checks answers against every kind of field, as the
// form's validation does.
func TestConvertAnswer(t *testing.T) {
	p := signupSchema.Properties
	good := []struct {
		field string
		in    any
		want  any
	}{
		{"age", "42", int64(42)},
		{"age", json.Number("18"), int64(18)},
		{"score", "7.5", 7.5},
		{"score", 10.0, 10.0},
		{"email", "a@b.example", "a@b.example"},
		{"name", "Al", "Al"},
		{"plan", "pro", "pro"},
		{"newsletter", "false", false},
		{"newsletter", true, true},
		{"tags", "alpha, beta", []string{"alpha", "beta"}},
		{"tags", `["beta"]`, []string{"beta"}},
		{"toppings", []any{"egg"}, []string{"egg"}},
		{"tags", "", []string{}},
	}
	for _, c := range good {
		got, err := convertAnswer(p[c.field], c.in)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s=%v: %#v, %v; want %#v", c.field, c.in, got, err, c.want)
		}
	}
	bad := []struct {
		field string
		in    any
		msg   string
	}{
		{"age", "17", "at least 18"},
		{"age", "131", "at most 130"},
		{"age", "4.5", "not a whole number"},
		{"age", "old", "not a number"},
		{"score", "-1", "at least 0"},
		{"email", "bob@", "not an email address"},
		{"name", "A", "at least 2 characters"},
		{"name", strings.Repeat("x", 21), "at most 20 characters"},
		{"plan", "gold", `"gold" is not one of basic, pro`},
		{"newsletter", "maybe", "not true or false"},
		{"tags", "gamma", "not one of alpha, beta"},
		{"toppings", 3.0, "not a list"},
	}
	for _, c := range bad {
		_, err := convertAnswer(p[c.field], c.in)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s=%v: error %v, want one saying %q", c.field, c.in, err, c.msg)
		}
	}
	limited := &mcp.UntitledMultiSelectEnumSchema{MinItems: ptr(1), MaxItems: ptr(1), Items: mcp.UntitledEnumItems{Enum: []string{"a", "b"}}}
	for in, msg := range map[string]string{"": "at least 1", "a,b": "at most 1"} {
		if _, err := convertAnswer(limited, in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v, want %q", in, err, msg)
		}
	}
	uri := &mcp.StringSchema{Format: mcp.FormatURI}
	date := &mcp.StringSchema{Format: mcp.FormatDate}
	dt := &mcp.StringSchema{Format: mcp.FormatDateTime}
	for s, v := range map[*mcp.StringSchema][2]string{uri: {"https://x.example/a", "x.example"}, date: {"2026-07-28", "28/07/2026"}, dt: {"2026-07-28T09:00:00Z", "2026-07-28"}} {
		if _, err := convertAnswer(s, v[0]); err != nil {
			t.Errorf("%s %q: %v", s.Format, v[0], err)
		}
		if _, err := convertAnswer(s, v[1]); err == nil {
			t.Errorf("%s %q: no error", s.Format, v[1])
		}
	}
}

// TestWrap breaks at spaces within the width and leaves long words whole.
func TestWrap(t *testing.T) {
	a := &app{width: 20}
	got := a.wrap("the quick brown fox jumps over the lazy dog\nsupercalifragilisticexpialidocious end", 0)
	want := "the quick brown fox\njumps over the lazy\ndog\nsupercalifragilisticexpialidocious\nend"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := (&app{}).wrap("no width, no wrapping at all", 0); got != "no width, no wrapping at all" {
		t.Errorf("width 0 wrapped: %q", got)
	}
}

// TestFileStorePermissions: the token cache is owner-only, also when its
// directory existed with wider permissions.
func TestFileStorePermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "parley")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &fileStore{path: filepath.Join(dir, "tokens.json")}
	if c, err := s.Load(t.Context(), "https://issuer.example"); c != nil || err != nil {
		t.Fatalf("empty store: %v, %v", c, err)
	}
	if err := s.Save(t.Context(), "https://issuer.example", nil); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, s.path: 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode().Perm(), want)
		}
	}
}

// TestSaveNeverOverwrites: a second file of the same name gets a number,
// and the first keeps its bytes.
func TestSaveNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	a := &app{opts: &options{outDir: dir}}
	first, err := a.save("pic", "image/png", []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := a.save("pic", "image/png", []byte("two"))
	if err != nil {
		t.Fatal(err)
	}
	if first != filepath.Join(dir, "pic.png") || second != filepath.Join(dir, "pic (1).png") {
		t.Fatalf("saved as %s and %s", first, second)
	}
	if b, _ := os.ReadFile(first); string(b) != "one" {
		t.Errorf("the first file now holds %q", b)
	}
}

// TestLogsWaitForQuestions: on a terminal, log lines that arrive while a
// question holds it are printed once it is answered, not over the form;
// progress is not drawn over it at all.
func TestLogsWaitForQuestions(t *testing.T) {
	var stderr lockedBuffer
	a := &app{stderr: &stderr, tty: &terminal{in: strings.NewReader(""), out: &stderr}}
	release := a.hold()
	a.onLog(t.Context(), &mcp.LoggingMessageNotificationParams{Level: "info", Logger: "srv", Data: "while asking"})
	a.onProgress(t.Context(), &mcp.ProgressNotificationParams{Progress: 1, Total: 2})
	if got := stderr.String(); got != "" {
		t.Fatalf("written while a question held the terminal: %q", got)
	}
	release()
	a.onLog(t.Context(), &mcp.LoggingMessageNotificationParams{Level: "warning", Data: map[string]any{"n": 1}})
	if got, want := stderr.String(), "[info] srv: while asking\n[warning] {\"n\":1}\n"; got != want {
		t.Fatalf("stderr %q, want %q", got, want)
	}
}
