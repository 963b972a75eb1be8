package skills_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/skills"
)

func link(target string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink}
}

func skillMD(name string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: d\n---\nbody\n")}
}

func tryServe(fsys fs.FS, opts *skills.Options) error {
	s := mcpserver.MustNew(mcp.Implementation{Name: "t", Version: "1"}, &mcpserver.Options{Logger: quiet})
	_, err := skills.Serve(s, fsys, opts)
	return err
}

// A skill that cannot be served safely is refused, naming the file and
// the reason, and nothing is served.
func TestServeRefusesHostileTrees(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fsys   fstest.MapFS
		opts   *skills.Options
		path   string
		reason string
	}{
		{"absolute link", fstest.MapFS{"a/SKILL.md": skillMD("a"), "a/passwd": link("/etc/passwd")},
			nil, "a/passwd", `a symbolic link to the absolute path "/etc/passwd"`},
		{"windows absolute link", fstest.MapFS{"a/SKILL.md": skillMD("a"), "a/x": link(`C:\Windows\win.ini`)},
			nil, "a/x", "absolute path"},
		{"link climbing out", fstest.MapFS{"a/SKILL.md": skillMD("a"), "a/passwd": link("../../etc/passwd")},
			nil, "a/passwd", `a symbolic link to "../../etc/passwd", outside the tree`},
		{"link climbing out by steps", fstest.MapFS{"a/SKILL.md": skillMD("a"), "a/x": link("y"), "a/y": link("../../z")},
			nil, "a/x", "outside the tree"},
		{"linked SKILL.md out", fstest.MapFS{"a/SKILL.md": link("../../SKILL.md")},
			nil, "a/SKILL.md", "outside the tree"},
		{"through a linked directory", fstest.MapFS{"a/SKILL.md": skillMD("a"), "a/d": link("../b"), "a/x": link("d/f"), "b/f": {Data: []byte("f")}},
			nil, "a/d", "not a regular file"},
		{"target through a linked directory", fstest.MapFS{"a/SKILL.md": skillMD("a"), "l": link("b"), "a/x": link("../l/f"), "b/f": {Data: []byte("f")}},
			nil, "a/x", `reached through "l", a symbolic link to a directory`},
		{"link loop", fstest.MapFS{"a/SKILL.md": skillMD("a"), "a/x": link("y"), "a/y": link("x")},
			nil, "a/x", "more than 8 symbolic links in a row"},
		{"nine links in a row", nineLinks(),
			nil, "a/l0", "more than 8 symbolic links in a row"},
		{"files adding up over the limit", fstest.MapFS{"a/SKILL.md": skillMD("a"), "a/x": {Data: make([]byte, 70)}},
			&skills.Options{MaxSkillSize: 100}, "a/x", "70 bytes take the skill's files over the limit of 100 bytes"},
		{"oversized file", fstest.MapFS{"a/SKILL.md": skillMD("a"), "a/big": {Data: make([]byte, 101)}},
			&skills.Options{MaxSkillSize: 100}, "a/big", "101 bytes take the skill's files over the limit of 100 bytes"},
		{"oversized SKILL.md", fstest.MapFS{"a/SKILL.md": {Data: []byte("---\nname: a\ndescription: " + strings.Repeat("d", 200) + "\n---\n")}},
			&skills.Options{MaxSkillSize: 100}, "a/SKILL.md", "over the limit of 100 bytes"},
		{"too many files", fstest.MapFS{"a/SKILL.md": skillMD("a"), "a/1": {}, "a/2": {}},
			&skills.Options{MaxFiles: 2}, "a", "3 files, over the limit of 2 per skill"},
		{"no frontmatter", fstest.MapFS{"a/SKILL.md": {Data: []byte("# A\n")}},
			nil, "a/SKILL.md", "does not begin with a --- line"},
		{"name not the directory's", fstest.MapFS{"a/SKILL.md": skillMD("b")},
			nil, "a/SKILL.md", `the name "b" is not the name of the skill's directory, "a"`},
		{"bad name", fstest.MapFS{"A_1/SKILL.md": skillMD("A_1")},
			nil, "A_1/SKILL.md", "breaks the naming rules"},
		{"no description", fstest.MapFS{"a/SKILL.md": {Data: []byte("---\nname: a\n---\n")}},
			nil, "a/SKILL.md", "needs a name and a description"},
		{"SKILL.md at the root", fstest.MapFS{"SKILL.md": skillMD("x")},
			nil, "SKILL.md", "at the root of the file system"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tryServe(tc.fsys, tc.opts)
			var re *skills.RefusedError
			if !errors.As(err, &re) || !errors.Is(err, skills.ErrRefused) {
				t.Fatalf("Serve = %v, want a *RefusedError", err)
			}
			if re.Path != tc.path || !strings.Contains(re.Reason, tc.reason) {
				t.Errorf("refused %q: %q, want %q: %q", re.Path, re.Reason, tc.path, tc.reason)
			}
		})
	}
}

