package client_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// lister serves one page of a list: the names on it and the next cursor.
type lister func(cursor string) (names []string, next string, err error)

// paginate pages over n items named prefix1..prefixN, size a page.
func paginate(prefix string, n, size int) lister {
	var all []string
	for i := 1; i <= n; i++ {
		all = append(all, fmt.Sprintf("%s%d", prefix, i))
	}
	return func(cursor string) ([]string, string, error) {
		return server.Paginate(all, cursor, size)
	}
}

// pagingServer serves all four lists from l and counts the list requests.
type pagingServer struct {
	*server.Server
	mu      sync.Mutex
	cursors map[string][]string // method -> the cursor of each request
}

func newPagingServer(l lister) *pagingServer {
	ps := &pagingServer{Server: newServer(nil), cursors: map[string][]string{}}
	record := func(method, cursor string) ([]string, string, error) {
		ps.mu.Lock()
		ps.cursors[method] = append(ps.cursors[method], cursor)
		ps.mu.Unlock()
		return l(cursor)
	}
	ps.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		names, next, err := record(req.Method, p.Cursor)
		if err != nil {
			return nil, err
		}
		r := &mcp.ListToolsResult{NextCursor: next}
		for _, n := range names {
			r.Tools = append(r.Tools, tool(n))
		}
		return r, nil
	})
	ps.HandleListPrompts(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListPromptsResult, error) {
		names, next, err := record(req.Method, p.Cursor)
		if err != nil {
			return nil, err
		}
		r := &mcp.ListPromptsResult{NextCursor: next}
		for _, n := range names {
			r.Prompts = append(r.Prompts, mcp.Prompt{Name: n})
		}
		return r, nil
	})
	ps.HandleListResources(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListResourcesResult, error) {
		names, next, err := record(req.Method, p.Cursor)
		if err != nil {
			return nil, err
		}
		r := &mcp.ListResourcesResult{NextCursor: next}
		for _, n := range names {
			r.Resources = append(r.Resources, mcp.Resource{URI: "file:///" + n, Name: n})
		}
		return r, nil
	})
	ps.HandleListResourceTemplates(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListResourceTemplatesResult, error) {
		names, next, err := record(req.Method, p.Cursor)
		if err != nil {
			return nil, err
		}
		r := &mcp.ListResourceTemplatesResult{NextCursor: next}
		for _, n := range names {
			r.ResourceTemplates = append(r.ResourceTemplates, mcp.ResourceTemplate{URITemplate: "file:///" + n + "/{x}", Name: n})
		}
		return r, nil
	})
	return ps
}

// requests returns the cursors of the requests for method so far.
func (ps *pagingServer) requests(method string) []string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return slices.Clone(ps.cursors[method])
}

// names turns an iterator over list items into one over their names.
func names[T any](seq iter.Seq2[*T, error], name func(*T) string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for v, err := range seq {
			n := ""
			if v != nil {
				n = name(v)
			}
			if !yield(n, err) {
				return
			}
		}
	}
}

// listKinds are the four list iterators of a session.
var listKinds = []struct {
	method  string
	iterate func(ctx context.Context, s *client.Session) iter.Seq2[string, error]
}{
	{mcp.MethodListTools, func(ctx context.Context, s *client.Session) iter.Seq2[string, error] {
		return names(s.Tools(ctx), func(v *mcp.Tool) string { return v.Name })
	}},
	{mcp.MethodListPrompts, func(ctx context.Context, s *client.Session) iter.Seq2[string, error] {
		return names(s.Prompts(ctx), func(v *mcp.Prompt) string { return v.Name })
	}},
	{mcp.MethodListResources, func(ctx context.Context, s *client.Session) iter.Seq2[string, error] {
		return names(s.Resources(ctx), func(v *mcp.Resource) string { return v.Name })
	}},
	{mcp.MethodListResourceTemplates, func(ctx context.Context, s *client.Session) iter.Seq2[string, error] {
		return names(s.ResourceTemplates(ctx), func(v *mcp.ResourceTemplate) string { return v.Name })
	}},
}

// collect ranges over seq until it ends or stop says so, and returns what it
// yielded.
func collect(seq iter.Seq2[string, error], stop func(n int) bool) (got []string, errs []error) {
	for name, err := range seq {
		if err != nil {
			errs = append(errs, err)
		} else {
			got = append(got, name)
		}
		if stop != nil && stop(len(got)+len(errs)) {
			break
		}
	}
	return got, errs
}

func TestIteratorsYieldEveryPage(t *testing.T) {
	for _, k := range listKinds {
		t.Run(k.method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ps := newPagingServer(paginate("x", 5, 2))
				sess, _ := connect(t, newClient(nil), ps.Server)
				got, errs := collect(k.iterate(testwait.Context(t), sess), nil)
				if len(errs) > 0 {
					t.Fatal(errs)
				}
				if want := []string{"x1", "x2", "x3", "x4", "x5"}; !slices.Equal(got, want) {
					t.Errorf("got %v, want %v", got, want)
				}
				cursors := ps.requests(k.method)
				if len(cursors) != 3 || cursors[0] != "" || cursors[1] == "" || cursors[2] == "" || cursors[1] == cursors[2] {
					t.Errorf("requests with cursors %q, want three: the first page, then the two cursors", cursors)
				}
			})
		})
	}
}

