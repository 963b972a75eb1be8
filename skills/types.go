package skills

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/parley-mcp/parley/mcp"
)

// The extension's identifier and methods.
const (
	// ExtensionID identifies the skills extension in capabilities.
	ExtensionID = "io.modelcontextprotocol/skills"
	// MethodList enumerates the skills a server serves.
	MethodList = "skills/list"
	// MethodGet returns the entry of one skill, named by its SKILL.md URI.
	MethodGet = "skills/get"
	// MethodReadDirectory lists the direct children of a directory
	// resource; a server serves it when it declares directoryRead.
	MethodReadDirectory = "resources/directory/read"
	// DirectoryMIMEType is the mimeType of a directory resource.
	DirectoryMIMEType = "inode/directory"
	// ManifestName is the name of the file every skill has at its root.
	ManifestName = "SKILL.md"
	// Dynamic is the resources member of a skill whose content is
	// generated, so that no digests can be published.
	Dynamic = "dynamic"
)

// The per-skill limits of the specification: a host must load skills up
// to them, and a server should serve none beyond them.
const (
	// MaxFiles is the most entries a skill's resources may have,
	// SKILL.md included.
	MaxFiles = 512
	// MaxSkillSize is the most bytes a skill's files may add up to.
	MaxSkillSize = 16 << 20
)

// Settings are the extension's settings in a server's capabilities.
type Settings struct {
	// DirectoryRead says the server serves resources/directory/read.
	DirectoryRead bool `json:"directoryRead,omitempty"`
}

// File is one file of a skill: its resource URI, and the digest and size
// of its raw bytes.
type File struct {
	URI string `json:"uri"`
	// Digest is "sha256:" and the 64 lowercase hexadecimal digits of the
	// SHA-256 of the file's raw bytes.
	Digest string `json:"digest"`
	// Size is the length of the file's raw bytes.
	Size int64 `json:"size"`
}

// Skill is a skill's entry, as skills/list and skills/get carry it.
//
// Frontmatter and Resources are kept as the server sent them, so that one
// malformed entry does not spoil a listing: [Skill.Check] says whether an
// entry may be loaded, and [Skill.Files] reads its files.
type Skill struct {
	// URI is the resource URI of the skill's SKILL.md.
	URI string `json:"uri"`
	// Frontmatter is the SKILL.md's YAML frontmatter as a JSON object:
	// name, description and every other field its author wrote.
	Frontmatter json.RawMessage `json:"frontmatter"`
	// Resources is the list of the skill's files (a JSON array of
	// [File]), or the string "dynamic".
	Resources json.RawMessage `json:"resources"`
}

// Name returns the skill's name, frontmatter.name, or "" when the
// frontmatter has none.
func (s *Skill) Name() string { return s.frontmatterString("name") }

// Description returns frontmatter.description, or "".
func (s *Skill) Description() string { return s.frontmatterString("description") }

func (s *Skill) frontmatterString(key string) string {
	var fm map[string]json.RawMessage
	if json.Unmarshal(s.Frontmatter, &fm) != nil {
		return ""
	}
	var v string
	_ = json.Unmarshal(fm[key], &v)
	return v
}

// IsDynamic reports whether the skill's resources are "dynamic": its
// content is generated and comes with no digests.
func (s *Skill) IsDynamic() bool {
	var v string
	return json.Unmarshal(s.Resources, &v) == nil && v == Dynamic
}

// Files returns the skill's files. A dynamic skill has none (nil, nil);
// resources of any other shape are an [*EntryError].
func (s *Skill) Files() ([]File, error) {
	if s.IsDynamic() {
		return nil, nil
	}
	trimmed := bytes.TrimSpace(s.Resources)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return nil, &EntryError{URI: s.URI, Reason: `resources is neither an array nor "dynamic"`}
	}
	var files []File
	if err := json.Unmarshal(trimmed, &files); err != nil {
		return nil, &EntryError{URI: s.URI, Reason: fmt.Sprintf("resources: %v", err)}
	}
	return files, nil
}

// Root returns the URI of the skill's root directory: its URI without the
// trailing /SKILL.md.
func (s *Skill) Root() string { return strings.TrimSuffix(s.URI, "/"+ManifestName) }

