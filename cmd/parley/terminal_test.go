package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The terminal tests run parley in a real terminal, a tmux pane, and
// answer its forms with keys, as a person would: tmux send-keys types,
// capture-pane reads the screen. parley and the fixture server are this
// test binary in its other parts (see TestMain).

// paneTimeout bounds every wait of a terminal test, so that a form that
// never shows fails in seconds with the screen it shows instead.
const paneTimeout = 30 * time.Second

// requireTmux returns the tmux binary, or skips the test without one;
// under PARLEY_REQUIRE_TMUX=1 (make cli) its absence fails the test.
func requireTmux(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("PARLEY_REQUIRE_TMUX") == "1" {
			t.Fatalf("tmux is required (PARLEY_REQUIRE_TMUX=1) but not found: %v; scripts/deps.sh installs it", err)
		}
		t.Skip("tmux not found; set PARLEY_REQUIRE_TMUX=1 to make this a failure")
	}
	return path
}

// pane is parley running in a tmux pane of its own tmux server.
type pane struct {
	t      *testing.T
	tmux   string
	socket string
	dir    string
	ctx    context.Context
}

// startPane runs parley with args against the fixture server (over stdio)
// in a new 100x50 tmux pane. Its stdout goes to a file; stdin and stderr
// are the terminal, where the forms are.
func startPane(t *testing.T, args ...string) *pane {
	t.Helper()
	return startPaneWith(t, paneOptions{}, args...)
}

// paneOptions change startPane's pane.
type paneOptions struct {
	width int // columns; 0 for 100
	// stdoutOnPane leaves stdout on the terminal too, instead of a file.
	stdoutOnPane bool
	// server is the PARLEY_TEST_ROLE of the server; "" for the fixture.
	server string
}

// startPaneWith is startPane with options. Once parley has exited, the
// pane stays until the test ends, so that what parley left on the
// screen can be read.
func startPaneWith(t *testing.T, o paneOptions, args ...string) *pane {
	t.Helper()
	tmux := requireTmux(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), paneTimeout)
	t.Cleanup(cancel)
	p := &pane{t: t, tmux: tmux, socket: filepath.Join(dir, "tmux.sock"), dir: dir, ctx: ctx}

	// Under -race, the processes write race reports to files instead of
	// failing with exit code 66, so that exit() can tell ours from one in
	// a dependency (see raceReports).
	race := "GORACE=exitcode=0 log_path=" + filepath.Join(dir, "race")
	server := o.server
	if server == "" {
		server = "fixture"
	}
	cmd := []string{"env", race, "PARLEY_TEST_ROLE=parley", exe}
	cmd = append(cmd, args...)
	cmd = append(cmd, "--", "env", race, "PARLEY_TEST_ROLE="+server, exe)
	quoted := make([]string, len(cmd))
	for i, c := range cmd {
		quoted[i] = shellQuote(c)
	}
	stdout := filepath.Join(dir, "stdout")
	script := strings.Join(quoted, " ")
	if !o.stdoutOnPane {
		script += " >" + shellQuote(stdout)
	}
	// The exit code, then a process that holds the pane (and what parley
	// left on it) until the test's tmux server is killed.
	script += "\nrc=$?\ntouch " + shellQuote(stdout) +
		"\necho $rc >" + shellQuote(filepath.Join(dir, "rc.tmp")) +
		" && mv " + shellQuote(filepath.Join(dir, "rc.tmp")) + " " + shellQuote(filepath.Join(dir, "rc")) +
		"\nexec cat >/dev/null\n"
	if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	width := o.width
	if width == 0 {
		width = 100
	}
	p.tmuxCmd("-f", "/dev/null", "new-session", "-d", "-s", "parley", "-x", strconv.Itoa(width), "-y", "50", "sh "+shellQuote(filepath.Join(dir, "run.sh")))
	t.Cleanup(func() { exec.Command(tmux, "-S", p.socket, "kill-server").Run() })
	return p
}

