package servercard

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/parley-mcp/parley/mcp"
)

const (
	// MediaType is the media type of a Server Card document: a server
	// answers with it, a client asks for it in Accept.
	MediaType = "application/mcp-server-card+json"

	// SchemaURL is the only value the v1 schema allows in a card's
	// $schema member.
	SchemaURL = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"

	// Suffix is what the proposal appends to a Streamable HTTP endpoint's
	// URL to name the card's reserved location: the card of
	// https://host/mcp is at https://host/mcp/server-card.
	Suffix = "/server-card"
)

// Transport types a [Remote] may name.
const (
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse" // the deprecated HTTP+SSE transport of 2024-11-05
)

// Card is an MCP Server Card: what a client may learn about a remote
// server before it connects. Everything in it is advisory; a client
// prefers what the live server says ([Card.Compare]).
type Card struct {
	// Schema is the schema the document claims; [SchemaURL] in every
	// card this package builds.
	Schema string `json:"$schema"`
	// Name identifies the server in reverse-DNS form with exactly one
	// slash: "com.example/weather".
	Name string `json:"name"`
	// Version is the server's exact version (no ranges such as "^1.2").
	Version string `json:"version"`
	// Description says what the server does, in at most 100 characters.
	Description string `json:"description"`
	// Title is an optional display name of at most 100 characters.
	Title string `json:"title,omitempty"`
	// WebsiteURL points at the server's home page or documentation.
	WebsiteURL string `json:"websiteUrl,omitempty"`
	// Repository says where the server's source lives.
	Repository *Repository `json:"repository,omitempty"`
	// Icons may be shown beside the server's name.
	Icons []mcp.Icon `json:"icons,omitempty"`
	// Remotes are the endpoints a client can connect to.
	Remotes []Remote `json:"remotes,omitempty"`
	// Meta carries vendor data under namespaced keys.
	Meta map[string]json.RawMessage `json:"_meta,omitempty"`
}

// Repository names the server's source code.
type Repository struct {
	URL       string `json:"url"`                 // for browsing and git clone
	Source    string `json:"source"`              // the forge: "github", …
	Subfolder string `json:"subfolder,omitempty"` // the server's folder in a monorepo
	ID        string `json:"id,omitempty"`        // the forge's stable id of the repository
}

// Remote is one endpoint of the server.
type Remote struct {
	// Type is [TransportStreamableHTTP] or [TransportSSE].
	Type string `json:"type"`
	// URL is the endpoint, http(s) or starting with a {variable} that
	// Variables describes.
	URL string `json:"url"`
	// Headers the client sends (an API key, say), each one a value the
	// person may have to supply.
	Headers []KeyValueInput `json:"headers,omitempty"`
	// Variables describes the {placeholders} in URL.
	Variables map[string]Input `json:"variables,omitempty"`
	// SupportedProtocolVersions lists the MCP versions the endpoint
	// serves, so that a client can choose before it connects.
	SupportedProtocolVersions []string `json:"supportedProtocolVersions,omitempty"`
}

// Input describes a value the person (or a preset) supplies: a URL
// variable or a header's value.
type Input struct {
	Description string   `json:"description,omitempty"`
	IsRequired  bool     `json:"isRequired,omitempty"`
	IsSecret    bool     `json:"isSecret,omitempty"`
	Format      string   `json:"format,omitempty"` // "string", "number", "boolean" or "filepath"
	Default     string   `json:"default,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Value       string   `json:"value,omitempty"` // preset; {variables} are substituted
	Choices     []string `json:"choices,omitempty"`
}

// KeyValueInput is a named [Input]: an HTTP header, whose Value may refer
// to Variables.
type KeyValueInput struct {
	Name string `json:"name"`
	Input
	Variables map[string]Input `json:"variables,omitempty"`
}

// InvalidError says which rule of the v1 schema a card breaks. Build and
// Fetch return it (wrapped); match it with errors.As.
type InvalidError struct {
	Field  string // the member, as a JSON path: "remotes[0].url"
	Reason string
}

func (e *InvalidError) Error() string {
	return "servercard: invalid card: " + e.Field + ": " + e.Reason
}

var (
	namePattern      = regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`)
	remoteURLPattern = regexp.MustCompile(`^(https?://[^\s]+|\{[a-zA-Z_][a-zA-Z0-9_]*\}[^\s]*)$`)
)

