package mcptest

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/tools/txtar"
)

// UpdateEnv is the environment variable that, set to 1, rewrites every
// golden transcript instead of comparing with it:
//
//	MCPTEST_UPDATE=1 go test ./...
const UpdateEnv = "MCPTEST_UPDATE"

// wireFile is the file of a golden archive that holds the transcript.
const wireFile = "wire"

// updating reports whether the session's golden file is to be rewritten:
// Options.Update, the environment, or a boolean -update flag of the test
// binary's own (the kit defines no flag: a library that did would clash
// with the tests that define theirs).
func (s *Session) updating() bool {
	if s.update || os.Getenv(UpdateEnv) == "1" {
		return true
	}
	if f := flag.Lookup("update"); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			b, _ := g.Get().(bool)
			return b
		}
	}
	return false
}

// checkGolden compares the session's transcript with its golden file, or
// writes the file.
func (s *Session) checkGolden() {
	t := s.t
	t.Helper()
	got := s.Transcript()
	path := s.golden
	ar, err := txtar.ParseFile(path)
	missing := errors.Is(err, fs.ErrNotExist)
	if err != nil && !missing {
		t.Errorf("mcptest: reading the golden transcript: %v", err)
		return
	}
	if s.updating() {
		if missing {
			ar = &txtar.Archive{Comment: []byte(fmt.Sprintf(
				"The wire of one mcptest session (protocol %s): every JSON-RPC message, one a line,\n"+
					"what a request caused indented under it, volatile values normalised.\n"+
					"%s=1 go test rewrites the %q file; this comment stays.\n", s.version, UpdateEnv, wireFile))}
		}
		if f := file(ar, wireFile); f != nil {
			f.Data = got
		} else {
			ar.Files = append(ar.Files, txtar.File{Name: wireFile, Data: got})
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Errorf("mcptest: writing the golden transcript: %v", err)
			return
		}
		if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
			t.Errorf("mcptest: writing the golden transcript: %v", err)
			return
		}
		t.Logf("mcptest: wrote %s", path)
		return
	}
	if missing {
		t.Errorf("mcptest: no golden transcript %s yet; run the test with %s=1 to write it", path, UpdateEnv)
		return
	}
	want := file(ar, wireFile)
	if want == nil {
		t.Errorf("mcptest: %s has no %q file; run the test with %s=1 to write it", path, wireFile, UpdateEnv)
		return
	}
	if !bytes.Equal(got, want.Data) {
		t.Errorf("mcptest: the session's transcript differs from %s (- want, + got; %s=1 rewrites it):\n%s",
			path, UpdateEnv, lineDiff(string(want.Data), string(got)))
	}
}

func file(ar *txtar.Archive, name string) *txtar.File {
	for i := range ar.Files {
		if ar.Files[i].Name == name {
			return &ar.Files[i]
		}
	}
	return nil
}

// maxDiffCells bounds the table of lineDiff; beyond it both texts are
// shown whole.
const maxDiffCells = 4 << 20

// lineDiff shows how got differs from want, line by line: "-" a line only
// want has, "+" one only got has, "  " one both have, next to a change.
func lineDiff(want, got string) string {
	a := strings.SplitAfter(want, "\n")
	b := strings.SplitAfter(got, "\n")
	if len(a)*len(b) > maxDiffCells {
		return "want:\n" + want + "got:\n" + got
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		text string
	}
	var lines []line
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			lines = append(lines, line{' ', a[i]})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			lines = append(lines, line{'-', a[i]})
			i++
		default:
			lines = append(lines, line{'+', b[j]})
			j++
		}
	}
	// Only the changes and a line of context either side.
	var out strings.Builder
	for k, l := range lines {
		near := l.op != ' ' || k > 0 && lines[k-1].op != ' ' || k+1 < len(lines) && lines[k+1].op != ' '
		if !near || l.text == "" {
			continue
		}
		out.WriteByte(l.op)
		out.WriteByte(' ')
		out.WriteString(strings.TrimSuffix(l.text, "\n"))
		out.WriteByte('\n')
	}
	return out.String()
}
