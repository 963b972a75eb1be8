package otel

import (
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/parley-mcp/parley/mcp"
)

// nameCap admits the first max distinct names of each method and refuses
// the rest: the client's default bound on the names its metrics record.
// A name once admitted stays admitted, so the series recorded first keep
// being recorded as themselves whatever comes later.
type nameCap struct {
	max int
	mu  sync.Mutex
	by  map[string]map[string]struct{} // method -> names admitted
}

func newNameCap(max int) *nameCap {
	return &nameCap{max: max, by: map[string]map[string]struct{}{}}
}

// admit reports whether name may be recorded as itself for method,
// admitting it when the method has room.
func (c *nameCap) admit(method, name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := c.by[method]
	if _, ok := names[name]; ok {
		return true
	}
	if len(names) >= c.max {
		return false
	}
	if names == nil {
		names = map[string]struct{}{}
		c.by[method] = names
	}
	names[name] = struct{}{}
	return true
}

// orOther is name when it is known (and not empty), else OtherName.
func orOther(name string, known bool) string {
	if !known || name == "" {
		return OtherName
	}
	return name
}

// requestTarget returns what a request names, as its sender gave it: the
// tool or prompt name (the target of a span's name, "{method} {target}"),
// or the resource URI (never a span name's target: an attribute only).
func requestTarget(params any) (name, uri string) {
	switch p := params.(type) {
	case *mcp.CallToolRequestParams:
		return p.Name, ""
	case *mcp.GetPromptRequestParams:
		return p.Name, ""
	case *mcp.ReadResourceRequestParams:
		return "", p.URI
	case *mcp.SubscribeRequestParams:
		return "", p.URI
	}
	return "", ""
}

// spanNameAttrs returns a copy of base, the attributes a span shares with
// its metric, with what the span records of what a request names: the
// name or URI as sent, whatever it is (a span is one event, not a series).
// The copy has room for the span's few other attributes (request id,
// round, session id), so that appending them does not grow it again.
func spanNameAttrs(base []attribute.KeyValue, params any) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, len(base), len(base)+5)
	copy(attrs, base)
	switch p := params.(type) {
	case *mcp.CallToolRequestParams:
		attrs = append(attrs, semconv.GenAIToolNameKey.String(p.Name), semconv.GenAIOperationNameExecuteTool)
	case *mcp.GetPromptRequestParams:
		attrs = append(attrs, semconv.GenAIPromptNameKey.String(p.Name))
	case *mcp.ReadResourceRequestParams:
		attrs = append(attrs, semconv.McpResourceURI(p.URI))
	case *mcp.SubscribeRequestParams:
		attrs = append(attrs, semconv.McpResourceURI(p.URI))
	}
	return attrs
}

// serverMetricNames appends to attrs what the server's metrics record of
// what a request names: the name it registered (route), or OtherName; for
// a resource the template it matched, and its URI only when the deployment
// opted in and the URI matched something registered.
func (t *Telemetry) serverMetricNames(attrs []attribute.KeyValue, params any, route string) []attribute.KeyValue {
	switch p := params.(type) {
	case *mcp.CallToolRequestParams:
		attrs = append(attrs, semconv.GenAIToolNameKey.String(orOther(route, route != "")), semconv.GenAIOperationNameExecuteTool)
	case *mcp.GetPromptRequestParams:
		attrs = append(attrs, semconv.GenAIPromptNameKey.String(orOther(route, route != "")))
	case *mcp.ReadResourceRequestParams:
		attrs = append(attrs, AttrResourceTemplate.String(orOther(route, route != "")))
		if t.uris && route != "" {
			attrs = append(attrs, semconv.McpResourceURI(p.URI))
		}
	}
	return attrs
}

// clientMetricNames appends to attrs what the client's metrics record of
// what a request names: the tool or prompt name when ClientNames allowed
// it (known: the name, else ""), else OtherName; a URI only with
// ResourceURIs, and then likewise.
func (t *Telemetry) clientMetricNames(attrs []attribute.KeyValue, method string, params any, known string) []attribute.KeyValue {
	switch p := params.(type) {
	case *mcp.CallToolRequestParams:
		attrs = append(attrs, semconv.GenAIToolNameKey.String(orOther(known, known != "")), semconv.GenAIOperationNameExecuteTool)
	case *mcp.GetPromptRequestParams:
		attrs = append(attrs, semconv.GenAIPromptNameKey.String(orOther(known, known != "")))
	case *mcp.ReadResourceRequestParams:
		if t.uris {
			attrs = append(attrs, semconv.McpResourceURI(orOther(p.URI, t.names(method, p.URI))))
		}
	case *mcp.SubscribeRequestParams:
		if t.uris {
			attrs = append(attrs, semconv.McpResourceURI(orOther(p.URI, t.names(method, p.URI))))
		}
	}
	return attrs
}

// peerCode is how the client's metrics record an error.type or
// rpc.response.status_code: a JSON-RPC code as itself when JSON-RPC
// reserves it (the predefined codes and the server-error range -32099 to
// -32000, where MCP's codes are), any other code as OtherName, since the
// server chooses it and could choose a new one for every answer; the
// values that are not codes (tool_error, timeout, ...) as they are.
func peerCode(s string) string {
	c, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return s
	}
	switch {
	case c >= -32099 && c <= -32000,
		c == -32700, c == -32600, c == -32601, c == -32602, c == -32603:
		return s
	}
	return OtherName
}
