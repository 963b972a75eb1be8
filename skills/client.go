package skills

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"path"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
)

// ClientOptions configures a [Client]. A nil *ClientOptions means
// defaults.
type ClientOptions struct {
	// AllowDynamic lets Load load a skill whose resources are "dynamic":
	// its SKILL.md's frontmatter is still compared with the entry's, but
	// nothing has a digest to be verified against, and the total size of
	// what is read is held to MaxSkillSize. Default: such skills are
	// refused with ErrDynamic.
	AllowDynamic bool
	// MaxFiles is the most files a skill may list to be loaded. Default:
	// [MaxFiles]; a host must accept that many.
	MaxFiles int
	// MaxSkillSize is the most bytes a skill's files may add up to, by
	// its entry (or, for a dynamic skill, as read). Default:
	// [MaxSkillSize].
	MaxSkillSize int64
}

// A Client reads the skills of the server at the other end of a session.
// It never reads a file ahead of need: listing and getting entries read
// none, [Client.Load] reads the SKILL.md of the one skill asked for, and
// [Loaded.Read] one supporting file when asked. Everything read is
// verified against the skill's entry (size, then digest; the SKILL.md's
// frontmatter too) before it is handed over.
type Client struct {
	sess *client.Session
	opts ClientOptions
}

// NewClient returns a Client for sess.
func NewClient(sess *client.Session, opts *ClientOptions) *Client {
	c := &Client{sess: sess}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.MaxFiles <= 0 {
		c.opts.MaxFiles = MaxFiles
	}
	if c.opts.MaxSkillSize <= 0 {
		c.opts.MaxSkillSize = MaxSkillSize
	}
	return c
}

// Supported reports whether the server declared the skills extension, and
// with which settings.
func (c *Client) Supported() (Settings, bool) {
	raw, ok := c.sess.ServerExtension(ExtensionID)
	var s Settings
	if ok {
		_ = json.Unmarshal(raw, &s) // settings it cannot read are no settings
	}
	return s, ok
}

func (c *Client) supported() error {
	if _, ok := c.Supported(); !ok {
		return ErrNotSupported
	}
	return nil
}

// ListPage returns one page of skills/list; cursor is "" for the first.
// An empty or partial listing is no proof that the server has no more
// skills: [Client.Get] reaches any skill by its URI.
func (c *Client) ListPage(ctx context.Context, cursor mcp.Cursor) (*ListResult, error) {
	if err := c.supported(); err != nil {
		return nil, err
	}
	return client.CallMethod[ListResult](ctx, c.sess, MethodList, &ListParams{Cursor: cursor}, nil)
}

// List yields the entries of every page of skills/list. It reads no file.
func (c *Client) List(ctx context.Context) iter.Seq2[*Skill, error] {
	return func(yield func(*Skill, error) bool) {
		var cursor mcp.Cursor
		seen := map[mcp.Cursor]bool{}
		for {
			page, err := c.ListPage(ctx, cursor)
			if err != nil {
				yield(nil, err)
				return
			}
			for i := range page.Skills {
				if !yield(&page.Skills[i], nil) {
					return
				}
			}
			if page.NextCursor == "" {
				return
			}
			if seen[page.NextCursor] {
				yield(nil, fmt.Errorf("skills: skills/list returned the cursor %q twice", page.NextCursor))
				return
			}
			seen[page.NextCursor] = true
			cursor = page.NextCursor
		}
	}
}

// Get returns the entry of the skill whose SKILL.md is at uri (skills/get),
// listed or not. It reads no file. A server that serves no skill there
// answers -32602.
func (c *Client) Get(ctx context.Context, uri string) (*Skill, error) {
	if err := c.supported(); err != nil {
		return nil, err
	}
	res, err := client.CallMethod[GetResult](ctx, c.sess, MethodGet, &GetParams{URI: uri}, nil)
	if err != nil {
		return nil, err
	}
	if res.Skill.URI != uri {
		return nil, &EntryError{URI: uri, Reason: fmt.Sprintf("skills/get answered with the entry of %q", res.Skill.URI)}
	}
	return &res.Skill, nil
}

