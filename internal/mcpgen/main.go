// Command mcpgen writes the JSON encoders of package mcp from its type
// declarations (design record 022). It is run by go generate in mcp:
//
//	go generate ./mcp
//
// and `make vet` checks that the checked-in output is what it writes now.
//
// A struct type opts in with a directive line in its doc comment:
//
//	//mcp:json [type=VALUE [unknown=ErrSentinel]] [const=member:VALUE] [nonnil=Field,...] [present=Field:FlagField] [default=Field:expr]
//
// and gets two methods in mcp/json_gen.go: appendJSON, which appends
// exactly the bytes json.Marshal writes for the type under those rules,
// and MarshalJSON, which runs appendJSON into a pooled buffer and falls
// back to marshalReference, the same rules through encoding/json, when
// appendJSON fails (so that errors read as encoding/json's). The rules:
//
//   - type=VALUE writes "type":VALUE as the first member, the
//     discriminator of a union's member, and const=member:VALUE another
//     member so (as "mode":"url");
//   - unknown=ErrSentinel (with type=) also writes UnmarshalJSON: the
//     struct decoded as encoding/json decodes it, after checking that a
//     "type" member, when present, holds VALUE, and an error matching
//     ErrSentinel when it does not;
//   - nonnil=F writes a nil slice or map in F as [] or {} instead of null;
//   - present=F:G writes F (a string with omitempty) also when it is empty
//     and the bool field G is set, as requestState's ForceRequestState;
//   - default=F:expr writes expr (of F's type) when F is empty.
//
// Fields follow encoding/json: declaration order, embedded structs
// flattened, the tag's name and omitempty. A field of a kind the generator
// does not know is an error, not a silent fallback: such a type keeps a
// hand-written encoder.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"log"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
)

