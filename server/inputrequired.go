package server

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/parley-mcp/parley/internal/questionkey"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
)

// checkInputRequired enforces what the protocol asks of an
// InputRequiredResult before it leaves the server, so that handlers cannot
// get it wrong:
//
//   - only tools/call, prompts/get and resources/read may return one, and
//     only on a request of protocol version 2026-07-28 or later; anything
//     else is a server bug, answered with -32603 (and logged);
//   - it must carry inputRequests or requestState, and no nil request;
//   - every input request must be allowed by the capabilities the client
//     declared on this very request (form or URL elicitation, sampling,
//     sampling with tools, roots); otherwise the client gets -32021 with the
//     capabilities it lacks in data.requiredCapabilities.
func (s *Server) checkInputRequired(req *Request, ir *mcp.InputRequiredResult) error {
	if m := methods[req.Method]; m == nil || !m.carrier {
		s.log.Error("server: InputRequiredResult from a method that cannot carry it", "method", req.Method)
		return wire.Internal("")
	}
	if !req.ProtocolVersion().SupportsInputRequired() {
		s.log.Error("server: InputRequiredResult on a request of a protocol version without it",
			"method", req.Method, "version", req.ProtocolVersion())
		return wire.Internal("")
	}
	if err := ir.Validate(); err != nil {
		s.log.Error("server: invalid InputRequiredResult", "method", req.Method, "err", err)
		return wire.Internal("")
	}
	if missing := req.ClientCapabilities().MissingFor(ir.InputRequests); missing != nil {
		return mcp.NewMissingRequiredClientCapabilityError(missing)
	}
	return nil
}

// bridge serves a legacy session's request whose handler answered with an
// InputRequiredResult (see Options.Bridge): it sends the input requests to
// the client over the back-channel, all at once, and calls the handler
// again with the answers and the echoed requestState, as a 2026-07-28
// client would retry, until the handler returns its final result or the
// round limit is reached.
func (s *Server) bridge(ctx context.Context, chain Handler, req *Request, ir *mcp.InputRequiredResult) (mcp.AnyResult, error) {
	p, ok := req.Params.(mcp.RequestStateParams)
	if !ok {
		s.log.Error("server: InputRequiredResult from a method that cannot carry it", "method", req.Method)
		return nil, wire.Internal("")
	}
	for round := 1; ; round++ {
		if round > s.opts.Bridge.MaxRounds {
			s.log.Error("server: legacy bridge: handler still needs input after the round limit",
				"method", req.Method, "maxRounds", s.opts.Bridge.MaxRounds)
			return nil, wire.Internal("")
		}
		if err := ir.Validate(); err != nil {
			s.log.Error("server: invalid InputRequiredResult", "method", req.Method, "err", err)
			return nil, wire.Internal("")
		}
		if !req.HasBackChannel() {
			s.log.Error("server: legacy bridge: the handler needs input, but the session has no back-channel (stateless Streamable HTTP)",
				"method", req.Method)
			return nil, noBackChannel(firstMethod(ir.InputRequests), false)
		}
		if missing := req.ClientCapabilities().MissingFor(ir.InputRequests); missing != nil {
			return nil, mcp.NewMissingRequiredClientCapabilityError(missing)
		}
		answers, err := req.AskAll(ctx, ir.InputRequests)
		if err != nil {
			return nil, err
		}
		responses, _ := p.Continuation()
		*responses = answers
		p.SetRequestState(ir.LookupRequestState()) // an empty state too
		res, err := chain(ctx, req)
		if err != nil {
			return nil, s.wireError(req, err)
		}
		if res == nil || reflect.ValueOf(res).IsNil() {
			s.log.Error("server: handler returned neither a result nor an error", "method", req.Method)
			return nil, wire.Internal("")
		}
		next, ok := res.(*mcp.InputRequiredResult)
		if !ok {
			return res, nil
		}
		ir = next
	}
}

// AskAll sends every input request to the client at once, as [Request.Ask]
// does one, and returns the answers under the same keys. The first failure
// cancels the others and is returned.
func (req *Request) AskAll(ctx context.Context, reqs mcp.InputRequests) (mcp.InputResponses, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		key string
		raw json.RawMessage
		err error
	}
	ch := make(chan answer, len(reqs))
	var round *questionkey.Round
	if questionkey.Enabled() {
		round = new(questionkey.Round)
	}
	for key, q := range reqs {
		go func() {
			// The wire names no key on a legacy session; the context
			// carries it, and the round, as far as the transport, where
			// mcptest's scripted person looks for them (package
			// questionkey) — only in a process that has one.
			qctx := ctx
			if round != nil {
				qctx = questionkey.With(ctx, key, round)
			}
			raw, err := req.Ask(qctx, q)
			ch <- answer{key, raw, err}
		}()
	}
	out := make(mcp.InputResponses, len(reqs))
	var first error
	for range reqs {
		a := <-ch
		if a.err != nil && first == nil {
			first = a.err
			cancel()
		}
		out[a.key] = a.raw
	}
	if first != nil {
		return nil, first
	}
	return out, nil
}

func firstMethod(reqs mcp.InputRequests) string {
	for _, k := range reqs.Keys() {
		return reqs[k].Method()
	}
	return "a request"
}