// nineLinks is a chain of nine links to a file inside the tree: one
// more than a chain may have.
func nineLinks() fstest.MapFS {
	fsys := fstest.MapFS{"a/SKILL.md": skillMD("a"), "a/target": {Data: []byte("t")}}
	for i := range 9 {
		next := "target"
		if i < 8 {
			next = "l" + string(rune('1'+i))
		}
		fsys["a/l"+string(rune('0'+i))] = link(next)
	}
	return fsys
}

// A file system whose Stat says less than the file holds: the read itself
// is bounded.
type lyingFS struct{ fstest.MapFS }

type lyingFile struct{ fs.File }
type lyingInfo struct{ fs.FileInfo }

func (f lyingFS) Open(name string) (fs.File, error) {
	file, err := f.MapFS.Open(name)
	if err != nil || name != "a/big" {
		return file, err
	}
	return lyingFile{file}, nil
}
func (f lyingFile) Stat() (fs.FileInfo, error) {
	info, err := f.File.Stat()
	return lyingInfo{info}, err
}
func (lyingInfo) Size() int64 { return 1 }

func TestServeBoundsTheRead(t *testing.T) {
	fsys := lyingFS{fstest.MapFS{"a/SKILL.md": skillMD("a"), "a/big": {Data: make([]byte, 500)}}}
	err := tryServe(fsys, &skills.Options{MaxSkillSize: 100})
	var re *skills.RefusedError
	if !errors.As(err, &re) || re.Path != "a/big" || !strings.Contains(re.Reason, "over the limit of 100 bytes") {
		t.Errorf("Serve = %v, want a/big refused", err)
	}
}

// A link that stays inside the tree serves the file it points at, under
// its own name; the bounds are met exactly.
func TestServeLinksInside(t *testing.T) {
	fsys := fstest.MapFS{
		"a/SKILL.md":         skillMD("a"),
		"a/shared.md":        link("../common/shared.md"),
		"a/again.md":         link("shared.md"),
		"common/shared.md":   {Data: []byte("shared")},
		"b/SKILL.md":         skillMD("b"),
		"b/references/x.txt": {Data: []byte("x")},
	}
	size := int64(len(fsys["a/SKILL.md"].Data)) + 2*int64(len("shared"))
	s, err := mcpserver.New(mcp.Implementation{Name: "t", Version: "1"}, &mcpserver.Options{Logger: quiet})
	mustOK(t, err)
	cat, err := skills.Serve(s, fsys, &skills.Options{MaxFiles: 3, MaxSkillSize: size})
	mustOK(t, err)
	files, err := cat.Skills()[0].Files()
	mustOK(t, err)
	if len(files) != 3 || files[1].URI != "skill://a/again.md" || files[1].Digest != digest("shared") || files[2].Digest != digest("shared") {
		t.Errorf("files = %+v", files)
	}
}

// On a real disk, through os.DirFS and through an os.Root, a link out of
// the directory is refused the same way.
func TestServeRefusesLinksOnDisk(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	mustOK(t, os.WriteFile(outside, []byte("secret"), 0o600))
	dir := t.TempDir()
	mustOK(t, os.MkdirAll(filepath.Join(dir, "a"), 0o755))
	mustOK(t, os.WriteFile(filepath.Join(dir, "a", "SKILL.md"), skillMD("a").Data, 0o644))
	mustOK(t, os.Symlink(outside, filepath.Join(dir, "a", "abs")))
	root, err := os.OpenRoot(dir)
	mustOK(t, err)
	defer root.Close()
	for name, fsys := range map[string]fs.FS{"os.DirFS": os.DirFS(dir), "os.Root": root.FS()} {
		err := tryServe(fsys, nil)
		if !errors.Is(err, skills.ErrRefused) || !strings.Contains(err.Error(), "a/abs: a symbolic link to the absolute path") {
			t.Errorf("%s: Serve = %v", name, err)
		}
	}
	mustOK(t, os.Remove(filepath.Join(dir, "a", "abs")))
	rel, err := filepath.Rel(filepath.Join(dir, "a"), outside)
	mustOK(t, err)
	mustOK(t, os.Symlink(rel, filepath.Join(dir, "a", "rel")))
	for name, fsys := range map[string]fs.FS{"os.DirFS": os.DirFS(dir), "os.Root": root.FS()} {
		err := tryServe(fsys, nil)
		if !errors.Is(err, skills.ErrRefused) || !strings.Contains(err.Error(), "outside the tree") {
			t.Errorf("%s: Serve = %v", name, err)
		}
	}
}

// A file system that cannot read links still lists them: those are
// refused.
type noLinks struct{ fs.FS }

func TestServeRefusesUnreadableLinks(t *testing.T) {
	fsys := noLinks{fstest.MapFS{"a/SKILL.md": skillMD("a"), "a/x": link("SKILL.md")}}
	err := tryServe(fsys, nil)
	if !errors.Is(err, skills.ErrRefused) || !strings.Contains(err.Error(), "cannot read links") {
		t.Errorf("Serve = %v", err)
	}
	if err := tryServe(noLinks{fstest.MapFS{"a/SKILL.md": skillMD("a")}}, nil); err != nil {
		t.Errorf("Serve without links = %v", err)
	}
}
