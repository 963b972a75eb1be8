package skills

import (
	"context"
	"encoding/base64"
	"io/fs"
	"maps"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/server"
)

// DefaultPageSize is how many entries a page of skills/list, and how many
// children a page of resources/directory/read, holds when
// Options.PageSize is zero.
const DefaultPageSize = 100

// Options configures a [Catalog]. A nil *Options means defaults.
type Options struct {
	// Scheme is the scheme of the skills' URIs. Default: "skill".
	Scheme string
	// PageSize is the number of entries per page of skills/list and of
	// children per page of resources/directory/read. Default:
	// DefaultPageSize. Negative means one page with everything.
	PageSize int
	// NoDirectoryRead leaves resources/directory/read unserved and
	// undeclared.
	NoDirectoryRead bool
	// MaxFiles is the most files a skill may have, SKILL.md included; a
	// skill with more is refused. Default: [MaxFiles], the limit every
	// host must accept.
	MaxFiles int
	// MaxSkillSize is the most bytes a skill's files may add up to; a
	// skill over it is refused. Default: [MaxSkillSize].
	MaxSkillSize int64
}

// A Catalog serves the skills of a file system on an mcpserver.Server:
// every directory with a SKILL.md is a skill, served at
// skill://<its path>/SKILL.md, and every file under it is a resource.
// [Serve] makes one; [Catalog.Reload] reads the file system again.
//
// A Catalog holds the bytes of every file it serves, read when it scans,
// so that what it serves always matches the digests it publishes.
type Catalog struct {
	srv    *mcpserver.Server
	fsys   fs.FS
	opts   Options
	reload sync.Mutex // one Reload at a time

	mu   sync.RWMutex
	snap *snapshot
}

// Serve serves the skills of fsys on s: it reads them all, registers
// their files as static resources (through
// [mcpserver.Server.ChangeResources], one change), serves skills/list,
// skills/get and (unless opts.NoDirectoryRead) resources/directory/read
// through the server's extension surface, and declares the extension with
// its directoryRead setting (a server whose Options.Capabilities are
// fixed declares it there instead).
//
// Nothing is served when a skill cannot be: a *RefusedError says which
// file and why (a symbolic link whose target is absolute or outside fsys,
// or passes through a linked directory; a skill over opts.MaxFiles or
// opts.MaxSkillSize; a SKILL.md without a YAML frontmatter, or whose name
// breaks the naming rules or is not its directory's name). For a
// directory on disk, fsys is best an os.Root's FS (os.OpenRoot(dir)),
// which also keeps every open inside the directory; os.DirFS follows
// links wherever they go, so the checks above are all that hold it.
//
// The skills' methods do not require the client to declare the extension:
// the specification asks it of the server only.
func Serve(s *mcpserver.Server, fsys fs.FS, opts *Options) (*Catalog, error) {
	c := &Catalog{srv: s, fsys: fsys}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.Scheme == "" {
		c.opts.Scheme = "skill"
	}
	if c.opts.PageSize == 0 {
		c.opts.PageSize = DefaultPageSize
	}
	if c.opts.MaxFiles <= 0 {
		c.opts.MaxFiles = MaxFiles
	}
	if c.opts.MaxSkillSize <= 0 {
		c.opts.MaxSkillSize = MaxSkillSize
	}
	snap, err := c.scan()
	if err != nil {
		return nil, err
	}
	low := s.LowLevel()
	if err := server.HandleMethod(low, MethodList, nil, c.list); err != nil {
		return nil, err
	}
	if err := server.HandleMethod(low, MethodGet, nil, c.get); err != nil {
		return nil, err
	}
	if !c.opts.NoDirectoryRead {
		if err := server.HandleMethod(low, MethodReadDirectory, nil, c.readDirectory); err != nil {
			return nil, err
		}
	}
	if err := low.DeclareExtension(ExtensionID, Settings{DirectoryRead: !c.opts.NoDirectoryRead}); err != nil {
		return nil, err
	}
	if err := c.apply(snap); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Catalog) scan() (*snapshot, error) {
	sc := &scanner{fsys: c.fsys, scheme: c.opts.Scheme, maxFiles: c.opts.MaxFiles, maxSize: c.opts.MaxSkillSize}
	return sc.scan()
}

// Reload reads the file system again and serves what it finds now. What
// changed is announced as the base protocol announces changes to
// resources, since a skill's files are resources: one
// notifications/resources/list_changed when a skill (or a file of one)
// was added, removed or changed, and notifications/resources/updated to
// the subscribers of each file whose content changed. A reload that finds
// nothing changed announces nothing. Clients re-list skills/list when told
// the resource list changed.
//
// When a skill of the file system cannot be served, Reload returns the
// *RefusedError and the catalog goes on serving what it served before.
func (c *Catalog) Reload() error {
	c.reload.Lock()
	defer c.reload.Unlock()
	snap, err := c.scan()
	if err != nil {
		return err
	}
	return c.apply(snap)
}

