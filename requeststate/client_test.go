package requeststate_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// counterServer runs a three-round flow: it asks for a name, then a colour,
// and keeps the answers so far in plaintext state; the boundary seals it.
func counterServer(t *testing.T, p *requeststate.Policy) *server.Server {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "flows", Version: "1.0.0"}, &server.Options{Logger: discard()})
	if p == nil {
		p = requeststate.ProcessLocal()
	}
	p.Logger = discard()
	if err := requeststate.Protect(s, p); err != nil {
		t.Fatal(err)
	}
	ask := func(key, field string) mcp.InputRequests {
		return mcp.InputRequests{key: mcp.NewElicitFormRequest("Your "+field+"?", mcp.ElicitRequestedSchema{
			Properties: map[string]mcp.PrimitiveSchemaDefinition{field: &mcp.StringSchema{}},
			Required:   []string{field},
		})}
	}
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		var st struct{ Name, Colour string }
		if p.RequestState != "" {
			if err := json.Unmarshal([]byte(p.RequestState), &st); err != nil {
				return nil, wire.InvalidParams("the plaintext state should be JSON: %v", err)
			}
		}
		if r, err := p.InputResponses.Elicit("name"); err == nil && r.Accepted() {
			st.Name, _ = r.Content["name"].(string)
		}
		if r, err := p.InputResponses.Elicit("colour"); err == nil && r.Accepted() {
			st.Colour, _ = r.Content["colour"].(string)
		}
		next, _ := json.Marshal(st)
		switch {
		case st.Name == "":
			return &mcp.InputRequiredResult{InputRequests: ask("name", "name"), RequestState: string(next)}, nil
		case st.Colour == "":
			return &mcp.InputRequiredResult{InputRequests: ask("colour", "colour"), RequestState: string(next)}, nil
		}
		return mcp.TextResult(st.Name + " likes " + st.Colour), nil
	})
	return s
}

func connect(t *testing.T, s *server.Server, opts *client.Options) *client.Session {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	clientEnd, serverEnd := transport.NewMemoryPipe()
	done := make(chan struct{})
	go func() { s.ServeConn(ctx, serverEnd); close(done) }()
	sess, err := client.New(mcp.Implementation{Name: "tester", Version: "1"}, opts).Connect(ctx, transport.NewMemoryTransport(clientEnd))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close(); cancel(); <-done })
	return sess
}

var answers = &client.Options{Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
	form := p.(*mcp.ElicitRequestFormParams)
	if strings.Contains(form.Message, "name") {
		return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "Ada"}}, nil
	}
	return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"colour": "teal"}}, nil
}}

// TestClientLoopThroughTheBoundary: the client's automatic loop runs a
// three-round flow; the handler reads and writes plaintext throughout.
func TestClientLoopThroughTheBoundary(t *testing.T) {
	sess := connect(t, counterServer(t, nil), answers)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := sess.CallTool(ctx, "prefs", map[string]any{"v": 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "Ada likes teal" {
		t.Fatalf("result %q", got)
	}
}

// TestRetryOnAnotherInstance: with process-local keys, a retry that lands
// on another instance (or on this one after a restart) is refused with the
// fixed error, and mcp.IsInvalidRequestState tells the client to start over; with shared
// keys it goes through.
func TestRetryOnAnotherInstance(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	call, err := client.ToolCall("prefs", map[string]any{"v": 1})
	if err != nil {
		t.Fatal(err)
	}
	first := connect(t, counterServer(t, nil), answers)
	_, pending, err := first.Begin(ctx, call)
	if err != nil || pending == nil {
		t.Fatalf("Begin: %v %v", pending, err)
	}
	responses, err := first.Fulfil(ctx, pending)
	if err != nil {
		t.Fatal(err)
	}
	restarted := connect(t, counterServer(t, nil), answers)
	if _, _, err := restarted.Continue(ctx, pending, responses); !mcp.IsInvalidRequestState(err) {
		t.Fatalf("a restarted process-local instance: %v, want the fixed rejection", err)
	}

	keys := [][]byte{key(9)}
	a := connect(t, counterServer(t, &requeststate.Policy{Keys: keys}), answers)
	b := connect(t, counterServer(t, &requeststate.Policy{Keys: keys}), answers)
	_, pending, err = a.Begin(ctx, call)
	if err != nil {
		t.Fatal(err)
	}
	for sess, round := b, 1; pending != nil; round++ {
		responses, err := sess.Fulfil(ctx, pending)
		if err != nil {
			t.Fatal(err)
		}
		var res mcp.AnyResult
		if res, pending, err = sess.Continue(ctx, pending, responses); err != nil {
			t.Fatalf("round %d on a sister instance: %v", round, err)
		}
		if pending == nil && res.(*mcp.CallToolResult).Content[0].(*mcp.TextContent).Text != "Ada likes teal" {
			t.Fatalf("result %+v", res)
		}
		if sess == b {
			sess = a
		} else {
			sess = b
		}
	}
}
