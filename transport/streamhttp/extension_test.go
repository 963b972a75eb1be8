package streamhttp

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

type jobParams struct {
	mcp.RequestParams
	JobID string `json:"jobId"`
}

type jobResult struct {
	mcp.Result
	State string `json:"state"`
}

// TestExtensionMethodTargetHeader: an extension method that names a
// target is held to SEP-2243 as tools/call is: the client sends the target
// (non-ASCII encoded) in Mcp-Name, and the server refuses a request whose
// Mcp-Name is missing or names another target with 400 and -32020.
func TestExtensionMethodTargetHeader(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "jobs", Version: "1"}, nil)
	if err := server.HandleMethod(s, "jobs/get", &server.MethodOptions{Target: "jobId"},
		func(ctx context.Context, req *server.Request, p *jobParams) (*jobResult, error) {
			return &jobResult{State: "running " + p.JobID}, nil
		}); err != nil {
		t.Fatal(err)
	}
	url, rec := serve(t, NewHandler(s, nil))
	sess := connect(t, url, nil, nil)
	for _, id := range []string{"j-1", "jöb 2"} {
		res, err := client.CallMethod[jobResult](context.Background(), sess, "jobs/get", &jobParams{JobID: id}, &client.MethodOptions{Target: id})
		if err != nil {
			t.Fatal(err)
		}
		if res.State != "running "+id {
			t.Errorf("state %q", res.State)
		}
	}
	posts := rec.posts(t, "jobs/get")
	if len(posts) != 2 || posts[0].header.Get(HeaderName) != "j-1" || posts[1].header.Get(HeaderName) != EncodeHeaderValue("jöb 2") {
		t.Fatalf("Mcp-Name headers: %v", posts)
	}

	body := rawRequest(1, "jobs/get", `"jobId":"j-1"`)
	for name, h := range map[string]http.Header{
		"missing": stdHeaders("jobs/get", ""),
		"other":   stdHeaders("jobs/get", "j-2"),
	} {
		resp, b := post(t, url, h, body)
		_, e := rpcError(t, b)
		if resp.StatusCode != http.StatusBadRequest || e.Code != mcp.CodeHeaderMismatch {
			t.Errorf("%s Mcp-Name: %d %s", name, resp.StatusCode, b)
		}
	}
	resp, b := post(t, url, stdHeaders("jobs/get", "j-1"), body)
	var ok struct {
		Result json.RawMessage `json:"result"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &ok) != nil || ok.Result == nil {
		t.Errorf("matching Mcp-Name: %d %s", resp.StatusCode, b)
	}
}
