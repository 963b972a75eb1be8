package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parley-mcp/parley/skills"
)

// The skills subcommands (the skills extension, SEP-2640): list the
// server's skills, and fetch one, verified. Nothing is read ahead of
// need: "skills list" reads no file, "skills fetch" the SKILL.md and the
// files it is asked for.

func runSkillsList(ctx context.Context, a *app, args []string) error {
	if err := noArgs(args); err != nil {
		return err
	}
	sess, err := a.session(ctx)
	if err != nil {
		return err
	}
	list, err := collect(skills.NewClient(sess, nil).List(ctx))
	if err != nil {
		return err
	}
	return printList(a, "skills", "skills", "URI\tNAME\tFILES\tDESCRIPTION", list, "",
		func(s skills.Skill) []string {
			files := "dynamic"
			if !s.IsDynamic() {
				fs, err := s.Files()
				files = strconv.Itoa(len(fs))
				if err != nil {
					files = "invalid"
				}
			}
			return []string{s.URI, dash(s.Name()), files, firstLine(s.Description())}
		})
}

// runSkillsFetch gets the skill's entry (skills/get), loads it (its
// SKILL.md, verified against the entry) and reads the files named after
// its URI (paths relative to the skill's root, or URIs), each verified.
// It prints the SKILL.md, or the files when some are named.
func runSkillsFetch(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		return usagef("skills fetch needs the URI of the skill's SKILL.md")
	}
	sess, err := a.session(ctx)
	if err != nil {
		return err
	}
	c := skills.NewClient(sess, nil)
	entry, err := c.Get(ctx, args[0])
	if err != nil {
		return err
	}
	loaded, err := c.Load(ctx, entry)
	if err != nil {
		return err
	}
	type fetched struct {
		URI  string `json:"uri"`
		Text string `json:"text,omitempty"`
		Blob []byte `json:"blob,omitempty"`
	}
	files := []fetched{{URI: entry.URI, Text: string(loaded.Manifest)}}
	if len(args) > 1 {
		files = files[:0]
	}
	for _, ref := range args[1:] {
		data, err := loaded.Read(ctx, ref)
		if err != nil {
			return err
		}
		f := fetched{URI: ref}
		if !strings.Contains(ref, "://") {
			f.URI = entry.Root() + "/" + strings.TrimPrefix(ref, "./")
		}
		if utf8.Valid(data) {
			f.Text = string(data)
		} else {
			f.Blob = data
		}
		files = append(files, f)
	}
	if a.opts.jsonOut {
		return a.writeJSON(map[string]any{"skill": entry, "files": files})
	}
	fmt.Fprintf(a.stderr, "skill %s (%s), verified against its entry\n", peerLine(entry.Name()), peerLine(entry.URI))
	for i, f := range files {
		if f.Blob == nil && len(files) > 1 {
			fmt.Fprintf(a.stdout, "[%s]\n", peerLine(f.URI))
		}
		if f.Blob != nil {
			file, err := a.save(baseName(f.URI, i+1), "", f.Blob)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "[%s: %d bytes, saved to %s]\n", peerLine(f.URI), len(f.Blob), peerLine(file))
			continue
		}
		fmt.Fprintln(a.stdout, peerText(strings.TrimRight(f.Text, "\n")))
	}
	return nil
}

// skillsRefused reports whether err is the skills client's refusal of what
// a server sent (a file that fails verification, an entry that may not be
// loaded, a server without the extension): the server broke the protocol,
// exit code 3.
func skillsRefused(err error) bool {
	var entry *skills.EntryError
	var limit *skills.LimitError
	return errors.Is(err, skills.ErrVerification) || errors.Is(err, skills.ErrNotSupported) ||
		errors.Is(err, skills.ErrDynamic) || errors.As(err, &entry) || errors.As(err, &limit)
}
