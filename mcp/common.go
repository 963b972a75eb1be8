package mcp

// JSONValue is any JSON value, as encoding/json decodes it into any.
//
// Deprecated: write any; the alias only mirrored the schema's name.
type JSONValue = any

// JSONObject is a JSON object, as encoding/json decodes it.
//
// Deprecated: write map[string]any; the alias only mirrored the schema's
// name.
type JSONObject = map[string]any

// JSONArray is a JSON array, as encoding/json decodes it.
//
// Deprecated: write []any; the alias only mirrored the schema's name.
type JSONArray = []any

// Cursor is an opaque pagination position: a server returns it as
// nextCursor and a client sends it back as cursor, unchanged.
type Cursor = string

// Role is the sender or recipient of a message in a conversation.
type Role string

// The two roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Valid reports whether r is one of the two roles.
func (r Role) Valid() bool { return r == RoleUser || r == RoleAssistant }

// Annotations are optional hints for a client about how to use or display
// an object.
//
//mcp:json
type Annotations struct {
	// Audience says who the object is meant for.
	Audience []Role `json:"audience,omitempty"`
	// Priority is the importance from 0 (least) to 1 (most); nil means
	// unspecified.
	Priority *float64 `json:"priority,omitempty"`
	// LastModified is an ISO 8601 timestamp, such as "2025-01-12T15:00:58Z".
	LastModified string `json:"lastModified,omitempty"`
}

// IconTheme says which UI theme an icon is made for.
type IconTheme string

// The icon themes.
const (
	IconThemeLight IconTheme = "light"
	IconThemeDark  IconTheme = "dark"
)

// Icon is an image a client may show for an implementation, tool, prompt or
// resource.
//
//mcp:json
type Icon struct {
	// Src is an http(s) or data: URI of the image.
	Src string `json:"src"`
	// MIMEType overrides the type inferred from Src.
	MIMEType string `json:"mimeType,omitempty"`
	// Sizes lists sizes such as "48x48" or "any".
	Sizes []string `json:"sizes,omitempty"`
	// Theme says which theme the icon suits.
	Theme IconTheme `json:"theme,omitempty"`
}

// Icons is the schema's mixin for objects that carry icons. Parley's types
// have an Icons field directly; this type exists for completeness.
type Icons struct {
	// Icons are the icons.
	Icons []Icon `json:"icons,omitempty"`
}

// BaseMetadata is the schema's mixin for named objects (name and display
// title). Parley's types have the fields directly; this type exists for
// completeness.
type BaseMetadata struct {
	// Name is the programmatic identifier.
	Name string `json:"name"`
	// Title is a human-readable display name.
	Title string `json:"title,omitempty"`
}

// Implementation identifies a client or server program. It is sent as
// clientInfo on requests and serverInfo on results.
//
//mcp:json
type Implementation struct {
	// Name is the program's identifier.
	Name string `json:"name"`
	// Title is a human-readable display name.
	Title string `json:"title,omitempty"`
	// Version is the program's version.
	Version string `json:"version"`
	// Description says what the program does.
	Description string `json:"description,omitempty"`
	// WebsiteURL points to the program's home page.
	WebsiteURL string `json:"websiteUrl,omitempty"`
	// Icons may be shown next to the program's name.
	Icons []Icon `json:"icons,omitempty"`
}
