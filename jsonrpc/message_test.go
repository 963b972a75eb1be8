package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// compactEqual reports whether two JSON texts are equal after compaction.
// Two nil (absent) texts are equal; nil and a present text are not.
func compactEqual(a, b []byte) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// messagesEqual compares messages, raw members by their compact text.
func messagesEqual(a, b Message) bool {
	switch a := a.(type) {
	case *Request:
		b, ok := b.(*Request)
		return ok && a.ID == b.ID && a.Method == b.Method && compactEqual(a.Params, b.Params)
	case *Response:
		b, ok := b.(*Response)
		if !ok || a.ID != b.ID || !compactEqual(a.Result, b.Result) || (a.Error == nil) != (b.Error == nil) {
			return false
		}
		return a.Error == nil || (a.Error.Code == b.Error.Code && a.Error.Message == b.Error.Message && compactEqual(a.Error.Data, b.Error.Data))
	}
	return false
}

func mustID(t testing.TB, raw string) ID {
	t.Helper()
	var id ID
	if err := id.UnmarshalJSON([]byte(raw)); err != nil {
		t.Fatalf("bad test id %s: %v", raw, err)
	}
	return id
}

func TestDecodeMessageValid(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Message
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c"}}`,
			&Request{ID: Int64ID(1), Method: "tools/list", Params: json.RawMessage(`{"cursor":"c"}`)}},
		{"request string id", `{"id":"abc","method":"ping","jsonrpc":"2.0"}`,
			&Request{ID: StringID("abc"), Method: "ping"}},
		{"request float id", `{"jsonrpc":"2.0","id":1.0,"method":"ping"}`,
			&Request{ID: mustID(t, `1.0`), Method: "ping"}},
		{"request array params", `{"jsonrpc":"2.0","id":-5,"method":"sum","params":[1,2]}`,
			&Request{ID: Int64ID(-5), Method: "sum", Params: json.RawMessage(`[1,2]`)}},
		{"request null params", `{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`,
			&Request{ID: Int64ID(1), Method: "ping"}},
		{"request with whitespace", " \n{ \"jsonrpc\" : \"2.0\" , \"id\" : 1e3 , \"method\" : \"m\" , \"params\" : { \"a\" : [ 1 , \"}\" ] } }\n",
			&Request{ID: mustID(t, `1e3`), Method: "m", Params: json.RawMessage(`{ "a" : [ 1 , "}" ] }`)}},
		{"request unknown members", `{"jsonrpc":"2.0","id":1,"method":"m","extra":{"x":[1]},"Method":"other"}`,
			&Request{ID: Int64ID(1), Method: "m"}},
		{"request escaped names", `{"jsonrpc":"2\u002e0","\u0069d":2,"method":"a\/b\u00e9"}`,
			&Request{ID: Int64ID(2), Method: "a/bé"}},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			&Request{Method: "notifications/initialized"}},
		{"notification with params", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
			&Request{Method: "notifications/progress", Params: json.RawMessage(`{"progress":1}`)}},
		{"result response", `{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}`,
			&Response{ID: Int64ID(7), Result: json.RawMessage(`{"tools":[]}`)}},
		{"null result", `{"jsonrpc":"2.0","id":"7","result":null}`,
			&Response{ID: StringID("7"), Result: json.RawMessage(`null`)}},
		{"scalar result", `{"jsonrpc":"2.0","id":7,"result":"s"}`,
			&Response{ID: Int64ID(7), Result: json.RawMessage(`"s"`)}},
		{"result with null error", `{"jsonrpc":"2.0","id":7,"result":1,"error":null}`,
			&Response{ID: Int64ID(7), Result: json.RawMessage(`1`)}},
		{"error response", `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found","data":{"m":"x"}}}`,
			&Response{ID: Int64ID(3), Error: &Error{Code: -32601, Message: "Method not found", Data: json.RawMessage(`{"m":"x"}`)}}},
		{"error response null id", `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`,
			&Response{Error: &Error{Code: -32700, Message: "Parse error"}}},
		{"error response without message", `{"jsonrpc":"2.0","id":3,"error":{"code":5}}`,
			&Response{ID: Int64ID(3), Error: &Error{Code: 5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, id, err := DecodeMessage([]byte(tt.in))
			if err != nil {
				t.Fatalf("DecodeMessage: %v", err)
			}
			if !messagesEqual(got, tt.want) {
				t.Fatalf("DecodeMessage = %#v, want %#v", got, tt.want)
			}
			var wantID ID
			switch m := tt.want.(type) {
			case *Request:
				wantID = m.ID
			case *Response:
				wantID = m.ID
			}
			if id != wantID {
				t.Errorf("returned id %q, want %q", id.Raw(), wantID.Raw())
			}
		})
	}
}

