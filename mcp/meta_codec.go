package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
)

// The JSON coding of the types declared in meta.go, kept apart so that
// meta.go reads as the schema: the hand-written one-pass coders, which keep
// encoding/json's rules (see jsonscan.go), and the decoders that choose the
// Go type of a union's member.

// MarshalJSON writes the typed keys first, then Extra in key order.
func (m RequestMetaObject) MarshalJSON() ([]byte, error) {
	bp := getEncBuf()
	b, err := m.appendJSON((*bp)[:0])
	if err != nil {
		encBufPool.Put(bp)
		return m.marshalVerbatim()
	}
	return finishEncBuf(bp, b), nil
}

// appendJSON appends m as MarshalJSON writes it, compacted.
func (m *RequestMetaObject) appendJSON(dst []byte) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	w := objAppender{buf: dst}
	var err error
	w.str(MetaKeyProtocolVersion, string(m.ProtocolVersion))
	if m.ClientCapabilities != nil {
		err = w.value(MetaKeyClientCapabilities, m.ClientCapabilities)
	}
	if m.ClientInfo != nil && err == nil {
		err = w.value(MetaKeyClientInfo, m.ClientInfo)
	}
	w.str(MetaKeyLogLevel, string(m.LogLevel))
	if m.ProgressToken.IsValid() && err == nil {
		err = w.raw(MetaKeyProgressToken, []byte(m.ProgressToken.Raw()))
	}
	w.str(MetaKeyTraceparent, m.Traceparent)
	w.str(MetaKeyTracestate, m.Tracestate)
	w.str(MetaKeyBaggage, m.Baggage)
	if err == nil {
		err = w.extra(m.Extra, isRequestMetaKey)
	}
	return w.finish(), err
}

// marshalVerbatim is the reference encoding: raw values are copied as they
// are, and encoding/json compacts (or rejects) the result.
func (m RequestMetaObject) marshalVerbatim() ([]byte, error) {
	w := objWriter{buf: make([]byte, 0, 128)}
	w.str(MetaKeyProtocolVersion, string(m.ProtocolVersion))
	if m.ClientCapabilities != nil {
		w.value(MetaKeyClientCapabilities, m.ClientCapabilities)
	}
	if m.ClientInfo != nil {
		w.value(MetaKeyClientInfo, m.ClientInfo)
	}
	w.str(MetaKeyLogLevel, string(m.LogLevel))
	if m.ProgressToken.IsValid() {
		w.raw(MetaKeyProgressToken, []byte(m.ProgressToken.Raw()))
	}
	w.str(MetaKeyTraceparent, m.Traceparent)
	w.str(MetaKeyTracestate, m.Tracestate)
	w.str(MetaKeyBaggage, m.Baggage)
	w.extra(m.Extra, isRequestMetaKey)
	return w.finish()
}

func isRequestMetaKey(k string) bool {
	switch k {
	case MetaKeyProtocolVersion, MetaKeyClientCapabilities, MetaKeyClientInfo, MetaKeyLogLevel,
		MetaKeyProgressToken, MetaKeyTraceparent, MetaKeyTracestate, MetaKeyBaggage:
		return true
	}
	return false
}

// UnmarshalJSON decodes the known keys into their fields and keeps every
// other key raw in Extra. null decodes to the zero value.
func (m *RequestMetaObject) UnmarshalJSON(data []byte) error { return m.decode(data, nil, nil) }