func TestIteratorsAgainstFixture(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The fixture pages with server.Paginate over 5 tools, 2 a page.
		sess, w := connect(t, newClient(nil), fixture(nil))
		var got []string
		for tool, err := range sess.Tools(testwait.Context(t)) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, tool.Name)
		}
		if want := []string{"t1", "t2", "t3", "t4", "t5"}; !slices.Equal(got, want) {
			t.Errorf("tools %v, want %v", got, want)
		}
		if n := len(w.Requests(mcp.MethodListTools)); n != 3 {
			t.Errorf("%d tools/list requests, want 3", n)
		}
	})
}

func TestIteratorsStopWhenTheLoopBreaks(t *testing.T) {
	for _, k := range listKinds {
		t.Run(k.method, func(t *testing.T) {
			for _, tc := range []struct {
				after    int // items taken before breaking
				requests int // pages fetched by then
			}{
				{1, 1},
				{2, 1}, // the last item of a page: the next page is not fetched
				{3, 2},
				{5, 3},
			} {
				synctest.Test(t, func(t *testing.T) {
					ps := newPagingServer(paginate("x", 5, 2))
					sess, _ := connect(t, newClient(nil), ps.Server)
					got, errs := collect(k.iterate(testwait.Context(t), sess), func(n int) bool { return n == tc.after })
					if len(errs) > 0 || len(got) != tc.after {
						t.Fatalf("breaking after %d: got %v, %v", tc.after, got, errs)
					}
					synctest.Wait() // nothing is fetched behind the caller's back
					if n := len(ps.requests(k.method)); n != tc.requests {
						t.Errorf("breaking after %d items: %d requests, want %d", tc.after, n, tc.requests)
					}
				})
			}
		})
	}
}

func TestIteratorsYieldPageErrors(t *testing.T) {
	for _, k := range listKinds {
		t.Run(k.method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pages := paginate("x", 5, 2)
				ps := newPagingServer(func(cursor string) ([]string, string, error) {
					if cursor != "" {
						return nil, "", wire.InvalidParams("page two is on fire")
					}
					return pages(cursor)
				})
				sess, _ := connect(t, newClient(nil), ps.Server)
				got, errs := collect(k.iterate(testwait.Context(t), sess), nil)
				if want := []string{"x1", "x2"}; !slices.Equal(got, want) {
					t.Errorf("got %v before the error, want %v", got, want)
				}
				if len(errs) != 1 {
					t.Fatalf("errors %v, want exactly one", errs)
				}
				var rpcErr *jsonrpc.Error
				if !errors.As(errs[0], &rpcErr) || rpcErr.Message != "page two is on fire" {
					t.Errorf("error %v, want the server's", errs[0])
				}
				if n := len(ps.requests(k.method)); n != 2 {
					t.Errorf("%d requests, want 2", n)
				}
			})
		})
	}
}

func TestIteratorsRefuseCursorCycles(t *testing.T) {
	for _, tc := range []struct {
		name     string
		l        lister
		items    int
		requests int
	}{
		{"same cursor forever", func(cursor string) ([]string, string, error) {
			return []string{"x"}, "again", nil
		}, 2, 2},
		{"a cycle of two", func(cursor string) ([]string, string, error) {
			next := map[string]string{"": "A", "A": "B", "B": "A"}[cursor]
			return []string{"x" + cursor}, next, nil
		}, 3, 3},
	} {
		for _, k := range listKinds {
			t.Run(tc.name+"/"+k.method, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					ps := newPagingServer(tc.l)
					sess, _ := connect(t, newClient(nil), ps.Server)
					got, errs := collect(k.iterate(testwait.Context(t), sess), func(n int) bool { return n > 100 })
					if len(got) != tc.items || len(errs) != 1 {
						t.Fatalf("got %v and errors %v, want %d items and one error", got, errs, tc.items)
					}
					wantInvalid(t, errs[0], k.method)
					if n := len(ps.requests(k.method)); n != tc.requests {
						t.Errorf("%d requests, want %d", n, tc.requests)
					}
				})
			})
		}
	}
}

func TestIteratorContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ps := newPagingServer(paginate("x", 5, 2))
		sess, _ := connect(t, newClient(nil), ps.Server)
		ctx, cancel := context.WithCancel(testwait.Context(t))
		defer cancel()
		var got []string
		var errs []error
		for tool, err := range sess.Tools(ctx) {
			if err != nil {
				errs = append(errs, err)
				continue
			}
			got = append(got, tool.Name)
			cancel() // the rest of the page is already here; the next is not fetched
		}
		if !slices.Equal(got, []string{"x1", "x2"}) || len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
			t.Errorf("got %v, %v; want the first page and context.Canceled", got, errs)
		}
		if n := len(ps.requests(mcp.MethodListTools)); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
}

// TestListPageByHand uses the one-page calls with the cursor they return.
func TestListPageByHand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testwait.Context(t)
		sess, _ := connect(t, newClient(nil), fixture(nil))
		var got []string
		cursor := ""
		for {
			page, err := sess.ListTools(ctx, cursor)
			if err != nil {
				t.Fatal(err)
			}
			for _, tl := range page.Tools {
				got = append(got, tl.Name)
			}
			if page.NextCursor == "" {
				break
			}
			cursor = page.NextCursor
		}
		if want := []string{"t1", "t2", "t3", "t4", "t5"}; !slices.Equal(got, want) {
			t.Errorf("tools %v, want %v", got, want)
		}
		// A cursor the server did not make is its error to report.
		_, err := sess.ListTools(ctx, "bogus")
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("bogus cursor: %v", err)
		}
	})
}