func TestDecodeMessageInvalid(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		code   int64
		id     string // raw id expected back, "" for none
		substr string // expected in the error message
	}{
		{"empty", ``, CodeParseError, "", "Parse error"},
		{"garbage", `not json`, CodeParseError, "", "invalid character"},
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"x"`, CodeParseError, "", "unexpected end"},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"x"}}`, CodeParseError, "", ""},
		{"two messages", `{"jsonrpc":"2.0","method":"x"} {"jsonrpc":"2.0","method":"y"}`, CodeParseError, "", ""},
		{"control char in string", "{\"jsonrpc\":\"2.0\",\"method\":\"a\x01\"}", CodeParseError, "", ""},
		{"array", `[{"jsonrpc":"2.0","id":1,"method":"x"}]`, CodeInvalidRequest, "", "object"},
		{"empty array", `[]`, CodeInvalidRequest, "", ""},
		{"number", `42`, CodeInvalidRequest, "", ""},
		{"string", `"x"`, CodeInvalidRequest, "", ""},
		{"null", `null`, CodeInvalidRequest, "", ""},
		{"empty object", `{}`, CodeInvalidRequest, "", ""},
		{"missing jsonrpc", `{"id":1,"method":"x"}`, CodeInvalidRequest, "1", "2.0"},
		{"wrong version", `{"jsonrpc":"1.0","id":"a","method":"x"}`, CodeInvalidRequest, `"a"`, "2.0"},
		{"numeric version", `{"jsonrpc":2.0,"id":1,"method":"x"}`, CodeInvalidRequest, "1", "2.0"},
		{"upper-case members", `{"JSONRPC":"2.0","ID":1,"METHOD":"x"}`, CodeInvalidRequest, "", ""},
		{"method with result", `{"jsonrpc":"2.0","id":4,"method":"x","result":{}}`, CodeInvalidRequest, "4", "result or error"},
		{"method with error", `{"jsonrpc":"2.0","id":4,"method":"x","error":{"code":1,"message":"m"}}`, CodeInvalidRequest, "4", "result or error"},
		{"empty method", `{"jsonrpc":"2.0","id":5,"method":""}`, CodeInvalidRequest, "5", "empty"},
		{"method not a string", `{"jsonrpc":"2.0","id":5,"method":5}`, CodeInvalidRequest, "5", "string"},
		{"id null on request", `{"jsonrpc":"2.0","id":null,"method":"x"}`, CodeInvalidRequest, "", "id"},
		{"id object", `{"jsonrpc":"2.0","id":{"a":1},"method":"x"}`, CodeInvalidRequest, "", "id"},
		{"id bool", `{"jsonrpc":"2.0","id":true,"method":"x"}`, CodeInvalidRequest, "", "id"},
		{"id array", `{"jsonrpc":"2.0","id":[1],"method":"x"}`, CodeInvalidRequest, "", "id"},
		{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}`, CodeInvalidRequest, "2", "duplicate"},
		{"duplicate method", `{"jsonrpc":"2.0","id":1,"method":"x","method":"y"}`, CodeInvalidRequest, "1", "duplicate"},
		{"scalar params", `{"jsonrpc":"2.0","id":1,"method":"x","params":5}`, CodeInvalidRequest, "1", "params"},
		{"string params", `{"jsonrpc":"2.0","id":1,"method":"x","params":"p"}`, CodeInvalidRequest, "1", "params"},
		{"both result and error", `{"jsonrpc":"2.0","id":6,"result":{},"error":{"code":1,"message":"m"}}`, CodeInvalidRequest, "6", "both"},
		{"result without id", `{"jsonrpc":"2.0","result":{}}`, CodeInvalidRequest, "", "id"},
		{"result with null id", `{"jsonrpc":"2.0","id":null,"result":{}}`, CodeInvalidRequest, "", "id"},
		{"error not an object", `{"jsonrpc":"2.0","id":8,"error":"bad"}`, CodeInvalidRequest, "8", "error"},
		{"error code not integer", `{"jsonrpc":"2.0","id":8,"error":{"code":1.5,"message":"m"}}`, CodeInvalidRequest, "8", "code"},
		{"error without code", `{"jsonrpc":"2.0","id":8,"error":{"message":"m"}}`, CodeInvalidRequest, "8", "code"},
		{"error message not string", `{"jsonrpc":"2.0","id":8,"error":{"code":1,"message":2}}`, CodeInvalidRequest, "8", "message"},
		{"neither", `{"jsonrpc":"2.0","id":9}`, CodeInvalidRequest, "9", "neither"},
		{"only null error", `{"jsonrpc":"2.0","id":9,"error":null}`, CodeInvalidRequest, "9", "neither"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, id, err := DecodeMessage([]byte(tt.in))
			if err == nil {
				t.Fatalf("DecodeMessage = %#v, want error", m)
			}
			if m != nil {
				t.Errorf("DecodeMessage returned message %#v with error", m)
			}
			var rpcErr *Error
			if !errors.As(err, &rpcErr) {
				t.Fatalf("error %v (%T) is not an *Error", err, err)
			}
			if rpcErr.Code != tt.code {
				t.Errorf("code = %d, want %d (%v)", rpcErr.Code, tt.code, err)
			}
			if !strings.Contains(rpcErr.Message, tt.substr) {
				t.Errorf("message %q does not mention %q", rpcErr.Message, tt.substr)
			}
			if id.Raw() != tt.id {
				t.Errorf("recovered id %q, want %q", id.Raw(), tt.id)
			}
		})
	}
}

func TestDecodeMessageDoesNotRetainInput(t *testing.T) {
	in := []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}`)
	m, _, err := DecodeMessage(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i] = ' '
	}
	if got := string(m.(*Request).Params); got != `{"a":1}` {
		t.Errorf("params changed with the input: %s", got)
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	msgs := []Message{
		&Request{ID: Int64ID(1), Method: "initialize", Params: json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{}}`)},
		&Request{ID: StringID("req-\"1\""), Method: "tools/call", Params: json.RawMessage(`[1,"two",{"3":null}]`)},
		&Request{ID: mustID(t, `1.0`), Method: "m"},
		&Request{Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":1,"reason":"x"}`)},
		&Request{Method: "weird \"method\"\n\\/\u2028é\x00"},
		&Response{ID: Int64ID(2), Result: json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`)},
		&Response{ID: StringID(""), Result: json.RawMessage(`null`)},
		&Response{ID: Int64ID(3), Error: &Error{Code: CodeInvalidParams, Message: "bad \"x\"", Data: json.RawMessage(`{"field":"x"}`)}},
		&Response{Error: &Error{Code: CodeParseError, Message: "Parse error"}},
	}
	for _, m := range msgs {
		b, err := EncodeMessage(m)
		if err != nil {
			t.Errorf("EncodeMessage(%#v): %v", m, err)
			continue
		}
		if !json.Valid(b) || bytes.ContainsAny(b, "\r\n") {
			t.Errorf("EncodeMessage(%#v) = %q: not valid single-line JSON", m, b)
		}
		got, _, err := DecodeMessage(b)
		if err != nil {
			t.Errorf("DecodeMessage(%s): %v", b, err)
			continue
		}
		if !messagesEqual(got, m) {
			t.Errorf("round trip of %s: got %#v, want %#v", b, got, m)
		}
		// AppendMessage appends after what dst holds.
		b2, err := AppendMessage([]byte("prefix"), m)
		if err != nil || string(b2) != "prefix"+string(b) {
			t.Errorf("AppendMessage = %q, %v; want prefix+%q", b2, err, b)
		}
	}
}

func TestAppendMessageEscapesMethod(t *testing.T) {
	for _, method := range []string{`a"b`, `a\b`, "tab\there", "nl\nx", "\x00\x1f", "é", "\u2028", "<&>", "\x7f", "bad utf8 \xff.", "tools/call"} {
		b, err := EncodeMessage(&Request{ID: Int64ID(1), Method: method})
		if err != nil {
			t.Errorf("EncodeMessage(method %q): %v", method, err)
			continue
		}
		if !json.Valid(b) || bytes.ContainsAny(b, "\r\n") {
			t.Errorf("method %q encoded as invalid JSON: %q", method, b)
			continue
		}
		var w struct {
			Method string `json:"method"`
		}
		if err := json.Unmarshal(b, &w); err != nil {
			t.Fatal(err)
		}
		want := strings.ToValidUTF8(method, "\uFFFD") // one bad byte at a time
		if w.Method != want {
			t.Errorf("method %q decoded back as %q, want %q", method, w.Method, want)
		}
	}
	if b, _ := EncodeMessage(&Request{Method: "tools/call"}); string(b) != `{"jsonrpc":"2.0","method":"tools/call"}` {
		t.Errorf("plain method encoded as %s", b)
	}
}

