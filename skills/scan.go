package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"mime"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/parley-mcp/parley/mcp"
)

// ErrRefused is matched (with errors.Is) by every [*RefusedError].
var ErrRefused = errors.New("skills: refused")

// RefusedError says why a skill of the file system is not served: a
// symbolic link that leads outside the tree, a file over the limits, a
// SKILL.md without a usable frontmatter. Path is the file (or directory)
// in the file system it is about.
type RefusedError struct {
	Path   string
	Reason string
}

// Error names the path and the reason.
func (e *RefusedError) Error() string { return "skills: " + e.Path + ": " + e.Reason }

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

func refused(p, format string, args ...any) error {
	return &RefusedError{Path: p, Reason: fmt.Sprintf(format, args...)}
}

// maxLinkHops bounds a chain of symbolic links.
const maxLinkHops = 8

// A file is one served file: its bytes, read once, and what a listing
// says of it.
type file struct {
	path     string // in the file system, slash-separated
	uri      string
	data     []byte
	digest   string
	resource mcp.Resource
}

// A served skill is an entry and its files.
type servedSkill struct {
	dir   string // the skill's directory in the file system
	entry Skill
	files []*file // SKILL.md first
}

// A snapshot is everything a Catalog serves, read from its file system at
// one time.
type snapshot struct {
	skills map[string]*servedSkill // by SKILL.md URI
	order  []string                // SKILL.md URIs, sorted
	files  map[string]*file        // by URI; a file of nested skills is one file
	dirs   map[string][]mcp.Resource
}

// scanner reads a file system into a snapshot.
type scanner struct {
	fsys     fs.FS
	scheme   string
	maxFiles int
	maxSize  int64
	data     map[string][]byte // read files, by path: nested skills share them
	links    map[string]bool   // the files the walk saw as symbolic links
}

