package spectest

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The strict check: which object members of a message a version's schema
// does not name.
//
// A schema says little about members it does not name: 2025-11-25 allows
// extra members almost everywhere, so a 2025-11-25 message that carries a
// 2026-07-28 member ("ttlMs", "resultType") validates. A strict peer or a
// diffing proxy does not accept it. Extras and MessageExtras report every
// such member, walking the value along the schema:
//
//   - an object whose schema has "properties" is closed: a member it does
//     not name is reported, and a named member is walked with its own
//     schema. "allOf" names the members of all its parts;
//   - an object whose schema allows other members ("additionalProperties")
//     is open: arguments, structuredContent, capabilities such as logging,
//     the properties of a JSON Schema. The one exception is a definition
//     that names members and also allows others, such as Result: that is a
//     base type open for extension, and a value of it is held to the
//     members it names;
//   - "_meta" is always open, except for keys under the reserved prefix
//     io.modelcontextprotocol/ that the version does not define (the ones
//     its schema file names anywhere, its descriptions included);
//   - of an "anyOf" or "oneOf", the value is held to the branch it
//     validates against with the fewest extras;
//   - array items are walked with "items".
//
// Nothing is listed by hand: every name comes from the schema file.

// reservedMetaPrefix starts the _meta keys the specification reserves.
const reservedMetaPrefix = "io.modelcontextprotocol/"

// reservedMetaKey finds the reserved _meta keys a schema file names.
var reservedMetaKey = regexp.MustCompile(`io\.modelcontextprotocol/[A-Za-z0-9._-]*[A-Za-z0-9]`)

// Extras returns the JSON pointer of every member of data, a value of the
// definition def (such as "ListToolsResult") of version's schema, that the
// schema does not name, members sorted by name within each object. The error reports a schema that
// cannot be loaded (matching ErrFixturesMissing when the fixtures are
// absent), an unknown definition, or data that is not JSON.
func Extras[V ~string](version V, def string, data []byte) ([]string, error) {
	s, err := load(string(version))
	if err != nil {
		return nil, err
	}
	if !s.has(def) {
		return nil, fmt.Errorf("spectest: schema %s has no definition %q", version, def)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("spectest: not JSON: %w", err)
	}
	return s.extras(map[string]any{"$ref": "#/$defs/" + def}, "", v, ""), nil
}

// MessageExtras is Extras for a whole JSON-RPC message, choosing the
// definition as ValidateMessage does: a request or notification by its
// method, a result by requestMethod (the method of the request it
// answers; an input_required result of 2026-07-28 as InputRequiredResult),
// an error response as JSONRPCErrorResponse. A request,
// notification or result of a method the version does not define is an
// error: nothing of it is named.
func MessageExtras[V ~string](version V, data []byte, requestMethod string) ([]string, error) {
	s, err := load(string(version))
	if err != nil {
		return nil, err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("spectest: not JSON: %w", err)
	}
	msg, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("spectest: the message is not an object")
	}
	method, hasMethod := msg["method"].(string)
	_, hasID := msg["id"]
	_, isError := msg["error"]
	_, isResult := msg["result"]
	var schema any
	switch {
	case hasMethod && hasID:
		def, ok := s.requests[method]
		if !ok {
			return nil, fmt.Errorf("spectest: %s defines no request %q", version, method)
		}
		schema = ref(def)
	case hasMethod:
		def, ok := s.notifications[method]
		if !ok {
			return nil, fmt.Errorf("spectest: %s defines no notification %q", version, method)
		}
		schema = ref(def)
	case isError:
		schema = ref("JSONRPCErrorResponse")
	case isResult:
		def, err := s.resultDef(requestMethod)
		if err != nil {
			return nil, err
		}
		if r, _ := msg["result"].(map[string]any); modern(s.version) && r["resultType"] == "input_required" {
			def = "InputRequiredResult"
		}
		// The envelope of any result, with the result held to the
		// definition of this method's.
		env, _ := s.defs["JSONRPCResultResponse"].(map[string]any)
		props := map[string]any{}
		for k, p := range env["properties"].(map[string]any) {
			props[k] = p
		}
		props["result"] = ref(def)
		schema = map[string]any{"properties": props}
	default:
		return nil, errors.New("spectest: neither a request, a notification nor a response")
	}
	return s.extras(schema, "", v, ""), nil
}

// ValidateMessageStrict is ValidateMessage that also fails the test on
// every member MessageExtras reports.
func ValidateMessageStrict[V ~string](t testing.TB, version V, data []byte, requestMethod string) {
	t.Helper()
	ValidateMessage(t, version, data, requestMethod)
	extras, err := MessageExtras(version, data, requestMethod)
	if err != nil {
		report(t, err, "message", data)
		return
	}
	if len(extras) > 0 {
		t.Errorf("spectest: members %s does not name: %s\nmessage: %s", version, strings.Join(extras, ", "), data)
	}
}

// resultDef names the definition of the result of method: its request's
// name with Result for Request, or EmptyResult.
func (s *schemaSet) resultDef(method string) (string, error) {
	if method == "" {
		return "", errors.New("spectest: a result response needs the method of the request it answers")
	}
	req, ok := s.requests[method]
	if !ok {
		return "", fmt.Errorf("spectest: %s defines no request %q", s.version, method)
	}
	if def := strings.TrimSuffix(req, "Request") + "Result"; s.has(def) {
		return def, nil
	}
	return "EmptyResult", nil
}

func ref(def string) map[string]any { return map[string]any{"$ref": "#/$defs/" + def} }

