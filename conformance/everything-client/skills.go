package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/skills"
)

// The sep-2640-client-* scenarios (the skills extension): a host that
// lists the server's skills and reads nothing more until one is loaded
// (no-prefetch), and one that loads the first skill, verifying its
// SKILL.md against the entry, and reads its other files only if that
// passed (verify-digest, verify-size, verify-frontmatter: the mock server
// tampers with the SKILL.md, and scores a read of any other file as using
// unverified content).

// skillsList lists the skills and loads none.
func skillsList(ctx context.Context, url string, _ *config) error {
	return withSession(ctx, url, nil, func(sess *client.Session) error {
		n, err := listSkills(ctx, skills.NewClient(sess, nil))
		slog.Info("skills listed, none loaded", "skills", n)
		return err
	})
}

// skillsLoad loads the first skill and then reads every other file it
// lists, each verified as it is read.
func skillsLoad(ctx context.Context, url string, _ *config) error {
	return withSession(ctx, url, nil, func(sess *client.Session) error {
		c := skills.NewClient(sess, nil)
		for s, err := range c.List(ctx) {
			if err != nil {
				return fmt.Errorf("skills/list: %w", err)
			}
			l, err := c.Load(ctx, s)
			if err != nil {
				if errors.Is(err, skills.ErrVerification) {
					slog.Info("refused the skill: it is not what its entry says", "uri", s.URI, "err", err)
				}
				return fmt.Errorf("loading %s: %w", s.URI, err)
			}
			files, _ := s.Files() // Load checked them
			for _, f := range files {
				if f.URI == s.URI {
					continue
				}
				if _, err := l.Read(ctx, f.URI); err != nil {
					return fmt.Errorf("reading %s: %w", f.URI, err)
				}
			}
			slog.Info("skill loaded and read", "uri", s.URI, "files", len(files))
			return nil
		}
		return errors.New("the server lists no skill")
	})
}

// listSkills pages through skills/list and returns how many it found.
func listSkills(ctx context.Context, c *skills.Client) (int, error) {
	n := 0
	for _, err := range c.List(ctx) {
		if err != nil {
			return n, fmt.Errorf("skills/list: %w", err)
		}
		n++
	}
	return n, nil
}
