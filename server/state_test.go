package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// fakeSealer seals by prefixing "sealed:" and opens by taking the prefix
// off; it refuses anything else. It records what it was asked.
type fakeSealer struct {
	opened, sealed []string
}

type fakeProof struct{ state string }

func (p fakeProof) Asked(key string, q mcp.InputRequest) bool { return key == "k" }

func (f *fakeSealer) Open(ctx context.Context, req *server.Request, token string) (string, server.StateProof, error) {
	f.opened = append(f.opened, token)
	plain, ok := strings.CutPrefix(token, "sealed:")
	if !ok {
		return "", nil, wire.InvalidParams("refused")
	}
	return plain, fakeProof{plain}, nil
}

func (f *fakeSealer) Seal(ctx context.Context, req *server.Request, ir *mcp.InputRequiredResult) (string, error) {
	f.sealed = append(f.sealed, ir.RequestState)
	return "sealed:" + ir.RequestState, nil
}

func stateCall(id int64, state string, present bool) *jsonrpc.Request {
	params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}}},"name":"t"`
	if present {
		b, _ := json.Marshal(state)
		params += `,"requestState":` + string(b)
	}
	return &jsonrpc.Request{ID: jsonrpc.Int64ID(id), Method: mcp.MethodCallTool, Params: json.RawMessage(params + "}")}
}

// TestSealStateStep: the sealer's step runs outside every middleware, on
// the way in (the plaintext and the proof reach every middleware and the
// handler) and on the way out (a state the handler returns is sealed, in a
// copy); a refusal is the answer before any middleware runs; results
// without state pass untouched; a server takes one sealer.
func TestSealStateStep(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "svc", Version: "1"}, nil)
	var ran []string
	s.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			st, _ := req.Params.(*mcp.CallToolRequestParams).LookupRequestState()
			ran = append(ran, "mw:"+st)
			return next(ctx, req)
		}
	})
	f := &fakeSealer{}
	if err := s.SealState(f); err != nil {
		t.Fatal(err)
	}
	if err := s.SealState(&fakeSealer{}); !errors.Is(err, server.ErrStateSealerSet) {
		t.Errorf("second SealState = %v, want ErrStateSealerSet", err)
	}
	if err := server.New(mcp.Implementation{Name: "x", Version: "1"}, nil).SealState(nil); err == nil {
		t.Error("SealState(nil) accepted")
	}
	shared := &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"k": mcp.NewListRootsRequest()}, RequestState: "round-1"}
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		st, present := p.LookupRequestState()
		proof := req.StateProof()
		ran = append(ran, "handler:"+st)
		switch {
		case !present:
			return shared, nil
		case proof == nil || !proof.Asked("k", nil) || server.StateProofFrom(ctx) != proof:
			t.Errorf("round 2: the proof did not reach the handler (%v)", proof)
		}
		return mcp.TextResult("done"), nil
	})
	ctx := context.Background()
	res, err := s.Handle(ctx, stateCall(1, "", false), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ir, ok := res.(*mcp.InputRequiredResult); !ok || ir.RequestState != "sealed:round-1" || shared.RequestState != "round-1" {
		t.Fatalf("round 1: %#v (the handler's value now %q)", res, shared.RequestState)
	}
	if _, err := s.Handle(ctx, stateCall(2, "sealed:round-1", true), nil); err != nil {
		t.Fatal(err)
	}
	_, err = s.Handle(ctx, stateCall(3, "forged", true), nil)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Message != "refused" {
		t.Errorf("a refused state answered %v", err)
	}
	want := "mw: handler: mw:round-1 handler:round-1"
	if got := strings.Join(ran, " "); got != want {
		t.Errorf("ran %q, want %q (a refusal reaches no middleware)", got, want)
	}
	if strings.Join(f.sealed, ",") != "round-1" || strings.Join(f.opened, ",") != "sealed:round-1,forged" {
		t.Errorf("sealed %q, opened %q", f.sealed, f.opened)
	}
}

// TestSealStateStepEmptyState: presence is what counts, not emptiness. An
// echoed "requestState":"" goes to the sealer like any token, an empty
// plaintext state a handler returns goes out sealed, and a result with no
// state at all is not sealed.
func TestSealStateStepEmptyState(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "svc", Version: "1"}, nil)
	f := &fakeSealer{}
	if err := s.SealState(f); err != nil {
		t.Fatal(err)
	}
	var empty, none mcp.InputRequiredResult
	empty.SetRequestState("", true)
	none.InputRequests = mcp.InputRequests{"k": mcp.NewListRootsRequest()}
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if st, _ := p.LookupRequestState(); st == "none" {
			return &none, nil
		}
		return &empty, nil
	})
	ctx := context.Background()
	if _, err := s.Handle(ctx, stateCall(1, "", true), nil); err == nil {
		t.Error("an echoed empty requestState was not handed to the sealer")
	}
	res, err := s.Handle(ctx, stateCall(2, "", false), nil)
	if err != nil {
		t.Fatal(err)
	}
	if st, present := res.(*mcp.InputRequiredResult).LookupRequestState(); !present || st != "sealed:" {
		t.Errorf("an empty plaintext state went out as %q (present %v), want it sealed", st, present)
	}
	res, err = s.Handle(ctx, stateCall(3, "sealed:none", true), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, present := res.(*mcp.InputRequiredResult).LookupRequestState(); present {
		t.Error("a result without state went out with one")
	}
	if strings.Join(f.opened, ",") != ",sealed:none" || strings.Join(f.sealed, ",") != "" || len(f.sealed) != 1 {
		t.Errorf("opened %q, sealed %q", f.opened, f.sealed)
	}
}
