package skills

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// The bounds of a frontmatter block. A SKILL.md is written by a server's
// author and read by hosts from any server, so the parser of its
// frontmatter holds the size of the block, the nesting of its values and
// the number of values (aliases expanded) to fixed bounds.
const (
	// MaxFrontmatterSize bounds the YAML between the two --- lines, in
	// bytes.
	MaxFrontmatterSize = 64 << 10
	// maxFrontmatterDepth bounds the nesting of mappings and sequences.
	maxFrontmatterDepth = 32
	// maxFrontmatterValues bounds the values of a frontmatter, counted
	// after aliases are expanded (an alias of a large value counts it
	// again), so that a few bytes of aliases cannot grow into millions of
	// values.
	maxFrontmatterValues = 10000
)

// ErrFrontmatter is matched (with errors.Is) by every error that says a
// SKILL.md has no frontmatter the extension can use.
var ErrFrontmatter = errors.New("skills: invalid frontmatter")

// frontmatterError is a reason a frontmatter block is unusable.
type frontmatterError struct{ reason string }

func (e *frontmatterError) Error() string        { return "skills: invalid frontmatter: " + e.reason }
func (e *frontmatterError) Is(target error) bool { return target == ErrFrontmatter }

func badFrontmatter(format string, args ...any) error {
	return &frontmatterError{fmt.Sprintf(format, args...)}
}

// splitFrontmatter returns the YAML between a SKILL.md's opening ---
// line and the next line that is --- (optionally followed by spaces or
// tabs), and the body after it. A UTF-8 byte order mark before the first
// line is skipped; lines may end in \r\n. An empty block (--- right after
// ---) is no block: the closing line must follow a line of YAML.
func splitFrontmatter(md []byte) (yamlText, body []byte, err error) {
	md = bytes.TrimPrefix(md, []byte("\uFEFF"))
	rest, ok := bytes.CutPrefix(md, []byte("---\n"))
	if !ok {
		if rest, ok = bytes.CutPrefix(md, []byte("---\r\n")); !ok {
			return nil, nil, badFrontmatter("SKILL.md does not begin with a --- line")
		}
	}
	for pos := 0; ; {
		line, next := rest[pos:], len(rest)
		if end := bytes.IndexByte(line, '\n'); end >= 0 {
			line, next = line[:end], pos+end+1
		}
		if pos > 0 && isClosingLine(bytes.TrimSuffix(line, []byte("\r"))) {
			return bytes.TrimSuffix(rest[:pos-1], []byte("\r")), rest[next:], nil
		}
		if next == len(rest) {
			return nil, nil, badFrontmatter("the frontmatter has no closing --- line")
		}
		// A closing line at pos ends a block of pos-1 bytes.
		if pos = next; pos-1 > MaxFrontmatterSize {
			return nil, nil, badFrontmatter("no closing --- line within %d bytes, the limit of a frontmatter", MaxFrontmatterSize)
		}
	}
}

// isClosingLine reports whether line (without its line break) is ---
// followed by nothing but spaces and tabs.
func isClosingLine(line []byte) bool {
	marker, ok := bytes.CutPrefix(line, []byte("---"))
	return ok && len(bytes.Trim(marker, " \t")) == 0
}

// ParseFrontmatter reads the YAML frontmatter of a SKILL.md and renders
// it as a JSON object, as a skill entry carries it: members in the order
// the YAML has them, strings, numbers, booleans and null for the YAML
// scalars (a timestamp or any other tagged scalar as its text), arrays for
// sequences, objects for mappings, aliases expanded. A mapping key must be
// a scalar and appear once; a float that JSON cannot hold (.nan, .inf) is
// refused. The block must be a mapping; name and description are not
// checked here (see [Skill.Check]). Every error matches [ErrFrontmatter].
//
// The input is a peer's, for a host: the block is bounded
// ([MaxFrontmatterSize]), and so are its nesting and its number of values.
func ParseFrontmatter(md []byte) (json.RawMessage, error) {
	text, _, err := splitFrontmatter(md)
	if err != nil {
		return nil, err
	}
	return frontmatterJSON(text)
}

