package mcp

import "github.com/parley-mcp/parley/internal/jsontext"

// Wire types of the legacy era (2025-11-25 and earlier) that 2026-07-28
// removed: the initialize handshake, logging/setLevel and resource
// subscriptions. A dual-era server serves them on legacy sessions; a
// dual-era client sends them when it talks to a legacy server. Every other
// method keeps its 2026-07-28 params and result types on a legacy session:
// their _meta then carries at most a progress token, and results carry no
// resultType.

// InitializeRequestParams are the params of initialize, the first request
// of a legacy session.
//
//mcp:json
type InitializeRequestParams struct {
	// Meta is the request's _meta (a progress token at most).
	Meta *RequestMetaObject `json:"_meta,omitempty"`
	// ProtocolVersion is the newest version the client speaks. The server
	// answers with it, or with another version it prefers.
	ProtocolVersion ProtocolVersion `json:"protocolVersion"`
	// Capabilities are the client's capabilities for the whole session.
	Capabilities ClientCapabilities `json:"capabilities"`
	// ClientInfo identifies the client software.
	ClientInfo Implementation `json:"clientInfo"`
}

// RequestMeta returns the params' _meta, allocating it if needed.
func (p *InitializeRequestParams) RequestMeta() *RequestMetaObject { return requestMeta(&p.Meta) }

// InitializeResult is the server's answer to initialize: the version the
// session speaks and what the server offers.
//
//mcp:json
type InitializeResult struct {
	Result
	// ProtocolVersion is the version the session speaks. A client that
	// does not speak it must disconnect.
	ProtocolVersion ProtocolVersion `json:"protocolVersion"`
	// Capabilities are the server's capabilities for the whole session.
	Capabilities ServerCapabilities `json:"capabilities"`
	// ServerInfo identifies the server software.
	ServerInfo Implementation `json:"serverInfo"`
	// Instructions tell the client how to use the server.
	Instructions string `json:"instructions,omitempty"`
}

// SetLevelRequestParams are the params of logging/setLevel: from now on,
// send the session notifications/message at Level and above.
//
//mcp:json
type SetLevelRequestParams struct {
	// Meta is the request's _meta (a progress token at most).
	Meta *RequestMetaObject `json:"_meta,omitempty"`
	// Level is the least severe level the client wants.
	Level LoggingLevel `json:"level"`
}

// RequestMeta returns the params' _meta, allocating it if needed.
func (p *SetLevelRequestParams) RequestMeta() *RequestMetaObject { return requestMeta(&p.Meta) }

// SubscribeRequestParams are the params of resources/subscribe and
// resources/unsubscribe.
//
//mcp:json
type SubscribeRequestParams struct {
	// Meta is the request's _meta (a progress token at most).
	Meta *RequestMetaObject `json:"_meta,omitempty"`
	// URI names the resource to (un)subscribe.
	URI string `json:"uri"`
}

// RequestMeta returns the params' _meta, allocating it if needed.
func (p *SubscribeRequestParams) RequestMeta() *RequestMetaObject { return requestMeta(&p.Meta) }

// UnsubscribeRequestParams are the params of resources/unsubscribe.
type UnsubscribeRequestParams = SubscribeRequestParams

// LegacyResult returns res in the shape a session of the legacy generation
// (2025-11-25 and earlier) sends it: without the members only 2026-07-28
// defines. Those are the header members resultType, ttlMs and cacheScope,
// and the reserved _meta keys of 2026-07-28 (serverInfo, subscriptionId
// and the keys of the request envelope); a _meta they leave empty is
// omitted. Everything else is encoded as res encodes it.
//
// A 2026-07-28 result needs these members (ttlMs is always written, since
// the 2026-07-28 schema requires it on every cacheable result), and a
// legacy client has no use for them: 2025-11-25 tolerates extra members,
// but a strict client or a diffing proxy does not. Package server returns
// the results of legacy sessions through LegacyResult; a proxy that
// forwards 2026-07-28 results to legacy clients may do the same.
//
// res is not modified. The value returned encodes (through MarshalJSON,
// Marshal or AppendJSON) the legacy shape of res as it is when encoded,
// and its ResultHeader is res's. LegacyResult(nil) is nil.
func LegacyResult(res AnyResult) AnyResult {
	if res == nil {
		return nil
	}
	return &legacyResult{res}
}

// legacyResult is a result encoded for a legacy session.
type legacyResult struct{ res AnyResult }

// ResultHeader returns the header of the result it wraps.
func (l *legacyResult) ResultHeader() *Result { return l.res.ResultHeader() }

// MarshalJSON writes the legacy shape of the result.
func (l *legacyResult) MarshalJSON() ([]byte, error) {
	bp := getEncBuf()
	b, err := l.appendJSON((*bp)[:0])
	if err != nil {
		encBufPool.Put(bp)
		return nil, err
	}
	return finishEncBuf(bp, b), nil
}

// appendJSON encodes the result as it always is, then appends it without
// the members of 2026-07-28: one encoder per type, whatever the
// generation, and the legacy shape is the same for every result type.
func (l *legacyResult) appendJSON(dst []byte) ([]byte, error) {
	bp := getEncBuf()
	full, err := appendValue((*bp)[:0], l.res)
	if err == nil {
		dst = appendWithout(dst, full, isModernResultMember, true)
	}
	if cap(full) <= maxPooledBuf {
		*bp = full[:0]
		encBufPool.Put(bp)
	}
	return dst, err
}

// isModernResultMember reports whether key names a member of a result's
// header that only 2026-07-28 defines.
func isModernResultMember(key []byte) bool {
	switch string(key) {
	case "resultType", "ttlMs", "cacheScope":
		return true
	}
	return false
}

// isModernMetaKey reports whether key is a reserved _meta key that only
// 2026-07-28 defines.
func isModernMetaKey(key []byte) bool {
	switch string(key) {
	case MetaKeyProtocolVersion, MetaKeyClientCapabilities, MetaKeyClientInfo, MetaKeyLogLevel,
		MetaKeyServerInfo, MetaKeySubscriptionID:
		return true
	}
	return false
}

// appendWithout appends obj, a JSON object written by an encoder, without
// the members drop names; with meta set, its _meta goes without the
// 2026-07-28 keys, and without itself when nothing is left. Anything but
// an object is appended as it is.
func appendWithout(dst, obj []byte, drop func(key []byte) bool, meta bool) []byte {
	if jsontext.FirstByte(obj) != '{' {
		return append(dst, obj...)
	}
	dst = append(dst, '{')
	first := true
	jsontext.Members(obj, func(key, value []byte) {
		if drop(key) {
			return
		}
		if meta && string(key) == "_meta" {
			value = appendWithout(nil, value, isModernMetaKey, false)
			if string(value) == "{}" {
				return
			}
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendJSONString(dst, string(key))
		dst = append(dst, ':')
		dst = append(dst, value...)
	})
	return append(dst, '}')
}