// ReadDirectory returns one page of the direct children of a directory
// resource (resources/directory/read); cursor is "" for the first page.
// The server must have declared directoryRead. The listing is a live
// view: a loaded skill's files are those of its entry, whatever a
// directory shows.
func (c *Client) ReadDirectory(ctx context.Context, uri string, cursor mcp.Cursor) (*DirectoryResult, error) {
	settings, ok := c.Supported()
	if !ok {
		return nil, ErrNotSupported
	}
	if !settings.DirectoryRead {
		return nil, fmt.Errorf("skills: the server does not declare directoryRead")
	}
	return client.CallMethod[DirectoryResult](ctx, c.sess, MethodReadDirectory, &DirectoryParams{URI: uri, Cursor: cursor}, nil)
}

// Load loads a skill: it checks the entry ([Skill.Check], with the
// client's limits), reads the skill's SKILL.md, and verifies it against
// the entry (its size, then its digest, then its frontmatter, field by
// field) before returning it. No other file is read. The returned Loaded
// holds the entry, so that the skill's other files are read, when asked
// for, from those it lists.
//
// A failed verification is a [*SizeError], [*DigestError] or
// [*FrontmatterError] (all match [ErrVerification]); a malformed entry an
// [*EntryError]; a dynamic skill [ErrDynamic] unless
// ClientOptions.AllowDynamic.
func (c *Client) Load(ctx context.Context, s *Skill) (*Loaded, error) {
	if err := s.Check(c.opts.MaxFiles, c.opts.MaxSkillSize); err != nil {
		return nil, err
	}
	if s.IsDynamic() && !c.opts.AllowDynamic {
		return nil, ErrDynamic
	}
	l := &Loaded{c: c, Skill: *s, verified: map[string][]byte{}}
	if files, _ := s.Files(); files != nil { // checked above
		l.files = make(map[string]File, len(files))
		for _, f := range files {
			l.files[f.URI] = f
		}
	}
	md, err := l.fetch(ctx, s.URI)
	if err != nil {
		return nil, err
	}
	if err := compareFrontmatter(s.URI, s.Frontmatter, md); err != nil {
		return nil, err
	}
	l.Manifest = md
	return l, nil
}

// Loaded is a skill a host is acting on: the entry it was loaded from, its
// SKILL.md, verified, and the way to its other files.
type Loaded struct {
	// Skill is the entry the skill was loaded from.
	Skill Skill
	// Manifest is the SKILL.md, as verified.
	Manifest []byte

	c     *Client
	files map[string]File // by URI; nil for a dynamic skill

	mu       sync.Mutex
	verified map[string][]byte // files read and verified, by URI
	read     int64             // bytes read of a dynamic skill
}

// Read returns a file of the skill, named by its path relative to the
// skill's root ("references/GUIDE.md", as the SKILL.md refers to it) or
// by its URI: read from the server the first time, verified against the
// entry (size, then digest), and kept for later calls. A file the entry
// does not list is an [*UnlistedError], and a path that climbs out of the
// skill's root is refused, neither read. A file of a dynamic skill is
// read unverified, within the skill's directory, the bytes of all of them
// held to MaxSkillSize.
func (l *Loaded) Read(ctx context.Context, ref string) ([]byte, error) {
	uri, err := l.resolve(ref)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	data, ok := l.verified[uri]
	l.mu.Unlock()
	if ok {
		return data, nil
	}
	return l.fetch(ctx, uri)
}