// decode decodes m from data, placing capabilities and client info in blk
// (allocated on first need when nil). Its strings come from a; with a nil a,
// clientInfo's share one copy of its own text and the others have their own.
func (m *RequestMetaObject) decode(data []byte, blk *metaBlock, a *strArena) error {
	*m = RequestMetaObject{}
	if isNullJSON(data) {
		return nil
	}
	it := newObjectIter(data)
	for it.Next() {
		var err error
		switch string(it.Key) {
		case MetaKeyProtocolVersion:
			m.ProtocolVersion, err = decodeProtocolVersion(it.Val)
		case MetaKeyClientCapabilities:
			if !isNullJSON(it.Val) {
				if blk == nil {
					blk = new(metaBlock)
				}
				m.ClientCapabilities = &blk.caps
				err = blk.caps.decodeCached(it.Val, &blk.capsBlock)
			}
		case MetaKeyClientInfo:
			if !isNullJSON(it.Val) {
				if blk == nil {
					blk = new(metaBlock)
				}
				m.ClientInfo = &blk.info
				err = blk.info.decodeCached(it.Val, a)
			}
		case MetaKeyLogLevel:
			m.LogLevel, err = decodeLoggingLevel(it.Val)
		case MetaKeyProgressToken:
			err = m.ProgressToken.UnmarshalJSON(it.Val)
		case MetaKeyTraceparent:
			m.Traceparent, err = a.str(it.Val)
		case MetaKeyTracestate:
			m.Tracestate, err = a.str(it.Val)
		case MetaKeyBaggage:
			m.Baggage, err = a.str(it.Val)
		default:
			if m.Extra == nil {
				m.Extra = make(MetaExtra, 2)
			}
			m.Extra[string(it.Key)] = cloneRaw(it.Val)
		}
		if err != nil {
			return fmt.Errorf("mcp: _meta %q: %w", it.Key, err)
		}
	}
	return it.Err
}

// metaBlock holds the values a RequestMetaObject points to, so that
// decoding allocates them together.
type metaBlock struct {
	caps ClientCapabilities
	info Implementation
	capsBlock
}

// requestMetaBlock holds a RequestMetaObject and what it points to.
type requestMetaBlock struct {
	meta RequestMetaObject
	metaBlock
}

// decodeRequestMetaField decodes the _meta member of a params object in a
// single allocation (and its strings from a, which may be nil); null gives
// nil.
func decodeRequestMetaField(raw []byte, a *strArena) (*RequestMetaObject, error) {
	if isNullJSON(raw) {
		return nil, nil
	}
	blk := new(requestMetaBlock)
	if err := decodeRequestMetaCached(raw, blk, a); err != nil {
		return nil, err
	}
	return &blk.meta, nil
}

// decodeProtocolVersion decodes a version string, without allocating for
// the versions Parley knows.
func decodeProtocolVersion(raw []byte) (ProtocolVersion, error) {
	if len(raw) > 2 && raw[0] == '"' {
		body := raw[1 : len(raw)-1]
		for _, v := range knownVersions {
			if string(body) == string(v) {
				return v, nil
			}
		}
	}
	s, err := decodeString(raw)
	return ProtocolVersion(s), err
}

// DecodeRequestMeta returns the _meta of a request's raw params without
// decoding the rest; nil when the params or their _meta are absent. A
// server can use it to check the protocol version and capabilities before
// choosing a handler.
func DecodeRequestMeta(params json.RawMessage) (*RequestMetaObject, error) {
	if len(params) == 0 || isNullJSON(params) {
		return nil, nil
	}
	raw, err := peekMember(params, "_meta")
	if err != nil || raw == nil {
		return nil, err
	}
	return decodeRequestMetaField(raw, nil)
}

// MarshalJSON writes the typed keys first, then Extra in key order.
func (m ResultMetaObject) MarshalJSON() ([]byte, error) {
	bp := getEncBuf()
	b, err := m.appendJSON((*bp)[:0])
	if err != nil {
		encBufPool.Put(bp)
		return m.marshalVerbatim()
	}
	return finishEncBuf(bp, b), nil
}

func isResultMetaKey(k string) bool { return k == MetaKeyServerInfo || k == MetaKeySubscriptionID }

