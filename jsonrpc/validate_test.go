package jsonrpc

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/internal/jsontext"
)

// refDepth is the deepest nesting of objects and arrays in valid JSON,
// counting brackets outside strings: the reference for scanJSON's depth.
func refDepth(data []byte) int {
	depth, deepest := 0, 0
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
		}
	}
	return deepest
}

var scanCases = []string{
	// valid
	`{}`, `[]`, ` { } `, "\t[\r\n]\n", `0`, `-0`, `1.5`, `-1.5e10`, `1E+2`, `1e-2`, `0.0`,
	`"x"`, `""`, `"\u00e9\n\"\\\/\b\f\r\t"`, `"\uABCD"`, "\"\xff\xfe\"", `true`, `false`, `null`,
	`{"a":1,"b":[1,2,{"c":null}],"d":{"e":"f"}}`, `[[[[]]]]`, `[{},[],""]`, `{"a" : 1 , "b" : 2}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"name":"x"}}}`,
	// invalid
	``, ` `, `{`, `}`, `[`, `]`, `{]`, `[}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`,
	`{1:2}`, `{"a":1 "b":2}`, `[1 2]`, `01`, `-`, `-a`, `1.`, `.5`, `1e`, `1e+`, `+1`, `0x1`,
	`tru`, `truex`, `nul`, `nulll`, `falsy`, `"abc`, `"\x"`, `"\u12"`, `"\u12G4"`, "\"a\x01b\"",
	"\"a\nb\"", `"\`, `{} {}`, `1 2`, `[]]`, `{"a":1}}`, `[1,2`, `{"a":"b"`, `{"a" 1}`, "\x00",
	`NaN`, `Infinity`, `[01]`, `{"a":-}`,
}

func TestScanJSONAgreesWithEncodingJSON(t *testing.T) {
	cases := append([]string(nil), scanCases...)
	cases = append(cases, strings.Repeat("[", 200)+strings.Repeat("]", 200))
	cases = append(cases, strings.Repeat(`{"a":`, 150)+"1"+strings.Repeat("}", 150))
	cases = append(cases, strings.Repeat("[", 200)+strings.Repeat("]", 199))
	for _, c := range cases {
		depth, ok := scanJSON([]byte(c))
		if want := json.Valid([]byte(c)); ok != want {
			t.Errorf("scanJSON(%q) valid = %v, json.Valid says %v", c, ok, want)
			continue
		}
		if ok && depth != refDepth([]byte(c)) {
			t.Errorf("scanJSON(%q) depth = %d, want %d", c, depth, refDepth([]byte(c)))
		}
	}
}

// checkMembers fails t when scanMembers, on valid data, reports other
// members than jsontext.Members, the reader decodeMessage used before.
func checkMembers(t *testing.T, data []byte) {
	t.Helper()
	var got, want []string
	_, ok := scanMembers(data, func(k, v []byte) { got = append(got, fmt.Sprintf("%q=%q", k, v)) })
	if !ok {
		return
	}
	jsontext.Members(data, func(k, v []byte) { want = append(want, fmt.Sprintf("%q=%q", k, v)) })
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("scanMembers(%q) = %v, jsontext.Members says %v", data, got, want)
	}
}

func TestScanMembersAgreesWithJSONText(t *testing.T) {
	cases := append([]string(nil), scanCases...)
	cases = append(cases,
		`{"a":{"b":{"c":1},"d":[{"e":2}]},"f":"g"}`,
		`{ "\u0069d" : 1 , "m\u00e9thod":"x", "a\"b":[], "\ud800":null }`,
		"{\"k\xff\":1,\"k2\":{\"x\":[1,{\"y\":2}]},\"k3\" : true }",
		`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"hi"}]}}`,
		`[{"a":1}]`, `"x"`,
	)
	for _, c := range cases {
		checkMembers(t, []byte(c))
	}
}

func TestScanJSONAllocBudget(t *testing.T) {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"name":"x","list":[1,2,[3,{"a":[true,false,null]}]]}}}`)
	if n := testing.AllocsPerRun(100, func() { scanJSON(msg) }); n != 0 {
		t.Errorf("scanJSON allocates %v times per message, want 0", n)
	}
}

func FuzzScanJSON(f *testing.F) {
	for _, c := range scanCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		depth, ok := scanJSON(data)
		if want := json.Valid(data); ok != want {
			t.Fatalf("scanJSON(%q) valid = %v, json.Valid says %v", data, ok, want)
		}
		if ok && depth != refDepth(data) {
			t.Fatalf("scanJSON(%q) depth = %d, want %d", data, depth, refDepth(data))
		}
		checkMembers(t, data)
	})
}

func BenchmarkScanJSON(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Hello, world, and a somewhat longer text"}],"structuredContent":{"greeting":"Hello"}}}`)
	b.Run("scanJSON", func(b *testing.B) {
		for b.Loop() {
			scanJSON(msg)
		}
	})
	b.Run("json.Valid+depth", func(b *testing.B) {
		for b.Loop() {
			_ = json.Valid(msg) && refDepth(msg) > 0
		}
	})
}
