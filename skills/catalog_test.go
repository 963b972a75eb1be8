package skills_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/skills"
)

func listAll(t *testing.T, sess *client.Session) []skills.Skill {
	t.Helper()
	var out []skills.Skill
	for s, err := range skills.NewClient(sess, nil).List(context.Background()) {
		mustOK(t, err)
		out = append(out, *s)
	}
	return out
}

// Every directory with a SKILL.md is a skill; its entry carries the
// frontmatter in the file's order and every file below it, with digests
// and sizes of the raw bytes.
func TestServeEntries(t *testing.T) {
	s, cat := serve(t, tree(), nil)
	sess := session(t, s, nil)

	settings, ok := skills.NewClient(sess, nil).Supported()
	if !ok || !settings.DirectoryRead {
		t.Fatalf("extension declared = %v with %+v, want directoryRead", ok, settings)
	}
	if caps := sess.ServerCapabilities(); caps.Resources == nil {
		t.Error("the server does not declare resources")
	}

	got := listAll(t, sess)
	if len(got) != 2 || len(cat.Skills()) != 2 {
		t.Fatalf("listed %d skills (catalog %d), want 2", len(got), len(cat.Skills()))
	}
	refunds, pdf := got[0], got[1]
	if refunds.URI != "skill://acme/billing/refunds/SKILL.md" || pdf.URI != "skill://pdf-processing/SKILL.md" {
		t.Fatalf("uris = %s, %s", refunds.URI, pdf.URI)
	}
	if string(pdf.Frontmatter) != `{"name":"pdf-processing","description":"Extract, fill, and assemble PDF documents","metadata":{"version":"2.1.0"}}` {
		t.Errorf("pdf frontmatter = %s", pdf.Frontmatter)
	}
	// (encoding/json escapes <, > and & in the result: the same JSON.)
	if string(refunds.Frontmatter) != `{"name":"refunds","description":"Process refund requests \u003cper policy\u003e \u0026 more","license":"Apache-2.0"}` ||
		refunds.Description() != "Process refund requests <per policy> & more" {
		t.Errorf("refunds frontmatter = %s", refunds.Frontmatter)
	}
	files, err := pdf.Files()
	mustOK(t, err)
	want := []skills.File{
		{URI: "skill://pdf-processing/SKILL.md", Digest: digest(pdfSkill), Size: int64(len(pdfSkill))},
		{URI: "skill://pdf-processing/references/FORMS.md", Digest: digest("# Forms\n"), Size: 8},
		{URI: "skill://pdf-processing/scripts/extract.bin", Digest: digest("\xff\x00\xfe"), Size: 3},
		{URI: "skill://pdf-processing/templates/invoice.md", Digest: digest("Invoice\n"), Size: 8},
		{URI: "skill://pdf-processing/templates/regional/eu.md", Digest: digest("EU invoice\n"), Size: 11},
	}
	if len(files) != len(want) {
		t.Fatalf("files = %+v", files)
	}
	for i := range want {
		if files[i] != want[i] {
			t.Errorf("file %d = %+v, want %+v", i, files[i], want[i])
		}
	}
	if err := pdf.Check(skills.MaxFiles, skills.MaxSkillSize); err != nil {
		t.Errorf("the server's own entry fails Check: %v", err)
	}

	// Every file is a resource; the SKILL.md carries its frontmatter's
	// name and description. Nothing outside a skill, nothing hidden.
	var uris []string
	for r, err := range sess.Resources(context.Background()) {
		mustOK(t, err)
		uris = append(uris, r.URI)
		switch r.URI {
		case pdf.URI:
			if r.Name != "pdf-processing" || r.Description != "Extract, fill, and assemble PDF documents" || r.MIMEType != "text/markdown" || r.Size != int64(len(pdfSkill)) {
				t.Errorf("SKILL.md resource = %+v", r)
			}
		case "skill://pdf-processing/scripts/extract.bin":
			if r.MIMEType != "application/octet-stream" || r.Name != "scripts/extract.bin" {
				t.Errorf("binary resource = %+v", r)
			}
		}
	}
	if n := len(uris); n != 8 || strings.Contains(strings.Join(uris, " "), "README") || strings.Contains(strings.Join(uris, " "), "hidden") {
		t.Errorf("resources = %v", uris)
	}

	// A text file reads back as text, a binary one as a blob: the same
	// bytes either way.
	res, err := sess.ReadResource(context.Background(), pdf.URI)
	mustOK(t, err)
	if tc, ok := res.Contents[0].(*mcp.TextResourceContents); !ok || tc.Text != pdfSkill {
		t.Errorf("SKILL.md read = %+v", res.Contents[0])
	}
	res, err = sess.ReadResource(context.Background(), "skill://pdf-processing/scripts/extract.bin")
	mustOK(t, err)
	if bc, ok := res.Contents[0].(*mcp.BlobResourceContents); !ok || string(bc.Blob) != "\xff\x00\xfe" {
		t.Errorf("binary read = %+v", res.Contents[0])
	}
}

