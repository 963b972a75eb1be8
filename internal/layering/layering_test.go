// Package layering holds a test of the module's import graph: the rules of
// docs/design/001-layout.md, checked rather than hoped for.
package layering

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/parley-mcp/parley/"

// allowed lists, for every library package, the module's packages its
// non-test files may import. Examples and the conformance fixtures may
// import anything. A package missing here fails the test: add it, and
// decide where it sits.
var allowed = map[string][]string{
	"auth":                    {},
	"internal/jsontext":       {},
	"transport":               {},
	"jsonrpc/wire":            {},
	"jsonrpc":                 {"internal/jsontext", "jsonrpc/wire", "transport"},
	"mcp":                     {"internal/jsontext", "jsonrpc/wire"},
	"transport/stdio":         {"transport"},
	"server":                  {"auth", "internal/fairshare", "internal/jsontext", "internal/questionkey", "jsonrpc", "jsonrpc/wire", "mcp", "transport"}, // auth: the caller of a request, for limits per caller (design record 034); internal/questionkey: a back-channel question's key, for mcptest (design record 046)
	"client":                  {"internal/jsontext", "jsonrpc", "jsonrpc/wire", "mcp", "transport"},
	"transport/streamhttp":    {"auth", "internal/fairshare", "internal/jsontext", "jsonrpc", "jsonrpc/wire", "mcp", "server", "transport"},
	"requeststate":            {"auth", "internal/jsontext", "internal/oncestore", "jsonrpc", "jsonrpc/wire", "mcp", "server"},
	"requeststate/redisstore": {"internal/oncestore/redisonce", "requeststate"},
	"tasks":                   {"auth", "internal/jsontext", "jsonrpc/wire", "mcp", "requeststate", "server"},
	"tasks/redisstore":        {"mcp", "tasks"},  // the tasks extension, on the extension surface only (design record 026)
	"apps":                    {"mcp", "server"}, // the MCP Apps extension, on the extension surface only (design record 047)
	"mcpserver":               {"apps", "auth", "internal/jsontext", "jsonrpc", "jsonrpc/wire", "mcp", "requeststate", "server", "tasks", "transport", "transport/streamhttp"},
	"skills":                  {"client", "jsonrpc/wire", "mcp", "mcpserver", "server"},                                    // the skills extension: a server on mcpserver's resources and the extension surface, and its client (design record 044)
	"bridge":                  {"client", "jsonrpc", "jsonrpc/wire", "mcp", "server", "transport", "transport/streamhttp"}, // a host's server and a remote server's client at once (design record 033)
	"mcptest":                 {"client", "internal/questionkey", "mcp", "transport"},                                      // the test kit: a client on any server that serves a connection, the key of a legacy question from the server's side of the pipe (design record 046)
	"internal/spectest":       {},                                                                                          // the oracle: imports nothing of Parley's (its tests compare its facts with mcp's)
	"internal/layering":       {},
	"internal/mcpgen":         {}, // the encoder generator (design record 022): standard library only
	"internal/leakcheck":      {},
	"internal/fairshare":      {},                   // the room every pool shared by callers keeps (design record 039)
	"internal/testwait":       {},                   // bounded waits for tests (standard library only)
	"internal/wiregolden":     {"mcp", "transport"}, // golden wire tests: txtar archives of what a server sent
	"internal/questionkey":    {},                   // a legacy back-channel question's key in its context (design record 046)
	"internal/redistest":      {},                   // a redis-server of a test's own
	"internal/docscheck":      {},                   // the README's and the guides' commands, run as written (tests only)
	"auth/resourceserver":     {"auth"},
	"auth/jwtverify":          {"auth", "auth/resourceserver"},
	"auth/authtest":           {},
	"auth/oauthclient":        {},
	// The bounded consume-once store of one process (single-use states,
	// DPoP proofs) and its one Redis command, each with the wrappers' own
	// options and errors (design record 039 for the reserve).
	"internal/oncestore":           {"internal/fairshare"},
	"internal/oncestore/redisonce": {}, // go-redis only, so that only the Redis stores depend on it
	// DPoP proofs (design record 048): go-jose, apart from the middleware.
	"auth/dpopverify":            {"auth/resourceserver", "internal/oncestore"},
	"auth/dpopverify/redisstore": {"auth/dpopverify", "internal/oncestore/redisonce"},
	// Experimental extensions: built on the public surface like the
	// others, named so while their proposal is.
	"experimental/servercard": {"mcp"}, // a server's identity (server.Server satisfies its Source) and net/http
	// The command-line client (design record 032): a user of the SDK like
	// any other, through the client, its transports and the OAuth client.
	"cmd/parley": {"apps", "auth/oauthclient", "bridge", "client", "experimental/servercard", "jsonrpc", "mcp", "skills", "transport", "transport/stdio", "transport/streamhttp"},
}

