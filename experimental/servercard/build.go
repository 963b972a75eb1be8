package servercard

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"

	"github.com/parley-mcp/parley/mcp"
)

// Source is what a card is built from: the server's identity and the
// protocol versions it serves. *server.Server has both methods; for a
// high-level server pass its LowLevel().
type Source interface {
	Info() mcp.Implementation
	SupportedVersions() []mcp.ProtocolVersion
}

// Options is what a card needs beyond what the server knows. The zero
// value builds a card without remotes, named by the server's own name when
// that name is already reverse-DNS.
type Options struct {
	// Name is the card's reverse-DNS name ("com.example/weather").
	// Default: the server's Implementation.Name, when it has that form;
	// Build fails otherwise, since an implementation name is free-form
	// and a card's is not.
	Name string

	// URL is the public URL of the server's Streamable HTTP endpoint, as
	// clients reach it (through the load balancer, with its TLS name).
	// It becomes the card's one remote, with the server's supported
	// versions. Empty: the card names no remote. The card never takes
	// the URL from a request's Host header: a card is cached publicly,
	// and a forged Host would be served to everyone.
	URL string

	// Description replaces the server's Implementation.Description,
	// which a card requires (1 to 100 characters).
	Description string

	// Headers lists headers a client must or may send to the URL (an
	// API key, say). Leave it empty for OAuth: a client discovers that
	// from the server's 401.
	Headers []KeyValueInput

	// Repository names the server's source, for people who inspect it.
	Repository *Repository

	// Meta is vendor data under namespaced keys.
	Meta map[string]json.RawMessage
}

// ErrNoName is returned by Build when Options.Name is empty and the
// server's name is not reverse-DNS.
var ErrNoName = errors.New("servercard: the card needs a reverse-DNS name (Options.Name, such as \"com.example/weather\"); the server's name is not one")

// Build writes the card of src: name, version, title, description,
// website and icons from src.Info(), the protocol versions from
// src.SupportedVersions(), the rest from opts (nil means zero Options).
// The card is checked with [Card.Validate]; an invalid one is an error
// that names the member.
func Build(src Source, opts *Options) (*Card, error) {
	if opts == nil {
		opts = &Options{}
	}
	info := src.Info()
	c := &Card{
		Schema:      SchemaURL,
		Name:        opts.Name,
		Version:     info.Version,
		Description: info.Description,
		Title:       info.Title,
		WebsiteURL:  info.WebsiteURL,
		Icons:       slices.Clone(info.Icons),
		Meta:        maps.Clone(opts.Meta),
	}
	if c.Name == "" {
		if !namePattern.MatchString(info.Name) || !inRange(info.Name, 3, 200) {
			return nil, ErrNoName
		}
		c.Name = info.Name
	}
	if opts.Description != "" {
		c.Description = opts.Description
	}
	if opts.Repository != nil {
		r := *opts.Repository
		c.Repository = &r
	}
	if opts.URL != "" {
		r := Remote{Type: TransportStreamableHTTP, URL: opts.URL, Headers: slices.Clone(opts.Headers)}
		for _, v := range src.SupportedVersions() {
			r.SupportedProtocolVersions = append(r.SupportedProtocolVersions, string(v))
		}
		c.Remotes = []Remote{r}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}
