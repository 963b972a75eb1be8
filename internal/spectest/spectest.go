// Package spectest gives tests access to the official MCP specification
// fixtures: the JSON schema of each protocol version and the example
// messages of 2026-07-28. It is for tests only.
//
// The fixtures are copies of the official files, kept in the repository
// under testdata/spec beside this package (testdata/spec/README.md says
// where each comes from and under which licence), so a plain clone tests
// everything. A test that needs them fails, never skips, when they are
// missing.
//
// Validate checks a JSON text against one definition of a version's schema;
// ValidateMessage checks a whole JSON-RPC message that Parley emitted,
// choosing the definition from its method (or, for a response, from the
// method of the request it answers). Extras, MessageExtras and
// ValidateMessageStrict go further: they report every member the schema
// does not name, which a schema that tolerates extra members lets through
// (a 2026-07-28 member on a 2025-11-25 session, say).
package spectest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The protocol versions whose schemas spectest holds. The facts spectest
// checks beyond the schemas (which versions carry resultType, which methods
// may be answered input_required) are written here from the specification,
// not taken from package mcp: spectest is the oracle Parley's code is held
// to, so it must not share that code's reading of the protocol, and this
// package imports nothing of Parley's.
const (
	Version20260728 = "2026-07-28"
	Version20251125 = "2025-11-25"
)

// modern reports whether version is of the 2026-07-28 generation (dates
// compare as strings): its results carry resultType and may ask for input.
func modern(version string) bool { return version >= Version20260728 }

// inputRequiredMethods are the requests an input_required result may
// answer (the specification's multi-round-trip requests).
//
// The tasks extension (SEP-2663, not in the core schema) adds resultType
// "task" on tools/call: checkCreateTask holds its shape.
var inputRequiredMethods = map[string]bool{"tools/call": true, "prompts/get": true, "resources/read": true}

// Dir returns the folder holding the official spec fixtures (one folder per
// protocol version, each with schema.json): testdata/spec beside this
// package's source, inside the module, so a plain clone tests everything.
// A missing folder fails the test: the fixtures are part of the repository,
// and a test that cannot read them must not pass by skipping.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := specDir()
	if err != nil {
		t.Fatalf("spectest: %v", err)
	}
	return dir
}

// sourceDir is the folder of this file, which the go command compiles from
// the module's source tree, so the fixtures beside it are found from any
// package's test, whatever its working directory.
var sourceDir = func() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	return filepath.Dir(file)
}()

// specDir resolves the fixture folder without a testing.TB.
func specDir() (string, error) {
	if sourceDir == "" {
		return "", fmt.Errorf("%w: cannot locate the spectest package's source", ErrFixturesMissing)
	}
	d := filepath.Join(sourceDir, "testdata", "spec")
	if fi, err := os.Stat(filepath.Join(d, Version20260728, "schema.json")); err != nil || fi.IsDir() {
		return "", fmt.Errorf("%w: no %s/schema.json in %s (the repository's copy of the official fixtures; see its README.md)",
			ErrFixturesMissing, Version20260728, d)
	}
	return d, nil
}

// Example is one official example message.
type Example struct {
	// Type is the schema definition the example belongs to (its folder).
	Type string
	// Name is the file name, such as "call-tool-request.json".
	Name string
	// Path is the file's path.
	Path string
	// Data is the file's content.
	Data []byte
}

// Examples returns every example of version (only 2026-07-28 ships them),
// sorted by type then name. It fails the test when the fixtures are absent.
func Examples[V ~string](t testing.TB, version V) []Example {
	t.Helper()
	root := filepath.Join(Dir(t), string(version), "examples")
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatalf("spectest: no examples for %s: %v", version, err)
	}
	var out []Example
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		files, err := filepath.Glob(filepath.Join(root, d.Name(), "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(files)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, Example{Type: d.Name(), Name: filepath.Base(f), Path: f, Data: data})
		}
	}
	return out
}

// Supported lists the versions whose schema spectest knows by name.
var Supported = []string{Version20260728, Version20251125}

// schemaSet is one version's compiled schema.
type schemaSet struct {
	version string
	url     string
	defs    map[string]any // the raw $defs, for lookups

	mu       sync.Mutex
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema

	requests      map[string]string // method -> request def (with jsonrpc)
	notifications map[string]string // method -> notification def
	errorsByCode  map[int64]string  // error code -> error response def
	reserved      map[string]bool   // the io.modelcontextprotocol/ _meta keys the file names
}

var (
	setsMu sync.Mutex
	sets   = map[string]*versionOnce{}
)

type versionOnce struct {
	once sync.Once
	set  *schemaSet
	err  error
}

// load returns the compiled schema of version, loading it once.
func load(version string) (*schemaSet, error) {
	known := false
	for _, v := range Supported {
		known = known || v == version
	}
	if !known {
		return nil, fmt.Errorf("spectest: no schema for protocol version %q (have %v)", version, Supported)
	}
	setsMu.Lock()
	vo := sets[version]
	if vo == nil {
		vo = new(versionOnce)
		sets[version] = vo
	}
	setsMu.Unlock()
	vo.once.Do(func() { vo.set, vo.err = loadSet(version) })
	return vo.set, vo.err
}