// appendJSON appends m as MarshalJSON writes it, compacted.
func (m *ResultMetaObject) appendJSON(dst []byte) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	w := objAppender{buf: dst}
	var err error
	if m.ServerInfo != nil {
		err = w.value(MetaKeyServerInfo, m.ServerInfo)
	}
	if m.SubscriptionID.IsValid() && err == nil {
		err = w.raw(MetaKeySubscriptionID, []byte(m.SubscriptionID.Raw()))
	}
	if err == nil {
		err = w.extra(m.Extra, isResultMetaKey)
	}
	return w.finish(), err
}

// marshalVerbatim is the reference encoding (see RequestMetaObject's).
func (m ResultMetaObject) marshalVerbatim() ([]byte, error) {
	w := objWriter{buf: make([]byte, 0, 96)}
	if m.ServerInfo != nil {
		w.value(MetaKeyServerInfo, m.ServerInfo)
	}
	if m.SubscriptionID.IsValid() {
		w.raw(MetaKeySubscriptionID, []byte(m.SubscriptionID.Raw()))
	}
	w.extra(m.Extra, isResultMetaKey)
	return w.finish()
}

// UnmarshalJSON decodes the known keys and keeps the rest raw in Extra.
func (m *ResultMetaObject) UnmarshalJSON(data []byte) error { return m.decode(data, nil, nil) }

// decode decodes m from data. The strings of serverInfo come from a (nil: a
// copy of serverInfo's own text), and serverInfo is decoded into info when
// it is not nil.
func (m *ResultMetaObject) decode(data []byte, a *strArena, info *Implementation) error {
	*m = ResultMetaObject{}
	if isNullJSON(data) {
		return nil
	}
	it := newObjectIter(data)
	for it.Next() {
		var err error
		switch string(it.Key) {
		case MetaKeyServerInfo:
			if !isNullJSON(it.Val) {
				if info == nil {
					info = new(Implementation)
				}
				m.ServerInfo = info
				err = info.decodeCached(it.Val, a)
			}
		case MetaKeySubscriptionID:
			err = m.SubscriptionID.UnmarshalJSON(it.Val)
		default:
			if m.Extra == nil {
				m.Extra = make(MetaExtra, 2)
			}
			m.Extra[string(it.Key)] = cloneRaw(it.Val)
		}
		if err != nil {
			return fmt.Errorf("mcp: _meta %q: %w", it.Key, err)
		}
	}
	return it.Err
}

// MarshalJSON writes subscriptionId first, then Extra in key order.
func (m NotificationMetaObject) MarshalJSON() ([]byte, error) {
	w := objWriter{buf: make([]byte, 0, 64)}
	if m.SubscriptionID.IsValid() {
		w.raw(MetaKeySubscriptionID, []byte(m.SubscriptionID.Raw()))
	}
	w.extra(m.Extra, func(k string) bool { return k == MetaKeySubscriptionID })
	return w.finish()
}

// UnmarshalJSON decodes subscriptionId and keeps the rest raw in Extra.
func (m *NotificationMetaObject) UnmarshalJSON(data []byte) error {
	*m = NotificationMetaObject{}
	if isNullJSON(data) {
		return nil
	}
	it := newObjectIter(data)
	for it.Next() {
		if string(it.Key) == MetaKeySubscriptionID {
			if err := m.SubscriptionID.UnmarshalJSON(it.Val); err != nil {
				return fmt.Errorf("mcp: _meta %q: %w", it.Key, err)
			}
			continue
		}
		if m.Extra == nil {
			m.Extra = make(MetaExtra, 2)
		}
		m.Extra[string(it.Key)] = cloneRaw(it.Val)
	}
	return it.Err
}

// extra writes the members of e in key order, skipping keys for which skip
// is true.
func (w *objWriter) extra(e MetaExtra, skip func(string) bool) {
	if len(e) == 0 {
		return
	}
	keys := make([]string, 0, len(e))
	for k := range e {
		if !skip(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := e[k]
		if len(v) == 0 {
			v = json.RawMessage("null")
		}
		w.raw(k, v)
	}
}
