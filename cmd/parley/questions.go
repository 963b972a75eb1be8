package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/x/term"

	"github.com/parley-mcp/parley/mcp"
)

// detectTerminal returns the terminal to ask questions on: stdin for
// keys and stderr for drawing, so that stdout can go to a file or a pipe
// while a person answers. Either one not being a terminal means there is
// nobody to ask.
func detectTerminal() *terminal {
	if term.IsTerminal(os.Stdin.Fd()) && term.IsTerminal(os.Stderr.Fd()) {
		return &terminal{in: os.Stdin, out: os.Stderr}
	}
	return nil
}

// stdoutWidth is the width of the terminal stdout is, or 0.
func stdoutWidth() int {
	if !term.IsTerminal(os.Stdout.Fd()) {
		return 0
	}
	w, _, err := term.GetSize(os.Stdout.Fd())
	if err != nil || w <= 0 {
		return 0
	}
	return w
}

// interactive reports whether questions may be asked at the terminal.
func (a *app) interactive() bool { return a.tty != nil && !a.opts.noInput }

// noAnswerError says which question could not be answered, and how to
// answer it without a terminal.
type noAnswerError struct {
	question string
	fields   []field
	hint     string
}

func (e *noAnswerError) Error() string {
	msg := fmt.Sprintf("cannot ask %q: no terminal to ask on", e.question)
	if len(e.fields) > 0 {
		names := make([]string, len(e.fields))
		for i, f := range e.fields {
			names[i] = f.name
		}
		msg += " and no answer for " + strings.Join(names, ", ")
	}
	return msg + "; " + e.hint
}

// unanswerable records that a question could not be asked and returns
// the error that ends the call.
func (a *app) unanswerable(e *noAnswerError) error {
	a.unanswered.Store(true)
	a.outcome.mu.Lock()
	a.outcome.noAnswer = e
	a.outcome.mu.Unlock()
	fmt.Fprintf(a.stderr, "parley: %s\n", peerText(e.Error()))
	return e
}

// elicit answers the server's elicitation requests: forms and URLs.
func (a *app) elicit(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
	a.formMu.Lock()
	defer a.formMu.Unlock()
	defer a.hold()()
	if a.opts.refuse != "" {
		a.refuse(refusalOf(a.opts.refuse))
		return &mcp.ElicitResult{Action: mcp.ElicitAction(a.opts.refuse)}, nil
	}
	var (
		res *mcp.ElicitResult
		err error
	)
	switch p := p.(type) {
	case *mcp.ElicitRequestURLParams:
		res, err = a.elicitURL(ctx, p)
	case *mcp.ElicitRequestFormParams:
		res, err = a.elicitForm(ctx, p)
	default:
		return nil, fmt.Errorf("unknown elicitation %T", p)
	}
	if err == nil && res.Action != mcp.ActionAccept {
		a.refuse(refusalOf(string(res.Action)))
	}
	return res, err
}

func (a *app) elicitForm(ctx context.Context, p *mcp.ElicitRequestFormParams) (*mcp.ElicitResult, error) {
	answers, err := a.loadAnswers()
	if err != nil {
		return nil, err
	}
	fields := formFields(&p.RequestedSchema)
	a.formAsked(fields, answers)
	content, missing, err := fillForm(fields, answers)
	if err != nil {
		return nil, err
	}
	if len(answers) > 0 && len(missing) == 0 {
		return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: content}, nil
	}
	if !a.interactive() {
		if len(missing) == 0 {
			missing = fields // nothing required, but nothing answered either
		}
		return nil, a.unanswerable(&noAnswerError{question: p.Message, fields: missing,
			hint: "answer with --answer FIELD=VALUE or --answers FILE, or refuse with --refuse decline"})
	}
	return a.runForm(ctx, p.Message, fields, content)
}

// elicitURL shows the URL, opens it when --open says so, and waits for the
// person to say they are done.
func (a *app) elicitURL(ctx context.Context, p *mcp.ElicitRequestURLParams) (*mcp.ElicitResult, error) {
	if !a.interactive() {
		return nil, a.unanswerable(&noAnswerError{question: p.Message,
			hint: "run parley on a terminal to open " + p.URL + ", or refuse with --refuse decline"})
	}
	out := a.tty.out
	fmt.Fprintf(out, "\n%s\n\n  %s\n\n", peerText(p.Message), peerLine(p.URL))
	if a.opts.open {
		if err := a.open(p.URL); err != nil {
			fmt.Fprintf(out, "(%s)\n", peerText(err.Error()))
		}
	}
	fmt.Fprint(out, "Press enter when done (d then enter declines, c then enter cancels): ")
	line, err := readLine(ctx, a.tty.in)
	if err != nil {
		return &mcp.ElicitResult{Action: mcp.ActionCancel}, nil
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "d", "decline":
		return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
	case "c", "cancel":
		return &mcp.ElicitResult{Action: mcp.ActionCancel}, nil
	}
	return &mcp.ElicitResult{Action: mcp.ActionAccept}, nil
}

