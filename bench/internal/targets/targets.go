// Package targets writes the table of goals that the bench module's
// reports (cmd/ratio, cmd/load) end with: each goal, what the run
// measured, and whether it was met.
package targets

import (
	"fmt"
	"io"
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
