package mcp_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

func TestElicitRequestedSchemaDefaults(t *testing.T) {
	// The form of the conformance scenario elicitation-sep1034-client-defaults,
	// plus a field without a default and a multi-select.
	var s mcp.ElicitRequestedSchema
	err := json.Unmarshal([]byte(`{"type":"object","properties":{
		"name":{"type":"string","default":"John Doe"},
		"age":{"type":"integer","default":30},
		"score":{"type":"number","default":95.5},
		"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},
		"verified":{"type":"boolean","default":false},
		"tags":{"type":"array","items":{"type":"string","enum":["a","b"]},"default":["b"]},
		"email":{"type":"string"}}}`), &s)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "John Doe", "age": 30.0, "score": 95.5, "status": "active", "verified": false, "tags": []string{"b"}}
	if got := s.Defaults(); !reflect.DeepEqual(got, want) {
		t.Errorf("Defaults() = %#v\nwant %#v", got, want)
	}
}
