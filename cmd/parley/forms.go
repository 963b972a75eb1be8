package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"

	"github.com/parley-mcp/parley/mcp"
)

// The first choice of every form: what to do with the question. Putting it
// first (not last) lets a person decline or cancel without filling in
// required fields.
const (
	choiceAccept  = "accept"
	choiceDecline = "decline"
	choiceCancel  = "cancel"
)

// formValue holds one field's value while the form runs, and turns it into
// the answer's content.
type formValue struct {
	field field
	text  string   // strings and numbers, as typed
	flag  bool     // booleans
	multi []string // multi-selects
	get   func() (any, bool, error)
}

// runForm asks the person to answer a form: one page with the choice to
// accept, decline or cancel, then (on accept) one page with every field,
// each validated as it is left. ctrl+c cancels.
func (a *app) runForm(ctx context.Context, message string, fields []field, prefill map[string]any) (*mcp.ElicitResult, error) {
	choice := choiceAccept
	// The question heads both pages: it stays above the fields while the
	// person fills them in.
	question := peerText(message)
	intro := huh.NewGroup(
		huh.NewSelect[string]().
			Title("Answer?").
			Options(
				huh.NewOption("Fill in the form", choiceAccept),
				huh.NewOption("Decline", choiceDecline),
				huh.NewOption("Cancel", choiceCancel),
			).
			Value(&choice),
	).Title("The server asks:").Description(question)
	values := make([]*formValue, len(fields))
	hfields := make([]huh.Field, 0, len(fields))
	for i, f := range fields {
		v := &formValue{field: f}
		values[i] = v
		hfields = append(hfields, v.build(prefill[f.name]))
	}
	groups := []*huh.Group{intro}
	if len(hfields) > 0 {
		groups = append(groups, huh.NewGroup(hfields...).
			Title("The server asks:").Description(question).
			WithHideFunc(func() bool { return choice != choiceAccept }))
	}
	err := a.runHuh(ctx, huh.NewForm(groups...))
	switch {
	case errors.Is(err, huh.ErrUserAborted):
		return &mcp.ElicitResult{Action: mcp.ActionCancel}, nil
	case err != nil:
		return nil, fmt.Errorf("showing the form: %w", err)
	}
	if choice != choiceAccept {
		return &mcp.ElicitResult{Action: mcp.ElicitAction(choice)}, nil
	}
	content := map[string]any{}
	for _, v := range values {
		val, ok, err := v.get()
		if err != nil { // the form validated it; a slip here is a bug
			return nil, fmt.Errorf("field %s: %w", v.field.name, err)
		}
		if ok {
			content[v.field.name] = val
		}
	}
	return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: content}, nil
}

// build makes the huh field for v, starting from initial (an answer given
// on the command line, or the schema's default).
func (v *formValue) build(initial any) huh.Field {
	f := v.field
	title := peerLine(f.label())
	if f.required {
		title += " *"
	}
	desc := peerText(schemaDescription(f.schema))
	if opts, multi, ok := enumOptions(f.schema); ok {
		hopts := make([]huh.Option[string], 0, len(opts)+1)
		if multi {
			if initial == nil {
				initial, _ = defaultValue(f.schema)
			}
			v.multi, _ = initial.([]string)
			for _, o := range opts {
				hopts = append(hopts, huh.NewOption(peerLine(o.title), o.value))
			}
			v.get = func() (any, bool, error) {
				out := append([]string{}, v.multi...)
				return out, f.required || len(out) > 0, checkItems(f.schema, len(out))
			}
			desc = joinHints(desc, itemsHint(f.schema))
			// Every option shown at once: without a height, huh v2.0.3
			// sizes the list by its options less the title's and the
			// description's lines, which shows one option of three. The
			// form still shrinks a field that does not fit the terminal.
			return huh.NewMultiSelect[string]().Title(title).Description(desc).
				Options(hopts...).Value(&v.multi).
				Height(len(hopts) + lineCount(title) + lineCount(desc)).
				Validate(func(s []string) error { return checkItems(f.schema, len(s)) })
		}
		if !f.required {
			hopts = append(hopts, huh.NewOption("(none)", ""))
		}
		for _, o := range opts {
			hopts = append(hopts, huh.NewOption(peerLine(o.title), o.value))
		}
		if initial == nil {
			initial, _ = defaultValue(f.schema)
		}
		v.text, _ = initial.(string)
		v.get = func() (any, bool, error) { return v.text, v.text != "", nil }
		return huh.NewSelect[string]().Title(title).Description(desc).Options(hopts...).Value(&v.text)
	}
	switch s := f.schema.(type) {
	case *mcp.BooleanSchema:
		if initial == nil {
			initial, _ = defaultValue(s)
		}
		v.flag, _ = initial.(bool)
		v.get = func() (any, bool, error) { return v.flag, true, nil }
		return huh.NewConfirm().Title(title).Description(desc).Affirmative("Yes").Negative("No").Value(&v.flag)
	case *mcp.NumberSchema:
		if initial == nil {
			initial, _ = defaultValue(s)
		}
		switch x := initial.(type) {
		case float64:
			v.text = formatNumber(x)
		case int64:
			v.text = strconv.FormatInt(x, 10)
		}
		check := func(text string) (any, bool, error) {
			text = strings.TrimSpace(text)
			if text == "" {
				if f.required {
					return nil, false, errors.New("required")
				}
				return nil, false, nil
			}
			n, err := checkNumber(s, text)
			return n, err == nil, err
		}
		v.get = func() (any, bool, error) { return check(v.text) }
		return huh.NewInput().Title(title).Description(joinHints(desc, numberHint(s))).Value(&v.text).
			Validate(func(t string) error { _, _, err := check(t); return err })
	case *mcp.StringSchema:
		if initial == nil {
			initial, _ = defaultValue(s)
		}
		v.text, _ = initial.(string)
		check := func(text string) error {
			if text == "" && f.required {
				return errors.New("required")
			}
			return checkString(s, text)
		}
		v.get = func() (any, bool, error) { return v.text, v.text != "" || f.required, check(v.text) }
		return huh.NewInput().Title(title).Description(joinHints(desc, stringHint(s))).Value(&v.text).Validate(check)
	}
	v.get = func() (any, bool, error) { return nil, false, nil }
	return huh.NewNote().Title(title).Description("(a field parley cannot show)")
}

