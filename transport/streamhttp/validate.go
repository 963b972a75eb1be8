package streamhttp

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/parley-mcp/parley/internal/jsontext"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// This file is the server's half of SEP-2243: the headers of a request must
// agree with its body. Every failure is -32020 (HeaderMismatch), sent with
// 400 Bad Request.

// checkHeaders validates the headers of a prepared request: the protocol
// version and method always; the name for tools/call, prompts/get,
// resources/read and the extension methods that name a target; the
// Mcp-Param-* headers of a tools/call.
func (h *Handler) checkHeaders(r *http.Request, req *server.Request) *jsonrpc.Error {
	hdr := r.Header
	if e := compareVersionHeader(hdr, string(req.Meta.ProtocolVersion)); e != nil {
		return e
	}
	method, ok, err := singleHeader(hdr, canonMethod)
	switch {
	case err != nil:
		return mismatch("%s header %v", HeaderMethod, err)
	case !ok:
		return mismatch("missing %s header (the body's method is %q)", HeaderMethod, req.Method)
	case method != req.Method:
		return mismatch("%s header value %s does not match body method %q", HeaderMethod, echoHeader(method), req.Method)
	}

	name, member, named := req.Target()
	if !named {
		return nil
	}
	raw, ok, err := singleHeader(hdr, canonName)
	switch {
	case err != nil:
		return mismatch("%s header %v", HeaderName, err)
	case !ok:
		return mismatch("missing %s header (required for %s; the body's params.%s is %q)", HeaderName, req.Method, member, name)
	}
	decoded, err := DecodeHeaderValue(raw)
	if err != nil {
		return mismatch("%s header %v", HeaderName, err)
	}
	if decoded != name {
		return mismatch("%s header value %s does not match body value %q", HeaderName, echoHeader(decoded), name)
	}
	if p, ok := req.Params.(*mcp.CallToolRequestParams); ok {
		return h.checkParamHeaders(r.Context(), hdr, req, p)
	}
	return nil
}

// checkVersionHeader compares the MCP-Protocol-Version header with the
// version in an unprepared request's _meta, for a request the server
// refused as of an unsupported version. It returns nil when they agree.
func checkVersionHeader(hdr http.Header, msg *jsonrpc.Request) *jsonrpc.Error {
	meta, err := mcp.DecodeRequestMeta(msg.Params)
	if err != nil || meta == nil || meta.ProtocolVersion == "" {
		return nil
	}
	return compareVersionHeader(hdr, string(meta.ProtocolVersion))
}

func compareVersionHeader(hdr http.Header, body string) *jsonrpc.Error {
	v, ok, err := singleHeader(hdr, canonProtocolVersion)
	switch {
	case err != nil:
		return mismatch("%s header %v", HeaderProtocolVersion, err)
	case !ok:
		return mismatch("missing %s header (the body's _meta says %q)", HeaderProtocolVersion, body)
	case v != body:
		return mismatch("%s header value %s does not match body _meta protocolVersion %q", HeaderProtocolVersion, echoHeader(v), body)
	}
	return nil
}

