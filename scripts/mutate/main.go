//go:build ignore

// Command mutate is Parley's mutation-test runner for the security-critical
// packages. It reads a list of hand-written mutations (scripts/mutations.txt),
// copies the module to a temporary directory, and for each mutation, one at a
// time and in list order: applies it to the copy, runs `go test` of the
// mutated file's package, records whether the tests killed it, and restores
// the file. The source tree is never written.
//
//	go run scripts/mutate/main.go                      # every mutation in scripts/mutations.txt
//	go run scripts/mutate/main.go -only RS             # mutations whose id starts with RS
//	go run scripts/mutate/main.go -src /tmp/other-tree # mutate a copy of another tree
//	go run scripts/mutate/main.go -check               # only check that the list applies
//
// List format (see scripts/mutations.txt): a mutation is three lines,
//
//	@ ID path/to/file.go[:LINE] what the mutation does
//	- original text (an exact substring of one line)
//	+ replacement text
//
// Without :LINE the original text must occur exactly once in the file; with
// it, it must occur on that line (the first occurrence on the line is
// replaced). Lines starting with # and blank lines are ignored.
//
// A mutation is KILLED when the package's tests fail or time out, SURVIVED
// when they pass, and INVALID when the mutated package (or its tests) does
// not compile; invalid mutations are not scored. The exit status is 0 when
// the run completed, whatever the score; 2 when the list or the baseline is
// broken.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

type mutation struct {
	id, file, desc string
	line           int // 0: anywhere, but exactly once
	orig, repl     string
	srcLine        int // line in the list file
}

func main() {
	list := flag.String("list", "scripts/mutations.txt", "mutation list `file`")
	src := flag.String("src", ".", "module root to copy and mutate (never written)")
	only := flag.String("only", "", "run only mutations whose id starts with this `prefix` (comma-separated prefixes allowed)")
	timeout := flag.Duration("timeout", 3*time.Minute, "go test timeout per mutation")
	out := flag.String("out", "", "also write the markdown result table to this `file`")
	keep := flag.Bool("keep", false, "keep the temporary copy")
	check := flag.Bool("check", false, "only check that every mutation applies, run no tests")
	flag.Parse()

	muts, err := parse(*list)
	if err != nil {
		fatal(err)
	}
	if *only != "" {
		var sel []mutation
		for _, m := range muts {
			for _, p := range strings.Split(*only, ",") {
				if strings.HasPrefix(m.id, p) {
					sel = append(sel, m)
					break
				}
			}
		}
		muts = sel
	}
	if len(muts) == 0 {
		fatal(errors.New("no mutations selected"))
	}

	work, err := os.MkdirTemp("", "parley-mutate-")
	if err != nil {
		fatal(err)
	}
	if !*keep {
		defer os.RemoveAll(work)
	} else {
		fmt.Fprintln(os.Stderr, "copy kept at", work)
	}
	if err := copyTree(*src, work); err != nil {
		fatal(err)
	}

	// Check every mutation applies before running anything, so that a stale
	// list fails fast and whole.
	for _, m := range muts {
		data, err := os.ReadFile(filepath.Join(work, m.file))
		if err != nil {
			fatal(fmt.Errorf("%s: %v", m.id, err))
		}
		if _, err := apply(data, m); err != nil {
			fatal(fmt.Errorf("%s (list line %d): %v", m.id, m.srcLine, err))
		}
	}

	if *check {
		fmt.Fprintf(os.Stderr, "%d mutations apply\n", len(muts))
		return
	}

	// Baseline: each package's tests must pass unmutated.
	pkgs := map[string]bool{}
	var order []string
	for _, m := range muts {
		p := pkgOf(m.file)
		if !pkgs[p] {
			pkgs[p] = true
			order = append(order, p)
		}
	}
	for _, p := range order {
		st, outp := gotest(work, p, *timeout)
		if st != "SURVIVED" {
			fmt.Fprintln(os.Stderr, outp)
			fatal(fmt.Errorf("baseline: %s does not pass unmutated", p))
		}
		fmt.Fprintf(os.Stderr, "baseline %s: ok\n", p)
	}

	type result struct {
		m      mutation
		status string
		took   time.Duration
	}
	var results []result
	for i, m := range muts {
		path := filepath.Join(work, m.file)
		orig, _ := os.ReadFile(path)
		mutated, _ := apply(orig, m)
		if err := os.WriteFile(path, mutated, 0o644); err != nil {
			fatal(err)
		}
		start := time.Now()
		st, _ := gotest(work, pkgOf(m.file), *timeout)
		took := time.Since(start)
		if err := os.WriteFile(path, orig, 0o644); err != nil {
			fatal(err)
		}
		results = append(results, result{m, st, took})
		fmt.Fprintf(os.Stderr, "[%d/%d] %-8s %-8s %5.1fs  %s\n", i+1, len(muts), m.id, st, took.Seconds(), m.desc)
	}

	// Report: per package score, then every mutation.
	var b strings.Builder
	fmt.Fprintf(&b, "| package | killed | survived | invalid | score |\n|---|---|---|---|---|\n")
	for _, p := range order {
		var k, s, inv int
		for _, r := range results {
			if pkgOf(r.m.file) != p {
				continue
			}
			switch r.status {
			case "KILLED":
				k++
			case "SURVIVED":
				s++
			default:
				inv++
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d/%d |\n", p, k, s, inv, k, k+s)
	}
	fmt.Fprintf(&b, "\n| id | status | file | mutation |\n|---|---|---|---|\n")
	for _, r := range results {
		loc := r.m.file
		if r.m.line > 0 {
			loc += ":" + strconv.Itoa(r.m.line)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.m.id, r.status, loc, strings.ReplaceAll(r.m.desc, "|", `\|`))
	}
	fmt.Print(b.String())
	if *out != "" {
		if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
			fatal(err)
		}
	}
}

func pkgOf(file string) string { return "./" + filepath.ToSlash(filepath.Dir(file)) }

// moduleOf splits a package path from pkgOf at the module that holds it:
// the directory of the nearest go.mod at or above it in the copy at root
// (a nested module such as otel/ has its own), and the package relative
// to that directory, as go test run there takes it.
func moduleOf(root, pkg string) (dir, rel string) {
	d := filepath.Clean(filepath.FromSlash(pkg))
	for d != "." && d != string(filepath.Separator) {
		if _, err := os.Stat(filepath.Join(root, d, "go.mod")); err == nil {
			r, _ := filepath.Rel(d, filepath.Clean(filepath.FromSlash(pkg)))
			if r == "." {
				return filepath.Join(root, d), "."
			}
			return filepath.Join(root, d), "./" + filepath.ToSlash(r)
		}
		d = filepath.Dir(d)
	}
	return root, pkg
}

// gotest runs the package's tests, in the module that holds it, and
// classifies the outcome.
func gotest(root, pkg string, timeout time.Duration) (status, output string) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
	defer cancel()
	dir, pkg := moduleOf(root, pkg)
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-failfast", "-timeout", timeout.String(), pkg)
	cmd.Dir = dir
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	switch {
	case err == nil:
		return "SURVIVED", out
	case strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]"):
		return "INVALID", out
	default:
		return "KILLED", out
	}
}

