package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/parley-mcp/parley/internal/jsontext"
	"github.com/parley-mcp/parley/jsonrpc/wire"
)

// RawValid is JSON text that its producer guarantees to be valid, such as
// the output of json.Marshal or mcp.Marshal. Given to a Conn as params (Call,
// Notify) or returned by a Handler as a result, it is written without being
// checked again: the peer validates every message it reads, and checking
// the output of an encoder on its way out was a second full pass over every
// message (BENCHMARKS.md, "Profile-driven changes"). Line breaks are still
// removed, which framing depends on, and params must still be an object or
// an array. Text that is not valid JSON makes the peer refuse the message:
// use RawValid only for what an encoder wrote, and json.RawMessage (which
// is checked) for anything else.
type RawValid []byte

// Message is one JSON-RPC 2.0 message: a *Request (a notification when it
// has no ID) or a *Response.
type Message interface {
	isMessage()
}

// Request is a JSON-RPC request, or a notification when ID is the zero ID.
// Params holds the raw JSON of the params member (nil when absent), so that
// the receiver decodes it exactly once, into the type its method expects.
type Request struct {
	ID     ID
	Method string
	Params json.RawMessage
}

// IsNotification reports whether r is a notification (it has no id).
func (r *Request) IsNotification() bool { return !r.ID.IsValid() }

// Response is a JSON-RPC response: exactly one of Result and Error is set.
type Response struct {
	ID     ID
	Result json.RawMessage
	Error  *Error

	// local is an error of this side that fails the call instead of a
	// peer's answer: the response arrived but could not be read.
	local error
}

func (*Request) isMessage()  {}
func (*Response) isMessage() {}

// DecodeMessage parses one JSON-RPC message.
//
// A failure is always an *Error ready to send back: CodeParseError for input
// that is not JSON, CodeInvalidRequest for JSON that is not a JSON-RPC
// message. When the failing message had a usable id, it is returned beside the
// error so the reply can name it.
//
// Member names are matched exactly (JSON-RPC is case-sensitive), a member
// that appears twice makes the message invalid, and unknown members are
// ignored. Params, when present and not null, must be an object or an array.
// The returned message does not retain data.
func DecodeMessage(data []byte) (Message, ID, error) {
	m, id, _, err := decodeMessage(data, true)
	if err != nil {
		return nil, id, err // a non-nil *Error, never a typed nil in an interface
	}
	return m, id, nil
}

// MaxNestingDepth is the deepest nesting of objects and arrays a message
// may have. Deeper messages are refused with an invalid-request error that
// names the limit, before anything decodes them: recursive decoders (ours
// and encoding/json's) would otherwise spend stack on attacker-chosen depth.
// The envelope itself counts as one level. It is jsontext.MaxDepth, the one
// limit every JSON reader in Parley keeps, so that no part of a message
// the JSON-RPC layer accepts is too deep for a reader behind it.
const MaxNestingDepth = jsontext.MaxDepth

// Members of a message, as bits recording which were seen.
const (
	seenJSONRPC = 1 << iota
	seenID
	seenMethod
	seenParams
	seenResult
	seenError
)