// Validate checks c against the v1 schema's rules (required members,
// lengths, patterns, enumerations) and the proposal's rule that a version
// is exact, not a range. It returns an *[InvalidError] naming the first
// member that breaks one.
func (c *Card) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &InvalidError{Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case c.Schema != SchemaURL:
		return bad("$schema", "is %q, want %q", c.Schema, SchemaURL)
	case !inRange(c.Name, 3, 200):
		return bad("name", "must have 3 to 200 characters, has %d", utf8.RuneCountInString(c.Name))
	case !namePattern.MatchString(c.Name):
		return bad("name", "%q is not reverse-DNS with one slash (com.example/weather)", c.Name)
	case c.Version == "":
		return bad("version", "is missing")
	case !inRange(c.Version, 1, 255):
		return bad("version", "must have at most 255 characters")
	case isVersionRange(c.Version):
		return bad("version", "%q is a range; a card names one exact version", c.Version)
	case !inRange(c.Description, 1, 100):
		return bad("description", "must have 1 to 100 characters, has %d", utf8.RuneCountInString(c.Description))
	case c.Title != "" && !inRange(c.Title, 1, 100):
		return bad("title", "must have at most 100 characters, has %d", utf8.RuneCountInString(c.Title))
	case c.WebsiteURL != "" && !isURI(c.WebsiteURL):
		return bad("websiteUrl", "%q is not an absolute URI", c.WebsiteURL)
	}
	if r := c.Repository; r != nil {
		switch {
		case !isURI(r.URL):
			return bad("repository.url", "%q is not an absolute URI", r.URL)
		case r.Source == "":
			return bad("repository.source", "is missing")
		}
	}
	for i, ic := range c.Icons {
		field := fmt.Sprintf("icons[%d]", i)
		switch {
		case !isURI(ic.Src):
			return bad(field+".src", "%q is not an absolute URI", ic.Src)
		case ic.Theme != "" && ic.Theme != mcp.IconThemeLight && ic.Theme != mcp.IconThemeDark:
			return bad(field+".theme", "%q is neither light nor dark", ic.Theme)
		}
	}
	for i, r := range c.Remotes {
		field := fmt.Sprintf("remotes[%d]", i)
		switch {
		case r.Type != TransportStreamableHTTP && r.Type != TransportSSE:
			return bad(field+".type", "%q is neither %s nor %s", r.Type, TransportStreamableHTTP, TransportSSE)
		case !remoteURLPattern.MatchString(r.URL):
			return bad(field+".url", "%q starts with neither http(s):// nor a {variable}", r.URL)
		}
		for name, in := range r.Variables {
			if err := in.validate(field + ".variables." + name); err != nil {
				return err
			}
		}
		for j, h := range r.Headers {
			hf := fmt.Sprintf("%s.headers[%d]", field, j)
			if h.Name == "" {
				return bad(hf+".name", "is missing")
			}
			if err := h.Input.validate(hf); err != nil {
				return err
			}
			for name, in := range h.Variables {
				if err := in.validate(hf + ".variables." + name); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (in *Input) validate(field string) error {
	switch in.Format {
	case "", "string", "number", "boolean", "filepath":
		return nil
	}
	return &InvalidError{Field: field + ".format", Reason: fmt.Sprintf("%q is not string, number, boolean or filepath", in.Format)}
}

func inRange(s string, lo, hi int) bool {
	n := utf8.RuneCountInString(s)
	return n >= lo && n <= hi
}

// isURI reports whether s is an absolute URI (the schema's format "uri").
func isURI(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme != ""
}

// isVersionRange reports whether v reads as a range or wildcard ("^1.2",
// "~1", ">=1.0", "1.x", "1.*", "1 - 2", "1 || 2") rather than one version.
func isVersionRange(v string) bool {
	if strings.ContainsAny(v, "^~<>=|* \t") {
		return true
	}
	release, _, _ := strings.Cut(v, "-")
	release, _, _ = strings.Cut(release, "+")
	for part := range strings.SplitSeq(release, ".") {
		if part == "x" || part == "X" {
			return true
		}
	}
	return false
}