// runHuh runs a form on the terminal. ctrl+c ends it as huh's abort
// (ErrUserAborted), but cleanly: huh answers its quit key with Bubble
// Tea's interrupt, which ends the program without drawing the last frame,
// leaving the form on the screen; here that interrupt becomes a quit, whose
// last frame (an aborted form draws nothing) takes the form away.
func (a *app) runHuh(ctx context.Context, form *huh.Form) error {
	form = form.WithProgramOptions(tea.WithFilter(func(_ tea.Model, msg tea.Msg) tea.Msg {
		if _, ok := msg.(tea.InterruptMsg); ok && form.State == huh.StateAborted {
			return tea.QuitMsg{}
		}
		return msg
	}))
	return form.WithInput(a.tty.in).WithOutput(a.tty.out).WithShowHelp(true).RunWithContext(ctx)
}

// lineCount is the number of lines s takes (without wrapping).
func lineCount(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

func joinHints(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, " · ")
}

func stringHint(s *mcp.StringSchema) string {
	var h []string
	if s.Format != "" {
		h = append(h, peerLine(string(s.Format))) // the server's word, unchecked
	}
	switch {
	case s.MinLength != nil && s.MaxLength != nil:
		h = append(h, fmt.Sprintf("%d to %d characters", *s.MinLength, *s.MaxLength))
	case s.MinLength != nil:
		h = append(h, fmt.Sprintf("at least %d characters", *s.MinLength))
	case s.MaxLength != nil:
		h = append(h, fmt.Sprintf("at most %d characters", *s.MaxLength))
	}
	return strings.Join(h, ", ")
}

func numberHint(s *mcp.NumberSchema) string {
	kind := "a number"
	if s.Type == mcp.TypeInteger {
		kind = "a whole number"
	}
	switch {
	case s.Minimum != nil && s.Maximum != nil:
		return fmt.Sprintf("%s from %s to %s", kind, formatNumber(*s.Minimum), formatNumber(*s.Maximum))
	case s.Minimum != nil:
		return fmt.Sprintf("%s, at least %s", kind, formatNumber(*s.Minimum))
	case s.Maximum != nil:
		return fmt.Sprintf("%s, at most %s", kind, formatNumber(*s.Maximum))
	}
	return kind
}

func itemsHint(s mcp.PrimitiveSchemaDefinition) string {
	if checkItems(s, 0) == nil {
		return "space toggles"
	}
	return "space toggles; " + checkItems(s, 0).Error()
}

// runReply asks the person to type a sampling reply.
func (a *app) runReply(ctx context.Context, maxTokens int64) (string, error) {
	var reply string
	err := a.runHuh(ctx, huh.NewForm(huh.NewGroup(
		huh.NewText().Title("Your reply (as the model)").
			Description(fmt.Sprintf("up to about %d tokens; ctrl+c refuses", maxTokens)).
			Value(&reply).
			Validate(func(s string) error {
				if strings.TrimSpace(s) == "" {
					return errors.New("required")
				}
				return nil
			}),
	)))
	if errors.Is(err, huh.ErrUserAborted) {
		a.refuse("refused")
		return "", errSamplingRefused
	}
	if err != nil {
		return "", fmt.Errorf("showing the form: %w", err)
	}
	return reply, nil
}