func loadSet(version string) (*schemaSet, error) {
	dir, err := specDir()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, string(version), "schema.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFixturesMissing, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("spectest: %s: %w", path, err)
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("spectest: %s is not an object", path)
	}
	defs, _ := top["$defs"].(map[string]any)
	s := &schemaSet{
		version:       version,
		url:           "https://parley.invalid/spec/" + string(version) + "/schema.json",
		defs:          defs,
		compiler:      jsonschema.NewCompiler(),
		compiled:      map[string]*jsonschema.Schema{},
		requests:      map[string]string{},
		notifications: map[string]string{},
		errorsByCode:  map[int64]string{},
		reserved:      reservedKeys(data),
	}
	s.compiler.AssertFormat()
	if err := s.compiler.AddResource(s.url, doc); err != nil {
		return nil, fmt.Errorf("spectest: %s: %w", path, err)
	}
	s.index()
	return s, nil
}

// ErrFixturesMissing is matched (with errors.Is) by the error Check,
// CheckMessage and Extras return when the spec fixtures cannot be found;
// Dir, Validate and ValidateMessage fail the test with it.
var ErrFixturesMissing = errors.New("spectest: spec fixtures missing")

// index finds the request, notification and error-response definitions.
func (s *schemaSet) index() {
	names := make([]string, 0, len(s.defs))
	for name := range s.defs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		def, _ := s.defs[name].(map[string]any)
		props, _ := def["properties"].(map[string]any)
		if props == nil {
			continue
		}
		if _, ok := props["jsonrpc"]; !ok {
			continue // embedded request shapes, params, results
		}
		if m, ok := props["method"].(map[string]any); ok {
			method, ok := m["const"].(string)
			if !ok || strings.HasPrefix(name, "Client") || strings.HasPrefix(name, "Server") {
				continue
			}
			if hasRequired(def, "id") {
				s.requests[method] = name
			} else {
				s.notifications[method] = name
			}
			continue
		}
		if code, ok := errorCode(props["error"]); ok {
			s.errorsByCode[code] = name
		}
	}
}

func hasRequired(def map[string]any, key string) bool {
	req, _ := def["required"].([]any)
	for _, r := range req {
		if r == key {
			return true
		}
	}
	return false
}

// errorCode finds the const code of an error response definition's error
// member: {"allOf":[{"$ref":"Error"},{"properties":{"code":{"const":N}}}]}.
func errorCode(v any) (int64, bool) {
	e, _ := v.(map[string]any)
	all, _ := e["allOf"].([]any)
	for _, part := range all {
		p, _ := part.(map[string]any)
		props, _ := p["properties"].(map[string]any)
		code, _ := props["code"].(map[string]any)
		if n, ok := code["const"].(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				return i, true
			}
		}
	}
	return 0, false
}

// schema compiles (once) and returns the definition def.
func (s *schemaSet) schema(def string) (*jsonschema.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.compiled[def]; ok {
		return sch, nil
	}
	if _, ok := s.defs[def]; !ok {
		return nil, fmt.Errorf("spectest: schema %s has no definition %q", s.version, def)
	}
	sch, err := s.compiler.Compile(s.url + "#/$defs/" + def)
	if err != nil {
		return nil, fmt.Errorf("spectest: compiling %s %s: %w", s.version, def, err)
	}
	s.compiled[def] = sch
	return sch, nil
}

func (s *schemaSet) has(def string) bool {
	_, ok := s.defs[def]
	return ok
}

// check validates data against def.
func (s *schemaSet) check(def string, data []byte) error {
	sch, err := s.schema(def)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := sch.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return fmt.Errorf("%s %s: %#v", s.version, def, ve)
		}
		return err
	}
	return nil
}

// report turns a load or check error into a test error: fatal when the
// fixtures are missing, since nothing after it could be checked.
func report(t testing.TB, err error, what string, data []byte) {
	t.Helper()
	if errors.Is(err, ErrFixturesMissing) {
		t.Fatalf("spectest: %v", err)
	}
	t.Errorf("spectest: %s does not conform: %v\nmessage: %s", what, err, data)
}

// Check validates data against the definition def (such as
// "CallToolResult") of version's schema and returns what is wrong.
func Check[V ~string](version V, def string, data []byte) error {
	s, err := load(string(version))
	if err != nil {
		return err
	}
	return s.check(def, data)
}

// Validate fails the test unless data conforms to the definition def of
// version's schema. It skips the test when the fixtures are absent.
func Validate[V ~string](t testing.TB, version V, def string, data []byte) {
	t.Helper()
	if err := Check(version, def, data); err != nil {
		report(t, err, def, data)
	}
}

