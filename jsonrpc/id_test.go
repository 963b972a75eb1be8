package jsonrpc

import (
	"encoding/json"
	"testing"
)

func TestIDEchoesExactText(t *testing.T) {
	for _, raw := range []string{`1`, `1.0`, `-5`, `1e3`, `0`, `"x"`, `""`, `"1"`, `"\u0078"`, `12345678901234567890123`} {
		var id ID
		if err := json.Unmarshal([]byte(raw), &id); err != nil {
			t.Errorf("Unmarshal(%s): %v", raw, err)
			continue
		}
		if !id.IsValid() {
			t.Errorf("Unmarshal(%s): not valid", raw)
		}
		if id.Raw() != raw {
			t.Errorf("Unmarshal(%s).Raw() = %s", raw, id.Raw())
		}
		b, err := json.Marshal(id)
		if err != nil || string(b) != raw {
			t.Errorf("Marshal(Unmarshal(%s)) = %s, %v", raw, b, err)
		}
		// A response built with this id echoes it byte for byte.
		msg, err := EncodeMessage(&Response{ID: id, Result: json.RawMessage(`1`)})
		if want := `{"jsonrpc":"2.0","id":` + raw + `,"result":1}`; err != nil || string(msg) != want {
			t.Errorf("response = %s, %v; want %s", msg, err, want)
		}
	}
}

func TestIDDistinct(t *testing.T) {
	// 1, 1.0 and "1" are three different ids.
	ids := map[ID]bool{}
	for _, raw := range []string{`1`, `1.0`, `"1"`} {
		var id ID
		if err := id.UnmarshalJSON([]byte(raw)); err != nil {
			t.Fatal(err)
		}
		ids[id] = true
	}
	if len(ids) != 3 {
		t.Errorf("got %d distinct ids, want 3", len(ids))
	}
	n1, n2, s1, s2 := Int64ID(7), Int64ID(7), StringID("a"), StringID("a")
	if n1.Raw() != "7" || s1.Raw() != `"a"` || n1 != n2 || s1 != s2 {
		t.Error("constructors do not build comparable ids")
	}
}

func TestIDRejected(t *testing.T) {
	for _, raw := range []string{`true`, `false`, `{}`, `{"a":1}`, `[]`, `[1]`, ``, `-`, `01`, `"unterminated`, `1 2`, `x`} {
		var id ID
		if err := id.UnmarshalJSON([]byte(raw)); err == nil {
			t.Errorf("UnmarshalJSON(%q) = %q, want error", raw, id.Raw())
		}
	}
}

func TestIDNullIsZero(t *testing.T) {
	id := Int64ID(3)
	if err := json.Unmarshal([]byte(`null`), &id); err != nil || id.IsValid() {
		t.Errorf("Unmarshal(null) = %q, %v; want the zero id", id.Raw(), err)
	}
	if b, _ := json.Marshal(ID{}); string(b) != "null" {
		t.Errorf("Marshal(zero ID) = %s, want null", b)
	}
	var zero ID
	if zero.IsValid() || zero.Value() != nil || zero.String() != "" {
		t.Errorf("zero ID: IsValid %v, Value %v, String %q", zero.IsValid(), zero.Value(), zero.String())
	}
}

func TestIDAccessors(t *testing.T) {
	tests := []struct {
		id       ID
		raw, str string
		isString bool
		value    any
	}{
		{StringID("a\"b"), `"a\"b"`, `a"b`, true, `a"b`},
		{StringID("é<"), `"é\u003c"`, `é<`, true, `é<`},
		{Int64ID(-42), `-42`, `-42`, false, json.Number("-42")},
		{Int64ID(0), `0`, `0`, false, json.Number("0")},
	}
	for _, tt := range tests {
		if tt.id.Raw() != tt.raw || tt.id.String() != tt.str || tt.id.IsString() != tt.isString || tt.id.Value() != tt.value || !tt.id.IsValid() {
			t.Errorf("id %s: Raw %s String %q IsString %v Value %#v", tt.raw, tt.id.Raw(), tt.id.String(), tt.id.IsString(), tt.id.Value())
		}
	}
}
