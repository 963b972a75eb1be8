package mcp

import (
	"encoding/json"
	"maps"
	"testing"
)

// A prompt argument sent as null is not given: it decodes as absent, so
// that a required argument sent as null is refused as a missing one is.
func TestGetPromptNullArgumentsAreAbsent(t *testing.T) {
	for _, c := range []struct {
		text string
		want map[string]string
	}{
		{`{"name":"p","arguments":{"topic":null,"style":"terse"}}`, map[string]string{"style": "terse"}},
		{`{"name":"p","arguments":{"topic":null}}`, map[string]string{}},
		{`{"name":"p","arguments":{"topic":""}}`, map[string]string{"topic": ""}},
		{`{"name":"p","arguments":{"to\u0070ic":null,"x":"null"}}`, map[string]string{"x": "null"}},
		// encoding/json merges every member it matches to arguments into
		// one map, the later value winning: so does the null rule.
		{`{"name":"p","arguments":{"topic":null},"Arguments":{"topic":"go"}}`, map[string]string{"topic": "go"}},
		{`{"name":"p","arguments":{"topic":"go"},"ARGUMENTS":{"topic":null}}`, map[string]string{}},
		{`{"name":"p","arguments":{"topic":null,"topic":"go"}}`, map[string]string{"topic": "go"}},
		{`{"name":"p","arguments":{"topic":"go","topic":null}}`, map[string]string{}},
		{`{"name":"null","arguments":{"topic":"go"}}`, map[string]string{"topic": "go"}},
	} {
		var p GetPromptRequestParams
		if err := json.Unmarshal([]byte(c.text), &p); err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		if !maps.Equal(p.Arguments, c.want) {
			t.Errorf("%s: arguments = %q, want %q", c.text, p.Arguments, c.want)
		}
	}
	// The requestState presence rule still holds beside it.
	var p GetPromptRequestParams
	if err := json.Unmarshal([]byte(`{"name":"p","arguments":{"a":null},"requestState":""}`), &p); err != nil {
		t.Fatal(err)
	}
	if _, present := p.LookupRequestState(); !present || len(p.Arguments) != 0 {
		t.Errorf("params = %+v, want an empty state present and no arguments", p)
	}
}
