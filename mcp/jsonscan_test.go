package mcp

import (
	"strconv"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/internal/jsontext"
)

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

// TestNestingLimit: the one-pass decoders take values nested as deep as a
// JSON-RPC message may carry them (jsontext.MaxDepth levels, the params
// object counting as one), and refuse deeper ones naming the limit.
func TestNestingLimit(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	var p CallToolRequestParams
	if err := p.UnmarshalJSON([]byte(`{"name":"t","arguments":{"a":` + nest(jsontext.MaxDepth-2) + `}}`)); err != nil {
		t.Errorf("depth %d: %v", jsontext.MaxDepth, err)
	}
	err := p.UnmarshalJSON([]byte(`{"name":"t","arguments":{"a":` + nest(jsontext.MaxDepth-1) + `}}`))
	if !jsontext.IsDepthError(err) || !strings.Contains(err.Error(), strconv.Itoa(jsontext.MaxDepth)) {
		t.Errorf("depth %d: %v, want the nesting limit named", jsontext.MaxDepth+1, err)
	}
}
