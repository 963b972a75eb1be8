package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ResultType says how a client must read a result: as the final answer
// ("complete") or as a request for more input ("input_required").
// Extensions may define more values (the tasks extension uses "task").
type ResultType string

// The core result types.
const (
	// ResultTypeComplete marks a final result. A result without resultType
	// (every legacy server's) is complete.
	ResultTypeComplete ResultType = "complete"
	// ResultTypeInputRequired marks an [InputRequiredResult].
	ResultTypeInputRequired ResultType = "input_required"
)

// Result is the header every result carries: _meta and resultType. Every
// result type embeds it, so a server can stamp resultType and serverInfo on
// any result in one place through [AnyResult].
//
// Result has no JSON methods of its own, so that its fields are promoted into
// the JSON of the types that embed it.
type Result struct {
	// Meta is the result's _meta (serverInfo, subscriptionId, extras).
	Meta *ResultMetaObject `json:"_meta,omitempty"`
	// ResultType is required on every result a 2026-07-28 server sends and
	// absent on legacy results. Types leave it empty; servers stamp it.
	ResultType ResultType `json:"resultType,omitempty"`
}

// ResultHeader returns r itself, for code that handles any result.
func (r *Result) ResultHeader() *Result { return r }

// ServerInfo returns the serverInfo in r's _meta, or nil.
func (r *Result) ServerInfo() *Implementation {
	if r == nil || r.Meta == nil {
		return nil
	}
	return r.Meta.ServerInfo
}

// ResultMeta returns r's _meta, allocating it if needed.
func (r *Result) ResultMeta() *ResultMetaObject {
	if r.Meta == nil {
		r.Meta = new(ResultMetaObject)
	}
	return r.Meta
}

// AnyResult is implemented by every result type (through the embedded
// [Result]).
type AnyResult interface {
	ResultHeader() *Result
}

// EmptyResult is a result with nothing but the header.
type EmptyResult = Result

// ClientResult is what a client may send as a result under 2026-07-28:
// only the empty result (clients answer no server requests any more).
type ClientResult = Result

// ServerResult is any result a server sends. Decode one with
// [DecodeResult].
type ServerResult = AnyResult

// CacheScope says who may reuse a cached result.
type CacheScope string

// The cache scopes.
const (
	// CacheScopePublic: the result holds nothing user-specific; any cache
	// may serve it across authorization contexts.
	CacheScopePublic CacheScope = "public"
	// CacheScopePrivate: the result may be reused only within the same
	// authorization context.
	CacheScopePrivate CacheScope = "private"
)

// CacheableResult is the header of results a client may cache:
// server/discover, the four list methods and a complete resources/read.
// Both fields are required on the wire; a server should set them (or stamp
// them centrally through [Cacheable]).
type CacheableResult struct {
	Result
	// TTLMs is how long, in milliseconds, the result may be considered
	// fresh; 0 means immediately stale. Always written.
	TTLMs int64 `json:"ttlMs"`
	// CacheScope says who may reuse the result.
	CacheScope CacheScope `json:"cacheScope,omitempty"`
}

// CacheHeader returns c itself, for code that handles any cacheable result.
func (c *CacheableResult) CacheHeader() *CacheableResult { return c }

// Cacheable is implemented by every cacheable result type.
type Cacheable interface {
	AnyResult
	CacheHeader() *CacheableResult
}

// PaginatedResult is the header of a page of a list. The list result types
// (which are also cacheable) have their own NextCursor field; this type
// exists for completeness.
type PaginatedResult struct {
	Result
	// NextCursor, when not empty, fetches the next page.
	NextCursor Cursor `json:"nextCursor,omitempty"`
}

// ErrUnknownResultType is matched (with errors.Is) by every
// [*UnknownResultTypeError].
var ErrUnknownResultType = errors.New("mcp: unknown resultType")

// UnknownResultTypeError reports a result whose resultType the client does
// not recognise. A client must treat such a result as invalid, unless it
// negotiated an extension that defines the value.
type UnknownResultTypeError struct {
	// Value is the resultType as sent (its raw JSON text if it was not a
	// string).
	Value string
}

// Error names the unknown value.
func (e *UnknownResultTypeError) Error() string {
	return fmt.Sprintf("mcp: unknown resultType %q", e.Value)
}

// Is makes errors.Is(err, ErrUnknownResultType) true.
func (e *UnknownResultTypeError) Is(target error) bool { return target == ErrUnknownResultType }

// ParseResultType reads the resultType of a raw result object without
// decoding the rest (it does check that raw is a well-formed object). An absent (or null) resultType is complete. A value
// other than complete or input_required returns that value together with an
// [*UnknownResultTypeError], so a client that negotiated an extension (such
// as tasks, "task") can still accept it.
func ParseResultType(raw json.RawMessage) (ResultType, error) {
	// Walk the whole object, so that malformed JSON is reported here.
	var v []byte
	it := newObjectIter(raw)
	for it.Next() {
		if string(it.Key) == "resultType" {
			v = it.Val
		}
	}
	if it.Err != nil {
		return "", it.Err
	}
	return classifyResultType(v)
}

// classifyResultType is ParseResultType for the raw value v of the
// resultType member, nil when absent.
func classifyResultType(v []byte) (ResultType, error) {
	if v == nil || isNullJSON(v) {
		return ResultTypeComplete, nil
	}
	if jsonKind(v) != '"' {
		return "", &UnknownResultTypeError{Value: string(v)}
	}
	switch string(v) {
	case `"complete"`:
		return ResultTypeComplete, nil
	case `"input_required"`:
		return ResultTypeInputRequired, nil
	}
	s, err := decodeString(v)
	if err != nil {
		return "", err
	}
	return ResultType(s), &UnknownResultTypeError{Value: s}
}

// The one-pass result decoders (CallToolResult, GetPromptResult,
// ReadResourceResult) share the handling of the header's members.
