package main

import (
	"embed"
	"io/fs"

	"github.com/parley-mcp/parley/skills"
)

// The fixtures of the sep-2640-skills-* scenarios (the skills extension,
// io.modelcontextprotocol/skills): the skills of the skills/ folder, one
// at the top (pdf-processing, with subdirectories to read) and one under an
// organizational prefix (acme/billing/refunds). The scenarios find them
// through skills/list and resources/list; nothing names them.
//
//go:embed skills
var skillFiles embed.FS

// registerSkills serves them, with resources/directory/read.
func (f *fixture) registerSkills() error {
	tree, err := fs.Sub(skillFiles, "skills")
	if err != nil {
		return err
	}
	_, err = skills.Serve(f.srv, tree, nil)
	return err
}
