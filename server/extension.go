package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"

	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
)

// MethodOptions says how the server treats a method registered with
// [HandleMethod]. The zero value (or nil) is a method that needs no
// extension and names no target.
type MethodOptions struct {
	// Extension is the identifier of the extension the method belongs to,
	// such as "io.modelcontextprotocol/tasks". A request from a client
	// that did not declare it in its capabilities' extensions is answered
	// -32021 (missing required client capability) naming it, before any
	// middleware runs. The server does not declare the extension itself:
	// call [Server.DeclareExtension].
	Extension string
	// Target names the member of the params, a string, that says what the
	// request acts on, as "name" does for tools/call: "taskId" for the
	// tasks extension's methods. A request whose params lack it, or hold
	// something other than a string there, gets -32602; Streamable HTTP
	// requires the Mcp-Name header to carry its value.
	Target string
}

// ErrMethodDefined is returned by [HandleMethod] for a method the SDK
// defines itself, in either protocol generation: an extension cannot
// replace a core method.
var ErrMethodDefined = errors.New("server: the method is defined by the protocol")

// extMethod is a registered extension method.
type extMethod struct {
	method
	opts    MethodOptions
	handler Handler
	target  reflect.Type // a struct with the Target member only, raw
}

// HandleMethod makes s serve the method name, a request method the SDK does not
// define (an extension's, such as "tasks/get"), with h. It is how
// extensions are built: the request gets everything a core method gets.
// Its params are decoded into a new P, which must carry _meta like every
// params type (embed mcp.RequestParams); the same _meta checks run (a
// 2026-07-28 request must carry the protocol version and the client's
// capabilities); it passes through the sealing step and every middleware;
// and h's errors reach the client as a core handler's do. A legacy
// session serves it too, with the session's capabilities.
//
// opts may be nil. Registering a method again replaces its handler. It
// returns an error wrapping [ErrMethodDefined] for a core method, and one
// for an empty method or a notification's name.
func HandleMethod[P any, PP interface {
	*P
	mcp.AnyRequestParams
}, R mcp.AnyResult](s *Server, name string, opts *MethodOptions, h func(ctx context.Context, req *Request, p PP) (R, error)) error {
	switch {
	case name == "" || strings.HasPrefix(name, "notifications/"):
		return fmt.Errorf("server: HandleMethod(%q): not a request method", name)
	case methods[name] != nil || mcp.IsLegacyOnly(name) || isBackChannel(name):
		return fmt.Errorf("server: HandleMethod(%q): %w", name, ErrMethodDefined)
	case h == nil:
		return fmt.Errorf("server: HandleMethod(%q) with a nil handler", name)
	}
	m := &extMethod{method: method{decode: decoder[P, PP]()}}
	if opts != nil {
		m.opts = *opts
	}
	if m.opts.Target != "" {
		// The target is read as encoding/json reads the params for the
		// handler (the member name matched the same way, the last one
		// winning), so the header is compared with what the handler sees.
		m.target = reflect.StructOf([]reflect.StructField{{
			Name: "V", Type: reflect.TypeFor[json.RawMessage](),
			Tag: reflect.StructTag(`json:"` + strings.ReplaceAll(m.opts.Target, `"`, "") + `"`),
		}})
	}
	m.handler = func(ctx context.Context, req *Request) (mcp.AnyResult, error) {
		p, ok := req.Params.(PP)
		if !ok {
			// Only a middleware that replaced the params can get here.
			return nil, fmt.Errorf("server: %s: params of type %T, want %T", name, req.Params, p)
		}
		return result(h(ctx, req, p))
	}
	s.mu.Lock()
	if s.ext == nil {
		s.ext = make(map[string]*extMethod)
	}
	s.ext[name] = m
	s.mu.Unlock()
	return nil
}

// isBackChannel reports whether method is one a server sends (embedded
// in an input_required result, or over a legacy session's back-channel).
func isBackChannel(method string) bool {
	return method == mcp.MethodElicit || method == mcp.MethodCreateMessage || method == mcp.MethodListRoots
}

// extension returns the extension method registered for name, or nil.
func (s *Server) extension(name string) *extMethod {
	s.mu.RLock()
	m := s.ext[name]
	s.mu.RUnlock()
	return m
}

