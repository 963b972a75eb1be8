// Command parley is a command-line MCP client: it lists and calls what a
// server offers, and asks the person at the terminal the server's questions
// as forms.
//
//	go install ./cmd/parley                    # in a clone of Parley (not published yet)
//	parley tools list -- ./my-server --flag    # a server run over stdio: its command last, after --
//	parley https://example.com/mcp tools call add a=1 b=2
//
// Run parley --help for the whole usage, and see docs/guide/cli.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Exit codes. A script tells what went wrong from these alone; the message
// on stderr says more.
const (
	exitOK          = 0
	exitToolError   = 1 // the tool ran and reported an error (isError)
	exitUsage       = 2 // the command line is wrong
	exitProtocol    = 3 // the server answered with an error, or broke the protocol
	exitConnection  = 4 // the server could not be reached, or went away
	exitRefused     = 5 // a question was declined or cancelled
	exitUnanswered  = 6 // a question could not be asked: no terminal and no answer
	exitInterrupted = 130
)

// command is one subcommand: the words that name it and what runs it.
// Adding a subcommand is one line in commands.
type command struct {
	words   string // "tools call"
	usage   string // the arguments after the words
	summary string
	run     func(ctx context.Context, a *app, args []string) error
}

// commands is the subcommand table, in the order --help lists it.
var commands = []command{
	{"info", "", "show the server's name, version, protocol and capabilities", runInfo},
	{"tools list", "", "list the tools", runToolsList},
	{"tools call", "NAME [KEY=VALUE...]", "call a tool; values are typed by its input schema", runToolsCall},
	{"prompts list", "", "list the prompts", runPromptsList},
	{"prompts get", "NAME [KEY=VALUE...]", "get a prompt with its arguments", runPromptsGet},
	{"resources list", "", "list the resources", runResourcesList},
	{"resources read", "URI", "read a resource", runResourcesRead},
	{"resources templates", "", "list the resource templates", runResourcesTemplates},
	{"complete", "prompt NAME|resource TEMPLATE ARG=PARTIAL [KEY=VALUE...]", "complete an argument (later pairs are context)", runComplete},
	{"skills list", "", "list the server's skills (the skills extension); reads no file", runSkillsList},
	{"skills fetch", "URI [PATH...]", "load a skill: print its SKILL.md, or the files named, each verified against its entry", runSkillsFetch},
	{"apps list", "", "list the tools with a view or a visibility, as a host that renders apps sees them", runAppsList},
	{"apps view", "URI", "print a view's metadata (CSP, permissions, caching) and save its page", runAppsView},
	{"listen", "[URI...]", "print list changes (and updates of URIs) as they arrive, until interrupted", runListen},
	{"card", "URL", "print the server's Server Card, read before connecting (experimental)", runCard},
	{"bridge", "URL", "serve a desktop host on stdin/stdout and relay it to the server at URL (docs/guide/bridge.md)", runBridge},
}

// findCommand returns the command named by the longest prefix of words,
// and the words left over as its arguments.
func findCommand(words []string) (*command, []string) {
	var best *command
	bestLen := 0
	for i := range commands {
		c := &commands[i]
		w := strings.Fields(c.words)
		if len(w) > len(words) || len(w) <= bestLen {
			continue
		}
		match := true
		for j := range w {
			if w[j] != words[j] {
				match = false
				break
			}
		}
		if match {
			best, bestLen = c, len(w)
		}
	}
	if best == nil {
		return nil, nil
	}
	return best, words[bestLen:]
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, &app{
		stdin:  os.Stdin,
		stdout: os.Stdout,
		stderr: os.Stderr,
		tty:    detectTerminal(),
		width:  stdoutWidth(),
	}, os.Args[1:])
	stop()
	os.Exit(code)
}

// run parses args, runs the command and returns the exit code. Everything
// a test may replace is in a.
func run(ctx context.Context, a *app, args []string) int {
	opts, words, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(a.stderr, "parley: %v\n", err)
		return exitUsage
	}
	if opts.help {
		usage(a.stdout)
		return exitOK
	}
	if opts.version {
		fmt.Fprintln(a.stdout, "parley", version())
		return exitOK
	}
	a.opts = opts
	if len(args) == 0 {
		usage(a.stderr)
		return exitUsage
	}
	cmd, rest := findCommand(words)
	if cmd == nil {
		err = noCommandError(opts, words)
	} else {
		err = urlAfterCommandError(opts, cmd, rest)
	}
	if err != nil {
		fmt.Fprintf(a.stderr, "parley: %v\n", err)
		return exitUsage
	}
	defer a.close()
	err = cmd.run(ctx, a, rest)
	code := a.exitCode(ctx, err)
	var (
		noAnswer *noAnswerError
		usage    *usageError
	)
	switch {
	case err == nil, errors.Is(err, errReported), errors.As(err, &noAnswer), a.unanswered.Load():
		// Nothing more to say: an unanswerable question was named when
		// it came (the call's error is only the server's echo of it).
	case errors.As(err, &usage):
		// A mistake on the command line is said as such, without the
		// layers it passed through (the client, a form's callback).
		fmt.Fprintf(a.stderr, "parley: %s\n", peerText(usage.Error()))
	default:
		// The error may hold what the server answered with.
		fmt.Fprintf(a.stderr, "parley: %s\n", peerText(a.describe(err)))
	}
	// With --json, stdout holds one document either way: the result, or
	// the error (a tool's error result is its result).
	// (Not the bridge's: its stdout is the host's.)
	if a.opts.jsonOut && err != nil && !errors.Is(err, errReported) && !errors.Is(err, errToolError) && cmd.words != "bridge" {
		a.writeJSONError(err)
	}
	a.warnUnusedAnswers()
	return code
}

