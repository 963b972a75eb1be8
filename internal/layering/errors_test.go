package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// errorHome is the one file that builds JSON-RPC error objects: every
// protocol error goes out through its constructors (design record 020).
const errorHome = "jsonrpc/wire/error.go"

// errorPackages are the import names under which the module's code reaches
// the error type (wire.Error, its alias jsonrpc.Error and mcp.Error).
var errorPackages = map[string]bool{"wire": true, "jsonrpc": true, "mcp": true}

// TestErrorsBuiltInOnePlace holds that no non-test file outside errorHome
// writes an error object literal or calls NewError: a new error goes
// through the constructor of its code (wire.InvalidParams, wire.Internal,
// mcp.NewUnsupportedProtocolVersionError, ...), so its code, standard
// message and data have one definition. Examples and the conformance
// fixtures are held to it too: they are the code users copy.
func TestErrorsBuiltInOnePlace(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := 0
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || nestedModule(path, rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || rel == errorHome {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		// In these packages the error type is a local name (Error).
		dir := filepath.ToSlash(filepath.Dir(rel))
		inWire := dir == "jsonrpc/wire" || dir == "jsonrpc" || dir == "mcp"
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if isErrorType(n.Type, inWire) {
					t.Errorf("%s: an error object built by hand; use the constructor of its code in %s", fset.Position(n.Pos()), errorHome)
				}
			case *ast.CallExpr:
				if isNewError(n.Fun, inWire) && rel != "jsonrpc/wire.go" { // the deprecated forwarder
					t.Errorf("%s: NewError called; use the constructor of the code in %s", fset.Position(n.Pos()), errorHome)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("checked %d files; the walk missed the module", files)
	}
}

func isErrorType(e ast.Expr, inWire bool) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		return ok && errorPackages[x.Name] && e.Sel.Name == "Error"
	case *ast.Ident:
		return inWire && e.Name == "Error"
	}
	return false
}

func isNewError(e ast.Expr, inWire bool) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		return ok && errorPackages[x.Name] && e.Sel.Name == "NewError"
	case *ast.Ident:
		return inWire && e.Name == "NewError"
	}
	return false
}
