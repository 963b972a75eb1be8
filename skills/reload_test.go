package skills_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/skills"
)

// nextEvent returns the method and URI of the next notification of a
// listen stream.
func nextEvent(t *testing.T, sub *client.Subscription) string {
	t.Helper()
	ev := testwait.Recv(t, sub.Events(), "a notification on the listen stream")
	if ev.URI != "" {
		return ev.Method + " " + ev.URI
	}
	return ev.Method
}

// A skill added, removed or changed at run time is announced as a change
// of resources: one list_changed per reload, and an update to the
// subscribers of a file whose content changed. A reload that finds
// nothing new announces nothing; one that finds a skill it must refuse
// changes nothing.
func TestReloadAnnounces(t *testing.T) {
	ctx := context.Background()
	fsys := tree()
	s, cat := serve(t, fsys, nil)
	sess := session(t, s, nil)
	forms := "skill://pdf-processing/references/FORMS.md"
	sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ResourcesListChanged: true, ResourceSubscriptions: []string{forms, "skill://pdf-processing/SKILL.md"}})
	mustOK(t, err)
	defer sub.Close()
	if !sub.Granted.ResourcesListChanged {
		t.Fatalf("granted = %+v", sub.Granted)
	}

	// Nothing changed: nothing announced (the next event below is the
	// one of the next change, not this one's).
	mustOK(t, cat.Reload())

	// A skill added, a file changed, a skill removed: one reload.
	fsys["git-workflow/SKILL.md"] = skillMD("git-workflow")
	fsys["pdf-processing/references/FORMS.md"] = &fstest.MapFile{Data: []byte("# Forms, v2\n")}
	delete(fsys, "acme/billing/refunds/SKILL.md")
	mustOK(t, cat.Reload())
	if got := nextEvent(t, sub); got != mcp.NotificationResourceListChanged {
		t.Errorf("first event = %s, want one list change", got)
	}
	if got := nextEvent(t, sub); got != mcp.NotificationResourceUpdated+" "+forms {
		t.Errorf("second event = %s, want the update of %s (and the unchanged SKILL.md not updated)", got, forms)
	}

	var names []string
	for _, sk := range listAll(t, sess) {
		names = append(names, sk.Name())
	}
	if got := strings.Join(names, " "); got != "git-workflow pdf-processing" {
		t.Errorf("skills after reload = %s", got)
	}
	_, err = sess.ReadResource(ctx, "skill://acme/billing/refunds/examples/email.md")
	wantRPC(t, err, -32602, "Resource not found")
	res, err := sess.ReadResource(ctx, forms)
	mustOK(t, err)
	if tc := res.Contents[0].(*mcp.TextResourceContents); tc.Text != "# Forms, v2\n" {
		t.Errorf("FORMS.md after reload = %q", tc.Text)
	}
	sk, err := skills.NewClient(sess, nil).Get(ctx, "skill://pdf-processing/SKILL.md")
	mustOK(t, err)
	files, _ := sk.Files()
	if files[1].Digest != digest("# Forms, v2\n") {
		t.Errorf("FORMS.md's digest after reload = %s", files[1].Digest)
	}

	// A hostile skill appears: the reload is refused, and what was served
	// still is.
	fsys["evil/SKILL.md"] = skillMD("evil")
	fsys["evil/passwd"] = link("/etc/passwd")
	if err := cat.Reload(); !errors.Is(err, skills.ErrRefused) {
		t.Fatalf("Reload = %v, want the refusal", err)
	}
	if n := len(listAll(t, sess)); n != 2 {
		t.Errorf("after a refused reload: %d skills, want the 2 served before", n)
	}
	// Only the change below is announced after that.
	delete(fsys, "evil/passwd")
	delete(fsys, "evil/SKILL.md")
	delete(fsys, "git-workflow/SKILL.md")
	mustOK(t, cat.Reload())
	if got := nextEvent(t, sub); got != mcp.NotificationResourceListChanged {
		t.Errorf("after removing a skill: %s", got)
	}
	if n := len(listAll(t, sess)); n != 1 {
		t.Errorf("after removing a skill: %d skills", n)
	}
}

// A file whose listing changes but not its bytes (a nested skill's file,
// once its enclosing skill is gone, is named from the nested skill's
// root) is announced in the list change, not as updated.
func TestReloadUpdatesOnlyChangedContent(t *testing.T) {
	ctx := context.Background()
	fsys := fstest.MapFS{
		"outer/SKILL.md":       skillMD("outer"),
		"outer/inner/SKILL.md": skillMD("inner"),
		"outer/inner/x.md":     {Data: []byte("x")},
	}
	s, cat := serve(t, fsys, nil)
	sess := session(t, s, nil)
	x := "skill://outer/inner/x.md"
	sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ResourcesListChanged: true, ResourceSubscriptions: []string{x}})
	mustOK(t, err)
	defer sub.Close()

	delete(fsys, "outer/SKILL.md")
	mustOK(t, cat.Reload())
	if got := nextEvent(t, sub); got != mcp.NotificationResourceListChanged {
		t.Fatalf("after removing the enclosing skill: %s", got)
	}
	fsys["outer/inner/x.md"] = &fstest.MapFile{Data: []byte("x2")}
	mustOK(t, cat.Reload())
	for _, want := range []string{mcp.NotificationResourceListChanged, mcp.NotificationResourceUpdated + " " + x} {
		if got := nextEvent(t, sub); got != want {
			t.Errorf("after changing x.md: %s, want %s (x.md announced as updated when only its listing changed?)", got, want)
		}
	}
}