// scan reads every skill of fsys: each directory with a SKILL.md, and
// every file below it (names starting with "." are skipped, as are files
// outside skills). It refuses the whole file system when one skill cannot
// be served, so that what a Catalog serves has always passed every check.
func (sc *scanner) scan() (*snapshot, error) {
	var paths []string // every file, symbolic links included
	sc.links = make(map[string]bool)
	err := fs.WalkDir(sc.fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			paths = append(paths, p)
			if d.Type()&fs.ModeSymlink != 0 {
				sc.links[p] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("skills: reading the file system: %w", err)
	}
	slices.Sort(paths)
	var dirs []string
	for _, p := range paths {
		if path.Base(p) == ManifestName {
			if p == ManifestName {
				return nil, refused(p, "a SKILL.md at the root of the file system: a skill is a directory named as the skill (serve its parent)")
			}
			dirs = append(dirs, path.Dir(p))
		}
	}
	snap := &snapshot{
		skills: make(map[string]*servedSkill, len(dirs)),
		files:  make(map[string]*file),
		dirs:   make(map[string][]mcp.Resource),
	}
	sc.data = make(map[string][]byte)
	for _, dir := range dirs {
		var members []string
		for _, p := range paths {
			if strings.HasPrefix(p, dir+"/") {
				members = append(members, p)
			}
		}
		sk, err := sc.skill(dir, members, snap.files)
		if err != nil {
			return nil, err
		}
		snap.skills[sk.entry.URI] = sk
		snap.order = append(snap.order, sk.entry.URI)
	}
	slices.Sort(snap.order)
	snap.addDirectories(sc.scheme)
	return snap, nil
}

// skill reads the skill in dir, whose files are members.
func (sc *scanner) skill(dir string, members []string, files map[string]*file) (*servedSkill, error) {
	if len(members) > sc.maxFiles {
		return nil, refused(dir, "%d files, over the limit of %d per skill", len(members), sc.maxFiles)
	}
	// SKILL.md first, the others in path order.
	manifest := dir + "/" + ManifestName
	members = slices.DeleteFunc(members, func(p string) bool { return p == manifest })
	members = append([]string{manifest}, members...)
	sk := &servedSkill{dir: dir}
	var total int64
	listed := make([]File, 0, len(members))
	for _, p := range members {
		data, err := sc.read(p, sc.maxSize-total)
		if err != nil {
			return nil, err
		}
		total += int64(len(data))
		f := files[makeURI(sc.scheme, p)]
		if f == nil {
			f = newFile(sc.scheme, dir, p, data)
			files[f.uri] = f
		}
		sk.files = append(sk.files, f)
		listed = append(listed, File{URI: f.uri, Digest: f.digest, Size: int64(len(f.data))})
	}

	fm, err := ParseFrontmatter(sk.files[0].data)
	if err != nil {
		return nil, refused(manifest, "%v", strings.TrimPrefix(err.Error(), "skills: "))
	}
	entry := Skill{URI: sk.files[0].uri, Frontmatter: fm}
	name, desc := entry.Name(), entry.Description()
	switch {
	case name == "" || desc == "":
		return nil, refused(manifest, "the frontmatter needs a name and a description (strings)")
	case !ValidName(name):
		return nil, refused(manifest, "the name %q breaks the naming rules (1 to 64 lowercase letters, digits and single inner hyphens)", name)
	case name != path.Base(dir):
		return nil, refused(manifest, "the name %q is not the name of the skill's directory, %q", name, path.Base(dir))
	}
	entry.Resources, _ = json.Marshal(listed) // a []File always encodes
	sk.entry = entry
	// The SKILL.md is listed with the name and description of its
	// frontmatter (a file of several nested skills is its nearest
	// skill's: the last to set it).
	sk.files[0].resource.Name, sk.files[0].resource.Description = name, desc
	sk.files[0].resource.MIMEType = "text/markdown"
	return sk, nil
}

func newFile(scheme, dir, p string, data []byte) *file {
	sum := sha256.Sum256(data)
	f := &file{path: p, uri: makeURI(scheme, p), data: data, digest: "sha256:" + hex.EncodeToString(sum[:])}
	f.resource = mcp.Resource{URI: f.uri, Name: strings.TrimPrefix(p, dir+"/"), MIMEType: mimeType(p, data), Size: int64(len(data))}
	return f
}

// mimeType guesses a file's type from its extension, then its content.
func mimeType(p string, data []byte) string {
	switch ext := strings.ToLower(path.Ext(p)); ext {
	case ".md", ".markdown":
		return "text/markdown"
	case "":
	default:
		if t := mime.TypeByExtension(ext); t != "" {
			return t
		}
	}
	if utf8.Valid(data) {
		return "text/plain"
	}
	return "application/octet-stream"
}

// read returns the bytes of the file at p, which may be a symbolic link
// to a file within the tree, refusing any file that would take the
// skill's bytes over budget.
func (sc *scanner) read(p string, budget int64) ([]byte, error) {
	if data, ok := sc.data[p]; ok {
		if int64(len(data)) > budget {
			return nil, sc.tooBig(p, int64(len(data)))
		}
		return data, nil
	}
	target, err := sc.resolve(p)
	if err != nil {
		return nil, err
	}
	f, err := sc.fsys.Open(target)
	if err != nil {
		return nil, refused(p, "%v", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, refused(p, "%v", err)
	}
	if !info.Mode().IsRegular() {
		return nil, refused(p, "not a regular file")
	}
	if info.Size() > budget {
		return nil, sc.tooBig(p, info.Size())
	}
	// The file may grow between Stat and the read: read one byte more
	// than the budget to see it.
	data, err := io.ReadAll(io.LimitReader(f, budget+1))
	if err != nil {
		return nil, refused(p, "%v", err)
	}
	if int64(len(data)) > budget {
		return nil, sc.tooBig(p, int64(len(data)))
	}
	sc.data[p] = data
	return data, nil
}

func (sc *scanner) tooBig(p string, size int64) error {
	return refused(p, "%d bytes take the skill's files over the limit of %d bytes per skill", size, sc.maxSize)
}

// resolve follows p through symbolic links to a regular file, each hop
// staying inside the tree: a link whose target is absolute, or climbs
// above the root of the file system, or passes through a linked
// directory, is refused. A file system that cannot read links
// (fs.ReadLinkFS) may still list one: that is refused too.
func (sc *scanner) resolve(p string) (string, error) {
	rl, canRead := sc.fsys.(fs.ReadLinkFS)
	cur := p
	for hops := 0; ; hops++ {
		if !canRead {
			if sc.links[p] {
				return "", refused(p, "a symbolic link, in a file system that cannot read links")
			}
			return cur, nil
		}
		if err := sc.plainDirectories(p, cur); err != nil {
			return "", err
		}
		info, err := rl.Lstat(cur)
		if err != nil {
			return "", refused(p, "%v", err)
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			return cur, nil
		}
		if hops == maxLinkHops {
			return "", refused(p, "more than %d symbolic links in a row", maxLinkHops)
		}
		target, err := rl.ReadLink(cur)
		if err != nil {
			return "", refused(p, "%v", err)
		}
		if path.IsAbs(target) || strings.Contains(target, `\`) || (len(target) > 1 && target[1] == ':') {
			return "", refused(p, "a symbolic link to the absolute path %q", target)
		}
		next := path.Join(path.Dir(cur), target)
		if !fs.ValidPath(next) {
			return "", refused(p, "a symbolic link to %q, outside the tree", target)
		}
		cur = next
	}
}

// plainDirectories refuses cur (reached from p) when a directory on its
// way from the root is a symbolic link: the walk does not follow linked
// directories, and neither may a link's target.
func (sc *scanner) plainDirectories(p, cur string) error {
	rl := sc.fsys.(fs.ReadLinkFS)
	dir := path.Dir(cur)
	for d := dir; d != "."; d = path.Dir(d) {
		info, err := rl.Lstat(d)
		if err != nil {
			return refused(p, "%v", err)
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return refused(p, "reached through %q, a symbolic link to a directory", d)
		}
	}
	return nil
}

// addDirectories lists, for every directory above a served file, its
// direct children: files with their resource, directories as resources
// of DirectoryMIMEType.
func (snap *snapshot) addDirectories(scheme string) {
	children := make(map[string]map[string]mcp.Resource)
	add := func(dir, name string, r mcp.Resource) {
		if children[dir] == nil {
			children[dir] = make(map[string]mcp.Resource)
		}
		children[dir][name] = r
	}
	for _, f := range snap.files {
		add(path.Dir(f.path), path.Base(f.path), withName(f.resource, path.Base(f.path)))
		for d := path.Dir(f.path); d != "."; d = path.Dir(d) {
			if parent := path.Dir(d); parent != "." {
				add(parent, path.Base(d), mcp.Resource{URI: makeURI(scheme, d), Name: path.Base(d), MIMEType: DirectoryMIMEType})
			}
		}
	}
	for dir, kids := range children {
		names := slices.Sorted(maps.Keys(kids))
		list := make([]mcp.Resource, len(names))
		for i, n := range names {
			list[i] = kids[n]
		}
		snap.dirs[makeURI(scheme, dir)] = list
	}
}

func withName(r mcp.Resource, name string) mcp.Resource {
	r.Name = name
	return r
}