// decodeMessage is DecodeMessage. When copyRaw is false, the raw members of
// the returned message (Params, Result, Error.Data) alias data, which the
// caller must then not modify. responseShaped reports, for a message that
// failed to decode, whether it looked like a response (it had a result or
// error member and no method), which must never be answered.
func decodeMessage(data []byte, copyRaw bool) (msg Message, id ID, responseShaped bool, rpcErr *Error) {
	var (
		seen     int
		problem  string // first structural problem found
		badID    bool   // the id member was neither string, number nor null
		version  bool
		method   string
		params   []byte
		result   []byte
		errValue []byte
	)
	// The members are gathered as the validating scan goes: one pass.
	member := func(key, value []byte) {
		var bit int
		switch string(key) {
		case "jsonrpc":
			bit = seenJSONRPC
			version = string(value) == `"2.0"` || (value[0] == '"' && decodeString(value) == "2.0")
		case "id":
			bit = seenID
			switch c := value[0]; {
			case c == '"' || c == '-' || (c >= '0' && c <= '9'):
				// Valid JSON (checked above), so a valid id: this only
				// copies the text.
				if id.UnmarshalJSON(value) != nil {
					id, badID = ID{}, true
				}
			case c == 'n': // null
				id = ID{}
			default:
				id, badID = ID{}, true
			}
		case "method":
			bit = seenMethod
			if value[0] != '"' {
				problem = firstOf(problem, "method must be a string")
			} else {
				method = decodeString(value)
			}
		case "params":
			bit = seenParams
			switch value[0] {
			case '{', '[':
				params = value
			case 'n': // null: the same as absent
			default:
				problem = firstOf(problem, "params must be an object or an array")
			}
		case "result":
			bit = seenResult
			result = value
		case "error":
			bit = seenError
			switch value[0] {
			case '{':
				errValue = value
			case 'n': // null: the same as absent
			default:
				problem = firstOf(problem, "error must be an object")
			}
		default:
			return // unknown members are ignored
		}
		if seen&bit != 0 {
			problem = firstOf(problem, "duplicate member "+strconv.Quote(string(key)))
		}
		seen |= bit
	}
	if err := jsontext.ScanMembers(data, member); err != nil {
		// The scanner stops at the first level past the limit; a message
		// that is valid JSON all the same is refused naming its depth
		// (counted now that it is known valid), any other as unparsable.
		if jsontext.IsDepthError(err) && json.Valid(data) {
			return nil, ID{}, false, invalidRequest("message nesting depth " + strconv.Itoa(jsontext.Depth(data)) + " exceeds the limit of " + strconv.Itoa(MaxNestingDepth))
		}
		// Run the decoder only to get a descriptive syntax error.
		err := json.Unmarshal(data, new(json.RawMessage))
		text := "invalid JSON"
		if err != nil {
			text = err.Error()
		}
		return nil, ID{}, false, wire.ParseError("Parse error: %s", text)
	}
	if jsontext.FirstByte(data) != '{' {
		return nil, ID{}, false, invalidRequest("a message must be a JSON object")
	}

	responseShaped = seen&seenMethod == 0 && seen&(seenResult|seenError) != 0
	if badID {
		return nil, ID{}, responseShaped, invalidRequest("id must be a string, a number or null")
	}

	var rpcError *Error
	if errValue != nil && problem == "" {
		rpcError, problem = decodeErrorObject(errValue, copyRaw)
	}
	switch {
	case problem != "":
		return nil, id, responseShaped, invalidRequest(problem)
	case !version:
		return nil, id, responseShaped, invalidRequest(`"jsonrpc" must be "2.0"`)
	case seen&seenMethod != 0:
		if seen&(seenResult|seenError) != 0 {
			return nil, id, false, invalidRequest("a request cannot carry result or error")
		}
		if seen&seenID != 0 && !id.IsValid() {
			return nil, ID{}, false, invalidRequest("a request id must be a string or a number")
		}
		if method == "" {
			return nil, id, false, invalidRequest("method must not be empty")
		}
		return &Request{ID: id, Method: method, Params: clone(params, copyRaw)}, id, false, nil
	case rpcError != nil:
		if result != nil {
			return nil, id, true, invalidRequest("a response cannot carry both result and error")
		}
		return &Response{ID: id, Error: rpcError}, id, false, nil
	case result != nil:
		if !id.IsValid() {
			return nil, ID{}, true, invalidRequest("a result response must have a string or number id")
		}
		return &Response{ID: id, Result: clone(result, copyRaw)}, id, false, nil
	default:
		return nil, id, responseShaped, invalidRequest("neither a request nor a response")
	}
}

// decodeErrorObject decodes the error member of a response.
func decodeErrorObject(value []byte, copyRaw bool) (*Error, string) {
	e := new(Error)
	var seen int
	problem := ""
	jsontext.Members(value, func(key, v []byte) {
		var bit int
		switch string(key) {
		case "code":
			bit = 1
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				problem = firstOf(problem, "error code must be an integer")
			}
			e.Code = n
		case "message":
			bit = 2
			if v[0] != '"' {
				problem = firstOf(problem, "error message must be a string")
			} else {
				e.Message = decodeString(v)
			}
		case "data":
			bit = 4
			e.Data = clone(v, copyRaw)
		default:
			return
		}
		if seen&bit != 0 {
			problem = firstOf(problem, "duplicate member "+strconv.Quote(string(key))+" in error")
		}
		seen |= bit
	})
	if seen&1 == 0 {
		problem = firstOf(problem, "error must have a code")
	}
	return e, problem
}

func invalidRequest(why string) *Error {
	return wire.InvalidRequest("Invalid request: %s", why)
}

func firstOf(problem, p string) string {
	if problem != "" {
		return problem
	}
	return p
}

func clone(b []byte, copyRaw bool) json.RawMessage {
	if b == nil || !copyRaw {
		return b
	}
	return bytes.Clone(b)
}

// decodeString decodes a JSON string literal known to be valid ("" for
// anything else).
func decodeString(lit []byte) string {
	str, _ := jsontext.Unquote(lit)
	return str
}

// AppendMessage appends the wire form of m to dst.
//
// Params, Result and Error.Data must hold valid JSON, or AppendMessage fails;
// raw JSON containing line breaks is compacted, so the encoded message never
// contains a newline and line-delimited transports can frame it. Params that
// are nil, empty or null are omitted; other params must be an object or an
// array. A nil or empty Result is written as null. A request must have a
// method. On failure, dst is returned unchanged.
func AppendMessage(dst []byte, m Message) ([]byte, error) {
	var (
		out []byte
		err error
	)
	switch m := m.(type) {
	case *Request:
		if m == nil {
			return dst, errNilMessage
		}
		out, err = appendRequest(dst, m.ID, m.Method, m.Params, false)
	case *Response:
		if m == nil {
			return dst, errNilMessage
		}
		out, err = appendResponse(dst, m.ID, m.Result, false, m.Error)
	default:
		return dst, errors.New("jsonrpc: unknown message type")
	}
	if err != nil {
		return dst, err
	}
	return out, nil
}