// checkParamHeaders enforces the x-mcp-header annotations of the called
// tool: every annotated argument present in the call (and not null) must
// come with its Mcp-Param-* header saying the same value, and no such header
// may come without its argument.
func (h *Handler) checkParamHeaders(ctx context.Context, hdr http.Header, req *server.Request, p *mcp.CallToolRequestParams) *jsonrpc.Error {
	if !hasArguments(p.Arguments) && !hasParamHeader(hdr) {
		return nil // nothing to mirror and nothing mirrored
	}
	tool, ok := h.lookupTool(ctx, req, p.Name)
	if !ok {
		return nil
	}
	params, err := parseParamHeaders(tool.InputSchema)
	if err != nil {
		// Clients drop such a tool from their list, so a conforming client
		// never calls it; there is nothing sound to enforce.
		h.log.Warn("streamhttp: tool has invalid x-mcp-header annotations; not checking its headers", "tool", p.Name, "reason", err)
		return nil
	}
	if len(params) > 0 && hasArguments(p.Arguments) {
		// The check below reads the arguments by exact name and the
		// handler may decode them otherwise (folding case, keeping the
		// first of two equal names): refuse what they could read
		// differently, so that the value checked is the value acted on.
		if err := jsontext.CheckUnambiguous(p.Arguments); err != nil {
			return invalidArguments("arguments of tool %q are ambiguous: %v", p.Name, err)
		}
	}
	for _, ph := range params {
		value, variant := argumentAt(p.Arguments, ph.path)
		raw, present, err := singleHeader(hdr, ph.key)
		arg := strings.Join(ph.path, ".")
		switch {
		case variant != "":
			return invalidArguments("argument %q differs from the property %q (which x-mcp-header %q mirrors) only in case; "+
				"a decoder that folds case would read it as that property, unchecked: spell it %q", variant, arg, ph.name, ph.path[len(ph.path)-1])
		case err != nil:
			return mismatch("%s%s header %v", HeaderParamPrefix, ph.name, err)
		case value == nil && present:
			return mismatch("%s%s header is present but argument %q is absent or null", HeaderParamPrefix, ph.name, arg)
		case value == nil:
			continue
		}
		if problem := argumentProblem(ph.kind, value); problem != "" {
			return invalidArguments("argument %q (mirrored by %s%s) %s", arg, HeaderParamPrefix, ph.name, problem)
		}
		if !present {
			return mismatch("missing %s%s header for argument %q, which the call sets", HeaderParamPrefix, ph.name, arg)
		}
		decoded, err := DecodeHeaderValue(raw)
		if err != nil {
			return mismatch("%s%s header %v", HeaderParamPrefix, ph.name, err)
		}
		if !matchesArgument(ph.kind, decoded, value) {
			return mismatch("%s%s header value %s does not match argument %q (%s)", HeaderParamPrefix, ph.name, echoHeader(decoded), arg, shorten(value))
		}
	}
	return nil
}

// lookupTool finds the definition of the named tool: through FindTool when
// set, else through the server's own tools/list.
func (h *Handler) lookupTool(ctx context.Context, call *server.Request, name string) (*mcp.Tool, bool) {
	if h.findTool != nil {
		t, ok := h.findTool(ctx, name)
		return t, ok && t != nil
	}
	cursor := ""
	for range maxToolPages {
		list := &server.Request{
			ID:     toolLookupID,
			Method: mcp.MethodListTools,
			Params: &mcp.PaginatedRequestParams{Meta: call.Meta, Cursor: cursor},
			Meta:   call.Meta,
		}
		res, err := h.s.Serve(ctx, list)
		if err != nil {
			return nil, false // no tools/list (or it failed): no annotations known
		}
		page, ok := res.(*mcp.ListToolsResult)
		if !ok {
			return nil, false
		}
		for i := range page.Tools {
			if page.Tools[i].Name == name {
				return &page.Tools[i], true
			}
		}
		if page.NextCursor == "" || page.NextCursor == cursor {
			return nil, false
		}
		cursor = page.NextCursor
	}
	return nil, false
}

// maxToolPages bounds the tools/list pages read to find a tool.
const maxToolPages = 100

// toolLookupID is the id of the tools/list requests the handler makes of
// its own server, for middleware that looks at ids.
var toolLookupID = jsonrpc.StringID("streamhttp/tool-lookup")

// hasArguments reports whether raw arguments hold at least one member.
func hasArguments(args json.RawMessage) bool {
	if len(args) == 0 {
		return false
	}
	for _, c := range args {
		switch c {
		case ' ', '\t', '\n', '\r', '{':
		case '}':
			return false
		default:
			return c != 'n' // null
		}
	}
	return false
}

func hasParamHeader(hdr http.Header) bool {
	for k := range hdr {
		if len(k) > len(canonParamPrefix) && strings.HasPrefix(k, canonParamPrefix) {
			return true
		}
	}
	return false
}

// invalidArguments is a tools/call refused for its arguments, before any
// header is compared: -32602, sent with 400 Bad Request like every refusal
// of this check.
func invalidArguments(format string, args ...any) *jsonrpc.Error {
	return wire.InvalidParams("Invalid params: "+format, args...)
}

func mismatch(format string, args ...any) *jsonrpc.Error {
	return wire.HeaderMismatch("Header mismatch: "+format, args...)
}

// shorten returns a JSON value for an error message, cut short.
func shorten(v json.RawMessage) string {
	if len(v) > 64 {
		return string(v[:64]) + "..."
	}
	return string(v)
}