// frontmatterJSON converts the YAML text of a frontmatter block.
func frontmatterJSON(text []byte) (out json.RawMessage, err error) {
	if !utf8.Valid(text) {
		return nil, badFrontmatter("the frontmatter is not valid UTF-8")
	}
	var doc yaml.Node
	defer func() {
		// The YAML parser is not ours: whatever input makes it panic is
		// refused as any other bad frontmatter, never a crash.
		if r := recover(); r != nil {
			out, err = nil, badFrontmatter("the YAML parser failed: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(text))
	if err := dec.Decode(&doc); err != nil {
		return nil, badFrontmatter("%v", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, badFrontmatter("the frontmatter holds more than one YAML document")
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, badFrontmatter("the frontmatter is not a YAML mapping")
	}
	w := &jsonWriter{budget: maxFrontmatterValues}
	if err := w.value(doc.Content[0], 0); err != nil {
		return nil, err
	}
	return w.buf.Bytes(), nil
}

// jsonWriter writes a YAML node tree as JSON.
type jsonWriter struct {
	buf    bytes.Buffer
	budget int // values left to write
}

func (w *jsonWriter) value(n *yaml.Node, depth int) error {
	if w.budget--; w.budget < 0 {
		return badFrontmatter("more than %d values (aliases expanded)", maxFrontmatterValues)
	}
	if depth > maxFrontmatterDepth {
		return badFrontmatter("nested deeper than %d levels", maxFrontmatterDepth)
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return badFrontmatter("line %d: an alias to nothing", n.Line)
		}
		// An alias counts as deep as what it stands for, from here: an
		// alias inside its own anchor's value cannot loop for ever.
		return w.value(n.Alias, depth+1)
	case yaml.MappingNode:
		w.buf.WriteByte('{')
		seen := make(map[string]bool, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.AliasNode && k.Alias != nil {
				k = k.Alias
			}
			if k.Kind != yaml.ScalarNode {
				return badFrontmatter("line %d: a mapping key that is not a scalar", k.Line)
			}
			if seen[k.Value] {
				return badFrontmatter("line %d: the key %q appears twice", k.Line, k.Value)
			}
			seen[k.Value] = true
			if i > 0 {
				w.buf.WriteByte(',')
			}
			writeJSONString(&w.buf, k.Value)
			w.buf.WriteByte(':')
			if err := w.value(n.Content[i+1], depth+1); err != nil {
				return err
			}
		}
		w.buf.WriteByte('}')
	case yaml.SequenceNode:
		w.buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			if err := w.value(c, depth+1); err != nil {
				return err
			}
		}
		w.buf.WriteByte(']')
	case yaml.ScalarNode:
		return w.scalar(n)
	default:
		return badFrontmatter("line %d: an unexpected YAML node", n.Line)
	}
	return nil
}

// scalar writes a scalar by its resolved tag.
func (w *jsonWriter) scalar(n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!null":
		w.buf.WriteString("null")
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return badFrontmatter("line %d: %v", n.Line, err)
		}
		w.buf.WriteString(strconv.FormatBool(b))
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			w.buf.WriteString(strconv.FormatInt(i, 10))
			return nil
		}
		var u uint64
		if err := n.Decode(&u); err == nil {
			w.buf.WriteString(strconv.FormatUint(u, 10))
			return nil
		}
		return w.float(n)
	case "!!float":
		return w.float(n)
	default: // !!str, !!timestamp, !!binary, and tags of the author's own: the text
		writeJSONString(&w.buf, n.Value)
	}
	return nil
}

func (w *jsonWriter) float(n *yaml.Node) error {
	var f float64
	if err := n.Decode(&f); err != nil {
		return badFrontmatter("line %d: %v", n.Line, err)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return badFrontmatter("line %d: %q is a number JSON cannot hold", n.Line, n.Value)
	}
	w.buf.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	return nil
}

// writeJSONString writes s as a JSON string, leaving <, > and & as they
// are (the frontmatter is text for hosts, not for HTML).
func writeJSONString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a valid UTF-8 string always encodes
	buf.Truncate(buf.Len() - 1) // Encode's newline
}
