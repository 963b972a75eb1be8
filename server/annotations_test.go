package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// TestWrapBackChannel: a middleware that wraps the back-channel sees every
// server-to-client request a handler makes with Ask, and what it changes
// in the params is what the client gets; without a back-channel the wrap
// does nothing.
func TestWrapBackChannel(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "v", Version: "1"}, &server.Options{SupportedVersions: []mcp.ProtocolVersion{mcp.Version20251125}})
	var wrapped []string
	s.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			req.WrapBackChannel(func(call server.CallFunc) server.CallFunc {
				return func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
					wrapped = append(wrapped, method)
					params = json.RawMessage(strings.Replace(string(params), `"message"`, `"_meta":{"traceparent":"tp"},"message"`, 1))
					return call(ctx, method, params)
				}
			})
			return next(ctx, req)
		}
	})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if !req.HasBackChannel() {
			return mcp.TextResult("no back-channel"), nil
		}
		if _, err := req.Ask(ctx, mcp.NewElicitFormRequest("Which?", mcp.ElicitRequestedSchema{})); err != nil {
			return nil, err
		}
		return mcp.TextResult("asked"), nil
	})
	ctx := context.Background()
	init := &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: mcp.MethodInitialize,
		Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"x","version":"1"}}`)}
	sess, _, err := s.Initialize(ctx, init, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	var sent []string
	call := func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		sent = append(sent, method+" "+string(params))
		return json.RawMessage(`{"action":"decline"}`), nil
	}
	msg := &jsonrpc.Request{ID: jsonrpc.Int64ID(2), Method: mcp.MethodCallTool, Params: json.RawMessage(`{"name":"t"}`)}
	if _, err := sess.Handle(ctx, msg, nil, call); err != nil {
		t.Fatal(err)
	}
	if len(wrapped) != 1 || wrapped[0] != mcp.MethodElicit {
		t.Errorf("the wrap saw %q", wrapped)
	}
	if len(sent) != 1 || !strings.Contains(sent[0], `"_meta":{"traceparent":"tp"}`) {
		t.Errorf("the client got %q, without what the wrap added", sent)
	}
	wrapped = nil
	if _, err := sess.Handle(ctx, msg, nil, nil); err != nil {
		t.Fatal(err)
	}
	if len(wrapped) != 0 {
		t.Errorf("the wrap ran without a back-channel: %q", wrapped)
	}
}

// annotatingSealer is a StateSealer that keeps the annotations sealed
// with each token beside it, as a real one seals them into the token.
type annotatingSealer struct {
	sealed map[string][]server.StateAnnotation
}

type annotatedProof struct{ as []server.StateAnnotation }

func (annotatedProof) Asked(string, mcp.InputRequest) bool { return false }

func (p annotatedProof) StateAnnotation(key string) (string, bool) {
	for _, a := range p.as {
		if a.Key == key {
			return a.Value, true
		}
	}
	return "", false
}

func (s *annotatingSealer) Open(ctx context.Context, req *server.Request, token string) (string, server.StateProof, error) {
	return "plain", annotatedProof{s.sealed[token]}, nil
}

func (s *annotatingSealer) Seal(ctx context.Context, req *server.Request, ir *mcp.InputRequiredResult) (string, error) {
	token := "t" + string(rune('0'+len(s.sealed)))
	s.sealed[token] = append([]server.StateAnnotation(nil), req.StateAnnotations()...)
	return token, nil
}

// TestStateAnnotationsReachTheSealer: what middleware annotates reaches
// the sealer's Seal, and what the sealer's proof carries is what the next
// round's StateAnnotation reads; a request that echoed no state reads
// nothing.
func TestStateAnnotationsReachTheSealer(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "v", Version: "1"}, nil)
	sealer := &annotatingSealer{sealed: map[string][]server.StateAnnotation{}}
	if err := s.SealState(sealer); err != nil {
		t.Fatal(err)
	}
	var read []string
	s.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			v, ok := req.StateAnnotation("n")
			read = append(read, fmt.Sprintf("%q %v", v, ok))
			if err := req.AnnotateState("n", v+"x"); err != nil {
				t.Error(err)
			}
			return next(ctx, req)
		}
	})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"q": mcp.NewElicitFormRequest("?", mcp.ElicitRequestedSchema{})}, RequestState: "s"}, nil
	})
	ctx := context.Background()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + string(mcp.LatestVersion) + `","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	token := ""
	for range 3 {
		params := `{` + meta + `,"name":"t"`
		if token != "" {
			params += `,"requestState":"` + token + `"`
		}
		res, err := s.Handle(ctx, &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: mcp.MethodCallTool, Params: json.RawMessage(params + `}`)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		token = res.(*mcp.InputRequiredResult).RequestState
	}
	if got, want := strings.Join(read, ", "), `"" false, "x" true, "xx" true`; got != want {
		t.Errorf("the rounds read %s, want %s", got, want)
	}
}

// TestStateAnnotationBounds: an annotation over the bounds is refused
// when it is made, not when the state is sealed.
func TestStateAnnotationBounds(t *testing.T) {
	req := &server.Request{}
	if err := req.AnnotateState("", "v"); !errors.Is(err, server.ErrStateAnnotation) {
		t.Errorf("an empty key: %v", err)
	}
	if err := req.AnnotateState("k", strings.Repeat("v", server.MaxStateAnnotationValue+1)); !errors.Is(err, server.ErrStateAnnotation) {
		t.Errorf("a long value: %v", err)
	}
	for i := range server.MaxStateAnnotations {
		if err := req.AnnotateState(string(rune('a'+i)), "v"); err != nil {
			t.Fatal(err)
		}
	}
	if err := req.AnnotateState("a", "again"); err != nil {
		t.Errorf("replacing a value: %v", err)
	}
	if err := req.AnnotateState("z", "v"); !errors.Is(err, server.ErrStateAnnotation) {
		t.Errorf("one too many: %v", err)
	}
	if got := req.StateAnnotations(); len(got) != server.MaxStateAnnotations || got[0].Value != "again" {
		t.Errorf("annotations %v", got)
	}
}
