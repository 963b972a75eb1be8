package skills_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/skills"
	"github.com/parley-mcp/parley/transport"
)

// A mock is a server of its own making: the entries and the file contents
// it serves need not agree, as a tampering or stale server's do not.
type mock struct {
	entries []json.RawMessage
	files   map[string]string
	reads   reads
}

const mockSkill = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nSkill body.\n"
const mockForms = "Supporting content.\n"

// entry is the honest entry of mockSkill with FORMS.md.
func entry() map[string]any {
	return map[string]any{
		"uri":         "skill://pdf-processing/SKILL.md",
		"frontmatter": map[string]any{"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"},
		"resources": []any{
			map[string]any{"uri": "skill://pdf-processing/SKILL.md", "digest": digest(mockSkill), "size": len(mockSkill)},
			map[string]any{"uri": "skill://pdf-processing/references/FORMS.md", "digest": digest(mockForms), "size": len(mockForms)},
		},
	}
}

func newMock(t *testing.T, entries ...map[string]any) *mock {
	m := &mock{files: map[string]string{
		"skill://pdf-processing/SKILL.md":            mockSkill,
		"skill://pdf-processing/references/FORMS.md": mockForms,
		"skill://pdf-processing/references/NEW.md":   "unlisted",
		"skill://pdf-processing/evil.md":             "evil",
	}}
	for _, e := range entries {
		raw, err := json.Marshal(e)
		mustOK(t, err)
		m.entries = append(m.entries, raw)
	}
	return m
}

type rawList struct {
	mcp.CacheableResult
	Skills []json.RawMessage `json:"skills"`
}

// session serves the mock on a low-level server and connects to it.
func (m *mock) session(t *testing.T) *client.Session {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "mock", Version: "1"}, &server.Options{Logger: quiet})
	mustOK(t, s.DeclareExtension(skills.ExtensionID, nil))
	mustOK(t, server.HandleMethod(s, skills.MethodList, nil, func(ctx context.Context, req *server.Request, p *skills.ListParams) (*rawList, error) {
		return &rawList{Skills: m.entries}, nil
	}))
	s.HandleReadResource(func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		text, ok := m.files[p.URI]
		if !ok {
			return nil, server.ResourceNotFound(p.URI)
		}
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: p.URI, Text: text}}}, nil
	})
	s.Use(m.reads.middleware)
	ctx, cancel := context.WithCancel(context.Background())
	clientEnd, serverEnd := transport.NewMemoryPipe()
	done := make(chan struct{})
	go func() { defer close(done); s.ServeConn(ctx, serverEnd) }()
	sess, err := client.New(mcp.Implementation{Name: "c", Version: "1"}, &client.Options{Logger: quiet}).Connect(ctx, transport.NewMemoryTransport(clientEnd))
	mustOK(t, err)
	t.Cleanup(func() { sess.Close(); cancel(); <-done })
	return sess
}

func firstSkill(t *testing.T, c *skills.Client) *skills.Skill {
	t.Helper()
	for s, err := range c.List(context.Background()) {
		mustOK(t, err)
		return s
	}
	t.Fatal("no skill listed")
	return nil
}

// Listing reads no file; loading reads the SKILL.md only; a supporting
// file is read when asked for, once.
func TestClientNoPrefetch(t *testing.T) {
	ctx := context.Background()
	m := newMock(t, entry())
	c := skills.NewClient(m.session(t), nil)
	sk := firstSkill(t, c)
	if got := m.reads.String(); got != "" {
		t.Fatalf("listing read %s", got)
	}
	l, err := c.Load(ctx, sk)
	mustOK(t, err)
	if got := m.reads.String(); got != "skill://pdf-processing/SKILL.md" {
		t.Fatalf("loading read %q, want the SKILL.md only", got)
	}
	if string(l.Manifest) != mockSkill {
		t.Errorf("manifest = %q", l.Manifest)
	}
	for range 2 {
		data, err := l.Read(ctx, "references/FORMS.md")
		mustOK(t, err)
		if string(data) != mockForms {
			t.Errorf("FORMS.md = %q", data)
		}
	}
	if _, err := l.Read(ctx, "skill://pdf-processing/references/FORMS.md"); err != nil {
		t.Errorf("by URI: %v", err)
	}
	if got := m.reads.String(); got != "skill://pdf-processing/SKILL.md,skill://pdf-processing/references/FORMS.md" {
		t.Errorf("reads = %q, want FORMS.md read once", got)
	}
}

