package streamhttp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHeaderValueEncoding(t *testing.T) {
	for _, tt := range []struct{ in, wire string }{
		{"us-west1", "us-west1"},
		{"us west 1", "us west 1"},
		{"", ""},
		{"Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{" padded ", "=?base64?IHBhZGRlZCA=?="},
		{"line1\nline2", "=?base64?bGluZTEKbGluZTI=?="},
		{"=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
		{"=?base64?=", EncodeHeaderValue("=?base64?=")},
		{"\tindented", "=?base64?CWluZGVudGVk?="},
		{"a\x7fb", "=?base64?YX9i?="},
		{"=?base64?SGVsbG8=", "=?base64?SGVsbG8="}, // no suffix: plain
	} {
		if got := EncodeHeaderValue(tt.in); got != tt.wire {
			t.Errorf("EncodeHeaderValue(%q) = %q, want %q", tt.in, got, tt.wire)
		}
		back, err := DecodeHeaderValue(tt.wire)
		if err != nil || back != tt.in {
			t.Errorf("DecodeHeaderValue(%q) = %q, %v; want %q", tt.wire, back, err, tt.in)
		}
		// What goes on the wire is always a valid header value.
		for i := 0; i < len(tt.wire); i++ {
			if c := tt.wire[i]; c < 0x20 || c > 0x7e {
				t.Errorf("EncodeHeaderValue(%q) contains byte %#x", tt.in, c)
			}
		}
	}
	for _, tt := range []struct{ wire, want string }{
		{"  spaced\t", "spaced"},
		{"=?base64?=", "=?base64?="}, // too short to hold the markers: literal
	} {
		if got, err := DecodeHeaderValue(tt.wire); err != nil || got != tt.want {
			t.Errorf("DecodeHeaderValue(%q) = %q, %v; want %q", tt.wire, got, err, tt.want)
		}
	}
	for _, bad := range []string{
		"=?base64?SGVsbG8?=",     // no padding
		"=?base64?SGVs!!!bG8=?=", // not the alphabet
		"=?base64?/w==?=",        // not UTF-8
		"=?base64?SGVsbG9=?=",    // non-zero padding bits
		"caf\xc3\xa9",            // raw non-ASCII
		"a\x01b",
	} {
		if got, err := DecodeHeaderValue(bad); err == nil {
			t.Errorf("DecodeHeaderValue(%q) = %q, want an error", bad, got)
		}
	}
}

// TestHeaderWhitespaceTrimmed sends untrimmed header values straight to the
// handler (Go's HTTP client would trim them).
func TestHeaderWhitespaceTrimmed(t *testing.T) {
	h := NewHandler(newFixture().s, nil)
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(rawRequest(1, "tools/call", `"name":"echo","arguments":{"text":"x"}`)))
	req.Header = http.Header{
		"Content-Type":         {"application/json"},
		"Mcp-Protocol-Version": {" 2026-07-28 "},
		"Mcp-Method":           {"\ttools/call "},
		"Mcp-Name":             {"  echo  "},
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != 200 || bytes.Contains(w.Body.Bytes(), []byte(`"error"`)) {
		t.Fatalf("status %d: %s", w.Code, w.Body.Bytes())
	}
	// A header sent twice is malformed.
	req = httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(rawRequest(1, "tools/list", "")))
	req.Header = stdHeaders("tools/list", "")
	req.Header.Add(HeaderMethod, "tools/list")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != 400 {
		t.Fatalf("repeated Mcp-Method: status %d: %s", w.Code, w.Body.Bytes())
	}
}

func TestParseParamHeaders(t *testing.T) {
	valid := []struct {
		schema string
		want   string // path=name, ...
	}{
		{`{"type":"object"}`, ""},
		{`{"type":"object","properties":{"x-mcp-header":{"type":"string"}}}`, ""}, // a property named so
		{`{"type":"object","properties":{"a":{"type":"string","default":{"x-mcp-header":"D"}}}}`, ""},
		{`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`, "region=Region"},
		{`{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"},"b":{"type":["boolean","null"],"x-mcp-header":"B"}}}`, "b=B,n=N"},
		{`{"type":"object","properties":{"cfg":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}}}}`, "cfg.zone=Zone"},
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"!#$%&'*+-.^_|~09azAZ"}}}`, "a=!#$%&'*+-.^_|~09azAZ"},
		{`{"type":"object","properties":{"a":{"type":"string","\u0078-mcp-header":"A"}}}`, "a=A"},
	}
	for _, tt := range valid {
		got, err := parseParamHeaders(json.RawMessage(tt.schema))
		if err != nil {
			t.Errorf("%s: %v", tt.schema, err)
			continue
		}
		var parts []string
		for _, p := range got {
			parts = append(parts, strings.Join(p.path, ".")+"="+p.name)
		}
		sortStrings(parts)
		if s := strings.Join(parts, ","); s != tt.want {
			t.Errorf("%s: %s, want %s", tt.schema, s, tt.want)
		}
	}
	invalid := []string{
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":7}}}`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A B"}}}`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A:B"}}}`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A\r\nB"}}}`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Ä"}}}`,
		`{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`,
		`{"type":"object","properties":{"a":{"x-mcp-header":"A"}}}`,
		`{"type":"object","properties":{"a":{"type":["string","integer"],"x-mcp-header":"A"}}}`,
		`{"type":"object","x-mcp-header":"Root"}`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"a"}}}`,
		`{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"I"}}}}`,
		`{"type":"object","oneOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`,
		`{"type":"object","if":{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}}`,
		`{"type":"object","properties":{"a":{"not":{"type":"string","x-mcp-header":"A"}}}}`,
		`{"type":"object","$defs":{"a":{"type":"string","x-mcp-header":"A"}}}`,
		`{"type":"object","patternProperties":{"^a":{"type":"string","x-mcp-header":"A"}}}`,
		`{"type":"object","additionalProperties":{"type":"string","x-mcp-header":"A"}}`,
	}
	for _, s := range invalid {
		if got, err := parseParamHeaders(json.RawMessage(s)); err == nil {
			t.Errorf("%s: accepted, found %v", s, got)
		}
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestArgumentValues(t *testing.T) {
	args := json.RawMessage(`{"s":"x","i":42,"f":4.2e1,"big":1e3,"frac":2.5,"t":true,"n":null,"o":{"in":"y"},"a":[1]}`)
	for _, tt := range []struct {
		path []string
		kind string // "" for values no annotated property may hold
		text string
		ok   bool
	}{
		{[]string{"s"}, "string", "x", true},
		{[]string{"i"}, "integer", "42", true},
		{[]string{"f"}, "integer", "42", true},
		{[]string{"big"}, "integer", "1000", true},
		{[]string{"frac"}, "", "2.5", true},
		{[]string{"t"}, "boolean", "true", true},
		{[]string{"o", "in"}, "string", "y", true},
		{[]string{"a"}, "", "", false},
	} {
		v, variant := argumentAt(args, tt.path)
		text, ok := headerText(v)
		if ok != tt.ok || text != tt.text || variant != "" {
			t.Errorf("%v: %q %v (variant %q), want %q %v", tt.path, text, ok, variant, tt.text, tt.ok)
		}
		if tt.kind != "" && !matchesArgument(tt.kind, text, v) {
			t.Errorf("%v: %q does not match its own value %s", tt.path, text, v)
		}
	}
	for _, path := range [][]string{{"n"}, {"missing"}, {"s", "deeper"}, {"o", "missing"}} {
		if v, _ := argumentAt(args, path); v != nil {
			t.Errorf("%v: %s, want absent", path, v)
		}
	}
	for _, tt := range []struct {
		kind, header, value string
		match               bool
	}{
		{"integer", "42", "42", true}, {"integer", "42.0", "42", true}, {"integer", "4.2e1", "42", true}, {"integer", "-7", "-7", true},
		{"integer", "43", "42", false}, {"integer", "84/2", "42", false}, {"integer", "0x2a", "42", false}, {"integer", " 42", "42", false},
		{"boolean", "true", "true", true}, {"boolean", "TRUE", "true", false}, {"boolean", "1", "true", false},
		{"string", "x", `"x"`, true}, {"string", "X", `"x"`, false}, {"string", "42", `"42"`, true},
		{"string", "{}", `{}`, false}, {"integer", "42", `"42"`, false}, {"string", "42", `42`, false}, {"boolean", "true", `"true"`, false},
	} {
		if got := matchesArgument(tt.kind, tt.header, json.RawMessage(tt.value)); got != tt.match {
			t.Errorf("matchesArgument(%s, %q, %s) = %v", tt.kind, tt.header, tt.value, got)
		}
	}
}

func TestAcceptsEventStream(t *testing.T) {
	for _, tt := range []struct {
		accept []string
		want   bool
	}{
		{nil, true},
		{[]string{"application/json, text/event-stream"}, true},
		{[]string{"application/json", "text/event-stream"}, true},
		{[]string{"*/*"}, true},
		{[]string{"text/*;q=0.5"}, true},
		{[]string{"application/json"}, false},
		{[]string{"text/event-stream;q=0, application/json"}, false},
		{[]string{"text/event-stream;q=0.0"}, false},
	} {
		if got := acceptsEventStream(tt.accept); got != tt.want {
			t.Errorf("acceptsEventStream(%q) = %v", tt.accept, got)
		}
	}
}

func TestSSEReader(t *testing.T) {
	stream := ": comment\n\n" +
		"event: message\ndata: one\n\n" +
		"data: two\r\ndata: lines\r\n\r\n" +
		"event: other\ndata: skipped\n\n" +
		"id: 5\rretry: 1\rdata:three\r\r" +
		"data: cut short"
	r := newSSEReader(strings.NewReader(stream), 100)
	var got []string
	for {
		d, err := r.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(d))
	}
	if s := strings.Join(got, "|"); s != "one|two\nlines|three" {
		t.Errorf("events %q", s)
	}
	r = newSSEReader(strings.NewReader("data: "+strings.Repeat("x", 200)+"\n\n"), 100)
	if _, err := r.next(); err != errEventTooLarge {
		t.Errorf("oversized event: %v", err)
	}
	r = newSSEReader(strings.NewReader(strings.Repeat("data: 1234567890\n", 20)+"\n"), 100)
	if _, err := r.next(); err != errEventTooLarge {
		t.Errorf("oversized multi-line event: %v", err)
	}
}
