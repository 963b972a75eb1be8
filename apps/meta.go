package apps

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/parley-mcp/parley/mcp"
)

const (
	// ExtensionID identifies the extension in the capabilities' extensions
	// of both sides.
	ExtensionID = "io.modelcontextprotocol/ui"
	// MIMEType is the MIME type of an HTML view, the only kind the
	// extension defines so far.
	MIMEType = "text/html;profile=mcp-app"
	// MetaKey is the _meta member of a tool or a view resource that holds
	// the extension's metadata: [ToolMeta] on a tool, [ResourceMeta] on a
	// view.
	MetaKey = "ui"
	// LegacyResourceURIKey is the flat _meta key that named a tool's view
	// before _meta.ui.resourceUri. The specification deprecates it; hosts
	// written against early drafts read only it, so [SetToolMeta] writes
	// it beside _meta.ui, as the extension's own server library does.
	LegacyResourceURIKey = "ui/resourceUri"
	// VersionMetaKey is the _meta key under which Parley's servers give a
	// view's content version, on its resources/list entry and on its
	// resources/read contents: a digest of the page, the same on every
	// instance, which changes when the page does. A host that cached the
	// page compares it with the listing's instead of reading the page
	// again. It is Parley's, not the extension's (design record 047).
	VersionMetaKey = "parley/contentVersion"
)

// Visibility says who may call a tool: the model (the agent) or the app
// (the view, through the host). A tool without a visibility is visible to
// both.
type Visibility string

const (
	// VisibilityModel: the tool is in the agent's tool list and the agent
	// may call it.
	VisibilityModel Visibility = "model"
	// VisibilityApp: the views of this server may call the tool.
	VisibilityApp Visibility = "app"
)

// ErrVisibility is matched (errors.Is) by the error for a visibility the
// specification does not define, repeated, or empty.
var ErrVisibility = errors.New("apps: invalid visibility")

// ToolMeta is a tool's _meta.ui: the view that shows its results, and who
// may call it.
type ToolMeta struct {
	// ResourceURI is the ui:// URI of the view resource that renders the
	// tool's results. Empty for a tool without a view of its own (an
	// app-only tool that a view calls).
	ResourceURI string `json:"resourceUri,omitempty"`
	// Visibility lists who may call the tool. Nil means both, the model
	// and the app; []Visibility{VisibilityApp} hides the tool from the
	// agent.
	Visibility []Visibility `json:"visibility,omitempty"`
}

// Check reports the mistakes of m: a ResourceURI that is not a ui:// URI
// (wrapping [ErrNotUIURI]), and a visibility that is empty (but not nil),
// repeats a value or holds one the specification does not define
// (wrapping [ErrVisibility]).
func (m ToolMeta) Check() error {
	if m.ResourceURI != "" {
		if err := CheckURI(m.ResourceURI); err != nil {
			return err
		}
	}
	return checkVisibility(m.Visibility)
}

func checkVisibility(v []Visibility) error {
	if v == nil {
		return nil
	}
	if len(v) == 0 {
		return fmt.Errorf("%w: an empty visibility lets nobody call the tool (leave it nil for model and app)", ErrVisibility)
	}
	for i, x := range v {
		if x != VisibilityModel && x != VisibilityApp {
			return fmt.Errorf("%w: %q is not one of %q and %q", ErrVisibility, x, VisibilityModel, VisibilityApp)
		}
		if slices.Contains(v[:i], x) {
			return fmt.Errorf("%w: %q is listed twice", ErrVisibility, x)
		}
	}
	return nil
}

// VisibleToModel reports whether the agent may see and call the tool.
func (m ToolMeta) VisibleToModel() bool {
	return m.Visibility == nil || slices.Contains(m.Visibility, VisibilityModel)
}

// CallableByApp reports whether a view may call the tool.
func (m ToolMeta) CallableByApp() bool {
	return m.Visibility == nil || slices.Contains(m.Visibility, VisibilityApp)
}

// AppOnly reports whether only views may call the tool: a host keeps it
// out of the agent's tool list.
func (m ToolMeta) AppOnly() bool { return !m.VisibleToModel() && m.CallableByApp() }

// SetToolMeta returns meta with m as its _meta.ui, and, when m names a
// view, the deprecated flat key [LegacyResourceURIKey] beside it; the
// other keys of meta are kept. meta itself is not written: the result is
// a copy (a new map when meta is nil).
func SetToolMeta(meta mcp.MetaObject, m ToolMeta) mcp.MetaObject {
	out := make(mcp.MetaObject, len(meta)+2)
	for k, v := range meta {
		out[k] = v
	}
	out[MetaKey] = m
	if m.ResourceURI != "" {
		out[LegacyResourceURIKey] = m.ResourceURI
	} else {
		delete(out, LegacyResourceURIKey)
	}
	return out
}

