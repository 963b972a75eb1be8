package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// headerRequest builds a 2026-07-28 request to method with params (an
// object without _meta) from a client that declares elicitation.
func headerRequest(method, params string) *jsonrpc.Request {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + string(mcp.LatestVersion) +
		`","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	return &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: method, Params: json.RawMessage("{" + meta + "," + params[1:])}
}

// headerCarriers are the three methods that may answer input_required,
// with params naming "ask" (which asks) or "done" (which completes).
var headerCarriers = []struct {
	method string
	params func(target string) string
}{
	{mcp.MethodCallTool, func(n string) string { return `{"name":"` + n + `"}` }},
	{mcp.MethodGetPrompt, func(n string) string { return `{"name":"` + n + `"}` }},
	{mcp.MethodReadResource, func(n string) string { return `{"uri":"test://` + n + `"}` }},
}

// headerServer answers every carrier on target "ask" with ask(), and on
// any other target with a complete result.
func headerServer(ask func() *mcp.InputRequiredResult) *server.Server {
	s := server.New(mcp.Implementation{Name: "header", Version: "1"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if p.Name == "ask" {
			return ask(), nil
		}
		return mcp.TextResult("done"), nil
	})
	s.HandleGetPrompt(func(ctx context.Context, req *server.Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
		if p.Name == "ask" {
			return ask(), nil
		}
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent("done")}}}, nil
	})
	s.HandleReadResource(func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		if p.URI == "test://ask" {
			return ask(), nil
		}
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: p.URI, Text: "done"}}}, nil
	})
	return s
}

// TestHandleResultHeaderCarriesInputRequired: the value Server.Handle
// returns in process, not only its JSON, says input_required in its header
// for an input-required outcome of every carrier method, whatever the
// handler left in the header (nothing, or a wrong "complete"); a complete
// outcome says complete. The handler's own value is never written.
func TestHandleResultHeaderCarriesInputRequired(t *testing.T) {
	for _, handlerType := range []mcp.ResultType{"", mcp.ResultTypeComplete, "task"} {
		shared := elicitForm()
		shared.ResultType = handlerType
		s := headerServer(func() *mcp.InputRequiredResult { return shared })
		for _, c := range headerCarriers {
			t.Run(c.method+"/handler set "+string(handlerType), func(t *testing.T) {
				res, err := s.Handle(context.Background(), headerRequest(c.method, c.params("ask")), nil)
				if err != nil {
					t.Fatal(err)
				}
				ar, ok := res.(mcp.AnyResult)
				if !ok {
					t.Fatalf("Handle returned %T, not an mcp.AnyResult", res)
				}
				h := ar.ResultHeader()
				if h.ResultType != mcp.ResultTypeInputRequired {
					t.Errorf("in-process resultType %q, want %q", h.ResultType, mcp.ResultTypeInputRequired)
				}
				if info := h.ServerInfo(); info == nil || info.Name != "header" {
					t.Errorf("in-process serverInfo %+v", info)
				}
				ir, ok := res.(*mcp.InputRequiredResult)
				if !ok {
					t.Fatalf("Handle returned %T, want *mcp.InputRequiredResult", res)
				}
				if ir == shared {
					t.Error("Handle returned the handler's own value, not a stamped copy")
				}
				if ir.RequestState != "round-1" || len(ir.InputRequests) != 1 {
					t.Errorf("the stamped copy lost the outcome: %+v", ir)
				}
				b, err := json.Marshal(res)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(b), `"resultType":"input_required"`) {
					t.Errorf("wire form: %s", b)
				}
				if shared.ResultType != handlerType || shared.Meta != nil {
					t.Errorf("the handler's value was written: %+v", shared.Result)
				}
			})
		}
	}
	s := headerServer(elicitForm)
	for _, c := range headerCarriers {
		res, err := s.Handle(context.Background(), headerRequest(c.method, c.params("done")), nil)
		if err != nil {
			t.Fatal(err)
		}
		if rt := res.(mcp.AnyResult).ResultHeader().ResultType; rt != mcp.ResultTypeComplete {
			t.Errorf("%s, complete outcome: in-process resultType %q", c.method, rt)
		}
		if _, ok := res.(*mcp.InputRequiredResult); ok {
			t.Errorf("%s, complete outcome: an InputRequiredResult", c.method)
		}
	}
}

// TestHandleResultHeaderThroughMiddleware: an input-required result that a
// middleware replaces with its own copy (as the requestState boundary
// does when it seals) is stamped just the same.
func TestHandleResultHeaderThroughMiddleware(t *testing.T) {
	s := headerServer(elicitForm)
	s.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			res, err := next(ctx, req)
			if ir, ok := res.(*mcp.InputRequiredResult); ok {
				c := *ir
				c.RequestState = "sealed:" + ir.RequestState
				return &c, err
			}
			return res, err
		}
	})
	for _, c := range headerCarriers {
		res, err := s.Handle(context.Background(), headerRequest(c.method, c.params("ask")), nil)
		if err != nil {
			t.Fatal(err)
		}
		ir, ok := res.(*mcp.InputRequiredResult)
		if !ok || ir.ResultHeader().ResultType != mcp.ResultTypeInputRequired || ir.RequestState != "sealed:round-1" {
			t.Errorf("%s: %T %+v", c.method, res, res)
		}
	}
}
