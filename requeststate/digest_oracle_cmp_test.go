package requeststate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/internal/jsontext"
)

// newRequestDigest is requestDigest of a tools/call with raw arguments.
func newRequestDigest(name string, raw []byte) ([digestLen]byte, error) {
	c := getCanon(domainRequest)
	defer putCanon(c)
	c.textString("tools/call")
	c.textString(name)
	if err := c.jsonArguments(raw); err != nil {
		return [digestLen]byte{}, err
	}
	return c.sum(), nil
}

// checkAgainstOldParser fails t when the digest of raw differs from the
// old parser's: every text the old parser digested must digest to the same
// bytes, but for texts nested deeper than jsontext.MaxDepth, which the
// digest now refuses (the old parser went to 256; no such text can reach
// it, the JSON-RPC layer refusing any message nested deeper than
// jsontext.MaxDepth); and every text it refused must still be refused,
// for the same reason (bad JSON or ambiguity). The oracle calls the
// current jsontext.CheckUnambiguous, which only differs from the one it
// called in how deep it goes (512 then), so it is the old digest exactly
// up to jsontext.MaxDepth.
func checkAgainstOldParser(t *testing.T, raw []byte) {
	t.Helper()
	old, oldErr := oldRequestDigest("t", raw)
	got, err := newRequestDigest("t", raw)
	switch {
	case oldErr == nil && err == nil:
		if got != old {
			t.Fatalf("%q: digest changed", raw)
		}
	case oldErr == nil:
		if !errors.Is(err, errBadJSON) || jsontext.Depth(raw) <= jsontext.MaxDepth {
			t.Fatalf("%q: digested before, now refused: %v", raw, err)
		}
	case err == nil:
		t.Fatalf("%q: refused before (%v), now digested", raw, oldErr)
	case jsontext.Depth(raw) > jsontext.MaxDepth:
		// Refused by both; the oracle shares CheckUnambiguous, whose
		// limit is now jsontext.MaxDepth too, so it may give the other
		// reason.
	case errors.Is(oldErr, errAmbiguous) != errors.Is(err, errAmbiguous) || errors.Is(oldErr, errOldBadJSON) != errors.Is(err, errBadJSON):
		t.Fatalf("%q: refused before with %v, now with %v", raw, oldErr, err)
	}
}

// digestCorpus gathers argument texts: the seeds of the digest tests, the
// fuzz corpora and golden transcripts of the repository (whole texts, and
// every JSON object and array inside them), and nestings around the limits.
func digestCorpus(t *testing.T) [][]byte {
	var corpus [][]byte
	seen := map[string]bool{}
	add := func(b []byte) {
		if !seen[string(b)] {
			seen[string(b)] = true
			corpus = append(corpus, bytes.Clone(b))
		}
	}
	for _, s := range []string{
		``, `null`, ` null `, `{}`, ` { } `, `[]`, `"ab"`, `["a","b"]`, `0`, `-0`, `1e400`, `{"n":1e9999999999999999}`,
		`{"a":1,"b":[true,null,"x"]}`, `{"n":1.50e3}`, `[{"z":{}},-0.0]`, `"\u00e9"`, `{"a":{"a":{"a":1}}}`,
		`{"s":"\ud83d\ude00"}`, `{"s":"\ud800"}`, `{"s":"\ud800\u0041"}`, `{"a\u0000":"x\u0000"}`, `{"a":1,"a":2}`,
		`{"amount":1,"Amount":1000}`, `{"s":1,"\u017f":2}`, "{\"a\":\"\xff\"}", "{\"\xed\xa0\x80\":1}",
		`{"n":1` + strings.Repeat("0", 1000) + `e-1000}`, `{"n":` + strings.Repeat("9", 300) + `}`,
		`{"z":1,"y":2,"x":3,"w":4,"v":5,"u":6,"t":7,"s":8,"r":9,"q":10,"p":11,"o":12,"n":13,"m":14,"l":15,"k":16,"j":17,"i":18}`,
		`{"\u0062":1,"a":2}`, `{"b\n":1,"b":2}`, `{"a":"\b\f\n\r\t\"\\\/"}`, `[1.0,10e-1,0.1e1,100E-2,-0.000,0e5]`,
		`{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":"\x"}`,
		`{"a":"\u12"}`, "{\"a\":\"\x01\"}", `{"a":tru}`, `{} {}`, `{"a":1}x`, `nul`, `-`, `"abc`, `[1 2]`, `{"a" 1}`,
	} {
		add([]byte(s))
	}
	for _, n := range []int{1, 2, 100, 127, 128, 129, 200, 255, 256, 257, 300} {
		add([]byte(strings.Repeat("[", n) + strings.Repeat("]", n)))
		add([]byte(strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)))
		add([]byte(`{"x":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`))
	}
	// The fuzz corpora and golden transcripts of the repository.
	root := filepath.Join("..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !strings.Contains(path, filepath.Join("testdata", "fuzz")) && !strings.HasSuffix(path, ".txtar") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, text := range corpusTexts(data) {
			add(text)
			for _, v := range innerValues(text) {
				add(v)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return corpus
}

// corpusTexts returns the texts of a fuzz corpus file (its string and
// []byte values) or the lines of any other file.
func corpusTexts(data []byte) [][]byte {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, prefix := range []string{"string(", "[]byte("} {
			if strings.HasPrefix(line, prefix) && strings.HasSuffix(line, ")") {
				if s, err := strconv.Unquote(line[len(prefix) : len(line)-1]); err == nil {
					out = append(out, []byte(s))
				}
				line = ""
			}
		}
		if line != "" {
			out = append(out, []byte(line))
		}
	}
	return out
}

