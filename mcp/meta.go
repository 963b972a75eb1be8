package mcp

import (
	"encoding/json"
	"strings"

	"github.com/parley-mcp/parley/jsonrpc/wire"
)

// Reserved _meta keys. The io.modelcontextprotocol/ prefix belongs to MCP;
// progressToken and the W3C trace-context keys predate prefixes.
const (
	// MetaKeyProtocolVersion carries the request's protocol version
	// (required on every 2026-07-28 request).
	MetaKeyProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	// MetaKeyClientCapabilities carries the capabilities the client declares
	// for this one request (required on every 2026-07-28 request).
	MetaKeyClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	// MetaKeyClientInfo identifies the client software (SHOULD be sent).
	MetaKeyClientInfo = "io.modelcontextprotocol/clientInfo"
	// MetaKeyLogLevel opts a request in to notifications/message at or
	// above the given level.
	MetaKeyLogLevel = "io.modelcontextprotocol/logLevel"
	// MetaKeyServerInfo identifies the server software on a result.
	MetaKeyServerInfo = "io.modelcontextprotocol/serverInfo"
	// MetaKeySubscriptionID tags notifications and the closing result of a
	// subscriptions/listen stream with the id of the listen request.
	MetaKeySubscriptionID = "io.modelcontextprotocol/subscriptionId"
	// MetaKeyProgressToken asks for notifications/progress for a request.
	MetaKeyProgressToken = "progressToken"
	// MetaKeyTraceparent, MetaKeyTracestate and MetaKeyBaggage carry W3C
	// trace context (SEP-414).
	MetaKeyTraceparent = "traceparent"
	MetaKeyTracestate  = "tracestate"
	MetaKeyBaggage     = "baggage"
)

// IsReservedMetaKey reports whether key has a prefix reserved for MCP: a
// prefix whose second dot-separated label is "modelcontextprotocol" or "mcp"
// (io.modelcontextprotocol/, dev.mcp/, com.mcp.tools/ — but not
// com.example.mcp/).
func IsReservedMetaKey(key string) bool {
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	labels := strings.Split(prefix, ".")
	return len(labels) >= 2 && (labels[1] == "modelcontextprotocol" || labels[1] == "mcp")
}

// RequestID is a JSON-RPC request id (the schema's RequestId): a string or
// an integer, echoed exactly.
type RequestID = wire.ID

// ProgressToken associates notifications/progress with the request that
// asked for them: a string or an integer, kept exactly as sent. Build one
// with wire.StringID or wire.Int64ID.
type ProgressToken = wire.ID

// MetaObject is the free-form content of a _meta member on content,
// tools, prompts, resources and other objects. Values decode as
// encoding/json decodes into any (numbers become float64).
type MetaObject map[string]any

// MetaExtra holds the _meta keys that a typed meta object (such as
// [RequestMetaObject]) has no field for, as raw JSON, so that unknown keys
// survive a decode and re-encode unchanged. It never holds the keys that the
// owning type has fields for; those are written from the fields.
type MetaExtra map[string]json.RawMessage

// Decode decodes the value under key into v and reports whether key was
// present.
func (e MetaExtra) Decode(key string, v any) (bool, error) {
	raw, ok := e[key]
	if !ok {
		return false, nil
	}
	return true, json.Unmarshal(raw, v)
}

// Set stores the JSON encoding of v under key, allocating the map if needed.
func (e *MetaExtra) Set(key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if *e == nil {
		*e = make(MetaExtra)
	}
	(*e)[key] = b
	return nil
}

// RequestMetaObject is the _meta of a request's params. Under 2026-07-28 it
// carries everything a server knows about the caller: protocol version and
// client capabilities (both required), client info, log level, progress
// token and trace context. Unknown keys are kept in Extra.
//
// Its decoder makes one pass over the object and allocates only for values
// it keeps; it is on the path of every request.
type RequestMetaObject struct {
	// ProtocolVersion is the version this request speaks.
	ProtocolVersion ProtocolVersion
	// ClientCapabilities are the capabilities declared on this request. A
	// non-nil empty value is sent as {} ("nothing optional"); nil omits the
	// key, which a 2026-07-28 server rejects.
	ClientCapabilities *ClientCapabilities
	// ClientInfo identifies the client software; informational only.
	ClientInfo *Implementation
	// LogLevel, when set, opts this request in to notifications/message at
	// that level and above.
	LogLevel LoggingLevel
	// ProgressToken, when valid, asks for notifications/progress.
	ProgressToken ProgressToken
	// Traceparent is the W3C trace context's traceparent.
	Traceparent string
	// Tracestate is the W3C trace context's tracestate.
	Tracestate string
	// Baggage is the W3C baggage.
	Baggage string
	// Extra holds every other key, raw.
	Extra MetaExtra
}

// IsZero reports whether m holds nothing.
func (m RequestMetaObject) IsZero() bool {
	return m.ProtocolVersion == "" && m.ClientCapabilities == nil && m.ClientInfo == nil &&
		m.LogLevel == "" && !m.ProgressToken.IsValid() && m.Traceparent == "" &&
		m.Tracestate == "" && m.Baggage == "" && len(m.Extra) == 0
}

