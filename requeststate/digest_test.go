package requeststate

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parley-mcp/parley/internal/jsontext"
	"github.com/parley-mcp/parley/mcp"
)

func argsDigest(t testing.TB, raw string) [digestLen]byte {
	t.Helper()
	d, err := requestDigest(mcp.MethodCallTool, &mcp.CallToolRequestParams{Name: "t", Arguments: json.RawMessage(raw)})
	if err != nil {
		t.Fatalf("digest of %s: %v", raw, err)
	}
	return d
}

func TestDigestEquivalences(t *testing.T) {
	same := [][]string{
		{``, `null`, `{}`, ` { } `},
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`, "{\n\t\"b\" : 2 ,\"a\":1}"},
		{`{"n":1}`, `{"n":1.0}`, `{"n":1e0}`, `{"n":10e-1}`, `{"n":1E+0}`, `{"n":0.1e1}`, `{"n":100e-2}`},
		{`{"n":0}`, `{"n":-0}`, `{"n":0.000}`, `{"n":0e5}`},
		{`{"n":120}`, `{"n":1.2e2}`, `{"n":12e1}`},
		{`{"s":"a"}`, `{"s":"\u0061"}`, `{"\u0073":"a"}`},
		{`{"s":"\/"}`, `{"s":"/"}`},
		{`{"s":"😀"}`, `{"s":"\ud83d\ude00"}`},
		// Member names outside the Basic Multilingual Plane, escaped or not.
		{`{"😀":1,"😁":2}`, `{"\ud83d\ude00":1,"\ud83d\ude01":2}`, `{"\ud83d\ude01":2,"😀":1}`},
		{`{"s":"\ufffd"}`, "{\"s\":\"\ufffd\"}", `{"s":"\uFFFD"}`}, // U+FFFD escaped or literal: one value
		{`{"x":{"b":[1,{"d":4,"c":3}],"a":null}}`, `{"x":{"a":null,"b":[1.0,{"c":3,"d":4}]}}`},
	}
	for _, group := range same {
		want := argsDigest(t, group[0])
		for _, raw := range group[1:] {
			if argsDigest(t, raw) != want {
				t.Errorf("%s and %s digest differently", group[0], raw)
			}
		}
	}
	different := []string{
		`{}`, `[]`, `{"a":1}`, `{"a":2}`, `{"a":-1}`, `{"a":"1"}`, `{"a":true}`, `{"a":false}`, `{"a":null}`,
		`{"a":[1]}`, `{"a":[1,1]}`, `{"a":[[1]]}`, `{"a":{"b":1}}`, `{"b":1}`, `{"a":1,"b":1}`,
		`{"a":12345678901234567890}`, `{"a":12345678901234567891}`,
		`{"a":0.1}`, `{"a":0.01}`, `{"a":1e400}`, `{"a":2e400}`, `{"a":"\ufffd"}`,
		`{"a":"\ufffd\ufffd\ufffd"}`, `{"amount":1}`, `{"Amount":1}`, `{"AMOUNT":1}`,
		`{"a":"x\u0000"}`, `{"a":"x"}`, `{"a\u0000":"x"}`, `{"ab":""}`, `{"a":"b"}`, `"ab"`, `["a","b"]`, `["ab"]`,
		`{"a":1e9999999999999999}`, `{"a":10e9999999999999998}`,
	}
	seen := map[[digestLen]byte]string{}
	for _, raw := range different {
		d := argsDigest(t, raw)
		if prev, dup := seen[d]; dup {
			t.Errorf("%s and %s digest alike", prev, raw)
		}
		seen[d] = raw
	}
}

// TestDigestRefusesAmbiguousArguments: arguments that decoders read
// differently have no digest, so no token can be earned with them or
// presented for them (issue 12).
func TestDigestRefusesAmbiguousArguments(t *testing.T) {
	for _, raw := range []string{
		`{"amount":1,"Amount":1000}`, `{"Amount":1000,"amount":1}`, // encoding/json: last wins, case folded
		`{"a":1,"a":2}`, `{"a":2,"a":1}`, `{"a":1,"\u0061":1}`, // duplicates, even of one value
		`{"x":[{"k":1,"K":2}]}`, `{"s":1,"\u017f":2}`, // nested; U+017F folds to s
		`{"\ud801\udc00":1,"\ud801\udc28":2}`, `{"\ud801\udc00":1,"𐐨":2}`, // Deseret capital and small (U+10400, U+10428), escaped or not
		`{"a":"\ud800"}`, `{"a":"\udfff"}`, `{"a":"\ud800\u0041"}`, // lone surrogates, escaped
		"{\"a\":\"\xed\xa0\x80\"}",         // the same surrogate, raw: invalid UTF-8
		"{\"a\":\"\xff\"}", "{\"\xff\":1}", // invalid UTF-8 in a value, in a name
		// Exactly 1, as {"n":1} is, but strconv (encoding/json's float64)
		// reads it as about 1e-200.
		`{"n":1` + strings.Repeat("0", 1000) + `e-1000}`,
	} {
		_, err := requestDigest(mcp.MethodCallTool, &mcp.CallToolRequestParams{Name: "t", Arguments: json.RawMessage(raw)})
		if !errors.Is(err, errAmbiguous) {
			t.Errorf("%q: err = %v, want errAmbiguous", raw, err)
		}
	}
}

func TestDigestBindsMethodAndTarget(t *testing.T) {
	tool := func(name string) [digestLen]byte {
		d, _ := requestDigest(mcp.MethodCallTool, &mcp.CallToolRequestParams{Name: name})
		return d
	}
	prompt, _ := requestDigest(mcp.MethodGetPrompt, &mcp.GetPromptRequestParams{Name: "a"})
	resA, _ := requestDigest(mcp.MethodReadResource, &mcp.ReadResourceRequestParams{URI: "a"})
	if tool("a") == tool("b") || tool("a") == prompt || prompt == resA || tool("a") == resA {
		t.Fatal("method or target not bound")
	}
	// The target is bound for every method, not only for tools.
	promptB, _ := requestDigest(mcp.MethodGetPrompt, &mcp.GetPromptRequestParams{Name: "b"})
	resB, _ := requestDigest(mcp.MethodReadResource, &mcp.ReadResourceRequestParams{URI: "b"})
	if prompt == promptB {
		t.Error("a prompt's name not bound")
	}
	if resA == resB {
		t.Error("a resource's URI not bound")
	}
	// A prompt's argument map digests like the JSON object of its strings.
	p1, _ := requestDigest(mcp.MethodGetPrompt, &mcp.GetPromptRequestParams{Name: "a", Arguments: map[string]string{"x": "1", "y": "2"}})
	p2, _ := requestDigest(mcp.MethodGetPrompt, &mcp.GetPromptRequestParams{Name: "a", Arguments: map[string]string{"y": "2", "x": "1"}})
	p3, _ := requestDigest(mcp.MethodGetPrompt, &mcp.GetPromptRequestParams{Name: "a", Arguments: map[string]string{"x": "1", "y": "3"}})
	empty, _ := requestDigest(mcp.MethodGetPrompt, &mcp.GetPromptRequestParams{Name: "a", Arguments: map[string]string{}})
	if p1 != p2 || p1 == p3 || empty != prompt {
		t.Fatal("prompt arguments digest wrongly")
	}
}

func TestDigestRejectsInvalidJSON(t *testing.T) {
	for _, raw := range []string{`{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`,
		`{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\x01\"}", `{"a":tru}`, `{} {}`, `{"a":1}x`, `nul`, `-`, `"abc`,
		string(bytes.Repeat([]byte("["), jsontext.MaxDepth+1)) + string(bytes.Repeat([]byte("]"), jsontext.MaxDepth+1))} {
		if _, err := requestDigest(mcp.MethodCallTool, &mcp.CallToolRequestParams{Name: "t", Arguments: json.RawMessage(raw)}); err == nil {
			t.Errorf("%q digested", raw)
		}
	}
}

// FuzzDigest checks the canonicaliser against encoding/json: a value
// decoded and re-encoded by the standard library digests as the original
// did (where the standard library keeps its meaning: valid UTF-8, no
// surrogate escapes, no duplicate keys), and nothing panics.
func FuzzDigest(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[true,null,"x"]}`, `{"n":1.50e3}`, `[{"z":{}},-0.0]`, `"\u00e9"`, `{"a":{"a":{"a":1}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c := getCanon(domainRequest)
		err := c.jsonArguments(raw)
		putCanon(c)
		if !json.Valid(raw) || !utf8.Valid(raw) || bytes.Contains(raw, []byte(`\u`)) || bytes.Contains(raw, []byte(`\U`)) {
			return
		}
		if jsontext.CheckUnambiguous(raw) != nil {
			if err == nil {
				t.Fatalf("ambiguous %q digested", raw)
			}
			return
		}
		if err != nil {
			if bytes.Count(raw, []byte("["))+bytes.Count(raw, []byte("{")) > jsontext.MaxDepth {
				return
			}
			t.Fatalf("valid JSON %q refused: %v", raw, err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		again, err := json.Marshal(v)
		if err != nil {
			return
		}
		if hasDuplicateKeys(raw) {
			return
		}
		if argsDigest(t, string(raw)) != argsDigest(t, string(again)) {
			t.Fatalf("%s and its re-encoding %s digest differently", raw, again)
		}
	})
}

// hasDuplicateKeys reports whether any object in raw has a key twice.
func hasDuplicateKeys(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var stack []map[string]bool
	expectKey := []bool{}
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, map[string]bool{})
				expectKey = append(expectKey, true)
				continue
			case '[':
				stack = append(stack, nil)
				expectKey = append(expectKey, false)
				continue
			default:
				stack = stack[:len(stack)-1]
				expectKey = expectKey[:len(expectKey)-1]
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1] != nil && expectKey[n-1] {
				if stack[n-1][v] {
					return true
				}
				stack[n-1][v] = true
				expectKey[n-1] = false
				continue
			}
		}
		if n := len(stack); n > 0 && stack[n-1] != nil {
			expectKey[n-1] = true
		}
	}
}

