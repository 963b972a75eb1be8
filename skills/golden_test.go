package skills_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/tools/txtar"

	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/skills"
	"github.com/parley-mcp/parley/transport"
)

var update = os.Getenv("PARLEY_UPDATE_GOLDEN") == "1"

// goldenTree is the small tree the golden exchanges are played on.
func goldenTree() fstest.MapFS {
	return fstest.MapFS{
		"pdf-processing/SKILL.md":             {Data: []byte("---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nRead references/FORMS.md.\n")},
		"pdf-processing/references/FORMS.md":  {Data: []byte("# Forms\n")},
		"pdf-processing/templates/invoice.md": {Data: []byte("Invoice\n")},
	}
}

// TestGolden replays the exchanges of testdata/golden/*.txtar against a
// server of goldenTree over the in-memory transport: "in" holds the
// messages sent (one a line; # starts a comment), "out" every message the
// server sent, byte for byte. An archive that starts with initialize is a
// 2025-11-25 session. Every message is checked against the official schema
// of its generation (envelope, and the core methods' results), every
// result of the extension against testdata/skills.schema.json, and a
// legacy session's results carry no resultType, ttlMs or cacheScope while
// a 2026-07-28 one's carry all three (skills/list, skills/get) or
// resultType (directory reads). Set PARLEY_UPDATE_GOLDEN=1 to rewrite
// "out" after a deliberate change, and review the diff.
func TestGolden(t *testing.T) {
	oracle := skillsOracle(t)
	files, err := filepath.Glob("testdata/golden/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var in, out *txtar.File
			for i := range ar.Files {
				switch ar.Files[i].Name {
				case "in":
					in = &ar.Files[i]
				case "out":
					out = &ar.Files[i]
				}
			}
			if in == nil {
				t.Fatal(`no "in" file`)
			}
			got := replay(t, in.Data, oracle)
			if update {
				if out == nil {
					ar.Files = append(ar.Files, txtar.File{Name: "out"})
					out = &ar.Files[len(ar.Files)-1]
				}
				out.Data = got
				mustOK(t, os.WriteFile(file, txtar.Format(ar), 0o644))
				return
			}
			if out == nil || !bytes.Equal(got, out.Data) {
				t.Errorf("server sent:\n%s\nwant:\n%s", got, out.Data)
			}
		})
	}
}

// skillsOracle compiles the schema of the extension's results.
func skillsOracle(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/skills.schema.json")
	mustOK(t, err)
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	mustOK(t, err)
	c := jsonschema.NewCompiler()
	const url = "file:///skills.schema.json"
	mustOK(t, c.AddResource(url, doc))
	out := map[string]*jsonschema.Schema{}
	for method, def := range map[string]string{
		skills.MethodList:          "ListSkillsResult",
		skills.MethodGet:           "GetSkillResult",
		skills.MethodReadDirectory: "ReadResourceDirectoryResult",
	} {
		s, err := c.Compile(url + "#/$defs/" + def)
		mustOK(t, err)
		out[method] = s
	}
	return out
}

func replay(t *testing.T, input []byte, oracle map[string]*jsonschema.Schema) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := mcpserver.New(mcp.Implementation{Name: "golden", Version: "1.0.0"}, &mcpserver.Options{Logger: quiet})
	mustOK(t, err)
	_, err = skills.Serve(s, goldenTree(), nil)
	mustOK(t, err)
	clientEnd, serverEnd := transport.NewMemoryPipe()
	done := make(chan error, 1)
	go func() { done <- s.ServeConn(ctx, serverEnd) }()

	var lines [][]byte
	for line := range bytes.SplitSeq(input, []byte("\n")) {
		if line = bytes.TrimSpace(line); len(line) > 0 && line[0] != '#' {
			lines = append(lines, line)
		}
	}
	version := mcp.LatestVersion
	var first struct{ Method string }
	if len(lines) > 0 && json.Unmarshal(lines[0], &first) == nil && first.Method == mcp.MethodInitialize {
		version = mcp.Version20251125
	}
	var got bytes.Buffer
	for _, line := range lines {
		mustOK(t, clientEnd.Write(ctx, bytes.Clone(line)))
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		mustOK(t, json.Unmarshal(line, &req))
		if req.ID == nil {
			continue // a notification: no answer
		}
		msg, err := clientEnd.Read(ctx)
		if err != nil {
			t.Fatalf("reading the answer to %s: %v", line, err)
		}
		got.Write(msg)
		got.WriteByte('\n')
		checkAnswer(t, version, req.Method, msg, oracle)
	}
	clientEnd.Close()
	if err := <-done; err != nil {
		t.Errorf("ServeConn: %v", err)
	}
	return got.Bytes()
}

func checkAnswer(t *testing.T, version mcp.ProtocolVersion, method string, msg []byte, oracle map[string]*jsonschema.Schema) {
	t.Helper()
	spectest.ValidateMessage(t, version, msg, method)
	schema, ours := oracle[method]
	var resp struct {
		Result json.RawMessage `json:"result"`
	}
	mustOK(t, json.Unmarshal(msg, &resp))
	if !ours || resp.Result == nil {
		return
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(resp.Result))
	mustOK(t, err)
	if err := schema.Validate(inst); err != nil {
		t.Errorf("%s result does not fit the extension's schema: %v\n%s", method, err, resp.Result)
	}
	var header map[string]json.RawMessage
	mustOK(t, json.Unmarshal(resp.Result, &header))
	modern := []string{"resultType"}
	if method != skills.MethodReadDirectory {
		modern = append(modern, "ttlMs", "cacheScope")
	}
	for _, k := range modern {
		if _, has := header[k]; has != (version == mcp.LatestVersion) {
			t.Errorf("%s result at %s: %s present = %v", method, version, k, has)
		}
	}
}