func TestServeGet(t *testing.T) {
	ctx := context.Background()
	s, _ := serve(t, tree(), nil)
	var r reads
	s.Use(r.middleware)
	sess := session(t, s, nil)
	c := skills.NewClient(sess, nil)
	sk, err := c.Get(ctx, "skill://acme/billing/refunds/SKILL.md")
	mustOK(t, err)
	if sk.Name() != "refunds" || sk.Description() == "" {
		t.Errorf("entry = %+v", sk)
	}
	if got := r.String(); got != "" {
		t.Errorf("getting an entry read %s", got)
	}
	for uri, text := range map[string]string{
		"skill://acme/billing/chargebacks/SKILL.md":  "No skill is served at skill://acme/billing/chargebacks/SKILL.md",
		"skill://pdf-processing/references/FORMS.md": "No skill is served at",
		"skill://acme/billing/refunds":               "No skill is served at",
	} {
		_, err := c.Get(ctx, uri)
		e := wantRPC(t, err, jsonrpc.CodeInvalidParams, text)
		if string(e.Data) != `{"uri":"`+uri+`"}` {
			t.Errorf("data = %s", e.Data)
		}
	}
}

// URIs that could only mean to climb out of the tree, or that no served
// URI looks like, are refused with the reason, in skills/get and in
// directory reads alike.
func TestServeRefusesHostileURIs(t *testing.T) {
	ctx := context.Background()
	s, _ := serve(t, tree(), nil)
	sess := session(t, s, nil)
	c := skills.NewClient(sess, nil)
	for uri, reason := range map[string]string{
		"skill://pdf-processing/../../etc/SKILL.md":  "dot segment",
		"skill://pdf-processing/./SKILL.md":          "dot segment",
		"skill://pdf-processing/%2e%2E/SKILL.md":     "dot segment",
		"skill://pdf-processing/%2E/SKILL.md":        "dot segment",
		"skill:///etc/SKILL.md":                      "empty segment",
		"skill://pdf-processing//SKILL.md":           "empty segment",
		"skill://pdf-processing/":                    "empty segment",
		"skill://a%2Fb/SKILL.md":                     "encoded slash",
		"skill://a%5Cb/SKILL.md":                     "encoded slash or backslash",
		`skill://pdf-processing\..\SKILL.md`:         "backslash",
		"skill://pdf-processing/SKILL.md?x=1":        "query",
		"skill://pdf-processing/SKILL.md#top":        "fragment",
		"skill://pdf-processing/\x00SKILL.md":        "control character",
		"skill://pdf-processing/%zzSKILL.md":         "malformed percent-encoding",
		"file:///etc/passwd":                         "scheme is not skill://",
		"skill://" + strings.Repeat("a/", 1100) + "": "longer than 2048",
	} {
		_, err := c.Get(ctx, uri)
		wantRPC(t, err, jsonrpc.CodeInvalidParams, reason)
		_, err = c.ReadDirectory(ctx, uri, "")
		wantRPC(t, err, jsonrpc.CodeInvalidParams, reason)
	}
}

