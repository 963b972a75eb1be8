package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/skills"
	"github.com/parley-mcp/parley/transport"
)

// skillsFixture serves two skills; with tamper, its FORMS.md is not
// what the entry says (the same length, another digest).
func skillsFixture(t *testing.T, tamper bool) *mcpserver.Server {
	t.Helper()
	s, err := mcpserver.New(mcp.Implementation{Name: "skills-fixture", Version: "1.0.0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = skills.Serve(s, fstest.MapFS{
		"pdf-processing/SKILL.md":            {Data: []byte("---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\n# PDF processing\n\nRead references/FORMS.md first.\n")},
		"pdf-processing/references/FORMS.md": {Data: []byte("# Forms\n\nFill every field.\n")},
		"pdf-processing/assets/logo.bin":     {Data: []byte{0xff, 0xd8, 0xff}},
		"acme/refunds/SKILL.md":              {Data: []byte("---\nname: refunds\ndescription: |\n  Process refund requests.\n  Second line.\nlicense: Apache-2.0\n---\nBody.\n")},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tamper {
		s.Use(func(next server.Handler) server.Handler {
			return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
				res, err := next(ctx, req)
				if r, ok := res.(*mcp.ReadResourceResult); ok && strings.HasSuffix(r.Contents[0].ResourceURI(), "FORMS.md") {
					r.Contents = []mcp.ResourceContents{&mcp.TextResourceContents{URI: r.Contents[0].ResourceURI(), Text: "# Forms\n\nFill EVERY field.\n"}}
				}
				return res, err
			}
		})
	}
	return s
}

// runSkills runs parley with args against srv, as runFixture does.
func runSkills(t *testing.T, srv *mcpserver.Server, args ...string) result {
	t.Helper()
	var stdout, stderr lockedBuffer
	a := &app{
		stdin:  strings.NewReader(""),
		stdout: &stdout,
		stderr: &stderr,
		dial: func(context.Context) (transport.Transport, error) {
			return srv.InMemoryTransport(), nil
		},
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := run(ctx, a, append([]string{"--out", out}, args...))
	if ctx.Err() != nil {
		t.Fatalf("parley %s did not finish within 30s", strings.Join(args, " "))
	}
	clean := func(s string) string { return strings.ReplaceAll(s, out, "$OUT") }
	return result{clean(stdout.String()), clean(stderr.String()), code}
}

// TestSkillsGolden: skills list and skills fetch, readable and --json,
// both generations; a file that fails verification, an unlisted file and
// an unknown skill are protocol errors (exit 3) and print nothing of the
// content; a server without the extension too.
func TestSkillsGolden(t *testing.T) {
	cases := []struct {
		name   string
		tamper bool
		args   []string
		code   int
	}{
		{"skills-list", false, []string{"skills", "list"}, exitOK},
		{"skills-list-json", false, []string{"--json", "skills", "list"}, exitOK},
		{"skills-list-legacy", false, []string{"--protocol", "2025-11-25", "skills", "list"}, exitOK},
		{"skills-fetch", false, []string{"skills", "fetch", "skill://pdf-processing/SKILL.md"}, exitOK},
		{"skills-fetch-files", false, []string{"skills", "fetch", "skill://pdf-processing/SKILL.md", "references/FORMS.md", "skill://pdf-processing/assets/logo.bin"}, exitOK},
		{"skills-fetch-json", false, []string{"--json", "skills", "fetch", "skill://acme/refunds/SKILL.md"}, exitOK},
		{"skills-fetch-tampered", true, []string{"skills", "fetch", "skill://pdf-processing/SKILL.md", "references/FORMS.md"}, exitProtocol},
		{"skills-fetch-unlisted", false, []string{"skills", "fetch", "skill://pdf-processing/SKILL.md", "references/OTHER.md"}, exitProtocol},
		{"skills-fetch-unknown", false, []string{"skills", "fetch", "skill://nowhere/SKILL.md"}, exitProtocol},
		{"skills-fetch-no-uri", false, []string{"skills", "fetch"}, exitUsage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runSkills(t, skillsFixture(t, c.tamper), c.args...)
			if r.code != c.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, c.code, r.stdout, r.stderr)
			}
			golden(t, c.name, fmt.Sprintf("$ parley %s\n%s--- stderr\n%s--- exit %d\n", strings.Join(c.args, " "), r.stdout, r.stderr, c.code))
		})
	}
	// The CLI fixture declares no skills.
	r := runFixture(t, "skills", "list")
	if r.code != exitProtocol || !strings.Contains(r.stderr, "does not declare the skills extension") {
		t.Errorf("skills list on a server without skills: exit %d, stderr %q", r.code, r.stderr)
	}
}
