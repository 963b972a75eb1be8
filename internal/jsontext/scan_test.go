package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
)

// collect walks data with ObjectIter and returns the keys, values and
// error.
func collect(data string) (keys, vals []string, err error) {
	it := NewObjectIter([]byte(data))
	for it.Next() {
		keys = append(keys, string(it.Key))
		vals = append(vals, string(it.Val))
	}
	return keys, vals, it.Err
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
		_, _, err := collect(bad)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: err = %v, want a *SyntaxError", bad, err)
		} else if json.Valid([]byte(bad)) && strings.HasPrefix(strings.TrimSpace(bad), "{") {
			t.Errorf("%q rejected but valid", bad)
		}
	}
}

func TestArrayIter(t *testing.T) {
	for in, want := range map[string]string{
		`[]`: ``, ` [ 1 , "a" , {"b":[2]} ] `: `1|"a"|{"b":[2]}`, `[null]`: `null`,
	} {
		var vals []string
		it := NewArrayIter([]byte(in))
		for it.Next() {
			vals = append(vals, string(it.Val))
		}
		if it.Err != nil || strings.Join(vals, "|") != want {
			t.Errorf("%s: %q, %v", in, vals, it.Err)
		}
	}
	for _, bad := range []string{`{}`, `[`, `[1,]`, `[1 2]`, `[1]x`, `null`, ``} {
		it := NewArrayIter([]byte(bad))
		for it.Next() {
		}
		if it.Err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// nested returns n arrays nested in one another ("null" for n = 0).
func nested(n int) string {
	if n == 0 {
		return "null"
	}
	return strings.Repeat("[", n) + strings.Repeat("]", n)
}

// TestNestingLimit checks that every mode draws the line at MaxDepth
// levels, the outermost value counting as one.
func TestNestingLimit(t *testing.T) {
	for _, n := range []int{1, MaxDepth - 1, MaxDepth} {
		in := []byte(nested(n))
		if err := Valid(in); err != nil {
			t.Errorf("depth %d: Valid: %v", n, err)
		}
		if _, _, err := collect(`{"a":` + nested(n-1) + `}`); err != nil {
			t.Errorf("depth %d: ObjectIter: %v", n, err)
		}
		if err := CheckUnambiguous(in); err != nil {
			t.Errorf("depth %d: CheckUnambiguous: %v", n, err)
		}
		if Depth(in) != n {
			t.Errorf("Depth = %d, want %d", Depth(in), n)
		}
	}
	in := []byte(nested(MaxDepth + 1))
	if err := Valid(in); !IsDepthError(err) || !strings.Contains(err.Error(), "128") {
		t.Errorf("depth %d: Valid: %v, want the nesting limit named", MaxDepth+1, err)
	}
	if _, _, err := collect(`{"a":` + nested(MaxDepth) + `}`); !IsDepthError(err) {
		t.Errorf("depth %d: ObjectIter: %v", MaxDepth+1, err)
	}
	it := NewArrayIter(in)
	for it.Next() {
	}
	if !IsDepthError(it.Err) {
		t.Errorf("depth %d: ArrayIter: %v", MaxDepth+1, it.Err)
	}
	if err := CheckUnambiguous(in); err == nil {
		t.Errorf("depth %d: CheckUnambiguous accepted it", MaxDepth+1)
	}
	if IsDepthError(Valid([]byte(`[1,]`))) {
		t.Error("a syntax error taken for a depth error")
	}
}

func TestScanNumber(t *testing.T) {
	n, err := ScanNumber([]byte(`x-12.50e-7,`), 1)
	if err != nil || !n.Neg || !n.ExpNeg || n.End != 10 {
		t.Fatalf("%+v %v", n, err)
	}
	d := []byte(`x-12.50e-7,`)
	if string(d[n.IntStart:n.IntEnd]) != "12" || string(d[n.FracStart:n.FracEnd]) != "50" || string(d[n.ExpStart:n.ExpEnd]) != "7" {
		t.Errorf("parts %+v", n)
	}
	for _, bad := range []string{`-`, `01`, `1.`, `1e`, `1e+`, `.5`, `+1`, `-a`} {
		n, err := ScanNumber([]byte(bad), 0)
		if err == nil && n.End == len(bad) {
			t.Errorf("%q accepted whole", bad)
		}
	}
}

func TestValidInvalidInputNoPanic(t *testing.T) {
	for _, in := range []string{`{`, `{"a`, `{"a":`, `{"a":1,`, `["\u12`, `"\ud800\u`, `[1 2`, `}`, ``, `"\`, `{"\u00`, `-`, `1e`, `tru`, `"`} {
		if Valid([]byte(in)) == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// FuzzObjectIter checks that the iterator accepts exactly the JSON objects
// encoding/json accepts, and hands back values that are valid JSON.
func FuzzObjectIter(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":[1,{"b":null}],"c":"\u00e9"}`, `{"a":1,}`, `{"a":"\"}`, `[1]`, `{"a":-0.0E-0}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		keys, vals, err := collect(s)
		trimmed := strings.TrimLeft(s, " \t\r\n")
		valid := json.Valid([]byte(s)) && strings.HasPrefix(trimmed, "{") && Depth([]byte(s)) <= MaxDepth
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

// validityCases are texts at the edges of the grammar, valid and not, the
// seeds of FuzzAgainstEncodingJSON and the table of
// TestValidAgreesWithEncodingJSON.
var validityCases = []string{
	// valid
	`{}`, `[]`, ` { } `, "\t[\r\n]\n", `0`, `-0`, `1.5`, `-1.5e10`, `1E+2`, `1e-2`, `0.0`, `-0.5e+3`,
	`"x"`, `""`, `"\u00e9\n\"\\\/\b\f\r\t"`, `"\uABCD"`, "\"\xff\xfe\"", `true`, `false`, `null`,
	`{"a":1,"b":[1,2,{"c":null}],"d":{"e":"f"}}`, `[[[[]]]]`, `[{},[],""]`, `{"a" : 1 , "b" : 2}`,
	` {"a" : [1, {"b": null}], "c": "\u00e9"} `, `{"a":1,"a":2}`, `{"\u0061":1}`, `"\ud800"`, `"\ud83d\ude00"`,
	`{ "\u0069d" : 1 , "m\u00e9thod":"x", "a\"b":[], "\ud800":null }`, "{\"k\xff\":1,\"k2\":{\"x\":[1,{\"y\":2}]},\"k3\" : true }",
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"name":"x"}}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"hi"}]}}`,
	nested(MaxDepth), nested(MaxDepth + 1), strings.Repeat(`{"a":`, 150) + "1" + strings.Repeat("}", 150),
	// invalid
	``, ` `, `{`, `}`, `[`, `]`, `{]`, `[}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`,
	`{1:2}`, `{"a":1 "b":2}`, `[1 2]`, `01`, `-`, `-a`, `1.`, `.5`, `1e`, `1e+`, `+1`, `0x1`,
	`tru`, `truex`, `nul`, `nulll`, `falsy`, `"abc`, `"\x"`, `"\u12"`, `"\u12G4"`, "\"a\x01b\"",
	"\"a\nb\"", `"\`, `{} {}`, `1 2`, `[]]`, `{"a":1}}`, `[1,2`, `{"a":"b"`, `{"a" 1}`, "\x00",
	`NaN`, `Infinity`, `[01]`, `{"a":-}`, `{"a":1}x`, `{"a":"\"}`, nested(MaxDepth + 1)[1:],
	strings.Repeat("[", 200) + strings.Repeat("]", 199),
}

// TestValidAgreesWithEncodingJSON checks the validating mode on the edges
// of the grammar; FuzzAgainstEncodingJSON goes on from there.
func TestValidAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range validityCases {
		checkAgainstEncodingJSON(t, []byte(c))
	}
}

// FuzzAgainstEncodingJSON checks both modes against encoding/json, which
// the scanner stands in for: the validating mode (Valid, and ScanMembers,
// which the JSON-RPC layer reads every message with) accepts exactly what
// json.Valid accepts, but for texts nested deeper than MaxDepth, which it
// refuses naming the limit; Depth counts what encoding/json's tokens nest;
// and on valid text, the members, elements and strings each mode reads are
// the ones encoding/json decodes (an object's members, later duplicates
// winning; an array's elements; a string's value), ScanMembers giving the
// same members in the same order as Members and ObjectIter.
func FuzzAgainstEncodingJSON(f *testing.F) {
	for _, s := range validityCases {
		f.Add([]byte(s))
	}
	f.Fuzz(checkAgainstEncodingJSON)
}

func checkAgainstEncodingJSON(t *testing.T, data []byte) {
	err := Valid(data)
	valid := json.Valid(data)
	var scanned []string
	scanErr := ScanMembers(data, func(k, v []byte) { scanned = append(scanned, fmt.Sprintf("%q=%q", k, v)) })
	if (scanErr == nil) != (err == nil) || IsDepthError(scanErr) != IsDepthError(err) || offset(scanErr) != offset(err) {
		t.Fatalf("%q: ScanMembers = %v, Valid = %v", data, scanErr, err)
	}
	switch {
	case valid && Depth(data) > MaxDepth:
		if !IsDepthError(err) {
			t.Fatalf("%q: nested %d deep, Valid = %v, want the nesting limit", data, Depth(data), err)
		}
		return
	case valid != (err == nil):
		t.Fatalf("%q: Valid = %v, json.Valid = %v", data, err, valid)
	case !valid:
		_ = CheckUnambiguous(data) // must not panic on any input
		Members(data, func(_, _ []byte) {})
		return
	}
	if got, want := Depth(data), tokenDepth(t, data); got != want {
		t.Fatalf("%q: Depth = %d, encoding/json's tokens nest %d deep", data, got, want)
	}
	// The members in order: ScanMembers must give what the other readers
	// give, duplicates included.
	var trusted, iterated []string
	Members(data, func(k, v []byte) { trusted = append(trusted, fmt.Sprintf("%q=%q", k, v)) })
	if FirstByte(data) == '{' {
		it := NewObjectIter(data)
		for it.Next() {
			iterated = append(iterated, fmt.Sprintf("%q=%q", it.Key, it.Val))
		}
	}
	if !reflect.DeepEqual(scanned, trusted) || !reflect.DeepEqual(scanned, iterated) {
		t.Fatalf("%q: ScanMembers reads %q, Members %q, ObjectIter %q", data, scanned, trusted, iterated)
	}
	_ = CheckUnambiguous(data)
	switch FirstByte(data) {
	case '{':
		var want map[string]json.RawMessage
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		for name, got := range map[string]map[string]json.RawMessage{"ObjectIter": iterMembers(t, data), "Members": trustedMembers(data)} {
			if !reflect.DeepEqual(compactAll(got), compactAll(want)) {
				t.Fatalf("%q: %s reads %q, encoding/json %q", data, name, got, want)
			}
		}
	case '[':
		var want []json.RawMessage
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		var got []json.RawMessage
		it := NewArrayIter(data)
		for it.Next() {
			got = append(got, json.RawMessage(it.Val))
		}
		if it.Err != nil || len(got) != len(want) {
			t.Fatalf("%q: ArrayIter %q (%v), encoding/json %q", data, got, it.Err, want)
		}
		for i := range got {
			if !bytes.Equal(compact(got[i]), compact(want[i])) {
				t.Fatalf("%q: element %d: %q, encoding/json %q", data, i, got[i], want[i])
			}
		}
	case '"':
		var want string
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		if got, ok := Unquote(data); !ok || got != want {
			t.Fatalf("%q: Unquote = %q, %v; encoding/json %q", data, got, ok, want)
		}
	}
}

// offset is the offset of a *SyntaxError, -1 for any other error.
func offset(err error) int {
	var se *SyntaxError
	if errors.As(err, &se) {
		return se.Offset
	}
	return -1
}

// tokenDepth is how deep encoding/json's tokens of the valid text data
// nest: the reference for Depth.
func tokenDepth(t *testing.T, data []byte) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // 1e700 is valid JSON, and no float64
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return deepest
		}
		if err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			deepest = max(deepest, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}

func TestScanMembersAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"name":"x","list":[1,2,[3,{"a":[true,false,null]}]]}}}`)
	n := 0
	if allocs := testing.AllocsPerRun(100, func() { _ = ScanMembers(msg, func(_, _ []byte) { n++ }) }); allocs != 0 {
		t.Errorf("ScanMembers allocates %v times per message, want 0", allocs)
	}
	if n != 4*101 { // AllocsPerRun runs f once more, to warm up
		t.Errorf("%d members seen in 101 runs of 4", n)
	}
}

func iterMembers(t *testing.T, data []byte) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	it := NewObjectIter(data)
	for it.Next() {
		m[string(it.Key)] = json.RawMessage(it.Val)
	}
	if it.Err != nil {
		t.Fatalf("%q: %v", data, it.Err)
	}
	return m
}

func trustedMembers(data []byte) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	Members(data, func(k, v []byte) { m[string(k)] = json.RawMessage(v) })
	return m
}

func compact(raw []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

func compactAll(m map[string]json.RawMessage) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(compact(v))
	}
	return out
}

// TestNeedsAttention checks the eight-byte test of ScanString against
// plainStringByte for every byte at every position, and every pair of
// neighbouring bytes (where a borrow from one could hide or fake the
// other).
func TestNeedsAttention(t *testing.T) {
	word := func(b []byte) uint64 {
		var w uint64
		for k := 7; k >= 0; k-- {
			w = w<<8 | uint64(b[k])
		}
		return w
	}
	for p := range 8 {
		for c := range 256 {
			b := []byte("aaaaaaaa")
			b[p] = byte(c)
			if got := needsAttention(word(b)); got != !plainStringByte[c] {
				t.Fatalf("%q: needsAttention = %v", b, got)
			}
		}
	}
	for p := range 7 {
		for c := range 256 * 256 {
			b := []byte("\xff\xff\xff\xff\xff\xff\xff\xff")
			b[p], b[p+1] = byte(c), byte(c>>8)
			want := !plainStringByte[b[p]] || !plainStringByte[b[p+1]]
			if got := needsAttention(word(b)); got != want {
				t.Fatalf("%q: needsAttention = %v, want %v", b, got, want)
			}
		}
	}
}
