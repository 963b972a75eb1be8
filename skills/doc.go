// Package skills implements the skills extension of MCP
// (io.modelcontextprotocol/skills, SEP-2640): a server publishes Agent
// Skills (folders of instructions, each with a SKILL.md) as resources, and
// a host lists them, loads one when it needs it, and verifies every file
// it reads against the skill's entry.
//
// The server side serves a folder (any fs.FS) on an mcpserver.Server:
//
//	root, _ := os.OpenRoot("./skills")
//	catalog, err := skills.Serve(s, root.FS(), nil) // every dir with a SKILL.md is a skill
//	...
//	err = catalog.Reload() // read the folder again; changes are announced
//
// Every file of a skill is a static resource (skill://<path>/<file>), and
// skills/list, skills/get and resources/directory/read are served through
// the extension surface (server.HandleMethod, design record 026). A tree
// that could lead outside the folder (a symbolic link to an absolute path,
// or out of the tree, or through a linked directory), or over the limits
// (512 files, 16 MiB per skill), is refused with a [*RefusedError]; request
// URIs with dot segments and the like are refused with the reason.
//
// The client side reads them:
//
//	c := skills.NewClient(sess, nil)
//	for sk, err := range c.List(ctx) { ... } // reads no file
//	loaded, err := c.Load(ctx, sk)            // the SKILL.md, verified
//	data, err := loaded.Read(ctx, "references/GUIDE.md")
//
// Nothing is read ahead of need, and nothing unverified is handed over: a
// size, digest or frontmatter that is not the entry's, or a file the entry
// does not list, is an error of its own type, matching [ErrVerification].
//
// See docs/guide/skills.md, and design record 044 for the choices.
package skills
