package main

import (
	"strings"
	"testing"
)

// renderTable lays out as text/tabwriter did without a terminal, and fits
// a terminal's width giving way with the description first, down to 20
// columns, then with the widest column.
func TestRenderTable(t *testing.T) {
	rows := [][]string{
		{"NAME", "ARGUMENTS", "DESCRIPTION"},
		{"add", "a* b*", "Adds two numbers"},
		{"a_rather_long_tool_name", "-", "A description that goes on for quite a while longer than a line"},
	}
	for _, c := range []struct {
		width int
		want  string
	}{
		{0, `
NAME                     ARGUMENTS  DESCRIPTION
add                      a* b*      Adds two numbers
a_rather_long_tool_name  -          A description that goes on for quite a while longer than a line
`},
		{60, `
NAME                     ARGUMENTS  DESCRIPTION
add                      a* b*      Adds two numbers
a_rather_long_tool_name  -          A description that goes…
`},
		{45, `
NAME              ARGUMENTS  DESCRIPTION
add               a* b*      Adds two numbers
a_rather_long_t…  -          A description t…
`},
	} {
		got := renderTable(rows, c.width)
		if want := strings.TrimPrefix(c.want, "\n"); got != want {
			t.Errorf("width %d:\n%s\nwant:\n%s", c.width, got, want)
		}
		for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
			if n := len([]rune(line)); c.width > 0 && n > c.width {
				t.Errorf("width %d: a line of %d: %q", c.width, n, line)
			}
		}
	}
}