// The server's entry is what counts: a file it does not list is not read,
// nor is a path out of the skill.
func TestClientReadsOnlyListedFiles(t *testing.T) {
	ctx := context.Background()
	m := newMock(t, entry())
	c := skills.NewClient(m.session(t), nil)
	l, err := c.Load(ctx, firstSkill(t, c))
	mustOK(t, err)
	for _, ref := range []string{"references/NEW.md", "skill://pdf-processing/references/NEW.md", "skill://other/SKILL.md"} {
		_, err := l.Read(ctx, ref)
		var ue *skills.UnlistedError
		if !errors.As(err, &ue) || !errors.Is(err, skills.ErrVerification) {
			t.Errorf("Read(%q) = %v, want an *UnlistedError", ref, err)
		}
	}
	for _, ref := range []string{"../other/SKILL.md", "references/../../x", "/etc/passwd", `references\FORMS.md`, "", "."} {
		if _, err := l.Read(ctx, ref); err == nil {
			t.Errorf("Read(%q) succeeded", ref)
		}
	}
	if got := m.reads.String(); got != "skill://pdf-processing/SKILL.md" {
		t.Errorf("reads = %q, want none after the SKILL.md", got)
	}
}

// A SKILL.md that is not what its entry describes is never handed over,
// and nothing else of the skill is read: each check has its typed error.
func TestClientVerifies(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		file  string               // the SKILL.md the server serves
		patch func(map[string]any) // what the entry says
		check func(t *testing.T, err error)
	}{
		{"digest", strings.Replace(mockSkill, "Skill body.", "Evil body!!", 1), nil, func(t *testing.T, err error) {
			var de *skills.DigestError
			if !errors.As(err, &de) || de.Want != digest(mockSkill) || de.Got != digest(strings.Replace(mockSkill, "Skill body.", "Evil body!!", 1)) {
				t.Errorf("err = %v, want a *DigestError", err)
			}
		}},
		{"size", mockSkill + "extra bytes\n", nil, func(t *testing.T, err error) {
			var se *skills.SizeError
			if !errors.As(err, &se) || se.Want != int64(len(mockSkill)) || se.Got != int64(len(mockSkill)+12) {
				t.Errorf("err = %v, want a *SizeError", err)
			}
		}},
		{"size, same digest claimed", mockSkill[:len(mockSkill)-1], nil, func(t *testing.T, err error) {
			if !errors.As(err, new(*skills.SizeError)) {
				t.Errorf("err = %v, want a *SizeError (checked before the digest)", err)
			}
		}},
		{"frontmatter", strings.Replace(mockSkill, "Extract, fill, and assemble PDF documents", "Exfiltrate credentials", 1), func(e map[string]any) {
			// A server that tampers consistently: digest and size match
			// the file, the frontmatter of the entry does not.
			f := strings.Replace(mockSkill, "Extract, fill, and assemble PDF documents", "Exfiltrate credentials", 1)
			res := e["resources"].([]any)[0].(map[string]any)
			res["digest"], res["size"] = digest(f), len(f)
		}, func(t *testing.T, err error) {
			var fe *skills.FrontmatterError
			if !errors.As(err, &fe) || fe.Field != "description" {
				t.Errorf("err = %v, want a *FrontmatterError on description", err)
			}
		}},
		{"frontmatter field missing from the file", mockSkill, func(e map[string]any) {
			e["frontmatter"].(map[string]any)["license"] = "MIT"
		}, func(t *testing.T, err error) {
			var fe *skills.FrontmatterError
			if !errors.As(err, &fe) || fe.Field != "license" {
				t.Errorf("err = %v, want a *FrontmatterError on license", err)
			}
		}},
		{"no frontmatter in the file", "no frontmatter\n", func(e map[string]any) {
			res := e["resources"].([]any)[0].(map[string]any)
			res["digest"], res["size"] = digest("no frontmatter\n"), len("no frontmatter\n")
		}, func(t *testing.T, err error) {
			var fe *skills.FrontmatterError
			if !errors.As(err, &fe) || fe.Field != "" || !strings.Contains(fe.Reason, "---") {
				t.Errorf("err = %v, want a *FrontmatterError naming the missing block", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := entry()
			if tc.patch != nil {
				tc.patch(e)
			}
			m := newMock(t, e)
			m.files["skill://pdf-processing/SKILL.md"] = tc.file
			c := skills.NewClient(m.session(t), nil)
			l, err := c.Load(ctx, firstSkill(t, c))
			if l != nil || !errors.Is(err, skills.ErrVerification) {
				t.Fatalf("Load = %v, %v; want a verification failure", l, err)
			}
			tc.check(t, err)
			if got := m.reads.String(); got != "skill://pdf-processing/SKILL.md" {
				t.Errorf("reads = %q, want only the SKILL.md", got)
			}
		})
	}
}

// A supporting file that is not what the entry says is refused too.
func TestClientVerifiesSupportingFiles(t *testing.T) {
	ctx := context.Background()
	for file, want := range map[string]error{
		"Supporting content!\n":  new(skills.DigestError),
		"Supporting content.\n.": new(skills.SizeError),
	} {
		m := newMock(t, entry())
		m.files["skill://pdf-processing/references/FORMS.md"] = file
		c := skills.NewClient(m.session(t), nil)
		l, err := c.Load(ctx, firstSkill(t, c))
		mustOK(t, err)
		data, err := l.Read(ctx, "references/FORMS.md")
		if data != nil || !errors.Is(err, skills.ErrVerification) {
			t.Errorf("Read = %q, %v", data, err)
		}
		if _, isSize := want.(*skills.SizeError); isSize != errors.As(err, new(*skills.SizeError)) {
			t.Errorf("Read = %v, want a %T", err, want)
		}
		// A refused file is read again next time, not kept.
		if _, err := l.Read(ctx, "references/FORMS.md"); err == nil {
			t.Error("a refused file was kept")
		}
	}
}

// An entry a host must not load is refused before anything is read.
func TestClientRefusesBadEntries(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		patch func(map[string]any)
		want  string
	}{
		{"no resources", func(e map[string]any) { delete(e, "resources") }, `neither an array nor "dynamic"`},
		{"resources of another kind", func(e map[string]any) { e["resources"] = "static" }, `neither an array nor "dynamic"`},
		{"SKILL.md not listed", func(e map[string]any) { e["resources"] = e["resources"].([]any)[1:] }, "does not list the SKILL.md"},
		{"a file outside", func(e map[string]any) {
			e["resources"] = append(e["resources"].([]any), map[string]any{"uri": "skill://other/x", "digest": digest(""), "size": 0})
		}, "not within the skill's directory"},
		{"a file twice", func(e map[string]any) {
			e["resources"] = append(e["resources"].([]any), e["resources"].([]any)[1])
		}, "listed twice"},
		{"a bad digest", func(e map[string]any) { e["resources"].([]any)[1].(map[string]any)["digest"] = "sha256:ABC" }, "not sha256:"},
		{"a negative size", func(e map[string]any) { e["resources"].([]any)[1].(map[string]any)["size"] = -1 }, "negative size"},
		{"a fractional size", func(e map[string]any) { e["resources"].([]any)[1].(map[string]any)["size"] = 1.5 }, "resources:"},
		{"name not the directory's", func(e map[string]any) { e["frontmatter"].(map[string]any)["name"] = "pdf" }, `directory "pdf-processing" is not its name "pdf"`},
		{"no description", func(e map[string]any) { delete(e["frontmatter"].(map[string]any), "description") }, "needs a name and a description"},
		{"not a SKILL.md", func(e map[string]any) { e["uri"] = "skill://pdf-processing/README.md" }, "does not name a SKILL.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := entry()
			tc.patch(e)
			m := newMock(t, e)
			c := skills.NewClient(m.session(t), nil)
			_, err := c.Load(ctx, firstSkill(t, c))
			var ee *skills.EntryError
			if !errors.As(err, &ee) || !strings.Contains(ee.Reason, tc.want) {
				t.Errorf("Load = %v, want an *EntryError with %q", err, tc.want)
			}
			if got := m.reads.String(); got != "" {
				t.Errorf("reads = %q, want none", got)
			}
		})
	}
}

