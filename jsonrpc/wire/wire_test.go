package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

func TestErrorIsMatchesByCode(t *testing.T) {
	err := fmt.Errorf("call: %w", NewError(CodeInvalidParams, "Invalid params: x", map[string]int{"n": 1}))
	if !errors.Is(err, &Error{Code: CodeInvalidParams}) {
		t.Error("an invalid-params error does not match its code")
	}
	if errors.Is(err, &Error{Code: CodeInternalError}) || errors.Is(err, &Error{Code: CodeInvalidParams, Message: "other"}) {
		t.Error("matched another code or message")
	}
	var e *Error
	if !errors.As(err, &e) || string(e.Data) != `{"n":1}` {
		t.Fatalf("data %s", e.Data)
	}
	var d struct{ N int }
	if err := e.DecodeData(&d); err != nil || d.N != 1 {
		t.Errorf("DecodeData: %+v %v", d, err)
	}
	if err := (&Error{Code: 1}).DecodeData(&d); err == nil {
		t.Error("DecodeData without data succeeded")
	}
	if got := (*Error)(nil).Error(); got != "jsonrpc error: <nil>" {
		t.Errorf("nil error: %q", got)
	}
}

func TestIDConstructorsAndDecoding(t *testing.T) {
	x1, x2 := StringID("x"), StringID("x")
	if StringID("a\"b").Raw() != `"a\"b"` || Int64ID(-7).Raw() != "-7" || x1 != x2 {
		t.Error("constructors")
	}
	for _, bad := range []string{`true`, `{}`, `[]`, `"\x"`, `01`, ``} {
		var id ID
		if err := id.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("%q accepted as an id", bad)
		}
	}
	var id ID
	if err := json.Unmarshal([]byte(`null`), &id); err != nil || id.IsValid() {
		t.Errorf("null: %v %v", id, err)
	}
	if b, _ := json.Marshal(ID{}); string(b) != "null" {
		t.Errorf("zero id encodes as %s", b)
	}
}