func main() {
	dir := flag.String("dir", ".", "the directory of package mcp")
	out := flag.String("out", "json_gen.go", "the output file, relative to -dir; its _test.go twin lists the types for the tests")
	check := flag.Bool("check", false, "only check that the output file is up to date")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("mcpgen: ")
	src, list, err := generate(*dir, *out, nil)
	if err != nil {
		log.Fatal(err)
	}
	testOut := strings.TrimSuffix(*out, ".go") + "_test.go"
	for name, b := range map[string][]byte{*out: src, testOut: list} {
		path := filepath.Join(*dir, name)
		if *check {
			old, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(old, b) {
				log.Fatalf("%s is not up to date: run go generate ./mcp", path)
			}
			continue
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// rules are a type's directive options.
type rules struct {
	constKey string            // the discriminator's member name ("type" for type=), or ""
	typ      string            // the discriminator's value
	nonnil   map[string]bool   // fields written as [] or {} when nil
	present  map[string]string // field -> the bool field that makes it present
	defaults map[string]string // field -> the variable written when empty
	unknown  string            // the sentinel a decoded "type" other than typ matches, or ""
}

// gen is one generated type.
type gen struct {
	name   string
	st     *types.Struct
	rules  rules
	fields []field
}

// field is a member of the encoding, embedded structs flattened.
type field struct {
	goPath    string // the selector from the receiver, such as "Result.Meta"
	name      string // the JSON member name
	omitEmpty bool
	typ       types.Type
}

// generate returns the encoders of the //mcp:json types in the package in
// dir (out excluded) and their list for the tests. extra adds files, by
// name, as if they were in dir: the generator's own test declares a new
// type that way.
func generate(dir, out string, extra map[string][]byte) (src, list []byte, err error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	var files []*ast.File
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || n == out {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, f)
	}
	for _, n := range slices.Sorted(maps.Keys(extra)) {
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), extra[n], parser.ParseComments)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, f)
	}
	for _, f := range files {
		if f.Name.Name != "mcp" {
			return nil, nil, fmt.Errorf("%s: package %s, want mcp", fset.Position(f.Pos()).Filename, f.Name.Name)
		}
	}
	// The package is checked without the output file, so code that calls
	// the generated methods does not type-check here: such errors are
	// expected, and the declarations the generator reads are complete
	// without them. The compiler checks the result.
	conf := types.Config{Importer: sourceImporter(), Error: func(error) {}}
	pkg, _ := conf.Check("github.com/parley-mcp/parley/mcp", fset, files, nil)
	var gens []*gen
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				dir, ok := directive(doc)
				if !ok {
					continue
				}
				g, err := newGen(pkg, ts.Name.Name, dir)
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %s: %w", fset.Position(ts.Pos()), ts.Name.Name, err)
				}
				gens = append(gens, g)
			}
		}
	}
	slices.SortFunc(gens, func(a, b *gen) int { return strings.Compare(a.name, b.name) })
	// A generated MarshalJSON on an embedded type would be promoted to
	// the struct that embeds it, and encoding/json would then write the
	// whole struct as the embedded part: refuse it.
	for _, name := range pkg.Scope().Names() {
		st, ok := pkg.Scope().Lookup(name).Type().Underlying().(*types.Struct)
		if !ok {
			continue
		}
		for i := range st.NumFields() {
			f := st.Field(i)
			if !f.Embedded() {
				continue
			}
			for _, g := range gens {
				if types.TypeString(f.Type(), nil) == types.TypeString(pkg.Scope().Lookup(g.name).Type(), nil) {
					return nil, nil, fmt.Errorf("%s: //mcp:json on a type that %s embeds", g.name, name)
				}
			}
		}
	}
	generated := map[string]bool{}
	for _, g := range gens {
		generated[g.name] = true
	}
	var b bytes.Buffer
	b.WriteString("// Code generated by mcpgen from the //mcp:json types of package mcp. DO NOT EDIT.\n\n")
	b.WriteString("package mcp\n\n")
	b.WriteString("import (\n\t\"encoding/base64\"\n\t\"encoding/json\"\n\t\"strconv\"\n)\n\n")
	b.WriteString("var (\n\t_ = base64.StdEncoding\n\t_ = strconv.AppendInt\n)\n")
	for _, g := range gens {
		w := &writer{b: &b, pkg: pkg, generated: generated}
		if err := w.gen(g); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", g.name, err)
		}
	}
	if src, err = format.Source(b.Bytes()); err != nil {
		return nil, nil, fmt.Errorf("formatting the output: %w\n%s", err, b.Bytes())
	}
	b.Reset()
	b.WriteString("// Code generated by mcpgen from the //mcp:json types of package mcp. DO NOT EDIT.\n\n")
	b.WriteString("package mcp\n\nimport \"reflect\"\n\n")
	b.WriteString("// generatedTypes are the types mcpgen writes encoders for, each with its\n// reference encoding, for the differential tests.\n")
	b.WriteString("var generatedTypes = []generatedType{\n")
	for _, g := range gens {
		fmt.Fprintf(&b, "{reflect.TypeFor[%s](), func(v any) ([]byte, error) { return v.(*%s).marshalReference() }},\n", g.name, g.name)
	}
	b.WriteString("}\n")
	if list, err = format.Source(b.Bytes()); err != nil {
		return nil, nil, err
	}
	return src, list, nil
}

// sourceImporter imports the packages mcp imports from their source, once
// per process: generate is run many times by the generator's tests, and
// type-checking the standard library's encoding/json and its imports
// again each time cost seconds. The importer has a file set of its own
// (the imported packages' positions appear in no message of the
// generator's). It is not safe for concurrent use, nor is generate.
var sourceImporter = sync.OnceValue(func() types.Importer {
	return importer.ForCompiler(token.NewFileSet(), "source", nil)
})

// directive returns the options of a //mcp:json line in doc.
func directive(doc *ast.CommentGroup) (string, bool) {
	if doc == nil {
		return "", false
	}
	for _, c := range doc.List {
		if rest, ok := strings.CutPrefix(c.Text, "//mcp:json"); ok && (rest == "" || rest[0] == ' ') {
			return strings.TrimSpace(rest), true
		}
	}
	return "", false
}