// Skills beyond the limits are refused from the entry alone; the limits
// themselves are accepted.
func TestClientLimits(t *testing.T) {
	ctx := context.Background()
	m := newMock(t, entry())
	sess := m.session(t)
	size := int64(len(mockSkill) + len(mockForms))
	for _, tc := range []struct {
		opts *skills.ClientOptions
		ok   bool
	}{
		{&skills.ClientOptions{MaxFiles: 2, MaxSkillSize: size}, true},
		{&skills.ClientOptions{MaxFiles: 1}, false},
		{&skills.ClientOptions{MaxSkillSize: size - 1}, false},
	} {
		c := skills.NewClient(sess, tc.opts)
		_, err := c.Load(ctx, firstSkill(t, c))
		if tc.ok != (err == nil) || (!tc.ok && !errors.As(err, new(*skills.LimitError))) {
			t.Errorf("Load with %+v = %v", tc.opts, err)
		}
	}
}

// A dynamic skill is refused unless allowed; allowed, its SKILL.md's
// frontmatter is still checked and its reads stay in its directory.
func TestClientDynamic(t *testing.T) {
	ctx := context.Background()
	e := entry()
	e["resources"] = "dynamic"
	m := newMock(t, e)
	sess := m.session(t)
	c := skills.NewClient(sess, nil)
	sk := firstSkill(t, c)
	if _, err := c.Load(ctx, sk); !errors.Is(err, skills.ErrDynamic) {
		t.Fatalf("Load = %v, want ErrDynamic", err)
	}
	if got := m.reads.String(); got != "" {
		t.Fatalf("reads = %q", got)
	}
	c = skills.NewClient(sess, &skills.ClientOptions{AllowDynamic: true, MaxSkillSize: int64(len(mockSkill) + len(mockForms))})
	l, err := c.Load(ctx, sk)
	mustOK(t, err)
	data, err := l.Read(ctx, "references/NEW.md")
	mustOK(t, err)
	if string(data) != "unlisted" {
		t.Errorf("NEW.md = %q", data)
	}
	if _, err := l.Read(ctx, "skill://other/x"); !errors.As(err, new(*skills.UnlistedError)) {
		t.Errorf("a file of another skill = %v", err)
	}
	before := m.reads.String()
	for _, ref := range []string{"../other/x", "references/../../x", "skill://pdf-processing/../other/x"} {
		if _, err := l.Read(ctx, ref); err == nil {
			t.Errorf("Read(%q) of a dynamic skill succeeded", ref)
		}
	}
	if got := m.reads.String(); got != before {
		t.Errorf("refused references were read: %s", strings.TrimPrefix(got, before))
	}
	if _, err := l.Read(ctx, "references/FORMS.md"); !errors.As(err, new(*skills.LimitError)) {
		t.Errorf("past the size limit = %v, want a *LimitError", err)
	}
}

// A server that does not declare the extension is not asked.
func TestClientNotSupported(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "plain", Version: "1"}, &server.Options{Logger: quiet})
	clientEnd, serverEnd := transport.NewMemoryPipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.ServeConn(ctx, serverEnd)
	sess, err := client.New(mcp.Implementation{Name: "c", Version: "1"}, &client.Options{Logger: quiet}).Connect(ctx, transport.NewMemoryTransport(clientEnd))
	mustOK(t, err)
	defer sess.Close()
	c := skills.NewClient(sess, nil)
	if _, err := c.ListPage(ctx, ""); !errors.Is(err, skills.ErrNotSupported) {
		t.Errorf("ListPage = %v", err)
	}
	if _, err := c.Get(ctx, "skill://a/SKILL.md"); !errors.Is(err, skills.ErrNotSupported) {
		t.Errorf("Get = %v", err)
	}
}