var (
	digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	// namePattern is the Agent Skills specification's rule for a name:
	// 1 to 64 lowercase letters, digits and hyphens, no hyphen first,
	// last or twice in a row.
	namePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`)
)

// ValidName reports whether name follows the Agent Skills specification's
// naming rules.
func ValidName(name string) bool {
	return namePattern.MatchString(name) && !strings.Contains(name, "--")
}

// Check reports whether the entry is one a host may load, with an
// [*EntryError] saying why not (or a [*LimitError] for a skill beyond
// limits): its URI names a SKILL.md whose directory is named as
// frontmatter.name, which is a valid name; the frontmatter has a
// description; its resources are "dynamic" or a complete list (the
// SKILL.md included, each file once, every file within the skill's
// directory, each digest of the sha256:{hex} form and each size a count
// of bytes) of at most maxFiles files adding up to at most maxSize bytes.
func (s *Skill) Check(maxFiles int, maxSize int64) error {
	bad := func(format string, args ...any) error {
		return &EntryError{URI: s.URI, Reason: fmt.Sprintf(format, args...)}
	}
	root, ok := strings.CutSuffix(s.URI, "/"+ManifestName)
	if !ok || !strings.Contains(root, "://") {
		return bad("the uri does not name a %s", ManifestName)
	}
	var fm map[string]json.RawMessage
	if err := json.Unmarshal(s.Frontmatter, &fm); err != nil || fm == nil {
		return bad("frontmatter is not an object")
	}
	name := s.Name()
	if name == "" || s.Description() == "" {
		return bad("frontmatter needs a name and a description")
	}
	if !ValidName(name) {
		return bad("the name %q breaks the naming rules (lowercase letters, digits and single inner hyphens, at most 64)", name)
	}
	if last := root[strings.LastIndexByte(root, '/')+1:]; last != name {
		return bad("the skill's directory %q is not its name %q", last, name)
	}
	if s.IsDynamic() {
		return nil
	}
	files, err := s.Files()
	if err != nil {
		return err
	}
	if len(files) > maxFiles {
		return &LimitError{URI: s.URI, What: "files", Value: int64(len(files)), Limit: int64(maxFiles)}
	}
	seen := make(map[string]bool, len(files))
	var total int64
	for _, f := range files {
		switch {
		case seen[f.URI]:
			return bad("%s is listed twice", f.URI)
		case f.URI != s.URI && !strings.HasPrefix(f.URI, root+"/"):
			return bad("%s is not within the skill's directory", f.URI)
		case !digestPattern.MatchString(f.Digest):
			return bad("%s has the digest %q, not sha256: and 64 lowercase hexadecimal digits", f.URI, f.Digest)
		case f.Size < 0:
			return bad("%s has a negative size", f.URI)
		}
		seen[f.URI] = true
		if total += f.Size; total > maxSize {
			return &LimitError{URI: s.URI, What: "bytes", Value: total, Limit: maxSize}
		}
	}
	if !seen[s.URI] {
		return bad("resources does not list the %s", ManifestName)
	}
	return nil
}

// ListParams are the params of skills/list.
type ListParams struct {
	mcp.RequestParams
	// Cursor, from a previous page's NextCursor, asks for the next page.
	Cursor mcp.Cursor `json:"cursor,omitempty"`
}

// ListResult is a page of skills/list.
type ListResult struct {
	mcp.CacheableResult
	Skills []Skill `json:"skills"`
	// NextCursor, when not empty, fetches the next page.
	NextCursor mcp.Cursor `json:"nextCursor,omitempty"`
}

// GetParams are the params of skills/get.
type GetParams struct {
	mcp.RequestParams
	// URI is the URI of the skill's SKILL.md.
	URI string `json:"uri"`
}

// GetResult is the answer to skills/get.
type GetResult struct {
	mcp.CacheableResult
	Skill Skill `json:"skill"`
}

// DirectoryParams are the params of resources/directory/read.
type DirectoryParams struct {
	mcp.RequestParams
	// URI is the directory's URI, without a trailing slash.
	URI string `json:"uri"`
	// Cursor, from a previous page's NextCursor, asks for the next page.
	Cursor mcp.Cursor `json:"cursor,omitempty"`
}

// DirectoryResult is a page of a directory's direct children: files as
// resources, subdirectories as resources of [DirectoryMIMEType].
type DirectoryResult struct {
	mcp.Result
	Resources []mcp.Resource `json:"resources"`
	// NextCursor, when not empty, fetches the next page.
	NextCursor mcp.Cursor `json:"nextCursor,omitempty"`
}
