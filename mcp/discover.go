package mcp

import (
	"encoding/json"
	"fmt"
)

// DiscoverResult answers server/discover: the versions the server speaks,
// its capabilities and instructions. It is cacheable. The server's identity
// travels in _meta (io.modelcontextprotocol/serverInfo), not in the body.
type DiscoverResult struct {
	CacheableResult
	// SupportedVersions lists every protocol version the server accepts,
	// possibly including legacy ones.
	SupportedVersions []ProtocolVersion `json:"supportedVersions"`
	// Capabilities says which optional features the server offers.
	Capabilities ServerCapabilities `json:"capabilities"`
	// Instructions tell a model how to use the server.
	Instructions string `json:"instructions,omitempty"`
}

// MarshalJSON writes a nil SupportedVersions as [].
func (r DiscoverResult) MarshalJSON() ([]byte, error) {
	type plain DiscoverResult
	if r.SupportedVersions == nil {
		r.SupportedVersions = []ProtocolVersion{}
	}
	return json.Marshal(plain(r))
}

// ClientCapabilities are the optional features a client supports. Under
// 2026-07-28 they are declared on every request (in _meta) and hold for that
// request only. A nil pointer field means "not supported"; a pointer to an
// empty struct is sent as {} and means "supported".
type ClientCapabilities struct {
	// Experimental holds non-standard capabilities, raw.
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	// Roots is present if the client can list roots (deprecated feature).
	Roots *RootsCapability `json:"roots,omitempty"`
	// Sampling is present if the client can sample an LLM (deprecated
	// feature).
	Sampling *SamplingCapability `json:"sampling,omitempty"`
	// Elicitation is present if the client can ask its user for input.
	Elicitation *ElicitationCapability `json:"elicitation,omitempty"`
	// Extensions lists the MCP extensions the client supports, keyed by
	// extension id (such as "io.modelcontextprotocol/ui"), with each
	// extension's settings raw; {} means "supported, no settings".
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// RootsCapability declares support for roots/list.
type RootsCapability struct {
	// ListChanged is the legacy (2025-11-25 and earlier) flag for
	// notifications/roots/list_changed; 2026-07-28 has no such notification.
	ListChanged bool `json:"listChanged,omitempty"`
}

// SamplingCapability declares support for sampling/createMessage.
type SamplingCapability struct {
	// Context is present if the client honours includeContext values other
	// than "none" (deprecated).
	Context *struct{} `json:"context,omitempty"`
	// Tools is present if the client accepts tools and toolChoice.
	Tools *struct{} `json:"tools,omitempty"`
}

// ElicitationCapability declares support for elicitation/create. An empty
// value ({}) means form mode only.
type ElicitationCapability struct {
	// Form is present if the client supports form mode.
	Form *struct{} `json:"form,omitempty"`
	// URL is present if the client supports URL mode.
	URL *struct{} `json:"url,omitempty"`
}

// SupportsForm reports whether form mode is declared: explicitly, or by an
// elicitation capability that names no mode at all.
func (e *ElicitationCapability) SupportsForm() bool {
	return e != nil && (e.Form != nil || e.URL == nil)
}

// SupportsURL reports whether URL mode is declared.
func (e *ElicitationCapability) SupportsURL() bool { return e != nil && e.URL != nil }

// MarshalJSON writes the capabilities as their struct tags say, without
// encoding/json's reflection; the empty value, the most common, is {}.
func (c ClientCapabilities) MarshalJSON() ([]byte, error) {
	bp := getEncBuf()
	b, err := c.appendJSON((*bp)[:0])
	if err != nil {
		encBufPool.Put(bp)
		type plain ClientCapabilities
		return json.Marshal(plain(c))
	}
	return finishEncBuf(bp, b), nil
}

// appendJSON appends c as json.Marshal encodes the struct.
func (c *ClientCapabilities) appendJSON(dst []byte) ([]byte, error) {
	if c == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '{')
	n := len(dst)
	sep := func() {
		if len(dst) > n {
			dst = append(dst, ',')
		}
	}
	var err error
	if len(c.Experimental) > 0 {
		dst = append(dst, `"experimental":`...)
		if dst, err = appendRawMap(dst, c.Experimental); err != nil {
			return dst, err
		}
	}
	if c.Roots != nil {
		sep()
		if c.Roots.ListChanged {
			dst = append(dst, `"roots":{"listChanged":true}`...)
		} else {
			dst = append(dst, `"roots":{}`...)
		}
	}
	if c.Sampling != nil {
		sep()
		dst = append(dst, `"sampling":`...)
		dst = appendFlags(dst, "context", c.Sampling.Context != nil, "tools", c.Sampling.Tools != nil)
	}
	if c.Elicitation != nil {
		sep()
		dst = append(dst, `"elicitation":`...)
		dst = appendFlags(dst, "form", c.Elicitation.Form != nil, "url", c.Elicitation.URL != nil)
	}
	if len(c.Extensions) > 0 {
		sep()
		dst = append(dst, `"extensions":`...)
		if dst, err = appendRawMap(dst, c.Extensions); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendFlags appends an object whose members k1 and k2, when set, are
// presence flags ({}).
func appendFlags(dst []byte, k1 string, f1 bool, k2 string, f2 bool) []byte {
	dst = append(dst, '{')
	if f1 {
		dst = append(dst, '"')
		dst = append(dst, k1...)
		dst = append(dst, `":{}`...)
	}
	if f2 {
		if f1 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, k2...)
		dst = append(dst, `":{}`...)
	}
	return append(dst, '}')
}

// UnmarshalJSON decodes capabilities in one pass; it runs on every request.
// Unknown members are ignored.
func (c *ClientCapabilities) UnmarshalJSON(data []byte) error {
	return c.decode(data, nil)
}

// capsBlock holds the sub-capabilities of one ClientCapabilities, so that
// decoding allocates them together.
type capsBlock struct {
	elicitation ElicitationCapability
	sampling    SamplingCapability
	roots       RootsCapability
}

// decode decodes c from data, taking sub-capabilities from blk when it is
// not nil.
func (c *ClientCapabilities) decode(data []byte, blk *capsBlock) error {
	*c = ClientCapabilities{}
	if isNullJSON(data) {
		return nil
	}
	it := newObjectIter(data)
	for it.Next() {
		var err error
		if !isObject(it.Val) {
			if !isNullJSON(it.Val) {
				switch string(it.Key) {
				case "experimental", "extensions", "roots", "sampling", "elicitation":
					return fmt.Errorf("mcp: client capability %q: %w", it.Key, errNotObject(it.Val))
				}
			}
			continue
		}
		switch string(it.Key) {
		case "experimental":
			c.Experimental, err = decodeRawMap(it.Val)
		case "extensions":
			c.Extensions, err = decodeRawMap(it.Val)
		case "roots", "sampling", "elicitation":
			if blk == nil {
				blk = new(capsBlock)
			}
			switch string(it.Key) {
			case "roots":
				c.Roots = &blk.roots
				in := newObjectIter(it.Val)
				for err == nil && in.Next() {
					if string(in.Key) == "listChanged" {
						c.Roots.ListChanged, err = decodeBool(in.Val)
					}
				}
				if err == nil {
					err = in.Err
				}
			case "sampling":
				c.Sampling = &blk.sampling
				err = decodeFlags(it.Val, "context", &c.Sampling.Context, "tools", &c.Sampling.Tools)
			default:
				c.Elicitation = &blk.elicitation
				err = decodeFlags(it.Val, "form", &c.Elicitation.Form, "url", &c.Elicitation.URL)
			}
		}
		if err != nil {
			return fmt.Errorf("mcp: client capability %q: %w", it.Key, err)
		}
	}
	return it.Err
}

// decodeFlags decodes an object whose members k1 and k2 are presence flags
// (objects whose content is not kept).
func decodeFlags(raw []byte, k1 string, f1 **struct{}, k2 string, f2 **struct{}) error {
	it := newObjectIter(raw)
	for it.Next() {
		var f **struct{}
		switch string(it.Key) {
		case k1:
			f = f1
		case k2:
			f = f2
		default:
			continue
		}
		switch {
		case isObject(it.Val):
			*f = &struct{}{}
		case isNullJSON(it.Val):
			*f = nil
		default:
			return fmt.Errorf("%q: %w", it.Key, errNotObject(it.Val))
		}
	}
	return it.Err
}

func isObject(raw []byte) bool { return jsonKind(raw) == '{' }

func errNotObject(raw []byte) error {
	return fmt.Errorf("expected an object, found %s", describe(raw))
}

// decodeRawMap decodes an object into a map of raw values; null gives nil.
func decodeRawMap(raw []byte) (map[string]json.RawMessage, error) {
	if isNullJSON(raw) {
		return nil, nil
	}
	m := make(map[string]json.RawMessage)
	it := newObjectIter(raw)
	for it.Next() {
		m[string(it.Key)] = cloneRaw(it.Val)
	}
	return m, it.Err
}

// ServerCapabilities are the optional features a server offers, returned by
// server/discover (and by initialize on legacy sessions).
type ServerCapabilities struct {
	// Experimental holds non-standard capabilities, raw.
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	// Logging is present if the server sends notifications/message
	// (deprecated feature).
	Logging *struct{} `json:"logging,omitempty"`
	// Completions is present if the server answers completion/complete.
	Completions *struct{} `json:"completions,omitempty"`
	// Prompts is present if the server offers prompts.
	Prompts *PromptsCapability `json:"prompts,omitempty"`
	// Resources is present if the server offers resources.
	Resources *ResourcesCapability `json:"resources,omitempty"`
	// Tools is present if the server offers tools.
	Tools *ToolsCapability `json:"tools,omitempty"`
	// Extensions lists the MCP extensions the server supports, keyed by
	// extension id (such as "io.modelcontextprotocol/tasks"), settings raw.
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// PromptsCapability declares that a server offers prompts.
type PromptsCapability struct {
	// ListChanged is set if the server sends
	// notifications/prompts/list_changed.
	ListChanged bool `json:"listChanged,omitempty"`
}

// ResourcesCapability declares that a server offers resources.
type ResourcesCapability struct {
	// Subscribe is set if the server sends notifications/resources/updated
	// for resources named in a subscription filter.
	Subscribe bool `json:"subscribe,omitempty"`
	// ListChanged is set if the server sends
	// notifications/resources/list_changed.
	ListChanged bool `json:"listChanged,omitempty"`
}

// ToolsCapability declares that a server offers tools.
type ToolsCapability struct {
	// ListChanged is set if the server sends notifications/tools/list_changed.
	ListChanged bool `json:"listChanged,omitempty"`
}
