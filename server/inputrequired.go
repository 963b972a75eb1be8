package server

import (
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
		return internalError()
	}
	if !req.ProtocolVersion().SupportsInputRequired() {
		s.log.Error("server: InputRequiredResult on a request of a protocol version without it",
			"method", req.Method, "version", req.ProtocolVersion())
		return internalError()
	}
	if err := ir.Validate(); err != nil {
		s.log.Error("server: invalid InputRequiredResult", "method", req.Method, "err", err)
		return internalError()
	}
	if missing := req.ClientCapabilities().MissingFor(ir.InputRequests); missing != nil {
		return mcp.NewMissingRequiredClientCapabilityError(missing)
	}
	return nil
}
