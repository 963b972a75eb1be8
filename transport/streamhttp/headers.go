package streamhttp

import (
	"encoding/base64"
	"errors"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The request headers of Streamable HTTP (2026-07-28, SEP-2243). They mirror
// fields of the JSON-RPC body so that intermediaries can route without
// parsing it; the server checks that they agree with the body. Header names
// are case-insensitive; these are the spellings the specification uses.
const (
	// HeaderProtocolVersion carries the request's protocol version, equal
	// to params._meta["io.modelcontextprotocol/protocolVersion"].
	HeaderProtocolVersion = "MCP-Protocol-Version"
	// HeaderMethod carries the JSON-RPC method.
	HeaderMethod = "Mcp-Method"
	// HeaderName carries params.name of tools/call and prompts/get, and
	// params.uri of resources/read.
	HeaderName = "Mcp-Name"
	// HeaderParamPrefix starts the name of each header that mirrors a tool
	// argument annotated with x-mcp-header: annotation "Region" is sent as
	// "Mcp-Param-Region".
	HeaderParamPrefix = "Mcp-Param-"
)

// Canonical forms, for direct lookups in an http.Header map.
var (
	canonProtocolVersion = http.CanonicalHeaderKey(HeaderProtocolVersion)
	canonMethod          = http.CanonicalHeaderKey(HeaderMethod)
	canonName            = http.CanonicalHeaderKey(HeaderName)
)

// canonParamPrefix starts the canonical name of every Mcp-Param-* header
// (HeaderParamPrefix is already in canonical form).
const canonParamPrefix = HeaderParamPrefix

// The markers of a Base64-encoded header value: "=?base64?" + Base64 of the
// UTF-8 bytes + "?=". They are case-sensitive.
const (
	sentinelPrefix = "=?base64?"
	sentinelSuffix = "?="
)

// EncodeHeaderValue returns s ready to be sent as the value of an Mcp-Name or
// Mcp-Param-* header. A value made only of visible ASCII and inner spaces is
// sent as it is; anything else (non-ASCII, control characters including tab,
// a leading or trailing space, or text that itself looks like the Base64
// sentinel) is sent as "=?base64?<Base64 of s>?=".
func EncodeHeaderValue(s string) string {
	if !needsEncoding(s) {
		return s
	}
	return sentinelPrefix + base64.StdEncoding.EncodeToString([]byte(s)) + sentinelSuffix
}

func needsEncoding(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return true
		}
	}
	return strings.HasPrefix(s, sentinelPrefix) && strings.HasSuffix(s, sentinelSuffix)
}

// Errors of DecodeHeaderValue.
var (
	errInvalidChars  = errors.New("contains characters not allowed in a header value")
	errInvalidBase64 = errors.New("is not valid Base64 inside =?base64?...?=")
	errInvalidUTF8   = errors.New("decodes to invalid UTF-8")
)

// DecodeHeaderValue returns the value an Mcp-Name or Mcp-Param-* header
// stands for. Surrounding spaces and tabs are trimmed first (as HTTP does).
// A value of the form "=?base64?...?=" is decoded strictly (standard
// alphabet, padding required) and must yield valid UTF-8; any other value is
// taken literally and must consist of visible ASCII, spaces and tabs.
func DecodeHeaderValue(v string) (string, error) {
	v = trimOWS(v)
	if len(v) >= len(sentinelPrefix)+len(sentinelSuffix) &&
		strings.HasPrefix(v, sentinelPrefix) && strings.HasSuffix(v, sentinelSuffix) {
		b, err := base64.StdEncoding.Strict().DecodeString(v[len(sentinelPrefix) : len(v)-len(sentinelSuffix)])
		if err != nil {
			return "", errInvalidBase64
		}
		if !utf8.Valid(b) {
			return "", errInvalidUTF8
		}
		return string(b), nil
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return "", errInvalidChars
		}
	}
	return v, nil
}