// DeclareExtension makes s declare the extension id, with its settings
// (encoded as JSON; nil means {}), in the capabilities it announces:
// server/discover's capabilities.extensions and a legacy initialize's.
// id has the form of a _meta key with its mandatory prefix, such as
// "io.modelcontextprotocol/tasks". Declaring an id again replaces its
// settings. It does nothing when Options.Capabilities fixes the
// capabilities; declare the extension there instead.
func (s *Server) DeclareExtension(id string, settings any) error {
	if !validExtensionID(id) {
		return fmt.Errorf("server: extension id %q: want a prefix, a slash and a name, such as io.modelcontextprotocol/tasks", id)
	}
	raw := json.RawMessage("{}")
	if settings != nil {
		b, err := json.Marshal(settings)
		if err != nil {
			return fmt.Errorf("server: extension %s settings: %w", id, err)
		}
		raw = b
	}
	s.mu.Lock()
	if s.extensions == nil {
		s.extensions = make(map[string]json.RawMessage)
	}
	s.extensions[id] = raw
	s.mu.Unlock()
	return nil
}

// declaredExtensions returns a copy of the declared extensions, or nil.
func (s *Server) declaredExtensions() map[string]json.RawMessage {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.extensions) == 0 {
		return nil
	}
	return maps.Clone(s.extensions)
}

// validExtensionID reports whether id is a prefix (dot-separated labels of
// letters, digits and inner hyphens) and a name (letters, digits, '-', '_'
// and '.') joined by one slash, as the specification's _meta keys are.
func validExtensionID(id string) bool {
	prefix, name, ok := strings.Cut(id, "/")
	if !ok || name == "" || strings.ContainsFunc(name, func(r rune) bool { return !isAlnum(r) && !strings.ContainsRune("-_.", r) }) {
		return false
	}
	for _, label := range strings.Split(prefix, ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' ||
			strings.ContainsFunc(label, func(r rune) bool { return !isAlnum(r) && r != '-' }) {
			return false
		}
	}
	return true
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// prepare decodes a request to an extension method: its params,
// its _meta, and its target.
func (m *extMethod) prepare(raw json.RawMessage) (params any, meta *mcp.RequestMetaObject, target string, err error) {
	if params, meta, err = m.decode(raw); err != nil {
		return nil, nil, "", wire.InvalidParams("Invalid params: %s", cleanJSONError(err))
	}
	if m.target != nil {
		v := reflect.New(m.target)
		_ = json.Unmarshal(raw, v.Interface()) // raw decoded above
		member := v.Elem().Field(0).Bytes()
		if len(member) == 0 || member[0] != '"' || json.Unmarshal(member, &target) != nil {
			return nil, nil, "", wire.InvalidParams("Invalid params: params.%s must be a string", m.opts.Target)
		}
	}
	return params, meta, target, nil
}

// requireExtension answers -32021 when the client's capabilities do not
// declare the extension m belongs to.
func requireExtension(m *extMethod, caps *mcp.ClientCapabilities) error {
	return requireDeclared(m.opts.Extension, caps)
}

// requireDeclared answers -32021 naming the extension id when caps do not
// declare it ("" requires nothing).
func requireDeclared(id string, caps *mcp.ClientCapabilities) error {
	if id == "" {
		return nil
	}
	if caps != nil {
		if _, ok := caps.Extensions[id]; ok {
			return nil
		}
	}
	return mcp.NewMissingRequiredClientCapabilityError(&mcp.ClientCapabilities{
		Extensions: map[string]json.RawMessage{id: json.RawMessage("{}")},
	})
}

// Target returns the value of the params member that names what the
// request acts on, and that member's name: params.name of tools/call and
// prompts/get, params.uri of resources/read, the member an extension
// method declared in MethodOptions.Target. ok is false for a request that
// names no target. Streamable HTTP compares it with the Mcp-Name header.
func (r *Request) Target() (value, member string, ok bool) {
	switch p := r.Params.(type) {
	case *mcp.CallToolRequestParams:
		return p.Name, "name", true
	case *mcp.GetPromptRequestParams:
		return p.Name, "name", true
	case *mcp.ReadResourceRequestParams:
		return p.URI, "uri", true
	}
	if r.targetMember != "" {
		return r.target, r.targetMember, true
	}
	return "", "", false
}