// extras returns the pointers of the members of v (at pointer path in the
// message) that node (at pointer at in the schema; "" for a node made
// here) does not name.
func (s *schemaSet) extras(node any, at string, v any, path string) []string {
	node, at, def := s.deref(node, at)
	m, ok := node.(map[string]any)
	if !ok {
		return nil // true or false
	}
	for _, union := range []string{"anyOf", "oneOf"} {
		if branches, ok := m[union].([]any); ok {
			return s.branch(branches, at+"/"+union, v, path)
		}
	}
	switch v := v.(type) {
	case map[string]any:
		view := s.members(m, at, def)
		if !view.describes {
			return nil
		}
		var out []string
		for _, k := range sortedKeys(v) {
			p := path + "/" + escapePointer(k)
			named, ok := view.props[k]
			switch {
			case ok && k == "_meta":
				out = append(out, s.metaExtras(named, v[k], p)...)
			case ok:
				out = append(out, s.extras(named.node, named.at, v[k], p)...)
			case view.rest != nil:
				out = append(out, s.extras(view.rest.node, view.rest.at, v[k], p)...)
			case !view.open:
				out = append(out, p)
			}
		}
		return out
	case []any:
		items, ok := m["items"]
		if !ok {
			return nil
		}
		var out []string
		for i, e := range v {
			out = append(out, s.extras(items, at+"/items", e, fmt.Sprintf("%s/%d", path, i))...)
		}
		return out
	}
	return nil
}

// deref follows $ref to the definition it names, reporting whether node is
// the root of a definition.
func (s *schemaSet) deref(node any, at string) (any, string, bool) {
	def := false
	for {
		m, ok := node.(map[string]any)
		if !ok {
			return node, at, def
		}
		r, ok := m["$ref"].(string)
		if !ok {
			return node, at, def
		}
		name, ok := strings.CutPrefix(r, "#/$defs/")
		if !ok {
			return node, at, def
		}
		node, at, def = s.defs[name], "/$defs/"+name, true
	}
}

// located is a schema node and its pointer in the schema.
type located struct {
	node any
	at   string
}

// memberView is what a schema says of an object's members.
type memberView struct {
	describes bool               // it names members or allows others
	props     map[string]located // the members it names
	open      bool               // members it does not name are allowed
	rest      *located           // their schema, when it says more than "anything"
}

// members merges what node and its allOf parts say of members.
func (s *schemaSet) members(node map[string]any, at string, def bool) memberView {
	view := memberView{props: map[string]located{}}
	s.addMembers(&view, node, at, def)
	return view
}

func (s *schemaSet) addMembers(view *memberView, node map[string]any, at string, def bool) {
	props, named := node["properties"].(map[string]any)
	if named {
		view.describes = true
		for k, p := range props {
			view.props[k] = located{p, at + "/properties/" + escapePointer(k)}
		}
	}
	if ap, ok := node["additionalProperties"]; ok {
		view.describes = true
		// A definition that names members and allows others is a base
		// type (Result), open for the types that extend it.
		if !(def && named) && ap != false {
			view.open = true
			if m, ok := ap.(map[string]any); ok && len(m) > 0 {
				view.rest = &located{ap, at + "/additionalProperties"}
			}
		}
	}
	parts, _ := node["allOf"].([]any)
	for i, part := range parts {
		p, pat, pdef := s.deref(part, fmt.Sprintf("%s/allOf/%d", at, i))
		if pm, ok := p.(map[string]any); ok {
			s.addMembers(view, pm, pat, pdef)
		}
	}
}

// metaExtras walks a _meta object: the keys its schema names are walked
// with their schemas, other keys are allowed, except reserved ones the
// version does not define.
func (s *schemaSet) metaExtras(named located, v any, path string) []string {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	node, at, _ := s.deref(named.node, named.at)
	m, _ := node.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	var out []string
	for _, k := range sortedKeys(obj) {
		p := path + "/" + escapePointer(k)
		if sub, ok := props[k]; ok {
			out = append(out, s.extras(sub, at+"/properties/"+escapePointer(k), obj[k], p)...)
		} else if strings.HasPrefix(k, reservedMetaPrefix) && !s.reserved[k] {
			out = append(out, p)
		}
	}
	return out
}

// branch holds v to the branch of a union it validates against with the
// fewest extras (to the branch with the fewest when it validates against
// none, which ValidateMessage reports).
func (s *schemaSet) branch(branches []any, at string, v any, path string) []string {
	var valid []int
	for i := range branches {
		if s.validAt(fmt.Sprintf("%s/%d", at, i), v) {
			valid = append(valid, i)
		}
	}
	if len(valid) == 0 {
		for i := range branches {
			valid = append(valid, i)
		}
	}
	var best []string
	for n, i := range valid {
		out := s.extras(branches[i], fmt.Sprintf("%s/%d", at, i), v, path)
		if len(out) == 0 {
			return nil
		}
		if n == 0 || len(out) < len(best) {
			best = out
		}
	}
	return best
}

// validAt reports whether v conforms to the schema node at pointer at. A
// node that does not compile counts as valid: the choice then falls to the
// extras alone.
func (s *schemaSet) validAt(at string, v any) bool {
	if !strings.HasPrefix(at, "/$defs/") {
		return true // a node made here, never a union
	}
	s.mu.Lock()
	sch, ok := s.compiled["#"+at]
	if !ok {
		var err error
		if sch, err = s.compiler.Compile(s.url + "#" + at); err != nil {
			sch = nil
		}
		s.compiled["#"+at] = sch
	}
	s.mu.Unlock()
	return sch == nil || sch.Validate(v) == nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// escapePointer escapes a member name for a JSON pointer.
func escapePointer(k string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}

// reservedKeys lists the reserved _meta keys the schema file names.
func reservedKeys(data []byte) map[string]bool {
	keys := map[string]bool{}
	for _, k := range reservedMetaKey.FindAll(data, -1) {
		keys[string(k)] = true
	}
	return keys
}