func TestServeDirectories(t *testing.T) {
	ctx := context.Background()
	s, _ := serve(t, tree(), nil)
	sess := session(t, s, nil)
	c := skills.NewClient(sess, nil)
	names := func(uri string) string {
		t.Helper()
		res, err := c.ReadDirectory(ctx, uri, "")
		mustOK(t, err)
		var out []string
		for _, r := range res.Resources {
			n := r.Name
			if r.MIMEType == skills.DirectoryMIMEType {
				n += "/"
			}
			out = append(out, n)
		}
		return strings.Join(out, " ")
	}
	for uri, want := range map[string]string{
		"skill://pdf-processing":           "SKILL.md references/ scripts/ templates/",
		"skill://pdf-processing/templates": "invoice.md regional/",
		"skill://acme":                     "billing/",
		"skill://acme/billing":             "refunds/",
		"skill://acme/billing/refunds":     "SKILL.md examples/",
	} {
		if got := names(uri); got != want {
			t.Errorf("%s: %s, want %s", uri, got, want)
		}
	}
	res, err := c.ReadDirectory(ctx, "skill://pdf-processing/templates", "")
	mustOK(t, err)
	if r := res.Resources[1]; r.URI != "skill://pdf-processing/templates/regional" {
		t.Errorf("subdirectory = %+v", r)
	}
	for _, uri := range []string{"skill://pdf-processing/SKILL.md", "skill://nowhere", "skill://acme/billing/README.md"} {
		_, err := c.ReadDirectory(ctx, uri, "")
		wantRPC(t, err, jsonrpc.CodeInvalidParams, uri+" is not a directory resource")
	}
}

// Pages of skills/list and of a directory read follow each other by
// cursor; a cursor that is not one is -32602.
func TestServePages(t *testing.T) {
	ctx := context.Background()
	s, _ := serve(t, tree(), &skills.Options{PageSize: 1})
	sess := session(t, s, nil)
	c := skills.NewClient(sess, nil)
	page, err := c.ListPage(ctx, "")
	mustOK(t, err)
	if len(page.Skills) != 1 || page.NextCursor == "" {
		t.Fatalf("first page = %+v", page)
	}
	if got := listAll(t, sess); len(got) != 2 || got[1].Name() != "pdf-processing" {
		t.Errorf("all pages = %d skills", len(got))
	}
	var kids []string
	var cursor mcp.Cursor
	for {
		res, err := c.ReadDirectory(ctx, "skill://pdf-processing", cursor)
		mustOK(t, err)
		for _, r := range res.Resources {
			kids = append(kids, r.Name)
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	if got := strings.Join(kids, " "); got != "SKILL.md references scripts templates" {
		t.Errorf("directory pages = %s", got)
	}
	_, err = c.ListPage(ctx, "!!not base64")
	wantRPC(t, err, jsonrpc.CodeInvalidParams, "invalid cursor")
}

// A server whose directory reads are off declares directoryRead false and
// does not serve the method.
func TestServeNoDirectoryRead(t *testing.T) {
	s, _ := serve(t, tree(), &skills.Options{NoDirectoryRead: true})
	sess := session(t, s, nil)
	raw, ok := sess.ServerExtension(skills.ExtensionID)
	if !ok || string(raw) != "{}" {
		t.Errorf("declared %v: %s, want {}", ok, raw)
	}
	_, err := skills.NewClient(sess, nil).ReadDirectory(context.Background(), "skill://pdf-processing", "")
	if err == nil || !strings.Contains(err.Error(), "directoryRead") {
		t.Errorf("ReadDirectory = %v", err)
	}
	type dirParams = skills.DirectoryParams
	_, err = client.CallMethod[skills.DirectoryResult](context.Background(), sess, skills.MethodReadDirectory, &dirParams{URI: "skill://pdf-processing"}, nil)
	wantRPC(t, err, jsonrpc.CodeMethodNotFound, "")
}

// The entry of a served skill is what a client verifies its files
// against: every file reads back with the entry's size and digest.
func TestServeEntriesVerify(t *testing.T) {
	ctx := context.Background()
	s, _ := serve(t, tree(), nil)
	sess := session(t, s, nil)
	c := skills.NewClient(sess, nil)
	for sk, err := range c.List(ctx) {
		mustOK(t, err)
		l, err := c.Load(ctx, sk)
		mustOK(t, err)
		files, _ := sk.Files()
		for _, f := range files {
			if _, err := l.Read(ctx, f.URI); err != nil {
				t.Errorf("%s: %v", f.URI, err)
			}
		}
	}
}

func TestSkillJSON(t *testing.T) {
	var r skills.ListResult
	mustOK(t, json.Unmarshal([]byte(`{"skills":[{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":"dynamic"}],"ttlMs":5,"cacheScope":"public"}`), &r))
	if len(r.Skills) != 1 || !r.Skills[0].IsDynamic() || r.TTLMs != 5 {
		t.Errorf("decoded = %+v", r)
	}
	if files, err := r.Skills[0].Files(); files != nil || err != nil {
		t.Errorf("Files of a dynamic skill = %v, %v", files, err)
	}
}