func newGen(pkg *types.Package, name, dir string) (*gen, error) {
	obj := pkg.Scope().Lookup(name)
	st, ok := obj.Type().Underlying().(*types.Struct)
	if !ok {
		return nil, fmt.Errorf("//mcp:json on a type that is not a struct")
	}
	g := &gen{name: name, st: st, rules: rules{nonnil: map[string]bool{}, present: map[string]string{}, defaults: map[string]string{}}}
	for _, opt := range strings.Fields(dir) {
		k, v, ok := strings.Cut(opt, "=")
		if !ok {
			return nil, fmt.Errorf("option %q: want key=value", opt)
		}
		switch k {
		case "type":
			g.rules.constKey, g.rules.typ = "type", v
		case "const":
			k, v, ok := strings.Cut(v, ":")
			if !ok {
				return nil, fmt.Errorf("option %q: want const=member:value", opt)
			}
			g.rules.constKey, g.rules.typ = k, v
		case "nonnil":
			for _, f := range strings.Split(v, ",") {
				g.rules.nonnil[f] = true
			}
		case "present":
			f, flag, ok := strings.Cut(v, ":")
			if !ok {
				return nil, fmt.Errorf("option %q: want present=Field:FlagField", opt)
			}
			g.rules.present[f] = flag
		case "unknown":
			g.rules.unknown = v
		case "default":
			f, v, ok := strings.Cut(v, ":")
			if !ok {
				return nil, fmt.Errorf("option %q: want default=Field:variable", opt)
			}
			g.rules.defaults[f] = v
		default:
			return nil, fmt.Errorf("unknown option %q", k)
		}
	}
	fields, err := flatten(st, "")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, f := range fields {
		if seen[f.name] {
			// encoding/json's dominance rules would decide; the
			// generator does not, so a type must not need them.
			return nil, fmt.Errorf("member %q is declared twice", f.name)
		}
		seen[f.name] = true
	}
	if g.rules.unknown != "" && g.rules.constKey != "type" {
		return nil, fmt.Errorf("unknown= needs type=")
	}
	if g.rules.constKey != "" && seen[g.rules.constKey] {
		return nil, fmt.Errorf("a constant member %s and a field of that name", g.rules.constKey)
	}
	g.fields = fields
	for f := range g.rules.nonnil {
		if !hasField(fields, f) {
			return nil, fmt.Errorf("nonnil names no field %s", f)
		}
	}
	for f, flag := range g.rules.present {
		if !hasField(fields, f) {
			return nil, fmt.Errorf("present names no field %s", f)
		}
		// The rule is a string's omitempty with an exception: the encoder
		// tests the string and the flag, and the reference encoding
		// shadows the field with a *string (stateRef). Another kind, or a
		// field written even when empty, would get code that does not
		// compile or two encodings that disagree.
		for _, fd := range fields {
			if fd.goPath != f && !strings.HasSuffix(fd.goPath, "."+f) {
				continue
			}
			if b, ok := fd.typ.(*types.Basic); !ok || b.Kind() != types.String || !fd.omitEmpty {
				return nil, fmt.Errorf("present=%s:%s: %s must be a string with omitempty", f, flag, f)
			}
		}
		fv := fieldByName(st, flag)
		if fv == nil {
			return nil, fmt.Errorf("present names no flag field %s", flag)
		}
		if b, ok := fv.Type().(*types.Basic); !ok || b.Kind() != types.Bool {
			return nil, fmt.Errorf("present=%s:%s: %s must be a bool", f, flag, flag)
		}
	}
	for f := range g.rules.defaults {
		if !hasField(fields, f) {
			return nil, fmt.Errorf("default names no field %s", f)
		}
	}
	return g, nil
}

func hasField(fields []field, goPath string) bool {
	return slices.ContainsFunc(fields, func(f field) bool { return f.goPath == goPath || strings.HasSuffix(f.goPath, "."+goPath) })
}

