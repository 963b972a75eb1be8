package jsontext

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestMembers(t *testing.T) {
	in := ` {"a" : 1, "b\u0301":"x\"y", "c":{"d":[1,{"e":"}"}]}, "n":null ,"t":true,"neg":-1.5e3} `
	var keys, vals []string
	Members([]byte(in), func(k, v []byte) {
		keys = append(keys, string(k))
		vals = append(vals, string(v))
	})
	wantKeys := []string{"a", "b\u0301", "c", "n", "t", "neg"}
	wantVals := []string{`1`, `"x\"y"`, `{"d":[1,{"e":"}"}]}`, `null`, `true`, `-1.5e3`}
	if len(keys) != len(wantKeys) {
		t.Fatalf("keys %q, want %q", keys, wantKeys)
	}
	for i := range keys {
		if keys[i] != wantKeys[i] || vals[i] != wantVals[i] {
			t.Errorf("member %d: %q=%s, want %q=%s", i, keys[i], vals[i], wantKeys[i], wantVals[i])
		}
	}
	for _, notObject := range []string{``, `[]`, `"s"`, ` 1`} {
		Members([]byte(notObject), func(k, v []byte) { t.Errorf("%q: called with %q", notObject, k) })
	}
}

func TestUnquote(t *testing.T) {
	for in, want := range map[string]string{
		`"plain"`:        "plain",
		` "spaced" `:     "spaced",
		`"a\nb\u00e9"`:   "a\nb\u00e9",
		"\"bad\xffutf\"": "bad\ufffdutf",
		`""`:             "",
	} {
		got, ok := Unquote([]byte(in))
		if !ok || got != want {
			t.Errorf("Unquote(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{`5`, `null`, `"`, ``, `{"a":1}`, `"unterminated`} {
		if got, ok := Unquote([]byte(in)); ok {
			t.Errorf("Unquote(%q) = %q, want not ok", in, got)
		}
	}
}

func TestFirstByte(t *testing.T) {
	if FirstByte([]byte(" \t\r\n{")) != '{' || FirstByte([]byte("  ")) != 0 || FirstByte(nil) != 0 {
		t.Error("FirstByte")
	}
}

// FuzzMembers: on any input Members never panics, and on a valid object it
// yields exactly the members encoding/json sees, in order, with values that
// are valid JSON equal to encoding/json's.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":[1,2,{"c":"\"}"}]}`, `{"k\u00e9":null}`, `{"a":1,"a":2}`, `{"x":"\\"}`, `[1]`, `{"a`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		var got [][2][]byte
		Members(data, func(k, v []byte) { got = append(got, [2][]byte{k, v}) })
		Unquote(data)
		if !json.Valid(data) || FirstByte(data) != '{' {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.Token() // {
		i := 0
		for dec.More() {
			tok, _ := dec.Token()
			key := tok.(string)
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				t.Fatal(err)
			}
			if i >= len(got) {
				t.Fatalf("%q: Members stopped after %d members", s, len(got))
			}
			if string(got[i][0]) != key {
				t.Fatalf("%q: member %d key %q, want %q", s, i, got[i][0], key)
			}
			if !bytes.Equal(got[i][1], raw) {
				t.Fatalf("%q: member %d value %s, want %s", s, i, got[i][1], raw)
			}
			i++
		}
		if i != len(got) {
			t.Fatalf("%q: %d members, encoding/json sees %d", s, len(got), i)
		}
	})
}

// Reading a message's members allocates nothing unless a key has escapes:
// the JSON-RPC decoder runs this on every message.
func TestMembersAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race; make test checks the budget in a separate run without it")
	}
	msg := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2,3]}}}`)
	n := 0
	allocs := testing.AllocsPerRun(100, func() {
		Members(msg, func(k, v []byte) { n += len(k) + len(v) })
	})
	if allocs > 0 || n == 0 {
		t.Errorf("Members allocated %.1f times per message", allocs)
	}
}
