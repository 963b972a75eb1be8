// Package targets writes what the bench module's reports (cmd/ratio,
// cmd/load) share: the table of goals they end with (each goal, what the
// run measured, and whether it was met), and their figures' format.
package targets

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Target is one goal, read from a run.
type Target struct {
	Goal     string // what is asked, in words
	Measured string // what the run measured, in words
	Met      bool
	Missing  bool // the run did not measure it
}

// Write writes ts as a Markdown table whose second column is headed
// measured, and reports whether every target was measured and met.
func Write(w io.Writer, measured string, ts []Target) bool {
	all := true
	fmt.Fprintf(w, "| target | %s | |\n", measured)
	fmt.Fprintln(w, "|---|---|---|")
	for _, t := range ts {
		verdict := "met"
		switch {
		case t.Missing:
			verdict = "not measured"
			all = false
		case !t.Met:
			verdict = "**not met**"
			all = false
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", t.Goal, t.Measured, verdict)
	}
	return all
}

// Thousands writes v rounded to a whole number, with thousands separators
// (1,234,567), as the reports' tables show their figures.
func Thousands(v float64) string {
	s := strconv.FormatFloat(v, 'f', 0, 64)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	var b strings.Builder
	b.WriteString(sign)
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