func apply(data []byte, m mutation) ([]byte, error) {
	if m.line == 0 {
		switch n := bytes.Count(data, []byte(m.orig)); n {
		case 1:
			return bytes.Replace(data, []byte(m.orig), []byte(m.repl), 1), nil
		case 0:
			return nil, fmt.Errorf("%s: original text not found: %q", m.file, m.orig)
		default:
			return nil, fmt.Errorf("%s: original text occurs %d times; anchor it with :LINE: %q", m.file, n, m.orig)
		}
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if m.line > len(lines) {
		return nil, fmt.Errorf("%s has no line %d", m.file, m.line)
	}
	l := lines[m.line-1]
	if !bytes.Contains(l, []byte(m.orig)) {
		return nil, fmt.Errorf("%s:%d does not contain %q (the file changed: update the list)", m.file, m.line, m.orig)
	}
	lines[m.line-1] = bytes.Replace(l, []byte(m.orig), []byte(m.repl), 1)
	return bytes.Join(lines, nil), nil
}

func parse(path string) ([]mutation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var muts []mutation
	seen := map[string]bool{}
	var cur *mutation
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		switch {
		case strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#"):
		case strings.HasPrefix(text, "@ "):
			fields := strings.SplitN(strings.TrimPrefix(text, "@ "), " ", 3)
			if len(fields) < 3 {
				return nil, fmt.Errorf("%s:%d: want `@ ID file[:LINE] description`", path, n)
			}
			m := mutation{id: fields[0], file: fields[1], desc: strings.TrimSpace(fields[2]), srcLine: n}
			if file, ln, ok := strings.Cut(m.file, ":"); ok {
				if m.line, err = strconv.Atoi(ln); err != nil || m.line <= 0 {
					return nil, fmt.Errorf("%s:%d: bad line number %q", path, n, ln)
				}
				m.file = file
			}
			if seen[m.id] {
				return nil, fmt.Errorf("%s:%d: duplicate id %s", path, n, m.id)
			}
			seen[m.id] = true
			muts = append(muts, m)
			cur = &muts[len(muts)-1]
		case strings.HasPrefix(text, "- ") && cur != nil && cur.orig == "":
			cur.orig = strings.TrimPrefix(text, "- ")
		case (strings.HasPrefix(text, "+ ") || text == "+") && cur != nil && cur.orig != "":
			cur.repl = strings.TrimPrefix(strings.TrimPrefix(text, "+"), " ")
			cur = nil
		default:
			return nil, fmt.Errorf("%s:%d: unexpected line %q", path, n, text)
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s: mutation %s is incomplete", path, cur.id)
	}
	return muts, sc.Err()
}

// copyTree copies the module at src to dst, leaving out .git.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "mutate:", err)
	os.Exit(2)
}