// innerValues returns every object and array inside the valid JSON text
// data (and the members of any object), which is where arguments live.
func innerValues(data []byte) [][]byte {
	i := bytes.IndexAny(data, "{[")
	if i < 0 || !json.Valid(data[i:]) {
		return nil
	}
	var out [][]byte
	var walk func(v []byte)
	walk = func(v []byte) {
		switch jsontext.FirstByte(v) {
		case '{':
			out = append(out, v)
			jsontext.Members(v, func(_, val []byte) { walk(val) })
		case '[':
			out = append(out, v)
			it := jsontext.NewArrayIter(v)
			for it.Next() {
				walk(it.Val)
			}
		default:
			out = append(out, v)
		}
	}
	walk(data[i:])
	return out
}

// mutations returns raw with small edits: every prefix, and each byte
// replaced by a few that matter to the grammar.
func mutations(raw []byte) [][]byte {
	var out [][]byte
	for i := 0; i <= len(raw) && i < 40; i++ {
		out = append(out, raw[:i])
	}
	for i := 0; i < len(raw) && i < 40; i++ {
		for _, b := range []byte{'"', '\\', '0', '-', '.', 'e', ',', ':', ']', '}', ' ', 0x01, 0xFF} {
			m := bytes.Clone(raw)
			m[i] = b
			out = append(out, m)
		}
		out = append(out, append(bytes.Clone(raw[:i]), raw[i+1:]...))
	}
	return out
}

// TestDigestMatchesOldParser checks that moving the digest onto the shared
// scanner changed no digest: over the corpus and small edits of it, every
// text digests as it did with the old parser, or is refused as it was.
func TestDigestMatchesOldParser(t *testing.T) {
	corpus := digestCorpus(t)
	if len(corpus) < 100 {
		t.Fatalf("corpus of %d texts: the fuzz corpora or golden files were not found", len(corpus))
	}
	n := 0
	for _, raw := range corpus {
		checkAgainstOldParser(t, raw)
		n++
		if len(raw) <= 512 {
			for _, m := range mutations(raw) {
				checkAgainstOldParser(t, m)
				n++
			}
		}
	}
	t.Logf("%d texts compared", n)
}

func FuzzDigestMatchesOldParser(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[true,null,"x"]}`, `{"n":1.50e3}`, `[{"z":{}},-0.0]`, `"\u00e9"`, `{"s":"\ud83d\ude00","A":{"b":[1e5]}}`, `{"a":"\u0000"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkAgainstOldParser(t, raw)
	})
}