// ValidateMessage fails the test unless data, a whole JSON-RPC message that
// Parley emitted, conforms to version's schema. It chooses the definition
// from the message:
//
//   - a request or notification by its method (tools/call ⇒
//     CallToolRequest, notifications/progress ⇒ ProgressNotification);
//     methods the schema does not define are checked as plain JSON-RPC
//     requests or notifications;
//   - an error response as JSONRPCErrorResponse, and also as the specific
//     definition of its code when the schema has one (-32022 ⇒
//     UnsupportedProtocolVersionError);
//   - a result response by requestMethod, the method of the request it
//     answers: an input_required result must answer tools/call, prompts/get
//     or resources/read, must conform to InputRequiredResult and must carry
//     inputRequests or requestState; any other result must conform to the
//     method's result definition (and, where the schema has one, to its
//     ResultResponse definition, such as CallToolResultResponse). Under
//     2026-07-28 every result must have a resultType of complete or
//     input_required.
func ValidateMessage[V ~string](t testing.TB, version V, data []byte, requestMethod string) {
	t.Helper()
	if err := CheckMessage(version, data, requestMethod); err != nil {
		report(t, err, "message", data)
	}
}

// CheckMessage is ValidateMessage returning what is wrong instead of failing
// a test.
func CheckMessage[V ~string](version V, data []byte, requestMethod string) error {
	s, err := load(string(version))
	if err != nil {
		return err
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code json.Number `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	switch {
	case m.Method != nil && m.ID != nil:
		if def, ok := s.requests[*m.Method]; ok {
			return s.check(def, data)
		}
		return s.check("JSONRPCRequest", data)
	case m.Method != nil:
		if def, ok := s.notifications[*m.Method]; ok {
			return s.check(def, data)
		}
		return s.check("JSONRPCNotification", data)
	case m.Error != nil:
		if err := s.check("JSONRPCErrorResponse", data); err != nil {
			return err
		}
		if code, err := m.Error.Code.Int64(); err == nil {
			if def, ok := s.errorsByCode[code]; ok {
				return s.check(def, data)
			}
		}
		return nil
	case m.Result != nil:
		return s.checkResult(data, m.Result, requestMethod)
	default:
		return errors.New("neither a request, a notification nor a response")
	}
}

func (s *schemaSet) checkResult(data, result []byte, method string) error {
	if method == "" {
		return errors.New("a result response needs the method of the request it answers")
	}
	if err := s.check("JSONRPCResultResponse", data); err != nil {
		return err
	}
	var header struct {
		ResultType *string `json:"resultType"`
	}
	if err := json.Unmarshal(result, &header); err != nil {
		return fmt.Errorf("result is not an object: %w", err)
	}
	modern := modern(s.version)
	if modern && header.ResultType != nil && *header.ResultType == "input_required" {
		if !inputRequiredMethods[method] {
			return fmt.Errorf("%s must not be answered with input_required", method)
		}
		if err := s.check("InputRequiredResult", result); err != nil {
			return err
		}
		var ir struct {
			InputRequests json.RawMessage `json:"inputRequests"`
			RequestState  json.RawMessage `json:"requestState"`
		}
		_ = json.Unmarshal(result, &ir)
		if ir.InputRequests == nil && ir.RequestState == nil {
			return errors.New("an InputRequiredResult must carry inputRequests or requestState")
		}
		return nil
	}
	if modern && header.ResultType != nil && *header.ResultType == "task" {
		return checkCreateTask(method, result)
	}
	if modern {
		switch {
		case header.ResultType == nil:
			return errors.New("a 2026-07-28 result must carry resultType")
		case *header.ResultType != "complete":
			return fmt.Errorf("resultType %q is neither complete nor input_required", *header.ResultType)
		}
	}
	reqDef, ok := s.requests[method]
	if !ok {
		return nil // a method the schema does not define: the envelope was checked
	}
	base := strings.TrimSuffix(reqDef, "Request")
	if s.has(base + "ResultResponse") {
		if err := s.check(base+"ResultResponse", data); err != nil {
			return err
		}
	}
	resultDef := base + "Result"
	if !s.has(resultDef) {
		resultDef = "EmptyResult"
	}
	return s.check(resultDef, result)
}

// checkCreateTask checks a result with resultType "task", which only the
// tasks extension defines: an answer to tools/call, flat (no "task"
// wrapper), with a taskId, a status and both times, and without
// requestState, result, error or inputRequests, which live on tasks/get.
func checkCreateTask(method string, result []byte) error {
	if method != "tools/call" {
		return fmt.Errorf("%s must not be answered with resultType task", method)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(result, &m); err != nil {
		return fmt.Errorf("result is not an object: %w", err)
	}
	for _, k := range []string{"taskId", "status", "createdAt", "lastUpdatedAt"} {
		if v := m[k]; len(v) == 0 || v[0] != '"' {
			return fmt.Errorf("a CreateTaskResult must carry %s as a string", k)
		}
	}
	if _, ok := m["ttlMs"]; !ok {
		return errors.New("a CreateTaskResult must carry ttlMs (null for no limit)")
	}
	for _, k := range []string{"task", "requestState", "result", "error", "inputRequests", "ttl", "pollInterval"} {
		if _, ok := m[k]; ok {
			return fmt.Errorf("a CreateTaskResult must not carry %s", k)
		}
	}
	return nil
}
