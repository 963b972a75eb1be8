package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// A mistake on the command line is said in one line: what is wrong, and
// the command line that was probably meant, built from the one given.
// Nothing here prints the usage: --help does.

// flagNames are the flags parseArgs knows, for "did you mean". A flag
// added to parseArgs is added here too (TestFlagNamesComplete holds the
// list to the usage text).
var flagNames = []string{
	"help", "version", "json", "url", "protocol", "answer", "answers", "refuse",
	"no-input", "open", "sampling-cmd", "root", "out", "log-level", "connect-timeout",
	// authFlags.parse's
	"auth", "dpop", "client-id", "client-secret-file", "client-key-file", "issuer",
	"token-file", "id-token-file", "idp-token-endpoint", "idp-client-id", "dpop-key-file",
}

// unknownFlag is the error for a flag parseArgs does not know.
func unknownFlag(arg, name string) error {
	if m := didYouMean(name, flagNames); m != "" {
		return fmt.Errorf("unknown flag %s; did you mean --%s?", arg, m)
	}
	return fmt.Errorf("unknown flag %s (parley --help lists the flags)", arg)
}

// didYouMean returns the candidate closest to name, when it is close
// enough to be a slip (at most a third of its letters wrong, and at least
// one letter in common), or "".
func didYouMean(name string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(name), strings.ToLower(c))
		if d <= max(1, len([]rune(c))/3) && d < len([]rune(c)) && (bestDist < 0 || d < bestDist) {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the number of edits (a rune inserted, deleted or
// replaced, or two neighbours swapped) that turn a into b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// commandGroups are the first words shared by several commands (tools,
// prompts, ...), which need a second word.
func commandGroups() []string {
	var groups []string
	for _, c := range commands {
		if first, _, two := strings.Cut(c.words, " "); two && !slices.Contains(groups, first) {
			groups = append(groups, first)
		}
	}
	return groups
}

// subcommands are the second words of the commands of group.
func subcommands(group string) []string {
	var out []string
	for _, c := range commands {
		if rest, ok := strings.CutPrefix(c.words, group+" "); ok {
			out = append(out, rest)
		}
	}
	return out
}

// isCommandWord reports whether w is the first word of a command.
func isCommandWord(w string) bool {
	for _, c := range commands {
		if first, _, _ := strings.Cut(c.words, " "); first == w {
			return true
		}
	}
	return false
}

// serverFlagError explains a flag parley does not know that follows a
// word that begins no command: most likely a server's command line given
// without -- (parley ./my-server --port 80 tools list). args[start] is
// that word; nil when no command follows.
func serverFlagError(o *options, args []string, start int) error {
	i := commandAt(args[start:])
	if i < 0 {
		return nil
	}
	server := args[start : start+i]
	return usagef("%q is not a command; to run a server over stdio, put its command last, after --: %s",
		strings.Join(server, " "), commandLine(o.flagArgs, args[start+i:], server))
}

// commandAt returns the first i > 0 at which words name a command, or -1:
// the words before it are then most likely a server's command line.
func commandAt(words []string) int {
	for i := 1; i < len(words); i++ {
		if c, _ := findCommand(words[i:]); c != nil {
			return i
		}
	}
	return -1
}

// noCommandError explains a command line whose words name no command: a
// server's command given before parley's command (with -- or without),
// a name close to a command's, or none at all. words are the words
// before --; it is called only when they name no command.
func noCommandError(o *options, words []string) error {
	flags := o.flagArgs
	if o.url != "" && !slices.Contains(o.flagArgs, "--url") {
		flags = append(slices.Clip(flags), o.url)
	}
	switch {
	case len(words) == 0 && len(o.command) > 0:
		// parley -- ./my-server tools list
		if i := commandAt(o.command); i > 0 {
			return usagef("the command goes before --, the server's command after it: %s",
				commandLine(flags, o.command[i:], o.command[:i]))
		}
		return usagef("no command before --: say what to ask the server, as in %s",
			commandLine(flags, []string{"tools", "list"}, o.command))
	case len(words) == 0 && o.url != "":
		return usagef("no command after the server: say what to ask it, as in %s (parley --help lists the commands)",
			commandLine(flags, []string{"tools", "list"}, nil))
	case len(words) == 0:
		return usagef("no command and no server: say what to ask, and of which server, as in %s or %s (parley --help for more)",
			commandLine(flags, []string{"https://example.com/mcp", "tools", "list"}, nil), commandLine(flags, []string{"tools", "list"}, []string{"./my-server"}))
	}
	if i := commandAt(words); i > 0 && len(o.command) == 0 {
		// parley ./my-server tools list
		return usagef("%q is not a command; to run a server over stdio, put its command last, after --: %s",
			strings.Join(words[:i], " "), commandLine(flags, words[i:], words[:i]))
	}
	groups := commandGroups()
	if slices.Contains(groups, words[0]) {
		subs := subcommands(words[0])
		if len(words) == 1 {
			return usagef("%s needs one more word: %s", words[0], strings.Join(subs, ", "))
		}
		name := words[0] + " " + words[1]
		if m := didYouMean(words[1], subs); m != "" {
			return usagef("unknown command %q; did you mean %q?", name, words[0]+" "+m)
		}
		return usagef("unknown command %q (%s has %s)", name, words[0], strings.Join(subs, ", "))
	}
	// A single word, or a slip in a group's name ("tols list").
	var names []string
	for _, c := range commands {
		if !strings.Contains(c.words, " ") {
			names = append(names, c.words)
		}
	}
	if m := didYouMean(words[0], append(names, groups...)); m != "" {
		if slices.Contains(groups, m) && len(words) > 1 {
			if sub := didYouMean(words[1], subcommands(m)); sub != "" || slices.Contains(subcommands(m), words[1]) {
				return usagef("unknown command %q; did you mean %q?", words[0]+" "+words[1], m+" "+cmp.Or(sub, words[1]))
			}
		}
		return usagef("unknown command %q; did you mean %q?", words[0], m)
	}
	return usagef("unknown command %q (parley --help lists the commands)", words[0])
}

// urlAfterCommandError explains a server URL given after the command,
// when no server was given before it; nil when that is not the mistake.
// A command that takes the server's URL itself (card, bridge) is fine.
func urlAfterCommandError(o *options, c *command, rest []string) error {
	if o.url != "" || len(o.command) > 0 || strings.HasPrefix(c.usage, "URL") {
		return nil
	}
	for i, w := range rest {
		if isURL(w) {
			others := append(append(strings.Fields(c.words), rest[:i]...), rest[i+1:]...)
			return usagef("no server: its URL goes before the command, as in %s",
				commandLine(append(slices.Clip(o.flagArgs), w), others, nil))
		}
	}
	return nil
}

// commandLine writes a parley command line for a message: the flags and
// the server's URL, the command's words, and the stdio server after --.
func commandLine(flags, words, server []string) string {
	parts := []string{"parley"}
	parts = append(parts, flags...)
	parts = append(parts, words...)
	if len(server) > 0 {
		parts = append(parts, "--")
		parts = append(parts, server...)
	}
	for i, p := range parts {
		parts[i] = shellWord(p)
	}
	return strings.Join(parts, " ")
}

// shellWord quotes s for a shell when it holds anything but the
// characters of plain words and paths.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@%+,") == "" {
		return s
	}
	return shellQuote(s)
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
