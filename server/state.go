package server

import (
	"context"
	"errors"

	"github.com/parley-mcp/parley/mcp"
)

// A StateSealer protects the requestState of multi-round-trip requests:
// it verifies the state a client echoes and seals the state a handler
// returns. Package requeststate implements it (requeststate.Protect
// installs one); a server has at most one, set with SealState.
//
// The server calls it as one step of its dispatch, outside every
// middleware, on tools/call, prompts/get and resources/read: before the
// first middleware runs it opens an echoed requestState and puts the
// plaintext in the request's params, and after the last middleware has
// returned it seals the state of an input_required result. So every
// middleware and every handler sees plaintext (params.LookupRequestState)
// and what the token proved (Request.StateProof), whatever the order of
// Use calls; a token is never seen past the step, and a plaintext state
// never leaves it.
type StateSealer interface {
	// Open verifies token, the requestState the client echoed on req
	// (present, possibly empty). It returns the plaintext state and what
	// the token proved, or the error to answer the request with (for
	// requeststate, the one fixed -32602 error, whatever failed). Open
	// may change req's params otherwise (requeststate drops answers to
	// questions the sealed round did not ask).
	Open(ctx context.Context, req *Request, token string) (plaintext string, proof StateProof, err error)
	// Seal returns the token that carries ir's plaintext requestState to
	// the client, or the error to answer the request with. It must not
	// write into ir, which may be shared.
	Seal(ctx context.Context, req *Request, ir *mcp.InputRequiredResult) (token string, err error)
}

// StateProof is what a verified requestState proved about the round that
// issued it.
type StateProof interface {
	// Asked reports whether that round asked exactly q under key: the same
	// kind, message, schema and parameters, as they went on the wire. An
	// answer under key is an answer to q only then.
	Asked(key string, q mcp.InputRequest) bool
}

// ErrStateSealerSet is returned by SealState for a server that has a
// StateSealer already: sealing twice would wrap tokens in tokens.
var ErrStateSealerSet = errors.New("server: the server already has a StateSealer")

// SealState makes sealer the server's StateSealer (see there). Call it
// before serving; a server takes one sealer, and a second call returns
// ErrStateSealerSet.
func (s *Server) SealState(sealer StateSealer) error {
	if sealer == nil {
		return errors.New("server: SealState with a nil StateSealer")
	}
	s.mu.Lock()
	if s.sealer != nil {
		s.mu.Unlock()
		return ErrStateSealerSet
	}
	s.sealer = sealer
	s.mu.Unlock()
	s.rebuild()
	return nil
}

// StateProof returns what the request's echoed requestState proved, or nil
// when it echoed none or the server has no StateSealer.
func (r *Request) StateProof() StateProof { return r.stateProof }

// StateProofFrom returns the StateProof of the request whose context ctx
// is (see Request.StateProof), for code that has only the context.
func StateProofFrom(ctx context.Context) StateProof {
	p, _ := ctx.Value(stateProofKey{}).(StateProof)
	return p
}

type stateProofKey struct{}

// sealStep wraps next, the middleware chain, in the sealer's step.
func (s *Server) sealStep(sealer StateSealer, next Handler) Handler {
	return func(ctx context.Context, req *Request) (mcp.AnyResult, error) {
		m := methods[req.Method]
		if m == nil || !m.carrier {
			return next(ctx, req)
		}
		p, ok := req.Params.(mcp.RequestStateParams)
		if !ok {
			return next(ctx, req)
		}
		// Present is what counts, not empty: "requestState":"" is a state
		// like any other, and the sealer decides what it proves.
		if token, present := p.LookupRequestState(); present {
			plain, proof, err := sealer.Open(ctx, req, token)
			if err != nil {
				return nil, err
			}
			p.SetRequestState(plain, true)
			if proof != nil {
				req.stateProof = proof
				ctx = context.WithValue(ctx, stateProofKey{}, proof)
			}
		}
		res, err := next(ctx, req)
		if err != nil {
			return res, err
		}
		ir, ok := res.(*mcp.InputRequiredResult)
		if !ok {
			return res, nil
		}
		if _, present := ir.LookupRequestState(); !present {
			return res, nil
		}
		token, err := sealer.Seal(ctx, req, ir)
		if err != nil {
			return nil, err
		}
		sealed := *ir // the handler may share its value; never write into it
		sealed.SetRequestState(token, true)
		return &sealed, nil
	}
}
