package client_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// recorder is a client middleware that writes one line per request it
// sees, in the order they start, and stamps a traceparent on every
// outgoing request's _meta.
type recorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.lines = append(r.lines, s)
	r.mu.Unlock()
}

func (r *recorder) middleware(next client.Handler) client.Handler {
	return func(ctx context.Context, req *client.Request) (any, error) {
		line := fmt.Sprintf("%s %s", req.Kind, req.Method)
		if req.Call != nil {
			line += fmt.Sprintf(" call=%s/%s round=%d", req.Call.Method, req.Call.Name, req.Round)
		}
		if req.Key != "" {
			line += " key=" + req.Key
		}
		r.add(line)
		if m := req.Meta(); m != nil {
			m.Traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		}
		res, err := next(ctx, req)
		if err != nil {
			r.add("error " + req.Method + ": " + err.Error())
		}
		return res, err
	}
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lines)
}

// TestMiddlewareSeesTheCallItsRoundsAndInputs: under 2026-07-28 a
// two-round tools/call reaches the middleware as the call, its first
// round, the input request that round asked (with its key), and the
// second round, each naming the call and its round; what the middleware
// adds to _meta reaches the server.
func TestMiddlewareSeesTheCallItsRoundsAndInputs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	rec := &recorder{}
	opts := twoRoundOptions()
	opts.Middleware = []client.Middleware{rec.middleware}
	srv := twoRoundServer()
	var (
		mu      sync.Mutex
		parents []string
	)
	srv.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			mu.Lock()
			parents = append(parents, req.Method+" "+req.Meta.Traceparent)
			mu.Unlock()
			return next(ctx, req)
		}
	})
	sess := connectInMemory(t, srv, opts)
	if _, err := sess.CallTool(ctx, "provision", benchArgs); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"request server/discover",
		"call tools/call call=tools/call/provision round=0",
		"request tools/call call=tools/call/provision round=1",
		"input elicitation/create call=tools/call/provision round=1 key=region",
		"request tools/call call=tools/call/provision round=2",
	}
	if got := rec.got(); !slices.Equal(got, want) {
		t.Errorf("the middleware saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(parents) != 3 {
		t.Fatalf("the server saw %d requests, want 3 (discover and two rounds): %q", len(parents), parents)
	}
	for _, p := range parents {
		if !strings.HasSuffix(p, " 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01") {
			t.Errorf("the server saw %q, without the middleware's traceparent", p)
		}
	}
}

// TestMiddlewareSeesLegacyServerRequests: on a legacy session the
// middleware sees initialize, the call, its one request, and the server's
// elicitation/create (which names no call: a legacy server's request does
// not say which call it serves).
func TestMiddlewareSeesLegacyServerRequests(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	rec := &recorder{}
	opts := pinned(client.Options{
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "eu"}}, nil
		},
		Middleware: []client.Middleware{rec.middleware},
	})
	sess := connectInMemory(t, askingServer(legacyOnly()), opts)
	res, err := sess.CallTool(ctx, "elicit", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("the tool failed: %v", res.Content)
	}
	want := []string{
		"request initialize",
		"call tools/call call=tools/call/elicit round=0",
		"request tools/call call=tools/call/elicit round=1",
		"input elicitation/create",
	}
	if got := rec.got(); !slices.Equal(got, want) {
		t.Errorf("the middleware saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestMiddlewareOrderAndShortCircuit: the first middleware is outermost,
// and one that answers without calling next replaces the request.
func TestMiddlewareOrderAndShortCircuit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	var order []string
	named := func(name string) client.Middleware {
		return func(next client.Handler) client.Handler {
			return func(ctx context.Context, req *client.Request) (any, error) {
				if req.Kind == client.KindInput {
					order = append(order, name)
				}
				return next(ctx, req)
			}
		}
	}
	decline := func(next client.Handler) client.Handler {
		return func(ctx context.Context, req *client.Request) (any, error) {
			if req.Kind == client.KindInput {
				return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
			}
			return next(ctx, req)
		}
	}
	opts := twoRoundOptions()
	opts.Middleware = []client.Middleware{named("outer"), named("inner"), decline}
	sess := connectInMemory(t, twoRoundServer(), opts)
	res, err := sess.CallTool(ctx, "provision", benchArgs)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "ok decline" {
		t.Errorf("result %q, want the middleware's decline", got)
	}
	if !slices.Equal(order, []string{"outer", "inner"}) {
		t.Errorf("order %v", order)
	}
}

// markKey marks the context of the one request a test middleware adds to.
type markKey struct{}

// TestMiddlewareMetaStaysWithItsRequest: what a middleware writes into one
// request's _meta (a typed member, a key of its own) reaches that request
// and no other: not the next request of the session, nor one of another
// method, though the session shares one _meta among its requests.
func TestMiddlewareMetaStaysWithItsRequest(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	mark := func(next client.Handler) client.Handler {
		return func(ctx context.Context, req *client.Request) (any, error) {
			if m := req.Meta(); m != nil && ctx.Value(markKey{}) != nil {
				m.Traceparent = tp
				if err := m.Extra.Set("com.example/mark", "one"); err != nil {
					return nil, err
				}
			}
			return next(ctx, req)
		}
	}
	srv := newServer(nil)
	var (
		mu   sync.Mutex
		seen []string
	)
	srv.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			if req.Method != mcp.MethodDiscover {
				_, marked := req.Meta.Extra["com.example/mark"]
				mu.Lock()
				seen = append(seen, fmt.Sprintf("%s traceparent=%v mark=%v", req.Method, req.Meta.Traceparent == tp, marked))
				mu.Unlock()
			}
			return next(ctx, req)
		}
	})
	srv.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		return &mcp.ListToolsResult{}, nil
	})
	srv.HandleListPrompts(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListPromptsResult, error) {
		return &mcp.ListPromptsResult{}, nil
	})
	sess := connectInMemory(t, srv, &client.Options{Middleware: []client.Middleware{mark}, Cache: &client.CacheOptions{Disable: true}})
	marked := context.WithValue(ctx, markKey{}, true)
	for _, call := range []func() error{
		func() error { _, err := sess.ListTools(marked, ""); return err },
		func() error { _, err := sess.ListTools(ctx, ""); return err },
		func() error { _, err := sess.ListPrompts(ctx, ""); return err },
		func() error { _, err := sess.ListPrompts(marked, ""); return err },
		func() error { _, err := sess.ListTools(ctx, ""); return err },
	} {
		if err := call(); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"tools/list traceparent=true mark=true",
		"tools/list traceparent=false mark=false",
		"prompts/list traceparent=false mark=false",
		"prompts/list traceparent=true mark=true",
		"tools/list traceparent=false mark=false",
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seen, want) {
		t.Errorf("the server saw\n%s\nwant\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}