// UnmarshalParams decodes a request's raw params into p, a pointer to a
// params type. Absent params leave p as it is. Types with a one-pass decoder
// of their own (CallToolRequestParams, RequestMetaObject, ...) are decoded
// by calling it directly, which skips encoding/json's separate validation
// scan (the one-pass decoders validate as they go); on the path of every
// tools/call this saves most of the decoding time.
func UnmarshalParams(raw json.RawMessage, p any) error {
	if len(raw) == 0 {
		return nil
	}
	if u, ok := p.(json.Unmarshaler); ok {
		return u.UnmarshalJSON(raw)
	}
	return json.Unmarshal(raw, p)
}

// ResultMetaObject is the _meta of a result: the server's identity, the
// subscription id on the closing result of subscriptions/listen, and any
// other keys, raw, in Extra.
type ResultMetaObject struct {
	// ServerInfo identifies the server software (SHOULD be on every result).
	ServerInfo *Implementation
	// SubscriptionID is set on the result that ends a subscriptions/listen
	// stream: the JSON-RPC id of the listen request.
	SubscriptionID RequestID
	// Extra holds every other key, raw.
	Extra MetaExtra
}

// SubscriptionsListenResultMetaObject is the _meta of the result that closes
// a subscriptions/listen stream; [ResultMetaObject] already has its
// subscriptionId field.
type SubscriptionsListenResultMetaObject = ResultMetaObject

// IsZero reports whether m holds nothing.
func (m *ResultMetaObject) IsZero() bool {
	return m == nil || (m.ServerInfo == nil && !m.SubscriptionID.IsValid() && len(m.Extra) == 0)
}

// NotificationMetaObject is the _meta of a notification's params: the
// subscription id on notifications delivered on a subscriptions/listen
// stream, and any other keys, raw, in Extra.
type NotificationMetaObject struct {
	// SubscriptionID is the JSON-RPC id of the subscriptions/listen request
	// whose stream carries the notification.
	SubscriptionID RequestID
	// Extra holds every other key, raw.
	Extra MetaExtra
}

// IsZero reports whether m holds nothing.
func (m *NotificationMetaObject) IsZero() bool {
	return m == nil || (!m.SubscriptionID.IsValid() && len(m.Extra) == 0)
}

// RequestParams are the params of a request that has nothing but _meta,
// such as server/discover. Every params type has the same Meta field and
// the [AnyRequestParams] method, so that a client can stamp _meta on any
// request in one place.
//
// It is the type extension params embed for their _meta (and the
// AnyRequestParams method), so it has no MarshalJSON of its own: one would
// be promoted and encode the embedding struct as RequestParams alone.
type RequestParams struct {
	// Meta is the request's _meta: protocol version, client capabilities
	// and the rest. A 2026-07-28 request must carry it; legacy requests may
	// omit it (nil).
	Meta *RequestMetaObject `json:"_meta,omitempty"`
}

// RequestMeta returns the params' _meta, allocating it if needed.
func (p *RequestParams) RequestMeta() *RequestMetaObject { return requestMeta(&p.Meta) }

func requestMeta(m **RequestMetaObject) *RequestMetaObject {
	if *m == nil {
		*m = new(RequestMetaObject)
	}
	return *m
}

// AnyRequestParams is implemented by every request params type.
type AnyRequestParams interface {
	// RequestMeta returns the params' _meta for reading and writing,
	// allocating it if needed.
	RequestMeta() *RequestMetaObject
}

// NotificationParams are the params of a notification that has nothing
// but _meta, such as the list_changed notifications. Every notification
// params type has the same Meta field.
//
// Like [RequestParams] it is embeddable, so it has no MarshalJSON.
type NotificationParams struct {
	// Meta is the notification's _meta (the subscription id on a listen
	// stream), if any.
	Meta *NotificationMetaObject `json:"_meta,omitempty"`
}

// objWriter builds a JSON object by appending members.
type objWriter struct {
	buf []byte
	n   int
	err error
}

func (w *objWriter) key(k string) {
	if w.n == 0 {
		w.buf = append(w.buf, '{')
	} else {
		w.buf = append(w.buf, ',')
	}
	w.n++
	w.buf = appendJSONString(w.buf, k)
	w.buf = append(w.buf, ':')
}

// str writes a string member, skipping empty values.
func (w *objWriter) str(k, v string) {
	if v == "" {
		return
	}
	w.key(k)
	w.buf = appendJSONString(w.buf, v)
}

// raw writes a member whose value is already JSON.
func (w *objWriter) raw(k string, v []byte) {
	w.key(k)
	w.buf = append(w.buf, v...)
}

// value writes a member holding the JSON encoding of v.
func (w *objWriter) value(k string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		if w.err == nil {
			w.err = err
		}
		return
	}
	w.raw(k, b)
}

func (w *objWriter) finish() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	if w.n == 0 {
		return append(w.buf, '{', '}'), nil
	}
	return append(w.buf, '}'), nil
}
