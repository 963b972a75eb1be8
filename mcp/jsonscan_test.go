package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

// collect walks data with objectIter and returns the keys, values and
// error.
func collect(data string) (keys, vals []string, err error) {
	it := newObjectIter([]byte(data))
	for it.next() {
		keys = append(keys, string(it.key))
		vals = append(vals, string(it.val))
	}
	return keys, vals, it.err
}

func TestObjectIter(t *testing.T) {
	keys, vals, err := collect(` { "a" : 1 , "b\u0022c":{"x":[true,false,null,-0.5e+3,"s\\\""]} ,"":"" } `)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(keys, "|") != `a|b"c|` || vals[0] != "1" || vals[1] != `{"x":[true,false,null,-0.5e+3,"s\\\""]}` || vals[2] != `""` {
		t.Errorf("keys %q vals %q", keys, vals)
	}
	if keys, _, err := collect(`{}`); err != nil || len(keys) != 0 {
		t.Errorf("empty object: %v %v", keys, err)
	}
	for _, bad := range []string{
		``, `null`, `[]`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `{a:1}`, `{"a":01}`, `{"a":1.}`,
		`{"a":-}`, `{"a":1e}`, `{"a":tru}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\x01\"}", `{"a":"open}`,
		`{"a":[1,]}`, `{"a":[1 2]}`, `{"a":{"b"}}`, `{"a":1}}`, `{"a":1} {}`, `{"a":+1}`, `{"a":.5}`,
	} {
		if _, _, err := collect(bad); err == nil {
			t.Errorf("%q accepted", bad)
		} else if json.Valid([]byte(bad)) && strings.HasPrefix(strings.TrimSpace(bad), "{") {
			t.Errorf("%q rejected but valid", bad)
		}
	}
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	if _, _, err := collect(`{"a":` + deep + `}`); err == nil {
		t.Error("over-deep nesting accepted")
	}
}

// FuzzObjectIter checks that the scanner accepts exactly the JSON objects
// encoding/json accepts, and hands back values that are valid JSON.
func FuzzObjectIter(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":[1,{"b":null}],"c":"\u00e9"}`, `{"a":1,}`, `{"a":"\"}`, `[1]`, `{"a":-0.0E-0}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		keys, vals, err := collect(s)
		trimmed := strings.TrimLeft(s, " \t\r\n")
		valid := json.Valid([]byte(s)) && strings.HasPrefix(trimmed, "{")
		if valid != (err == nil) {
			t.Fatalf("%q: scanner error %v, json.Valid %v", s, err, valid)
		}
		if err != nil {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		for i, k := range keys {
			if !json.Valid([]byte(vals[i])) {
				t.Fatalf("%q: value %q of %q is not JSON", s, vals[i], k)
			}
			if _, ok := m[k]; !ok {
				t.Fatalf("%q: key %q unknown to encoding/json", s, k)
			}
		}
	})
}

func TestDecodeString(t *testing.T) {
	for in, want := range map[string]string{`"plain"`: "plain", `"é"`: "é", `"a\nb"`: "a\nb", `"\ud83d\ude00"`: "😀", `null`: ""} {
		got, err := decodeString([]byte(in))
		if err != nil || got != want {
			t.Errorf("decodeString(%s) = %q, %v", in, got, err)
		}
	}
	if got, err := decodeString([]byte("\"\xff\"")); err != nil || got != "\ufffd" {
		t.Errorf("invalid UTF-8 is replaced as encoding/json does: %q %v", got, err)
	}
	for _, bad := range []string{`1`, `true`, `{}`, `"`} {
		if _, err := decodeString([]byte(bad)); err == nil {
			t.Errorf("decodeString(%s) succeeded", bad)
		}
	}
}

func TestPrependMember(t *testing.T) {
	for in, want := range map[string]string{`{}`: `{"type":"x"}`, `{"a":1}`: `{"type":"x","a":1}`} {
		got, err := prependMember(`"type":"x"`, []byte(in), nil)
		if err != nil || string(got) != want {
			t.Errorf("prependMember(%s) = %s, %v", in, got, err)
		}
	}
	if _, err := prependMember(`"type":"x"`, []byte(`[]`), nil); err == nil {
		t.Error("prependMember of an array succeeded")
	}
}