// ToolMetaOf returns the apps metadata of a listed tool: its _meta.ui, or
// for a tool that has only the deprecated flat key, the view that key
// names. ok is false for a tool without either. A _meta.ui that does not
// decode, or a view URI that is not ui://, is an error: a host must not
// render from it.
func ToolMetaOf(t *mcp.Tool) (m ToolMeta, ok bool, err error) {
	if t == nil || t.Meta == nil {
		return ToolMeta{}, false, nil
	}
	raw, hasUI := t.Meta[MetaKey]
	if hasUI {
		if err := remarshal(raw, &m); err != nil {
			return ToolMeta{}, false, fmt.Errorf("apps: tool %q: _meta.ui: %w", t.Name, err)
		}
		ok = true
	}
	if m.ResourceURI == "" {
		if legacy, has := t.Meta[LegacyResourceURIKey]; has {
			s, isString := legacy.(string)
			if !isString {
				return ToolMeta{}, false, fmt.Errorf("apps: tool %q: _meta[%q] is not a string", t.Name, LegacyResourceURIKey)
			}
			m.ResourceURI, ok = s, true
		}
	}
	if !ok {
		return ToolMeta{}, false, nil
	}
	if err := m.Check(); err != nil {
		return ToolMeta{}, false, fmt.Errorf("apps: tool %q: %w", t.Name, err)
	}
	return m, true, nil
}

// ResourceMeta is a view resource's _meta.ui: what the host's sandbox
// must allow the page, and how to frame it. It may be given on the
// resources/list entry (a default a host can review before reading) and
// on the resources/read contents (which wins).
type ResourceMeta struct {
	// CSP lists the origins the page may reach; nil means none (the
	// host's restrictive default).
	CSP *CSP `json:"csp,omitempty"`
	// Permissions are the browser capabilities the page asks for; a host
	// may refuse them, so a page feature-detects.
	Permissions *Permissions `json:"permissions,omitempty"`
	// Domain asks for a dedicated origin for the page's sandbox (for OAuth
	// callbacks or CORS allowlists); its form is host-specific.
	Domain string `json:"domain,omitempty"`
	// PrefersBorder asks the host for a visible border and background
	// (true) or none (false); nil lets the host decide.
	PrefersBorder *bool `json:"prefersBorder,omitempty"`
}

// CSP is the Content Security Policy a view asks for: the origins it may
// reach beyond itself, by kind. Each empty list allows nothing of its kind.
type CSP struct {
	// ConnectDomains: fetch, XHR and WebSocket (connect-src).
	ConnectDomains []string `json:"connectDomains,omitempty"`
	// ResourceDomains: scripts, styles, images, fonts and media.
	ResourceDomains []string `json:"resourceDomains,omitempty"`
	// FrameDomains: nested iframes (frame-src).
	FrameDomains []string `json:"frameDomains,omitempty"`
	// BaseURIDomains: the document's base URI (base-uri).
	BaseURIDomains []string `json:"baseUriDomains,omitempty"`
}

// Permissions are the browser capabilities a view asks the host for. On
// the wire each asked-for permission is an empty object.
type Permissions struct {
	Camera         bool
	Microphone     bool
	Geolocation    bool
	ClipboardWrite bool
}

type permissionsWire struct {
	Camera         *struct{} `json:"camera,omitempty"`
	Microphone     *struct{} `json:"microphone,omitempty"`
	Geolocation    *struct{} `json:"geolocation,omitempty"`
	ClipboardWrite *struct{} `json:"clipboardWrite,omitempty"`
}

// MarshalJSON writes each asked-for permission as {}.
func (p Permissions) MarshalJSON() ([]byte, error) {
	on := func(b bool) *struct{} {
		if b {
			return &struct{}{}
		}
		return nil
	}
	return json.Marshal(permissionsWire{on(p.Camera), on(p.Microphone), on(p.Geolocation), on(p.ClipboardWrite)})
}

// UnmarshalJSON reads each member present as asked for.
func (p *Permissions) UnmarshalJSON(b []byte) error {
	var w permissionsWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = Permissions{w.Camera != nil, w.Microphone != nil, w.Geolocation != nil, w.ClipboardWrite != nil}
	return nil
}

// ResourceMetaOf returns the _meta.ui of a view's listing entry or
// contents (meta is their _meta), or nil when there is none.
func ResourceMetaOf(meta mcp.MetaObject) (*ResourceMeta, error) {
	raw, ok := meta[MetaKey]
	if !ok {
		return nil, nil
	}
	var m ResourceMeta
	if err := remarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("apps: _meta.ui: %w", err)
	}
	return &m, nil
}

// remarshal decodes v, a value of a decoded _meta (a map) or one a server
// put there (a typed struct), into out.
func remarshal(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