func TestAppendMessageWireForm(t *testing.T) {
	tests := []struct {
		m    Message
		want string
	}{
		{&Request{ID: Int64ID(1), Method: "m", Params: json.RawMessage(`{"a":1}`)}, `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}`},
		{&Request{Method: "n"}, `{"jsonrpc":"2.0","method":"n"}`},
		{&Request{Method: "n", Params: json.RawMessage(``)}, `{"jsonrpc":"2.0","method":"n"}`},
		{&Request{Method: "n", Params: json.RawMessage(` null `)}, `{"jsonrpc":"2.0","method":"n"}`},
		{&Request{Method: "n", Params: json.RawMessage("{\n  \"a\": [1,\r\n 2]\n}")}, `{"jsonrpc":"2.0","method":"n","params":{"a":[1,2]}}`},
		{&Response{ID: Int64ID(1)}, `{"jsonrpc":"2.0","id":1,"result":null}`},
		{&Response{ID: StringID("x"), Result: json.RawMessage(`{}`)}, `{"jsonrpc":"2.0","id":"x","result":{}}`},
		{&Response{Error: &Error{Code: -32700, Message: "Parse error"}}, `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`},
		{&Response{ID: Int64ID(2), Error: &Error{Code: 1, Message: "m", Data: json.RawMessage(`[1]`)}, Result: json.RawMessage(`{}`)}, `{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m","data":[1]}}`},
	}
	for _, tt := range tests {
		b, err := EncodeMessage(tt.m)
		if err != nil || string(b) != tt.want {
			t.Errorf("EncodeMessage(%#v) = %s, %v; want %s", tt.m, b, err, tt.want)
		}
	}
}