func fieldByName(st *types.Struct, name string) *types.Var {
	for i := range st.NumFields() {
		if st.Field(i).Name() == name {
			return st.Field(i)
		}
	}
	return nil
}

// flatten lists the members of st as encoding/json does, embedded structs
// inlined.
func flatten(st *types.Struct, prefix string) ([]field, error) {
	var out []field
	for i := range st.NumFields() {
		v := st.Field(i)
		tag := reflect.StructTag(st.Tag(i)).Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if v.Embedded() && name == "" {
			if es, ok := v.Type().Underlying().(*types.Struct); ok {
				if _, isPtr := v.Type().(*types.Pointer); !isPtr {
					inner, err := flatten(es, prefix+v.Name()+".")
					if err != nil {
						return nil, err
					}
					out = append(out, inner...)
					continue
				}
			}
			return nil, fmt.Errorf("embedded field %s: only untagged embedded structs are flattened", v.Name())
		}
		if !v.Exported() {
			continue
		}
		if name == "" {
			name = v.Name()
		}
		f := field{goPath: prefix + v.Name(), name: name, typ: v.Type()}
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "":
			case "omitempty":
				f.omitEmpty = true
			default:
				return nil, fmt.Errorf("field %s: tag option %q is not supported", v.Name(), o)
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// writer writes the code of one type.
type writer struct {
	b         *bytes.Buffer
	pkg       *types.Package
	generated map[string]bool
	tmp       int
}

func (w *writer) p(format string, args ...any) { fmt.Fprintf(w.b, format+"\n", args...) }

// member is the Go text of a JSON member's key, with its separator.
func member(name string) string {
	k, _ := json.Marshal(name)
	return string(k) + ":"
}

func (w *writer) gen(g *gen) error {
	w.p("\n// appendJSON appends v as json.Marshal encodes %s (see its //mcp:json rules).", g.name)
	w.p("func (v *%s) appendJSON(dst []byte) ([]byte, error) {", g.name)
	w.p("if v == nil { return append(dst, \"null\"...), nil }")
	w.p("var err error")
	w.p("_ = err")
	// known: a member is certainly written already, so the next one is
	// preceded by a comma; before that, sep holds '{' or ',' at run time.
	known := g.rules.constKey != ""
	if known {
		w.p("dst = append(dst, `{%s%s`...)", member(g.rules.constKey), mustJSON(g.rules.typ))
	}
	runtime := false
	{
		k, any := known, false
		for _, f := range g.fields {
			cond := w.conditional(g, f)
			if !k && (any || cond) {
				runtime = true
			}
			if !cond {
				k = true
			}
			any = true
		}
	}
	if runtime {
		w.p("sep := byte('{')")
	}
	wroteAny := false
	for _, f := range g.fields {
		cond := w.conditional(g, f)
		if cond {
			w.p("if %s {", w.presentCond(g, f))
		}
		switch {
		case known:
			w.p("dst = append(dst, `,%s`...)", member(f.name))
		case !wroteAny && !cond:
			w.p("dst = append(dst, `{%s`...)", member(f.name))
		default:
			w.p("dst = append(dst, sep)")
			w.p("sep = ','")
			w.p("dst = append(dst, `%s`...)", member(f.name))
		}
		if err := w.value(g, f); err != nil {
			return fmt.Errorf("field %s: %w", f.goPath, err)
		}
		if cond {
			w.p("}")
		} else {
			known = true
		}
		wroteAny = true
	}
	switch {
	case known:
		w.p("return append(dst, '}'), nil")
	case !wroteAny:
		w.p("return append(dst, '{', '}'), nil")
	default:
		w.p("if sep == '{' { dst = append(dst, '{') }")
		w.p("return append(dst, '}'), nil")
	}
	w.p("}")

	w.p("\n// MarshalJSON encodes v as its //mcp:json rules say, without encoding/json's reflection.")
	w.p("func (v %s) MarshalJSON() ([]byte, error) {", g.name)
	w.p("bp := getEncBuf()")
	w.p("b, err := v.appendJSON((*bp)[:0])")
	w.p("if err != nil { encBufPool.Put(bp); return v.marshalReference() }")
	w.p("return finishEncBuf(bp, b), nil")
	w.p("}")

	w.p("\n// marshalReference is the encoding of %s through encoding/json, with the same rules:", g.name)
	w.p("// appendJSON's oracle in tests, and its fallback, so that errors read as encoding/json's.")
	w.p("func (v %s) marshalReference() ([]byte, error) {", g.name)
	w.p("type plain %s", g.name)
	for _, f := range g.fields {
		last := f.goPath[strings.LastIndex(f.goPath, ".")+1:]
		if g.rules.nonnil[last] || g.rules.nonnil[f.goPath] {
			w.p("if v.%s == nil { v.%s = %s{} }", f.goPath, f.goPath, types.TypeString(f.typ, w.qualifier))
		}
		if d, ok := g.rules.defaults[last]; ok {
			w.p("if !(%s) { v.%s = %s }", fmt.Sprintf(emptyTest(f.typ), "v."+f.goPath), f.goPath, d)
		}
	}
	var shadow []string
	var vals []string
	for _, f := range g.fields {
		last := f.goPath[strings.LastIndex(f.goPath, ".")+1:]
		if flag, ok := g.rules.present[last]; ok {
			shadow = append(shadow, fmt.Sprintf("%s *string `json:%q`", last, f.name+",omitempty"))
			vals = append(vals, fmt.Sprintf("stateRef(v.%s, v.%s)", f.goPath, flag))
		}
	}
	body := "json.Marshal(plain(v))"
	if len(shadow) > 0 {
		// The shadowing field dominates the embedded one and, being
		// later in index order, is written last: the present fields must
		// be last in the declaration too (checked below).
		body = fmt.Sprintf("json.Marshal(struct{ plain; %s }{plain(v), %s})", strings.Join(shadow, "; "), strings.Join(vals, ", "))
		lastField := g.fields[len(g.fields)-1].goPath
		if _, ok := g.rules.present[lastField[strings.LastIndex(lastField, ".")+1:]]; !ok || len(shadow) > 1 {
			return fmt.Errorf("present= needs its field to be the last member")
		}
	}
	if g.rules.constKey != "" {
		w.p("b, err := %s", body)
		w.p("return prependMember(`%s%s`, b, err)", member(g.rules.constKey), mustJSON(g.rules.typ))
	} else {
		w.p("return %s", body)
	}
	w.p("}")
	if g.rules.unknown != "" {
		w.p("\n// UnmarshalJSON decodes v as encoding/json decodes the struct, after checking that")
		w.p("// \"type\", when present, is %s; another type is an error matching %s.", mustJSON(g.rules.typ), g.rules.unknown)
		w.p("func (v *%s) UnmarshalJSON(data []byte) error {", g.name)
		w.p("type plain %s", g.name)
		w.p("*v = %s{}", g.name)
		w.p("return unmarshalTagged(data, %s, (*plain)(v), %s)", mustJSON(g.rules.typ), g.rules.unknown)
		w.p("}")
	}
	return nil
}

func mustJSON(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// conditional reports whether f is written only sometimes.
func (w *writer) conditional(g *gen, f field) bool {
	last := f.goPath[strings.LastIndex(f.goPath, ".")+1:]
	if _, ok := g.rules.defaults[last]; ok {
		return false
	}
	return f.omitEmpty && emptyTest(f.typ) != ""
}

// presentCond is the Go condition under which a conditional member is
// written.
func (w *writer) presentCond(g *gen, f field) string {
	last := f.goPath[strings.LastIndex(f.goPath, ".")+1:]
	cond := fmt.Sprintf(emptyTest(f.typ), "v."+f.goPath)
	if flag, ok := g.rules.present[last]; ok {
		cond += " || v." + flag
	}
	return cond
}

// emptyTest is the format of the "not empty" test encoding/json's
// omitempty applies to a value of t, or "" when omitempty never omits it
// (structs).
func emptyTest(t types.Type) string {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsString != 0:
			return `%s != ""`
		case u.Info()&types.IsBoolean != 0:
			return "%s"
		case u.Info()&types.IsNumeric != 0:
			return "%s != 0"
		}
	case *types.Slice, *types.Map:
		return "len(%s) > 0"
	case *types.Pointer, *types.Interface:
		return "%s != nil"
	}
	return ""
}

// qualifier names types of other packages by their package's name, as the
// generated file imports them.
func (w *writer) qualifier(p *types.Package) string {
	if p == w.pkg {
		return ""
	}
	return p.Name()
}

// rawMessage is json.RawMessage's type name.
const rawMessage = "encoding/json.RawMessage"

// nilCheck opens the branch for a non-nil x, writing empty for a nil one,
// unless x is known not to be nil.
func (w *writer) nilCheck(x, empty string, notNil bool) {
	if !notNil {
		w.p("if %s == nil { dst = append(dst, %q...) } else {", x, empty)
	}
}

// endNil closes nilCheck's branch.
func (w *writer) endNil(notNil bool) {
	if !notNil {
		w.p("}")
	}
}

// hasMethod reports whether t (or *t) has the named method.
func hasMethod(t types.Type, name string) (value, pointer bool) {
	ms := types.NewMethodSet(t)
	if ms.Lookup(nil, name) != nil {
		return true, true
	}
	if _, ok := t.(*types.Pointer); !ok {
		if types.NewMethodSet(types.NewPointer(t)).Lookup(nil, name) != nil {
			return false, true
		}
	}
	return false, false
}

// appenderOf reports whether values of t can append themselves:
// hand-written or generated appendJSON with the (dst) ([]byte, error)
// signature.
func (w *writer) appenderOf(t types.Type) bool {
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() != w.pkg {
		return false
	}
	if w.generated[n.Obj().Name()] {
		return true
	}
	m, _, _ := types.LookupFieldOrMethod(types.NewPointer(t), true, w.pkg, "appendJSON")
	fn, ok := m.(*types.Func)
	if !ok {
		return false
	}
	sig := fn.Type().(*types.Signature)
	return sig.Results().Len() == 2
}

// value writes the code that appends field f's value.
func (w *writer) value(g *gen, f field) error {
	last := f.goPath[strings.LastIndex(f.goPath, ".")+1:]
	x := "v." + f.goPath
	if d, ok := g.rules.defaults[last]; ok {
		w.p("{")
		w.p("x := %s", x)
		w.p("if !(%s) { x = %s }", fmt.Sprintf(emptyTest(f.typ), "x"), d)
		if err := w.expr("x", f.typ, false, false); err != nil {
			return err
		}
		w.p("}")
		return nil
	}
	// Under omitempty the member is written only when the value is not
	// empty, so it is not nil either.
	return w.expr(x, f.typ, g.rules.nonnil[last], w.conditional(g, f))
}

// expr writes the code that appends the encoding of the Go expression x
// of type t; nonnil writes a nil slice or map as empty.
func (w *writer) expr(x string, t types.Type, nonnil, notNil bool) error {
	ts := types.TypeString(t, nil)
	if ts == rawMessage {
		w.p("if dst, err = appendRawMessage(dst, %s); err != nil { return dst, err }", x)
		return nil
	}
	if w.appenderOf(t) {
		w.p("if dst, err = (&%s).appendJSON(dst); err != nil { return dst, err }", x)
		return nil
	}
	if p, ok := t.(*types.Pointer); ok {
		if w.appenderOf(p.Elem()) {
			// appendJSON writes a nil receiver as null.
			w.p("if dst, err = %s.appendJSON(dst); err != nil { return dst, err }", x)
			return nil
		}
		w.nilCheck(x, "null", notNil)
		if err := w.expr("(*"+x+")", p.Elem(), false, false); err != nil {
			return err
		}
		w.endNil(notNil)
		return nil
	}
	if v, ptr := hasMethod(t, "MarshalJSON"); v || ptr {
		// A Marshaler of its own (ProtocolVersion, a union): encoding/json
		// calls it and compacts its output; so does appendMarshal.
		w.p("if dst, err = appendMarshal(dst, %s); err != nil { return dst, err }", x)
		return nil
	}
	if v, ptr := hasMethod(t, "MarshalText"); v || ptr {
		w.p("if dst, err = appendMarshal(dst, %s); err != nil { return dst, err }", x)
		return nil
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsString != 0:
			w.p("dst = appendJSONString(dst, string(%s))", x)
		case u.Info()&types.IsBoolean != 0:
			w.p("dst = strconv.AppendBool(dst, bool(%s))", x)
		case u.Info()&types.IsInteger != 0 && u.Info()&types.IsUnsigned != 0:
			w.p("dst = strconv.AppendUint(dst, uint64(%s), 10)", x)
		case u.Info()&types.IsInteger != 0:
			w.p("dst = strconv.AppendInt(dst, int64(%s), 10)", x)
		case u.Info()&types.IsFloat != 0:
			bits := 64
			if u.Kind() == types.Float32 {
				bits = 32
			}
			w.p("if dst, err = appendJSONFloat(dst, float64(%s), %d); err != nil { return dst, err }", x, bits)
		default:
			return fmt.Errorf("basic type %s is not supported", u)
		}
		return nil
	case *types.Interface:
		w.p("if dst, err = appendValue(dst, %s); err != nil { return dst, err }", x)
		return nil
	case *types.Struct:
		if u.NumFields() == 0 {
			w.p("dst = append(dst, '{', '}')")
			return nil
		}
		return fmt.Errorf("struct type %s has no appendJSON: give it //mcp:json", ts)
	case *types.Slice:
		if b, ok := u.Elem().(*types.Basic); ok && b.Kind() == types.Byte {
			w.nilCheck(x, "null", notNil)
			w.p("dst = append(dst, '\"'); dst = base64.StdEncoding.AppendEncode(dst, %s); dst = append(dst, '\"')", x)
			w.endNil(notNil)
			return nil
		}
		empty := "null"
		if nonnil {
			empty = "[]"
		}
		w.nilCheck(x, empty, notNil)
		w.tmp++
		i := fmt.Sprintf("i%d", w.tmp)
		w.p("dst = append(dst, '[')")
		w.p("for %s := range %s {", i, x)
		w.p("if %s > 0 { dst = append(dst, ',') }", i)
		if err := w.expr(x+"["+i+"]", u.Elem(), false, false); err != nil {
			return err
		}
		w.p("}")
		w.p("dst = append(dst, ']')")
		w.endNil(notNil)
		return nil
	case *types.Map:
		k, ok := u.Key().Underlying().(*types.Basic)
		if !ok || k.Info()&types.IsString == 0 {
			return fmt.Errorf("map key %s is not supported", u.Key())
		}
		if _, named := u.Key().(*types.Named); named {
			return fmt.Errorf("named map key %s is not supported", u.Key())
		}
		empty := "null"
		if nonnil {
			empty = "{}"
		}
		w.nilCheck(x, empty, notNil)
		elem := types.TypeString(u.Elem(), w.qualifier)
		w.tmp++
		d, e := fmt.Sprintf("d%d", w.tmp), fmt.Sprintf("e%d", w.tmp)
		w.p("if dst, err = appendSortedMap(dst, %s, func(%s []byte, %s %s) ([]byte, error) {", x, d, e, elem)
		w.p("dst := %s", d)
		w.p("var err error")
		w.p("_ = err")
		if err := w.expr(e, u.Elem(), false, false); err != nil {
			return err
		}
		w.p("return dst, nil")
		w.p("}); err != nil { return dst, err }")
		w.endNil(notNil)
		return nil
	}
	return fmt.Errorf("type %s is not supported", ts)
}
