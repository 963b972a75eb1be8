package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// TestCommandLineMistakes: each mistake a newcomer makes on the command
// line is said in one line on stderr, with the command line that was
// probably meant (exit 2), never with the usage or every argument as a
// command's name. The README's first try, the server before the command,
// comes first.
func TestCommandLineMistakes(t *testing.T) {
	cases := [][]string{
		{"--", "./my-server", "tools", "list"},
		{"--answer", "a=1", "--", "node", "server.js", "--port", "80", "tools", "call", "add", "a=1"},
		{"--", "./my-server"},
		{"./my-server", "tools", "list"},
		{"./my-server", "--port", "80", "tools", "list"},
		{"tools", "list", "https://example.com/mcp"},
		{"--json", "tools", "call", "add", "http://127.0.0.1:8000/mcp", "a=1"},
		{"https://example.com/mcp"},
		{"--json"},
		{"--jsno", "tools", "list"},
		{"--protocl", "2025-11-25", "info"},
		{"--frobnicate", "info"},
		{"tols", "list"},
		{"tools", "lsit"},
		{"tools", "frobnicate"},
		{"tools"},
		{"infp"},
		{"frobnicate", "the", "whole", "thing"},
	}
	var all strings.Builder
	for _, args := range cases {
		r := runApp(t, &app{}, args...)
		if r.code != exitUsage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "parley: ") {
			t.Errorf("parley %s: exit %d, stdout %q, stderr %q; want exit %d and one line on stderr",
				strings.Join(args, " "), r.code, r.stdout, r.stderr, exitUsage)
		}
		fmt.Fprintf(&all, "$ parley %s\n%s", commandLine(nil, args, nil)[len("parley "):], r.stderr)
	}
	golden(t, "cmdline-mistakes", all.String())
}

// The unknown command is named by its first word (or a group's two), not
// by every argument that follows.
func TestUnknownCommandNamesOneWord(t *testing.T) {
	r := runApp(t, &app{}, "frobnicate", "a=1", "b=2", "c=3")
	if !strings.Contains(r.stderr, `"frobnicate"`) || strings.Contains(r.stderr, "a=1") {
		t.Errorf("stderr %q: want the command named alone", r.stderr)
	}
}

// A bare parley still prints the usage: nothing was asked.
func TestBareParleyPrintsUsage(t *testing.T) {
	r := runApp(t, &app{})
	if r.code != exitUsage || !strings.Contains(r.stderr, "Usage:") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestFlagNamesComplete holds flagNames (the flags "did you mean"
// proposes) to the flags parseArgs takes and --help lists.
func TestFlagNamesComplete(t *testing.T) {
	var help bytes.Buffer
	usage(&help)
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:-h, )?--([a-z-]+)`).FindAllStringSubmatch(help.String(), -1) {
		listed[m[1]] = true
	}
	for name := range listed {
		if !slices.Contains(flagNames, name) {
			t.Errorf("--help lists --%s, flagNames does not", name)
		}
	}
	for _, name := range flagNames {
		// --url is the first word's flag form, not in --help; the auth
		// flags' companions are named inside their flag's lines.
		if !listed[name] && name != "url" && !regexp.MustCompile(`--`+regexp.QuoteMeta(name)+`(\s|$)`).MatchString(help.String()) {
			t.Errorf("flagNames has %s, --help does not list it", name)
		}
		if _, _, err := parseArgs([]string{"--" + name, "x", "info"}); err != nil && strings.Contains(err.Error(), "unknown flag") {
			t.Errorf("--%s: %v", name, err)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	for name, want := range map[string]string{
		"jsno":       "json", // two letters swapped
		"protocl":    "protocol",
		"no-inptu":   "no-input",
		"open":       "open",
		"x":          "",
		"frobnicate": "",
		"ur":         "url",
		"OUT":        "out",
		"jxxn":       "", // two of four letters: no slip
	} {
		if got := didYouMean(name, flagNames); got != want {
			t.Errorf("didYouMean(%q) = %q, want %q", name, got, want)
		}
	}
	if got := editDistance("tools", "tosol"); got != 2 {
		t.Errorf("editDistance(tools, tosol) = %d, want 2", got)
	}
}

// A tool the server does not have is named with the closest one it has;
// the exit code stays the protocol's (the server refused the call).
func TestUnknownToolDidYouMean(t *testing.T) {
	for name, want := range map[string]string{
		"ad":     `parley: the server has no tool "ad"; did you mean "add"?` + "\n",
		"nosuch": `parley: the server has no tool "nosuch" (parley tools list lists its tools)` + "\n",
	} {
		r := runFixture(t, "tools", "call", name)
		if r.code != exitProtocol || r.stderr != want {
			t.Errorf("tools call %s: exit %d, stderr %q; want %d and %q", name, r.code, r.stderr, exitProtocol, want)
		}
	}
}

// A tool the server has, whose call it refused for another reason, keeps
// the server's words.
func TestKnownToolRefusedKeepsServerWords(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "refuses", Version: "1"}, &server.Options{Logger: slog.New(slog.DiscardHandler)})
	s.HandleListTools(func(context.Context, *server.Request, *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		return &mcp.ListToolsResult{Tools: []mcp.Tool{{Name: "busy", InputSchema: json.RawMessage(`{"type":"object"}`)}}}, nil
	})
	s.HandleCallTool(func(context.Context, *server.Request, *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return nil, &jsonrpc.Error{Code: -32603, Message: "too busy, try later"}
	})
	dial := func(context.Context) (transport.Transport, error) {
		c, srv := transport.NewMemoryPipe()
		go s.ServeConn(context.Background(), srv)
		return transport.NewMemoryTransport(c), nil
	}
	r := runApp(t, &app{dial: dial}, "tools", "call", "busy")
	if r.code != exitProtocol || !strings.Contains(r.stderr, "too busy, try later") || strings.Contains(r.stderr, "no tool") {
		t.Errorf("exit %d, stderr %q; want the server's words", r.code, r.stderr)
	}
}
