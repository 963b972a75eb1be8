package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/parley-mcp/parley/mcp"
)

// progressLine is the progress of the call in flight, on stderr: redrawn
// in place on a terminal, one line per notification elsewhere.
type progressLine struct {
	mu    sync.Mutex
	shown bool // a line is on the terminal, to be cleared
	// asking is set while a question holds the terminal: progress is not
	// drawn over it, and log lines wait in held until it is answered.
	asking bool
	held   []string
}

// hold keeps the terminal for a question until the returned func is
// called, which prints the log lines that came meanwhile.
func (a *app) hold() (release func()) {
	pl := &a.progress
	pl.mu.Lock()
	if pl.shown {
		fmt.Fprint(a.stderr, "\r\033[K")
		pl.shown = false
	}
	pl.asking = true
	pl.mu.Unlock()
	return func() {
		pl.mu.Lock()
		defer pl.mu.Unlock()
		pl.asking = false
		for _, l := range pl.held {
			fmt.Fprintln(a.stderr, l)
		}
		pl.held = nil
	}
}

func (a *app) onProgress(_ context.Context, p *mcp.ProgressNotificationParams) {
	a.progress.mu.Lock()
	defer a.progress.mu.Unlock()
	if a.progress.asking && a.tty != nil {
		return // the next notification redraws it
	}
	line := renderProgress(p)
	if a.tty == nil {
		fmt.Fprintln(a.stderr, line)
		return
	}
	fmt.Fprintf(a.stderr, "\r\033[K%s", line)
	a.progress.shown = true
}

// renderProgress draws "[=====>    ] 50% 5/10 message".
func renderProgress(p *mcp.ProgressNotificationParams) string {
	const width = 20
	var b strings.Builder
	if p.Total > 0 {
		frac := min(max(p.Progress/p.Total, 0), 1)
		filled := int(frac * width)
		b.WriteByte('[')
		b.WriteString(strings.Repeat("=", filled))
		if filled < width {
			b.WriteByte('>')
			b.WriteString(strings.Repeat(" ", width-filled-1))
		}
		fmt.Fprintf(&b, "] %3.0f%% %s/%s", frac*100, formatNumber(p.Progress), formatNumber(p.Total))
	} else {
		fmt.Fprintf(&b, "progress %s", formatNumber(p.Progress))
	}
	if p.Message != "" {
		b.WriteString(" " + peerLine(p.Message))
	}
	return b.String()
}

// pause clears the progress line before something else is written.
func (pl *progressLine) pause(w io.Writer) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.shown {
		fmt.Fprint(w, "\r\033[K")
		pl.shown = false
	}
}

// done clears the progress line at the end of a call.
func (pl *progressLine) done(w io.Writer) { pl.pause(w) }

// onLog prints a log notification on stderr: "[level] logger: message".
// While a question holds the terminal, the line waits until it is answered.
func (a *app) onLog(_ context.Context, p *mcp.LoggingMessageNotificationParams) {
	var text string
	switch d := p.Data.(type) {
	case string:
		text = d
	default:
		raw, err := json.Marshal(d)
		if err != nil {
			text = fmt.Sprint(d)
		} else {
			text = string(raw)
		}
	}
	text = peerText(text)
	if p.Logger != "" {
		text = peerLine(p.Logger) + ": " + text
	}
	line := fmt.Sprintf("[%s] %s", peerLine(string(p.Level)), text)
	pl := &a.progress
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.asking && a.tty != nil {
		pl.held = append(pl.held, line)
		return
	}
	if pl.shown {
		fmt.Fprint(a.stderr, "\r\033[K")
		pl.shown = false
	}
	fmt.Fprintln(a.stderr, line)
}