// resolve turns a reference into the URI of a file of the skill.
func (l *Loaded) resolve(ref string) (string, error) {
	root := l.Skill.Root()
	uri := ref
	if !strings.Contains(ref, "://") {
		clean := path.Clean("/" + ref)
		if clean == "/" || strings.Contains(ref, `\`) || strings.HasPrefix(ref, "/") || hasDotDot(ref) {
			return "", fmt.Errorf("skills: %q is not a path within the skill", ref)
		}
		uri = root + clean
	}
	if l.files == nil {
		if !strings.HasPrefix(uri, root+"/") || hasDotDot(strings.TrimPrefix(uri, root+"/")) {
			return "", &UnlistedError{Skill: l.Skill.URI, URI: uri}
		}
		return uri, nil
	}
	if _, ok := l.files[uri]; !ok {
		return "", &UnlistedError{Skill: l.Skill.URI, URI: uri}
	}
	return uri, nil
}

// hasDotDot reports whether a slash-separated path has a ".." segment.
func hasDotDot(p string) bool {
	return slices.Contains(strings.Split(p, "/"), "..")
}

// fetch reads uri with resources/read and verifies it against the entry.
func (l *Loaded) fetch(ctx context.Context, uri string) ([]byte, error) {
	res, err := l.c.sess.ReadResource(ctx, uri)
	if err != nil {
		return nil, err
	}
	data, err := contentBytes(uri, res)
	if err != nil {
		return nil, err
	}
	if l.files == nil { // dynamic: nothing to verify against
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.read += int64(len(data)); l.read > l.c.opts.MaxSkillSize {
			return nil, &LimitError{URI: l.Skill.URI, What: "bytes", Value: l.read, Limit: l.c.opts.MaxSkillSize}
		}
		l.verified[uri] = data
		return data, nil
	}
	if err := verify(l.files[uri], data); err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.verified[uri] = data
	l.mu.Unlock()
	return data, nil
}

// verify checks data against its entry: the size first, which needs no
// hashing, then the digest.
func verify(f File, data []byte) error {
	if int64(len(data)) != f.Size {
		return &SizeError{URI: f.URI, Want: f.Size, Got: int64(len(data))}
	}
	sum := sha256.Sum256(data)
	if got := "sha256:" + hex.EncodeToString(sum[:]); got != f.Digest {
		return &DigestError{URI: f.URI, Want: f.Digest, Got: got}
	}
	return nil
}

// contentBytes returns the raw bytes of the one content of a read result
// for uri: a text's UTF-8 bytes, a blob's decoded bytes.
func contentBytes(uri string, res *mcp.ReadResourceResult) ([]byte, error) {
	var found []byte
	n := 0
	for _, c := range res.Contents {
		if c == nil || c.ResourceURI() != uri {
			continue
		}
		n++
		switch c := c.(type) {
		case *mcp.TextResourceContents:
			found = []byte(c.Text)
		case *mcp.BlobResourceContents:
			found = c.Blob
		default:
			return nil, fmt.Errorf("skills: %s: contents of type %T", uri, c)
		}
	}
	if n != 1 {
		return nil, fmt.Errorf("skills: resources/read of %s returned %d contents for it, want one", uri, n)
	}
	return found, nil
}

// compareFrontmatter parses the frontmatter of a fetched SKILL.md and
// compares it, member by member, with the entry's.
func compareFrontmatter(uri string, entry json.RawMessage, md []byte) error {
	raw, err := ParseFrontmatter(md)
	if err != nil {
		return &FrontmatterError{URI: uri, Reason: strings.TrimPrefix(err.Error(), "skills: ")}
	}
	var file, want map[string]any
	if err := json.Unmarshal(raw, &file); err != nil {
		return &FrontmatterError{URI: uri, Reason: err.Error()}
	}
	if err := json.Unmarshal(entry, &want); err != nil || want == nil {
		return &FrontmatterError{URI: uri, Reason: "the entry's frontmatter is not an object"}
	}
	keys := maps.Clone(file)
	maps.Copy(keys, want)
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		f, inFile := file[k]
		w, inEntry := want[k]
		switch {
		case !inFile:
			return &FrontmatterError{URI: uri, Field: k, Reason: "the entry has it, the file does not"}
		case !inEntry:
			return &FrontmatterError{URI: uri, Field: k, Reason: "the file has it, the entry does not"}
		case !reflect.DeepEqual(f, w):
			return &FrontmatterError{URI: uri, Field: k, Reason: "the values differ"}
		}
	}
	return nil
}
