package requeststate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
)

// annotatingServer is a server named svc whose tool "t" asks once and
// whose middleware reads the annotations the echoed state carries (into
// *seen) and seals the ones set returns.
func annotatingServer(t *testing.T, keys [][]byte, seen *[]string, set func(req *server.Request) []server.StateAnnotation) *server.Server {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "svc", Version: "1"}, nil)
	requeststate.MustProtect(s, &requeststate.Policy{Keys: keys, Logger: discard()})
	s.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			for _, k := range []string{"a", "b", "round"} {
				if v, ok := req.StateAnnotation(k); ok {
					*seen = append(*seen, k+"="+v)
				}
			}
			for _, a := range set(req) {
				if err := req.AnnotateState(a.Key, a.Value); err != nil {
					t.Error(err)
				}
			}
			return next(ctx, req)
		}
	})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"confirm": confirmQ}, RequestState: "plain"}, nil
	})
	return s
}

// TestStateAnnotationsTravelSealed: what a middleware annotates on one
// round, on one instance, the next round reads back on another instance
// that shares the key ring, and the round after that too when it is
// annotated again; a state sealed without annotations carries none.
func TestStateAnnotationsTravelSealed(t *testing.T) {
	keys := [][]byte{key(1)}
	var seenA, seenB []string
	a := annotatingServer(t, keys, &seenA, func(req *server.Request) []server.StateAnnotation {
		return []server.StateAnnotation{{Key: "round", Value: "1"}, {Key: "b", Value: "x"}, {Key: "a", Value: "first"}} // unsorted on purpose
	})
	b := annotatingServer(t, keys, &seenB, func(req *server.Request) []server.StateAnnotation {
		v, _ := req.StateAnnotation("a")
		return []server.StateAnnotation{{Key: "a", Value: v}, {Key: "round", Value: "2"}}
	})
	ctx := context.Background()
	tok1 := handleState(t, a, ctx, "")
	if strings.Contains(tok1, "first") {
		t.Fatal("the annotation is readable in the token")
	}
	tok2 := handleState(t, b, ctx, tok1)
	handleState(t, a, ctx, tok2)
	if got, want := strings.Join(seenB, " "), "a=first b=x round=1"; got != want {
		t.Errorf("the second instance read %q, want %q", got, want)
	}
	if got, want := strings.Join(seenA, " "), "a=first round=2"; got != want {
		t.Errorf("the third round read %q, want %q", got, want)
	}

	var seenPlain []string
	plain := annotatingServer(t, keys, &seenPlain, func(*server.Request) []server.StateAnnotation { return nil })
	handleState(t, plain, ctx, handleState(t, plain, ctx, ""))
	if len(seenPlain) != 0 {
		t.Errorf("a state sealed without annotations carried %q", seenPlain)
	}
}