// TestDigestNestingLimit: arguments nest as deep as a message may carry
// them (jsontext.MaxDepth levels) and no deeper; deeper ones are refused as
// undigestable JSON, by the scanner's limit, whatever the nesting is made
// of.
func TestDigestNestingLimit(t *testing.T) {
	for _, open := range []string{"[", `{"a":`} {
		closer := map[string]string{"[": "]", `{"a":`: "}"}[open]
		nest := func(n int) string {
			inner := "1"
			if open == "[" {
				inner = ""
			}
			return strings.Repeat(open, n) + inner + strings.Repeat(closer, n)
		}
		if _, err := requestDigest(mcp.MethodCallTool, &mcp.CallToolRequestParams{Name: "t", Arguments: json.RawMessage(nest(jsontext.MaxDepth))}); err != nil {
			t.Errorf("%s x %d: %v", open, jsontext.MaxDepth, err)
		}
		_, err := requestDigest(mcp.MethodCallTool, &mcp.CallToolRequestParams{Name: "t", Arguments: json.RawMessage(nest(jsontext.MaxDepth + 1))})
		if !errors.Is(err, errBadJSON) {
			t.Errorf("%s x %d: err = %v, want errBadJSON", open, jsontext.MaxDepth+1, err)
		}
		// Inside an object member, where the value is checked before it
		// is written.
		_, err = requestDigest(mcp.MethodCallTool, &mcp.CallToolRequestParams{Name: "t", Arguments: json.RawMessage(`{"x":` + nest(jsontext.MaxDepth) + `}`)})
		if !errors.Is(err, errBadJSON) {
			t.Errorf(`{"x":%s x %d}: err = %v, want errBadJSON`, open, jsontext.MaxDepth, err)
		}
	}
}