// EncodeMessage returns the wire form of m (see AppendMessage).
func EncodeMessage(m Message) ([]byte, error) {
	n := 64
	switch m := m.(type) {
	case *Request:
		if m != nil {
			n += len(m.ID.Raw()) + len(m.Method) + len(m.Params)
		}
	case *Response:
		if m != nil {
			n += len(m.ID.Raw()) + len(m.Result)
			if m.Error != nil {
				n += 32 + len(m.Error.Message) + len(m.Error.Data)
			}
		}
	}
	return AppendMessage(make([]byte, 0, n), m)
}

var (
	errNilMessage    = errors.New("jsonrpc: nil message")
	errEmptyMethod   = errors.New("jsonrpc: request method must not be empty")
	errInvalidRaw    = errors.New("jsonrpc: raw member is not valid JSON")
	errInvalidParams = errors.New("jsonrpc: params must be an object or an array")
)

// appendRequest appends a request, or a notification when id is zero. dst
// may hold a partial message on failure. trusted says params are RawValid.
func appendRequest(dst []byte, id ID, method string, params []byte, trusted bool) ([]byte, error) {
	if method == "" {
		return dst, errEmptyMethod
	}
	dst = append(dst, `{"jsonrpc":"2.0",`...)
	if id.IsValid() {
		dst = append(dst, `"id":`...)
		dst = append(dst, id.Raw()...)
		dst = append(dst, ',')
	}
	dst = append(dst, `"method":`...)
	dst = appendString(dst, method)
	if len(params) > 0 {
		switch firstByte(params) {
		case '{', '[':
			dst = append(dst, `,"params":`...)
			var err error
			if dst, err = appendRaw(dst, params, trusted); err != nil {
				return dst, err
			}
		case 'n':
			if !isNull(params) {
				return dst, errInvalidRaw
			}
		default:
			if !validRaw(params) {
				return dst, errInvalidRaw
			}
			return dst, errInvalidParams
		}
	}
	return append(dst, '}'), nil
}

// appendResponse appends a response: an error response when e is not nil.
// dst may hold a partial message on failure. trusted says result is
// RawValid.
func appendResponse(dst []byte, id ID, result []byte, trusted bool, e *Error) ([]byte, error) {
	// An error response to a message whose id could not be read omits the
	// id: MCP's schema makes it optional there and does not allow null
	// (plain JSON-RPC 2.0 would write null).
	dst = append(dst, `{"jsonrpc":"2.0"`...)
	if id.IsValid() {
		dst = append(dst, `,"id":`...)
		dst = append(dst, id.Raw()...)
	} else if e == nil {
		dst = append(dst, `,"id":null`...)
	}
	var err error
	if e != nil {
		dst = append(dst, `,"error":{"code":`...)
		dst = strconv.AppendInt(dst, e.Code, 10)
		dst = append(dst, `,"message":`...)
		dst = appendString(dst, e.Message)
		if len(e.Data) > 0 {
			dst = append(dst, `,"data":`...)
			if dst, err = appendRaw(dst, e.Data, false); err != nil {
				return dst, err
			}
		}
		dst = append(dst, '}')
	} else {
		dst = append(dst, `,"result":`...)
		if len(result) == 0 {
			dst = append(dst, "null"...)
		} else if dst, err = appendRaw(dst, result, trusted); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendRaw appends the JSON text raw after checking it (unless trusted:
// raw is RawValid), compacting it when it contains line breaks (which, in
// valid JSON, are always insignificant whitespace: line breaks inside
// strings must be escaped). Compacting checks it either way.
func appendRaw(dst, raw []byte, trusted bool) ([]byte, error) {
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		if !trusted {
			if !validRaw(raw) {
				return dst, errInvalidRaw
			}
		}
		return append(dst, raw...), nil
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, raw); err != nil {
		return dst, errInvalidRaw
	}
	return buf.Bytes(), nil
}

func firstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
		default:
			return c
		}
	}
	return 0
}

func isNull(b []byte) bool { return string(bytes.TrimSpace(b)) == "null" }

// appendString appends s as a JSON string. Method names are almost always
// plain ASCII, which is copied directly; anything else goes through
// encoding/json for correct escaping (and replacement of invalid UTF-8).
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			b, _ := json.Marshal(s) // marshalling a string cannot fail
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// validRaw reports whether raw is one JSON value by json.Valid's rules.
// jsontext.Valid answers but for values nested deeper than MaxNestingDepth,
// which encoding/json judges: writing them is the sender's choice (a
// Parley peer refuses them on reading).
func validRaw(raw []byte) bool {
	err := jsontext.Valid(raw)
	return err == nil || (jsontext.IsDepthError(err) && json.Valid(raw))
}
