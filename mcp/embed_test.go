package mcp_test

import (
	"encoding/json"
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

// TestEmbeddableTypesEncodeTheEmbeddingStruct: an extension declares its
// params and results by embedding these types (for _meta, resultType and
// the interfaces they bring); a MarshalJSON on one of them would be
// promoted and encode the whole struct as the embedded part alone.
func TestEmbeddableTypesEncodeTheEmbeddingStruct(t *testing.T) {
	type params struct {
		mcp.RequestParams
		TaskID string `json:"taskId"`
	}
	type notification struct {
		mcp.NotificationParams
		TaskID string `json:"taskId"`
	}
	type result struct {
		mcp.Result
		Status string `json:"status"`
	}
	type cacheable struct {
		mcp.CacheableResult
		Status string `json:"status"`
	}
	type paginated struct {
		mcp.PaginatedResult
		Status string `json:"status"`
	}
	for _, v := range []any{
		params{TaskID: "t"}, notification{TaskID: "t"}, result{Status: "ok"}, cacheable{Status: "ok"}, paginated{Status: "ok"},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m["taskId"] == nil && m["status"] == nil {
			t.Errorf("%T encodes as %s: the embedded type's encoder took over", v, b)
		}
	}
}