// readLine reads one line from r, a byte at a time (so that nothing is
// buffered away from the next form), or gives up when ctx ends.
func readLine(ctx context.Context, r io.Reader) (string, error) {
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		var b []byte
		one := make([]byte, 1)
		for {
			n, err := r.Read(one)
			if n == 1 {
				if one[0] == '\n' || one[0] == '\r' {
					ch <- result{string(b), nil}
					return
				}
				b = append(b, one[0])
			}
			if err != nil {
				ch <- result{string(b), err}
				return
			}
		}
	}()
	select {
	case r := <-ch:
		return r.line, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// errSamplingRefused is the answer to a sampling request the person
// dismissed: sampling has no decline, so the request fails.
var errSamplingRefused = errors.New("the sampling request was refused at the terminal")

// sample answers a sampling request: with --sampling-cmd, or by the person
// typing the reply.
func (a *app) sample(ctx context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
	a.formMu.Lock()
	defer a.formMu.Unlock()
	defer a.hold()()
	if a.opts.samplingCmd != "" {
		return a.sampleCommand(ctx, p)
	}
	if !a.interactive() {
		return nil, a.unanswerable(&noAnswerError{question: "sampling: " + firstLine(lastText(p)),
			hint: "answer with --sampling-cmd CMD"})
	}
	out := a.tty.out
	fmt.Fprintln(out, "\nThe server asks for a model's reply (sampling). The conversation:")
	if p.SystemPrompt != "" {
		fmt.Fprintf(out, "[system]\n%s\n", peerText(p.SystemPrompt))
	}
	for _, m := range p.Messages {
		fmt.Fprintf(out, "[%s]\n", peerLine(string(m.Role)))
		for _, b := range m.Content {
			fmt.Fprintln(out, peerText(samplingBlockText(b)))
		}
	}
	reply, err := a.runReply(ctx, p.MaxTokens)
	if err != nil {
		return nil, err
	}
	return &mcp.CreateMessageResult{
		Role:       "assistant",
		Content:    mcp.SamplingContent{&mcp.TextContent{Text: reply}},
		Model:      "human-at-parley",
		StopReason: mcp.StopReasonEndTurn,
	}, nil
}

func samplingBlockText(b mcp.SamplingMessageContentBlock) string {
	switch b := b.(type) {
	case *mcp.TextContent:
		return b.Text
	case *mcp.ImageContent:
		return fmt.Sprintf("(an image, %s, %d bytes)", b.MIMEType, len(b.Data))
	case *mcp.AudioContent:
		return fmt.Sprintf("(audio, %s, %d bytes)", b.MIMEType, len(b.Data))
	}
	raw, _ := mcp.Marshal(b)
	return string(raw)
}

// lastText is the text of the last message of a sampling request, to name
// it by.
func lastText(p *mcp.CreateMessageRequestParams) string {
	for i := len(p.Messages) - 1; i >= 0; i-- {
		for _, b := range p.Messages[i].Content {
			if t, ok := b.(*mcp.TextContent); ok {
				return t.Text
			}
		}
	}
	return fmt.Sprintf("%d messages", len(p.Messages))
}

// sampleCommand runs --sampling-cmd with the request's params as JSON on
// its stdin. Its stdout is the result as JSON; output that is not a JSON
// object is taken as the reply's text, so that a plain LLM command-line
// tool can answer.
func (a *app) sampleCommand(ctx context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
	in, err := mcp.Marshal(p)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", a.opts.samplingCmd)
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stderr = a.stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("--sampling-cmd: %w", err)
	}
	trimmed := bytes.TrimSpace(out)
	if !bytes.HasPrefix(trimmed, []byte("{")) {
		return &mcp.CreateMessageResult{
			Role:       "assistant",
			Content:    mcp.SamplingContent{&mcp.TextContent{Text: string(trimmed)}},
			Model:      "sampling-cmd",
			StopReason: mcp.StopReasonEndTurn,
		}, nil
	}
	var res mcp.CreateMessageResult
	if err := json.Unmarshal(trimmed, &res); err != nil {
		return nil, fmt.Errorf("--sampling-cmd printed no CreateMessageResult: %w", err)
	}
	return &res, nil
}

// listRoots offers --root directories (the working directory by default).
func (a *app) listRoots(context.Context) (*mcp.ListRootsResult, error) {
	dirs := a.opts.roots
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	res := &mcp.ListRootsResult{Roots: []mcp.Root{}}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
		res.Roots = append(res.Roots, mcp.Root{URI: u.String(), Name: filepath.Base(abs)})
	}
	return res, nil
}
