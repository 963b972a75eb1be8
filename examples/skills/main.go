// Command skills serves a folder of Agent Skills over MCP (the skills
// extension) and reads them with the skills client, in one process: the
// server publishes every skill of the folder with the digests of its
// files, the client lists them without reading a file, loads one (its
// SKILL.md, verified), reads a supporting file when the skill refers to
// it, and hears of a skill added at run time.
//
//	go run ./examples/skills
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/skills"
)

func main() {
	ctx := context.Background()

	// A folder of skills: each directory with a SKILL.md is one.
	dir, err := os.MkdirTemp("", "skills-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	write(dir, "git-workflow/SKILL.md", "---\nname: git-workflow\ndescription: Follow this team's Git conventions\n---\n\nBranch from main; see references/COMMITS.md for messages.\n")
	write(dir, "git-workflow/references/COMMITS.md", "package: what changed and why\n")

	// The server. An os.Root keeps every file it opens inside the folder,
	// whatever links the folder holds; skills.Serve refuses links that
	// lead out of it anyway.
	root, err := os.OpenRoot(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer root.Close()
	s := mcpserver.MustNew(mcp.Implementation{Name: "skills-server", Version: "1.0.0"}, nil)
	catalog, err := skills.Serve(s, root.FS(), nil)
	if err != nil {
		log.Fatal(err)
	}

	// The client.
	sess, err := client.New(mcp.Implementation{Name: "skills-host", Version: "1.0.0"}, nil).Connect(ctx, s.InMemoryTransport())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	c := skills.NewClient(sess, nil)

	// Listing reads no file: the entry carries the frontmatter.
	var first *skills.Skill
	for sk, err := range c.List(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		files, _ := sk.Files()
		fmt.Printf("listed %s: %s (%d files)\n", sk.Name(), sk.Description(), len(files))
		first = sk
	}

	// Loading reads the SKILL.md, verified against the entry.
	loaded, err := c.Load(ctx, first)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("loaded %s: %d bytes, size, digest and frontmatter verified\n", loaded.Skill.URI, len(loaded.Manifest))
	// A supporting file is read when the skill refers to it.
	commits, err := loaded.Read(ctx, "references/COMMITS.md")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("read references/COMMITS.md: %q\n", commits)

	// A skill added at run time is announced as a change of resources.
	sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ResourcesListChanged: true})
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()
	write(dir, "release/SKILL.md", "---\nname: release\ndescription: Cut a release\n---\n\nTag, then publish.\n")
	if err := catalog.Reload(); err != nil {
		log.Fatal(err)
	}
	select {
	case ev := <-sub.Events():
		fmt.Println("notified:", ev.Method)
	case <-time.After(10 * time.Second):
		log.Fatal("no notification of the new skill within 10s")
	}
	n := 0
	for _, err := range c.List(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		n++
	}
	fmt.Printf("after the reload: %d skills\n", n)
}

func write(dir, name, text string) {
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		log.Fatal(err)
	}
}