// apply serves snap in place of what was served, and announces the
// difference.
func (c *Catalog) apply(snap *snapshot) error {
	c.mu.Lock()
	old := c.snap
	c.snap = snap
	c.mu.Unlock()

	var remove []string
	var add []mcpserver.StaticResource
	var updated []string
	if old != nil {
		for uri := range old.files {
			if _, ok := snap.files[uri]; !ok {
				remove = append(remove, uri)
			}
		}
	}
	for _, uri := range slices.Sorted(maps.Keys(snap.files)) {
		f := snap.files[uri]
		if old != nil {
			if was := old.files[uri]; was != nil {
				if was.digest == f.digest && sameListing(was.resource, f.resource) {
					continue
				}
				if was.digest != f.digest {
					updated = append(updated, uri)
				}
			}
		}
		add = append(add, mcpserver.StaticResource{Resource: f.resource, Read: f.read})
	}
	if old != nil && len(remove) == 0 && len(add) == 0 {
		return nil
	}
	slices.Sort(remove)
	if err := c.srv.ChangeResources(remove, add); err != nil {
		return err
	}
	for _, uri := range updated {
		c.srv.LowLevel().NotifyResourceUpdated(uri)
	}
	return nil
}

// sameListing reports whether two resources are listed alike.
func sameListing(a, b mcp.Resource) bool {
	return a.URI == b.URI && a.Name == b.Name && a.Description == b.Description && a.MIMEType == b.MIMEType && a.Size == b.Size
}

// read serves the file's bytes: as text when they are UTF-8, else as a
// blob. Either way the bytes a client gets back are the ones hashed.
func (f *file) read(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	if utf8.Valid(f.data) {
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
			&mcp.TextResourceContents{URI: f.uri, MIMEType: f.resource.MIMEType, Text: string(f.data)},
		}}, nil
	}
	return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
		&mcp.BlobResourceContents{URI: f.uri, MIMEType: f.resource.MIMEType, Blob: f.data},
	}}, nil
}

// Skills returns the entries of every skill served, in URI order.
func (c *Catalog) Skills() []Skill {
	snap := c.current()
	out := make([]Skill, len(snap.order))
	for i, uri := range snap.order {
		out[i] = snap.skills[uri].entry
	}
	return out
}

func (c *Catalog) current() *snapshot {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.snap
}

// list serves skills/list: the entries in URI order, a page at a time.
// The cursor is the last URI of the previous page, so that a page after a
// reload starts where the last one ended.
func (c *Catalog) list(ctx context.Context, req *server.Request, p *ListParams) (*ListResult, error) {
	snap := c.current()
	uris, next, err := page(snap.order, p.Cursor, c.opts.PageSize, func(uri string) string { return uri })
	if err != nil {
		return nil, err
	}
	res := &ListResult{Skills: make([]Skill, len(uris)), NextCursor: next}
	for i, uri := range uris {
		res.Skills[i] = snap.skills[uri].entry
	}
	return res, nil
}

// get serves skills/get: the entry of the skill whose SKILL.md the URI
// names, whether or not a listing shows it.
func (c *Catalog) get(ctx context.Context, req *server.Request, p *GetParams) (*GetResult, error) {
	if err := checkURI(p.URI, c.opts.Scheme); err != nil {
		return nil, invalidURI(p.URI, err)
	}
	sk := c.current().skills[p.URI]
	if sk == nil {
		return nil, wire.InvalidParams("No skill is served at %s", p.URI).WithData(uriData{p.URI})
	}
	return &GetResult{Skill: sk.entry}, nil
}

// readDirectory serves resources/directory/read: the direct children of
// a directory of the served tree, in name order, a page at a time.
func (c *Catalog) readDirectory(ctx context.Context, req *server.Request, p *DirectoryParams) (*DirectoryResult, error) {
	if err := checkURI(p.URI, c.opts.Scheme); err != nil {
		return nil, invalidURI(p.URI, err)
	}
	kids, ok := c.current().dirs[p.URI]
	if !ok {
		return nil, wire.InvalidParams("%s is not a directory resource", p.URI).WithData(uriData{p.URI})
	}
	res, next, err := page(kids, p.Cursor, c.opts.PageSize, func(r mcp.Resource) string { return r.Name })
	if err != nil {
		return nil, err
	}
	return &DirectoryResult{Resources: res, NextCursor: next}, nil
}

type uriData struct {
	URI string `json:"uri"`
}

func invalidURI(uri string, err error) error {
	return wire.InvalidParams("Invalid params: %v", err).WithData(uriData{uri})
}

// page returns the page of items (sorted by key) after the cursor, and
// the cursor of the next page. A cursor is the key of the last item of
// its page, base64url-encoded.
func page[T any](items []T, cursor mcp.Cursor, size int, key func(T) string) ([]T, mcp.Cursor, error) {
	start := 0
	if cursor != "" {
		after, err := base64.RawURLEncoding.DecodeString(string(cursor))
		if err != nil {
			return nil, "", wire.InvalidParams("Invalid params: invalid cursor")
		}
		start, _ = slices.BinarySearchFunc(items, string(after), func(it T, k string) int {
			switch ik := key(it); {
			case ik < k:
				return -1
			case ik > k:
				return 1
			}
			return 0
		})
		if start < len(items) && key(items[start]) == string(after) {
			start++
		}
	}
	end := len(items)
	if size > 0 && start+size < end {
		end = start + size
	}
	var next mcp.Cursor
	if end < len(items) {
		next = mcp.Cursor(base64.RawURLEncoding.EncodeToString([]byte(key(items[end-1]))))
	}
	return items[start:end], next, nil
}