func TestAppendMessageRejects(t *testing.T) {
	tests := []struct {
		name string
		m    Message
	}{
		{"nil request", (*Request)(nil)},
		{"nil response", (*Response)(nil)},
		{"nil message", nil},
		{"empty method", &Request{ID: Int64ID(1)}},
		{"invalid params", &Request{ID: Int64ID(1), Method: "m", Params: json.RawMessage(`{"a":`)}},
		{"invalid null-ish params", &Request{ID: Int64ID(1), Method: "m", Params: json.RawMessage(`nul`)}},
		{"scalar params", &Request{ID: Int64ID(1), Method: "m", Params: json.RawMessage(`5`)}},
		{"string params", &Request{ID: Int64ID(1), Method: "m", Params: json.RawMessage(`"s"`)}},
		{"invalid result", &Response{ID: Int64ID(1), Result: json.RawMessage(`not json`)}},
		{"invalid multi-line result", &Response{ID: Int64ID(1), Result: json.RawMessage("{\n")}},
		{"invalid error data", &Response{ID: Int64ID(1), Error: &Error{Code: 1, Message: "m", Data: json.RawMessage(`{`)}}},
	}
	for _, tt := range tests {
		dst := []byte("keep")
		out, err := AppendMessage(dst, tt.m)
		if err == nil {
			t.Errorf("%s: AppendMessage = %s, want error", tt.name, out)
		}
		if string(out) != "keep" {
			t.Errorf("%s: AppendMessage left %q in dst, want it unchanged", tt.name, out)
		}
		if _, err := EncodeMessage(tt.m); err == nil {
			t.Errorf("%s: EncodeMessage did not fail", tt.name)
		}
	}
}

