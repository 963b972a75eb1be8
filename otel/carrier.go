package otel

import (
	"encoding/json"

	"github.com/parley-mcp/parley/mcp"
)

// metaCarrier carries trace context in a request's typed _meta: the
// traceparent, tracestate and baggage keys the conventions name have
// fields; any other key a propagator uses goes to Extra.
type metaCarrier struct{ m *mcp.RequestMetaObject }

func (c metaCarrier) Get(key string) string {
	if c.m == nil {
		return ""
	}
	switch key {
	case "traceparent":
		return c.m.Traceparent
	case "tracestate":
		return c.m.Tracestate
	case "baggage":
		return c.m.Baggage
	}
	var s string
	if ok, err := c.m.Extra.Decode(key, &s); !ok || err != nil {
		return ""
	}
	return s
}

func (c metaCarrier) Set(key, value string) {
	switch key {
	case "traceparent":
		c.m.Traceparent = value
	case "tracestate":
		c.m.Tracestate = value
	case "baggage":
		c.m.Baggage = value
	default:
		raw, err := json.Marshal(value)
		if err != nil {
			return
		}
		if c.m.Extra == nil {
			c.m.Extra = mcp.MetaExtra{}
		}
		c.m.Extra[key] = raw
	}
}

func (c metaCarrier) Keys() []string {
	if c.m == nil {
		return nil
	}
	keys := make([]string, 0, 3+len(c.m.Extra))
	for k, v := range map[string]string{"traceparent": c.m.Traceparent, "tracestate": c.m.Tracestate, "baggage": c.m.Baggage} {
		if v != "" {
			keys = append(keys, k)
		}
	}
	for k := range c.m.Extra {
		keys = append(keys, k)
	}
	return keys
}

// mapCarrier carries trace context in an untyped _meta (a legacy server's
// request for input).
type mapCarrier mcp.MetaObject

func (c mapCarrier) Get(key string) string {
	s, _ := c[key].(string)
	return s
}

func (c mapCarrier) Set(key, value string) { c[key] = value }

func (c mapCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// injectRaw returns params, a JSON object, with the entries of set added
// to its _meta (which it creates when absent). params that are not an
// object are returned unchanged.
func injectRaw(params json.RawMessage, set map[string]string) json.RawMessage {
	if len(set) == 0 {
		return params
	}
	var obj map[string]json.RawMessage
	if len(params) == 0 {
		obj = map[string]json.RawMessage{}
	} else if err := json.Unmarshal(params, &obj); err != nil || obj == nil {
		return params
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := obj["_meta"]; ok {
		if err := json.Unmarshal(raw, &meta); err != nil || meta == nil {
			return params
		}
	}
	for k, v := range set {
		raw, err := json.Marshal(v)
		if err != nil {
			return params
		}
		meta[k] = raw
	}
	rawMeta, err := json.Marshal(meta)
	if err != nil {
		return params
	}
	obj["_meta"] = rawMeta
	out, err := json.Marshal(obj)
	if err != nil {
		return params
	}
	return out
}
