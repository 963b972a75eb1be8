package skills_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"
	"testing/fstest"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/internal/wiregolden"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/skills"
	"github.com/parley-mcp/parley/transport"
)

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
// resultType (directory reads). PARLEY_UPDATE_GOLDEN=1 rewrites "out"
// after a deliberate change (internal/wiregolden); review the diff.
func TestGolden(t *testing.T) {
	oracle := skillsOracle(t)
	wiregolden.Each(t, "testdata/golden/*.txtar", func(t *testing.T, in []byte) []byte {
		return replay(t, in, oracle)
	})
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

	lines := wiregolden.Lines(input)
	version := wiregolden.Version(lines)
	got := wiregolden.Replay(t, ctx, clientEnd, lines, func(method string, msg []byte) {
		checkAnswer(t, version, method, msg, oracle)
	})
	clientEnd.Close()
	if err := <-done; err != nil {
		t.Errorf("ServeConn: %v", err)
	}
	return got
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
