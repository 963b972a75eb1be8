package apps

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"

	"github.com/parley-mcp/parley/mcp"
)

// ContentVersion returns the content version of a view's page: "sha256-"
// and the unpadded base64url SHA-256 of its bytes, the value a Parley
// server gives under [VersionMetaKey].
func ContentVersion(page []byte) string {
	sum := sha256.Sum256(page)
	return "sha256-" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// View is a view as a host reads it: the page and what its resources/read
// contents say about it.
type View struct {
	// URI is the view's ui:// URI.
	URI string
	// MIMEType is the contents' MIME type ([MIMEType] for an HTML view).
	MIMEType string
	// HTML is the page, from the contents' text or blob.
	HTML string
	// Meta is the contents' _meta.ui; nil when they have none (the
	// listing's entry may have one: see [ResourceMetaOf]).
	Meta *ResourceMeta
	// Version is the content version a Parley server gives
	// ([VersionMetaKey]); empty from other servers.
	Version string
}

// ViewOf returns the view uri from a resources/read result: its contents
// for uri, which must have [MIMEType]. It is an error when the result has
// no such contents, another MIME type, or a _meta.ui that does not decode.
func ViewOf(res *mcp.ReadResourceResult, uri string) (*View, error) {
	if err := CheckURI(uri); err != nil {
		return nil, err
	}
	if res == nil {
		return nil, fmt.Errorf("apps: no result for %s", uri)
	}
	for _, c := range res.Contents {
		if c.ResourceURI() != uri {
			continue
		}
		v := &View{URI: uri}
		var meta mcp.MetaObject
		switch c := c.(type) {
		case *mcp.TextResourceContents:
			v.MIMEType, v.HTML, meta = c.MIMEType, c.Text, c.Meta
		case *mcp.BlobResourceContents:
			v.MIMEType, v.HTML, meta = c.MIMEType, string(c.Blob), c.Meta
		default:
			continue
		}
		if v.MIMEType != MIMEType {
			return nil, fmt.Errorf("apps: %s has MIME type %q, not %q", uri, v.MIMEType, MIMEType)
		}
		m, err := ResourceMetaOf(meta)
		if err != nil {
			return nil, fmt.Errorf("apps: %s: %w", uri, err)
		}
		v.Meta = m
		v.Version, _ = meta[VersionMetaKey].(string)
		return v, nil
	}
	return nil, fmt.Errorf("apps: the result holds no contents for %s", uri)
}