// trimOWS removes the optional whitespace (spaces and tabs) HTTP allows
// around a field value.
func trimOWS(s string) string { return strings.Trim(s, " \t") }

// errRepeated reports a header sent more than once.
var errRepeated = errors.New("is repeated")

// singleHeader returns the one value of the header whose canonical name is
// key, trimmed. present is false when the header is absent; a header that
// appears more than once is an error.
func singleHeader(h http.Header, key string) (value string, present bool, err error) {
	vs := h[key]
	switch len(vs) {
	case 0:
		return "", false, nil
	case 1:
		return trimOWS(vs[0]), true, nil
	default:
		return "", true, errRepeated
	}
}

// mediaType returns the media type of a Content-Type value, in lower case,
// without its parameters.
func mediaType(ct string) string {
	switch ct {
	case "application/json", "text/event-stream":
		return ct // the usual values, without parsing
	}
	media, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ""
	}
	return media
}

// acceptsEventStream reports whether an Accept header allows a
// text/event-stream response. No Accept header accepts anything.
func acceptsEventStream(values []string) bool {
	return acceptsMedia(values, "text/event-stream", "text/*")
}

// acceptsJSON reports whether an Accept header allows an application/json
// response. No Accept header accepts anything.
func acceptsJSON(values []string) bool {
	return acceptsMedia(values, "application/json", "application/*")
}

// acceptsMedia reports whether an Accept header allows media, named
// exactly, by its type's wildcard or by */*, without q=0. It does not rank
// ranges by specificity: "*/*, text/event-stream;q=0" still accepts.
func acceptsMedia(values []string, media, typeWildcard string) bool {
	if len(values) == 0 {
		return true
	}
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			m, params, _ := strings.Cut(part, ";")
			m = trimOWS(m)
			if !strings.EqualFold(m, media) && !strings.EqualFold(m, typeWildcard) && m != "*/*" {
				continue
			}
			if !refused(params) {
				return true
			}
		}
	}
	return false
}

// maxEcho is the most bytes of a header value an error message repeats:
// enough to recognise the value, too few to let a peer make the server
// send back (and log) whatever it sent.
const maxEcho = 128

// echoHeader quotes a header value for an error message: cut to maxEcho
// bytes (at a UTF-8 boundary, marked with an ellipsis) and escaped like a
// Go string, so that control characters and quotes cannot forge the
// message's structure.
func echoHeader(v string) string {
	if len(v) <= maxEcho {
		return strconv.Quote(v)
	}
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return strconv.Quote(v[:cut]) + "…"
}

// refused reports whether the parameters of a media range hold q=0 (0,
// 0.0, 0.00 or 0.000): the range is explicitly not acceptable.
func refused(params string) bool {
	for p := range strings.SplitSeq(params, ";") {
		name, value, ok := strings.Cut(p, "=")
		if !ok || !strings.EqualFold(trimOWS(name), "q") {
			continue
		}
		value = trimOWS(value)
		return value != "" && value[0] == '0' && strings.Trim(value[1:], ".0") == ""
	}
	return false
}

// The headers of legacy (2025-11-25 and earlier) sessions, used by both
// the handler and the client transport.
const (
	// HeaderSessionID carries the session of a legacy connection: the
	// server assigns it in the response to initialize and the client sends
	// it on every later request.
	HeaderSessionID = "Mcp-Session-Id"
	// HeaderLastEventID names the last event a client saw when it resumes
	// an event stream with GET.
	HeaderLastEventID = "Last-Event-ID"
)

// protocolVersionHeader returns the request's MCP-Protocol-Version header.
// It reads the map under the precomputed canonical key: Header.Get would
// canonicalise "MCP-Protocol-Version" on every request, at an allocation.
func protocolVersionHeader(h http.Header) string {
	if v := h[canonProtocolVersion]; len(v) > 0 {
		return v[0]
	}
	return ""
}