func TestImportGraph(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if rel != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
			return filepath.SkipDir
		}
		if rel == "examples" || rel == "conformance" || nestedModule(path, rel) {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files here (or only tests)
		}
		seen++
		rules, ok := allowed[rel]
		if !ok {
			t.Errorf("package %s is not in the layering rules; add it to allowed", rel)
			return nil
		}
		for _, imp := range pkg.Imports {
			dep, ours := strings.CutPrefix(imp, module)
			if ours && !slices.Contains(rules, dep) {
				t.Errorf("%s imports %s, which its layer may not (allowed: %v)", rel, dep, rules)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < len(allowed)-1 { // internal/layering has only this test
		t.Errorf("found %d packages, the rules name %d: a package has moved or gone", seen, len(allowed))
	}
}

// doesNoIO lists the packages that describe messages and must not reach,
// directly or through another package, the packages that move them: the
// protocol's types stay usable (and testable) without a connection.
var doesNoIO = map[string][]string{
	"mcp":               {"jsonrpc", "transport", "transport/stdio", "transport/streamhttp", "server", "client"},
	"jsonrpc/wire":      {"jsonrpc", "transport"},
	"internal/jsontext": {"jsonrpc", "transport"},
}

// TestMessageTypesDoNoIO checks doesNoIO on the transitive imports of the
// non-test files: mcp may import neither jsonrpc (whose Conn does I/O) nor
// any transport, only the leaf jsonrpc/wire for ids and error objects.
func TestMessageTypesDoNoIO(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var reach func(pkg string, seen map[string]bool)
	reach = func(pkg string, seen map[string]bool) {
		p, err := build.ImportDir(filepath.Join(root, filepath.FromSlash(pkg)), 0)
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		for _, imp := range p.Imports {
			if dep, ours := strings.CutPrefix(imp, module); ours && !seen[dep] {
				seen[dep] = true
				reach(dep, seen)
			}
		}
	}
	for pkg, banned := range doesNoIO {
		seen := map[string]bool{}
		reach(pkg, seen)
		for _, b := range banned {
			if seen[b] {
				t.Errorf("%s reaches %s; it must not (it describes messages, it does not move them)", pkg, b)
			}
		}
	}
}

// TestNoVersionStrings keeps protocol-generation differences behind
// mcp.ProtocolVersion: outside mcp/version.go no library code spells a
// protocol version (a date) as a string literal. The one other exception is
// the test oracle, internal/spectest, which names the versions whose
// schemas it holds without importing mcp (design record 024).
func TestNoVersionStrings(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	date := regexp.MustCompile(`^"\d{4}-\d{2}-\d{2}"$`)
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "examples" || rel == "conformance" || nestedModule(path, rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || rel == "mcp/version.go" || rel == "internal/spectest/spectest.go" {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && date.MatchString(lit.Value) {
				t.Errorf("%s spells the protocol version %s; use the mcp.ProtocolVersion constants and methods", rel, lit.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// nestedModule reports whether the directory at path (rel from the root)
// holds a module of its own, such as bench/, which the go command keeps out
// of this module's packages and which these rules therefore do not govern.
func nestedModule(path, rel string) bool {
	if rel == "." {
		return false
	}
	_, err := os.Stat(filepath.Join(path, "go.mod"))
	return err == nil
}

// noRedis lists packages that must not reach the Redis client, directly
// or through another of the module's packages: only a server that uses a
// Redis store depends on it (the stores and internal/oncestore/redisonce
// are packages of their own for that).
var noRedis = []string{"requeststate", "auth/dpopverify", "internal/oncestore", "tasks", "server"}

func TestRedisOnlyInRedisStores(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var reach func(pkg string, path []string, seen map[string]bool)
	reach = func(pkg string, path []string, seen map[string]bool) {
		p, err := build.ImportDir(filepath.Join(root, filepath.FromSlash(pkg)), 0)
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "github.com/redis/") {
				t.Errorf("%s reaches %s (through %s); only the Redis stores may", path[0], imp, strings.Join(path, " -> "))
			}
			if dep, ours := strings.CutPrefix(imp, module); ours && !seen[dep] {
				seen[dep] = true
				reach(dep, append(path[:len(path):len(path)], dep), seen)
			}
		}
	}
	for _, pkg := range noRedis {
		reach(pkg, []string{pkg}, map[string]bool{})
	}
}