// errReported is returned by a command that has already said what went
// wrong (a tool's error result, printed as the result): only the exit code
// is left to set.
var errReported = errors.New("reported")

func usage(w io.Writer) {
	fmt.Fprint(w, `parley: a command-line MCP client.

Usage:
  parley [FLAGS] URL COMMAND [ARGS]          a Streamable HTTP server
  parley [FLAGS] COMMAND [ARGS] -- SERVER... a server run as a command, over stdio

Commands:
`)
	for _, c := range commands {
		name := c.words
		if c.usage != "" {
			name += " " + c.usage
		}
		fmt.Fprintf(w, "  %s\n      %s\n", name, c.summary)
	}
	fmt.Fprint(w, `
Flags (anywhere before --):
  --json                 print each result as one JSON document (for scripts)
  --json '{...}' | @FILE the arguments of tools call / prompts get as JSON
                         (a value that starts with { or @; @- reads stdin)
  --protocol VERSION     pin the protocol version (default: negotiate)
  --answer KEY=VALUE     answer a form field without asking (repeatable)
  --answers FILE         answer form fields from a JSON object {"field": value}
  --refuse decline|cancel  answer every form with that action, without asking
  --no-input             never ask at the terminal (fail instead)
  --open                 open URLs (elicitation, OAuth login) in the browser
  --sampling-cmd CMD     answer sampling requests by running CMD (through sh -c):
                         the request params as JSON on its stdin, the result
                         as JSON on its stdout
  --root DIR             a root to offer the server (repeatable; default: .)
  --out DIR              where images and audio are saved (default: .)
  --log-level LEVEL      ask the server for log messages of LEVEL and above
  --connect-timeout D    how long a server run over stdio has to answer first
                         (default 10s; 0 waits as long as it takes)
  --version              print parley's version
  -h, --help             this help

Arguments: KEY=VALUE pairs are typed by the tool's input schema: numbers,
booleans (true/false), and JSON for arrays and objects; anything else is a
string. A KEY without a schema type is sent as JSON when it parses, else as
a string.

Questions: when the server asks for input, parley shows a form on the
terminal (stdin and stderr must be terminals). The first choice of each form
is what to do: "Fill in the form" (accept), "Decline" or "Cancel"; ctrl+c
in a form cancels too. Tab and shift+tab move between fields, enter goes on;
space toggles a multi-select entry. A field that does not validate says why
beneath it and keeps the form open. URL questions print the URL and wait for
enter (d then enter declines). Sampling questions print the messages and
take the reply as text, or run --sampling-cmd. Without a terminal, --answer,
--answers and --refuse answer forms; a question they cannot answer fails the
command with a message that names it (it never waits).

Progress goes to stderr as a progress line, and log messages as lines.

Authorization: an HTTP server that asks for OAuth gets the browser login
(a loopback redirect; the URL is printed, and opened with --open). Tokens are
kept in the user's config directory (parley/tokens.json, owner-only).
With no person, --auth names the grant; secrets come from files or the
environment, never from the command line:
  --auth client-credentials  --client-id ID and --client-secret-file FILE
                             (or $PARLEY_CLIENT_SECRET), or --client-key-file
                             PEM (a signed assertion, private_key_jwt)
  --auth workload            --token-file FILE: the platform's token (read
                             anew for every token)
  --auth enterprise          --id-token-file FILE (or $PARLEY_ID_TOKEN),
                             --idp-token-endpoint URL, --idp-client-id ID,
                             and --client-id with its secret or key
  --issuer URL               show the client to this authorization server only
  --dpop                     DPoP-bound tokens (--dpop-key-file PEM: the key;
                             default one made for the run)

Exit codes:
  0  success
  1  the tool reported an error (isError)
  2  the command line is wrong
  3  protocol error: the server answered with an error, or broke the protocol
  4  connection failure: the server could not be reached, or went away
  5  a question was refused: declined or cancelled (any result is printed)
  6  a question could not be asked: no terminal and no answer for it
`)
}
