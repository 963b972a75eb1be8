package skills_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/skills"
)

func TestParseFrontmatter(t *testing.T) {
	for _, tc := range []struct{ md, want string }{
		{"---\nname: " + strings.Repeat("x", skills.MaxFrontmatterSize-6) + "\n---\n", `{"name":"` + strings.Repeat("x", skills.MaxFrontmatterSize-6) + `"}`}, // the limit itself
		{"---\nname: a\ndescription: b\n---\nbody", `{"name":"a","description":"b"}`},
		{"\uFEFF---\r\nname: a\r\ndescription: b\r\n---\r\n", `{"name":"a","description":"b"}`},
		{"---\nname: a\n---   \t\n", `{"name":"a"}`},
		{"---\nname: a\n---", `{"name":"a"}`},
		{"---\nz: 1\na: 2\nm: 3\n---\n", `{"z":1,"a":2,"m":3}`},                                                                                                // the file's order
		{"---\ndescription: |\n  line one\n  line two\nlicense: >\n  folded\n  text\n---\n", `{"description":"line one\nline two\n","license":"folded text"}`}, // the block ends before the last line break
		{"---\nmetadata:\n  version: \"2.1\"\n  tags: [a, b]\n  n: 1.5\n  i: -3\n  big: 18446744073709551615\n  hex: 0x1F\n---\n", `{"metadata":{"version":"2.1","tags":["a","b"],"n":1.5,"i":-3,"big":18446744073709551615,"hex":31}}`},
		{"---\nt: true\nf: false\nyes: yes\nn: null\ntilde: ~\nempty:\n---\n", `{"t":true,"f":false,"yes":"yes","n":null,"tilde":null,"empty":null}`},
		{"---\ndate: 2024-01-02\nstamp: 2001-12-14t21:59:43.10-05:00\ncustom: !thing value\n---\n", `{"date":"2024-01-02","stamp":"2001-12-14t21:59:43.10-05:00","custom":"value"}`},
		{"---\n1: one\ntrue: two\n---\n", `{"1":"one","true":"two"}`},
		{"---\nbase: &b {x: 1}\ncopy: *b\n---\n", `{"base":{"x":1},"copy":{"x":1}}`},
		{"---\n<<: 1\nhtml: <b> & </b>\n---\n", `{"<<":1,"html":"<b> & </b>"}`},
		{"---\n---\nname: a\n---\n", `{"name":"a"}`}, // the first --- line is YAML's
	} {
		got, err := skills.ParseFrontmatter([]byte(tc.md))
		if err != nil || string(got) != tc.want {
			t.Errorf("ParseFrontmatter(%q) = %s, %v; want %s", tc.md, got, err, tc.want)
		}
	}
}

func TestParseFrontmatterRefuses(t *testing.T) {
	bomb := "---\na: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n---\n"
	for _, tc := range []struct{ md, want string }{
		{"# no frontmatter\n", "does not begin with a --- line"},
		{" ---\nname: a\n---\n", "does not begin with a --- line"},
		{"---\nname: a\n", "no closing --- line"},
		{"---\n---\n", "no closing --- line"}, // an empty block is none
		{"---\n- a\n- b\n---\n", "not a YAML mapping"},
		{"---\njust text\n---\n", "not a YAML mapping"},
		{"---\nname: a\nname: b\n---\n", `the key "name" appears twice`},
		{"---\n[a]: b\n---\n", "a mapping key that is not a scalar"},
		{"---\nn: .nan\n---\n", "a number JSON cannot hold"},
		{"---\nn: -.inf\n---\n", "a number JSON cannot hold"},
		{"---\nname: [unclosed\n---\n", "yaml:"},
		{"---\nname: \"\xff\"\n---\n", "not valid UTF-8"},
		{"---\na: " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\n---\n", "nested deeper than 32"},
		{bomb, "more than 10000 values"},
		{"---\nname: " + strings.Repeat("x", skills.MaxFrontmatterSize-5) + "\n---\n", "no closing --- line within 65536 bytes"},
		{"---\n" + strings.Repeat("x: y\n", skills.MaxFrontmatterSize/4) + "\n", "no closing --- line within 65536 bytes"},
	} {
		got, err := skills.ParseFrontmatter([]byte(tc.md))
		if !errors.Is(err, skills.ErrFrontmatter) || !strings.Contains(err.Error(), tc.want) {
			name := tc.md
			if len(name) > 60 {
				name = name[:60] + "..."
			}
			t.Errorf("ParseFrontmatter(%q) = %s, %v; want an error with %q", name, got, err, tc.want)
		}
	}
}

// FuzzParseFrontmatter holds the frontmatter parser, a decoder of what
// any server writes, to its promises: no panic, and either an error that
// matches ErrFrontmatter or a JSON object, the same every time.
func FuzzParseFrontmatter(f *testing.F) {
	for _, seed := range []string{
		pdfSkill, refundsSkill, mockSkill,
		"---\nbase: &b {x: [1, 2]}\ncopy: *b\n---\n",
		"---\na: !!binary aGVsbG8=\nb: 2001-12-14\nc: 0o17\nd: 1e3\n---\n",
		"---\n? complex\n: key\n---\n",
		"---\na: *missing\n---\n",
		"---\n%YAML 1.2\n---\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, md []byte) {
		got, err := skills.ParseFrontmatter(md)
		if err != nil {
			if !errors.Is(err, skills.ErrFrontmatter) {
				t.Fatalf("error %v does not match ErrFrontmatter", err)
			}
			return
		}
		var obj map[string]any
		if err := json.Unmarshal(got, &obj); err != nil || obj == nil {
			t.Fatalf("output %s is not a JSON object: %v", got, err)
		}
		again, _ := skills.ParseFrontmatter(md)
		if string(again) != string(got) {
			t.Fatalf("two parses differ: %s and %s", got, again)
		}
	})
}
