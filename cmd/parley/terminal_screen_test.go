package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// The terminal tests of what a form and a table leave on the screen.

// TestTerminalQuestionAboveFields: once "Fill in the form" is chosen, the
// server's question stays above the fields.
func TestTerminalQuestionAboveFields(t *testing.T) {
	p := startPane(t, "tools", "call", "signup")
	p.waitFor("Fill in the form")
	p.keys("Enter")
	p.waitFor("┃ Age *")
	if s := p.screen(); !strings.Contains(s, "Sign up for the newsletter service") {
		t.Fatalf("the question is gone from the form's fields:\n%s", s)
	}
	p.keys("C-c")
	p.exit()
}

// TestTerminalMultiSelectShowsEveryOption: a multi-select shows all its
// options at once, not one at a time.
func TestTerminalMultiSelectShowsEveryOption(t *testing.T) {
	p := startPane(t, "tools", "call", "signup")
	p.waitFor("Fill in the form")
	p.keys("Enter")
	p.waitFor("┃ Age *")
	s := p.screen()
	for _, option := range []string{"alpha", "beta", "Ham", "Egg"} {
		if !strings.Contains(s, option) {
			t.Errorf("the option %q is not on the screen:\n%s", option, s)
		}
	}
	p.keys("C-c")
	p.exit()
}

// TestTerminalCtrlCClearsTheForm: ctrl+c cancels and takes the form off
// the screen, on the form's first page and among its fields.
func TestTerminalCtrlCClearsTheForm(t *testing.T) {
	for _, fill := range []bool{false, true} {
		name := "choice"
		if fill {
			name = "fields"
		}
		t.Run(name, func(t *testing.T) {
			p := startPane(t, "tools", "call", "signup")
			p.waitFor("Fill in the form")
			if fill {
				p.keys("Enter")
				p.waitFor("┃ Age *")
			}
			p.keys("C-c")
			code, _ := p.exit()
			if code != exitRefused {
				t.Errorf("exit %d, want %d", code, exitRefused)
			}
			s := p.screen()
			for _, left := range []string{"Fill in the form", "Age", "The server asks", "enter select"} {
				if strings.Contains(s, left) {
					t.Errorf("after ctrl+c the screen still shows %q:\n%s", left, s)
				}
			}
		})
	}
}

// TestTerminalTableFitsTheWidth: a list on a narrow terminal is cut to
// its width, the description first, instead of wrapping every row.
func TestTerminalTableFitsTheWidth(t *testing.T) {
	p := startPaneWith(t, paneOptions{width: 50, stdoutOnPane: true}, "tools", "list")
	code, _ := p.exit()
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, p.screen())
	}
	s := p.screen()
	if !strings.Contains(s, "media   -            Returns text, an image, audi…") {
		t.Errorf("the media row is not cut to 50 columns:\n%s", s)
	}
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, "and a resource") || strings.HasPrefix(strings.TrimSpace(line), "resource") {
			t.Errorf("a row wrapped onto the next line: %q\n%s", line, s)
		}
		if n := utf8.RuneCountInString(strings.TrimRight(line, " ")); n > 50 {
			t.Errorf("a line of %d columns: %q", n, line)
		}
	}
}

// TestTerminalPeerText: a server's control sequences in a form's
// question, a URL question and a sampling request reach the terminal
// made visible: the window keeps its title, and the screen shows the
// sequences as text.
func TestTerminalPeerText(t *testing.T) {
	for _, c := range []struct {
		tool, shows, ready string
		keys               []string
	}{
		{"asks", "Question ", "Fill in the form", []string{"Down", "Enter"}}, // decline
		{"visit", "Visit ", "Press enter when done", []string{"d", "Enter"}},
		{"sample", "Sampling ", "Your reply", []string{"C-c"}},
	} {
		t.Run(c.tool, func(t *testing.T) {
			p := startPaneWith(t, paneOptions{server: "hostile"}, "tools", "call", c.tool)
			p.waitFor(c.shows + `\x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;pwned\x07`)
			if title := p.tmuxCmd("display-message", "-p", "-t", "parley", "#{pane_title}"); strings.Contains(title, "pwned") {
				t.Errorf("the server retitled the window: %q", title)
			}
			p.waitFor(c.ready) // keys sent before it would reach the shell
			p.keys(c.keys...)
			p.exit()
		})
	}
}