func (p *pane) tmuxCmd(args ...string) string {
	p.t.Helper()
	out, err := exec.Command(p.tmux, append([]string{"-S", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen returns what the pane shows.
func (p *pane) screen() string {
	out, _ := exec.Command(p.tmux, "-S", p.socket, "capture-pane", "-p", "-t", "parley").CombinedOutput()
	return string(out)
}

// waitFor polls the screen until it shows want, or fails the test with
// the last screen when the pane's deadline passes.
func (p *pane) waitFor(want string) {
	p.t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		s := p.screen()
		if strings.Contains(s, want) {
			return
		}
		select {
		case <-p.ctx.Done():
			p.t.Fatalf("the screen never showed %q; it shows:\n%s", want, s)
		case <-tick.C:
		}
	}
}

// keys sends tmux key names (Enter, Down, BSpace, C-c, Space...).
func (p *pane) keys(names ...string) {
	p.t.Helper()
	p.tmuxCmd(append([]string{"send-keys", "-t", "parley"}, names...)...)
}

// typeText types s literally.
func (p *pane) typeText(s string) {
	p.t.Helper()
	p.tmuxCmd("send-keys", "-t", "parley", "-l", s)
}

// exit waits for parley to end and returns its exit code and stdout.
func (p *pane) exit() (int, string) {
	p.t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		rc, err := os.ReadFile(filepath.Join(p.dir, "rc"))
		if err == nil {
			code, err := strconv.Atoi(strings.TrimSpace(string(rc)))
			if err != nil {
				p.t.Fatal(err)
			}
			out, err := os.ReadFile(filepath.Join(p.dir, "stdout"))
			if err != nil {
				p.t.Fatal(err)
			}
			p.raceReports()
			return code, string(out)
		}
		if !errors.Is(err, os.ErrNotExist) {
			p.t.Fatal(err)
		}
		select {
		case <-p.ctx.Done():
			p.t.Fatalf("parley did not exit; the screen shows:\n%s", p.screen())
		case <-tick.C:
		}
	}
}

// knownRace marks the one data race the terminal tests tolerate, in
// Bubble Tea v2's shutdown (charm.land/bubbletea/v2 v2.0.2, tea.go): it
// waits at most 500ms for its input loop to stop, then closes the
// cancelable reader (github.com/muesli/cancelreader) that loop may still be
// reading, which the race detector reports on a loaded machine.
const knownRace = "github.com/muesli/cancelreader."

// raceReports fails the test for each race report the processes wrote,
// but the known one in a dependency.
func (p *pane) raceReports() {
	p.t.Helper()
	logs, _ := filepath.Glob(filepath.Join(p.dir, "race.*"))
	for _, log := range logs {
		b, err := os.ReadFile(log)
		if err != nil {
			p.t.Fatal(err)
		}
		for _, report := range strings.Split(string(b), "==================\n") {
			if strings.Contains(report, "DATA RACE") && !strings.Contains(report, knownRace) {
				p.t.Errorf("a data race in parley or the fixture:\n%s", report)
			}
		}
	}
}

// TestTerminalFormFilled fills in a form with a field of every kind
// (integer and number with bounds, email and length-bound strings, titled
// and untitled single-selects, a boolean, untitled and titled
// multi-selects), corrects two fields the form refused, and submits.
func TestTerminalFormFilled(t *testing.T) {
	p := startPane(t, "tools", "call", "signup")
	p.waitFor("Sign up for the newsletter service")
	p.waitFor("Fill in the form")
	p.keys("Enter")

	p.waitFor("┃ Age *")
	p.typeText("12")
	p.keys("Enter")
	p.waitFor("at least 18") // refused: the form stays on the field
	p.keys("BSpace", "BSpace")
	p.typeText("42")
	p.keys("Enter")

	p.waitFor("┃ Email *")
	p.typeText("bob@")
	p.keys("Enter")
	p.waitFor("is not an email address")
	p.typeText("example.com")
	p.keys("Enter")

	p.waitFor("┃ Name *")
	p.typeText("Bob")
	p.keys("Enter")

	p.waitFor("┃ Plan *")
	p.keys("Down", "Enter") // Pro plan

	p.waitFor("┃ Color")
	p.keys("Down", "Down", "Enter") // (none), red, green

	p.waitFor("┃ Newsletter")
	p.keys("Left", "Enter") // from the default No to Yes

	p.waitFor("┃ Score")
	p.keys("BSpace") // the default, 5
	p.typeText("7.5")
	p.keys("Enter")

	p.waitFor("┃ Tags")
	p.keys("Space", "Enter") // alpha

	p.waitFor("┃ Toppings")
	p.keys("Down", "Space", "Enter") // Egg; the last field submits

	code, out := p.exit()
	want := `signed up: {"age":42,"email":"bob@example.com","name":"Bob","plan":"pro","color":"green","newsletter":true,"score":7.5,"tags":["alpha"],"toppings":["egg"]}`
	if code != exitOK || !strings.Contains(out, want) {
		t.Fatalf("exit %d, stdout:\n%s\nwant exit 0 and %s", code, out, want)
	}
}

// TestTerminalFormDeclined declines from the form's first choice, without
// filling in its required fields.
func TestTerminalFormDeclined(t *testing.T) {
	p := startPane(t, "tools", "call", "signup")
	p.waitFor("Fill in the form")
	p.keys("Down")
	p.waitFor("> Decline")
	p.keys("Enter")
	code, out := p.exit()
	if code != exitRefused || !strings.Contains(out, "answered with decline") {
		t.Fatalf("exit %d, stdout:\n%s\nwant exit %d and the tool's error naming decline", code, out, exitRefused)
	}
}

// TestTerminalFormCancelled cancels with the form's third choice, and with
// ctrl+c in the middle of the fields.
func TestTerminalFormCancelled(t *testing.T) {
	t.Run("choice", func(t *testing.T) {
		p := startPane(t, "tools", "call", "signup")
		p.waitFor("Fill in the form")
		p.keys("Down", "Down")
		p.waitFor("> Cancel")
		p.keys("Enter")
		code, out := p.exit()
		if code != exitRefused || !strings.Contains(out, "answered with cancel") {
			t.Fatalf("exit %d, stdout:\n%s\nwant exit %d and the tool's error naming cancel", code, out, exitRefused)
		}
	})
	t.Run("ctrl+c", func(t *testing.T) {
		p := startPane(t, "tools", "call", "signup")
		p.waitFor("Fill in the form")
		p.keys("Enter")
		p.waitFor("┃ Age *")
		p.typeText("30")
		p.keys("C-c")
		code, out := p.exit()
		if code != exitRefused || !strings.Contains(out, "answered with cancel") {
			t.Fatalf("exit %d, stdout:\n%s\nwant exit %d and the tool's error naming cancel", code, out, exitRefused)
		}
	})
}

// TestTerminalURL shows a URL question and takes enter as done, and d as
// a decline.
func TestTerminalURL(t *testing.T) {
	for _, c := range []struct {
		keys []string
		code int
		want string
	}{
		{[]string{"Enter"}, exitOK, "visit: accept"},
		{[]string{"d", "Enter"}, exitRefused, "visit: decline"},
	} {
		t.Run(c.want, func(t *testing.T) {
			p := startPane(t, "tools", "call", "visit")
			p.waitFor("Connect your account")
			p.waitFor("https://example.com/connect")
			p.waitFor("Press enter when done")
			p.keys(c.keys...)
			code, out := p.exit()
			if code != c.code || !strings.Contains(out, c.want) {
				t.Fatalf("exit %d, stdout:\n%s\nwant exit %d and %q", code, out, c.code, c.want)
			}
		})
	}
}

// TestTerminalSampling shows a sampling request's messages and sends what
// the person types as the model's reply.
func TestTerminalSampling(t *testing.T) {
	p := startPane(t, "tools", "call", "ask", "question=What is six times seven?")
	p.waitFor("What is six times seven?")
	p.waitFor("Your reply")
	p.typeText("forty-two")
	p.keys("Enter")
	code, out := p.exit()
	if code != exitOK || !strings.Contains(out, "the model says: forty-two") {
		t.Fatalf("exit %d, stdout:\n%s\nwant exit 0 and the typed reply", code, out)
	}
}

// TestTerminalFormPrefilled: answers given on the command line that do not
// cover the form fill it in beforehand; the person completes the rest.
func TestTerminalFormPrefilled(t *testing.T) {
	p := startPane(t, "--answer", "age=42", "--answer", "email=ada@example.com", "tools", "call", "signup")
	p.waitFor("Fill in the form")
	p.keys("Enter")
	p.waitFor("┃ > 42")
	p.waitFor("> ada@example.com")
	p.keys("Enter")
	p.waitFor("┃ Email *")
	p.keys("Enter")
	p.waitFor("┃ Name *")
	p.typeText("Ada")
	p.keys("Enter")
	for _, field := range []string{"Plan *", "Color", "Newsletter", "Score", "Tags", "Toppings"} {
		p.waitFor("┃ " + field)
		p.keys("Enter") // keep the default, or nothing
	}
	code, out := p.exit()
	want := `signed up: {"age":42,"email":"ada@example.com","name":"Ada","plan":"basic","score":5}`
	if code != exitOK || !strings.Contains(out, want) {
		t.Fatalf("exit %d, stdout:\n%s\nwant exit 0 and %s", code, out, want)
	}
}