// FuzzDecodeMessage checks that DecodeMessage never panics, that its
// failures are well-formed, and that whatever it accepts re-encodes to JSON
// that decodes to an equal message.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c"}}`,
		`{"jsonrpc":"2.0","id":"a","method":"m","params":[1,{"x":"}"}]}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":1e3,"result":{"a":[true,false,null]}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"\u00e9"}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":-1.5,\"result\":{\n\"a\": 1\r\n}}",
		`{"jsonrpc":"2\u002e0","\u0069d":"\ud83d\ude00","method":"\u0000"}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}`,
		`{"JSONRPC":"2.0","ID":1,"METHOD":"x"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"x"}]`,
		`{"jsonrpc":"2.0","id":{},"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"x"`,
		`42`, `null`, ``, `{`, `"\`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		m, id, err := DecodeMessage(data)
		if !bytes.Equal(in, data) {
			t.Fatal("DecodeMessage modified its input")
		}
		if err != nil {
			var rpcErr *Error
			if !errors.As(err, &rpcErr) || (rpcErr.Code != CodeParseError && rpcErr.Code != CodeInvalidRequest) {
				t.Fatalf("error %v is not a parse or invalid-request *Error", err)
			}
			if m != nil {
				t.Fatal("message returned with an error")
			}
			if (rpcErr.Code == CodeParseError) == json.Valid(data) {
				t.Fatalf("code %d for input with json.Valid = %v", rpcErr.Code, json.Valid(data))
			}
			// The error, with the recovered id, must be sendable.
			if _, err := EncodeMessage(&Response{ID: id, Error: rpcErr}); err != nil {
				t.Fatalf("cannot encode the error reply: %v", err)
			}
			return
		}
		enc, err := EncodeMessage(m)
		if err != nil {
			t.Fatalf("EncodeMessage(%#v): %v", m, err)
		}
		if !json.Valid(enc) || bytes.ContainsAny(enc, "\r\n") {
			t.Fatalf("EncodeMessage(%#v) = %q: not single-line JSON", m, enc)
		}
		m2, id2, err := DecodeMessage(enc)
		if err != nil {
			t.Fatalf("DecodeMessage(EncodeMessage(%#v)) = %s: %v", m, enc, err)
		}
		if id2 != id || !messagesEqual(m, m2) {
			t.Fatalf("round trip changed the message:\n in: %q\nenc: %q\n m1: %#v\n m2: %#v", data, enc, m, m2)
		}
		// The scanner agrees with encoding/json, whose map keys match
		// exactly (duplicates of known members were rejected above).
		var members map[string]json.RawMessage
		if err := json.Unmarshal(data, &members); err != nil {
			t.Fatalf("encoding/json cannot decode accepted input %q: %v", data, err)
		}
		same := func(name string, got []byte) {
			t.Helper()
			want, ok := members[name]
			if ok && string(want) == "null" && name == "params" {
				ok = false
			}
			if ok != (got != nil) || (ok && !bytes.Equal(want, got)) {
				t.Fatalf("%s: scanner read %q, encoding/json %q (present %v) from %q", name, got, want, ok, data)
			}
		}
		var wantID ID
		if raw, ok := members["id"]; ok {
			if err := wantID.UnmarshalJSON(raw); err != nil {
				t.Fatalf("accepted id %s: %v", raw, err)
			}
		}
		if wantID != id {
			t.Fatalf("id %q, encoding/json reads %q", id.Raw(), wantID.Raw())
		}
		switch m := m.(type) {
		case *Request:
			var method string
			if err := json.Unmarshal(members["method"], &method); err != nil || method != m.Method {
				t.Fatalf("method %q, encoding/json reads %q (%v)", m.Method, method, err)
			}
			same("params", m.Params)
		case *Response:
			if m.Error == nil {
				same("result", m.Result)
				break
			}
			var e map[string]json.RawMessage // exact keys
			if err := json.Unmarshal(members["error"], &e); err != nil {
				t.Fatalf("error member %s: %v", members["error"], err)
			}
			var code int64
			var message string
			if err := json.Unmarshal(e["code"], &code); err != nil {
				t.Fatalf("error code %s: %v", e["code"], err)
			}
			if raw, ok := e["message"]; ok {
				if err := json.Unmarshal(raw, &message); err != nil {
					t.Fatalf("error message %s: %v", raw, err)
				}
			}
			if code != m.Error.Code || message != m.Error.Message || !bytes.Equal(e["data"], m.Error.Data) {
				t.Fatalf("error %#v, encoding/json reads %q", m.Error, e)
			}
		}
	})
}

func TestNestingDepthLimit(t *testing.T) {
	nest := func(n int) string {
		return `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":` + strings.Repeat("[", n-2) + strings.Repeat("]", n-2) + `}}`
	}
	if _, _, err := DecodeMessage([]byte(nest(MaxNestingDepth))); err != nil {
		t.Fatalf("depth %d refused: %v", MaxNestingDepth, err)
	}
	_, id, err := DecodeMessage([]byte(nest(MaxNestingDepth + 1)))
	var rpcErr *Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != CodeInvalidRequest || !strings.Contains(rpcErr.Message, "128") {
		t.Fatalf("depth %d: %v, want -32600 naming the limit", MaxNestingDepth+1, err)
	}
	if id.IsValid() {
		t.Errorf("id recovered from a refused message: %v", id)
	}
	// Brackets inside strings do not count.
	if _, _, err := DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"s":"` + strings.Repeat("[", 500) + `\"\\"}}`)); err != nil {
		t.Fatalf("brackets in a string counted: %v", err)
	}
	// The scanner stops at the limit; the refusal still names the
	// message's depth, and a message that is not JSON past the limit is
	// a parse error, as it would be at any depth.
	_, _, err = DecodeMessage([]byte(nest(200)))
	if !errors.As(err, &rpcErr) || rpcErr.Code != CodeInvalidRequest || rpcErr.Message != "Invalid request: message nesting depth 200 exceeds the limit of 128" {
		t.Errorf("depth 200: %v, want -32600 naming the depth and the limit", err)
	}
	_, _, err = DecodeMessage([]byte(strings.TrimSuffix(nest(200), "}")))
	if !errors.As(err, &rpcErr) || rpcErr.Code != CodeParseError {
		t.Errorf("depth 200, truncated: %v, want -32700", err)
	}
	// Writing keeps json.Valid's rules: a deep value is the sender's to
	// send (a Parley peer refuses it on reading), an invalid one is not.
	deep := json.RawMessage(strings.Repeat("[", 200) + strings.Repeat("]", 200))
	if _, err := EncodeMessage(&Response{ID: Int64ID(1), Result: deep}); err != nil {
		t.Errorf("a result 200 deep not written: %v", err)
	}
	if _, err := EncodeMessage(&Response{ID: Int64ID(1), Result: deep[1:]}); err == nil {
		t.Error("an invalid deep result written")
	}
}
