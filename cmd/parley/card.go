package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/parley-mcp/parley/experimental/servercard"
)

// runCard prints the Server Card of the server at the URL, read from the
// location the proposal reserves (the endpoint's URL with /server-card
// appended; a URL that already ends so is read as it is). A card is
// public: parley sends no credentials for it, and needs no session.
func runCard(ctx context.Context, a *app, args []string) error {
	if a.opts.url == "" && len(args) > 0 && isURL(args[0]) {
		a.opts.url, args = args[0], args[1:]
	}
	switch {
	case len(a.opts.command) > 0:
		return usagef("card reads a remote server's card: give its URL, not a command")
	case a.opts.url == "":
		return usagef("card needs the server's URL: parley card https://example.com/mcp")
	case len(args) > 0:
		return usagef("card takes only the URL, not %q", args)
	}
	where, err := servercard.Location(a.opts.url)
	if err != nil {
		return usagef("%v", err)
	}
	f := &servercard.Fetcher{HTTPClient: &http.Client{Timeout: 30 * time.Second}}
	card, err := f.Fetch(ctx, where)
	if err != nil {
		return &cardError{err}
	}
	if a.opts.jsonOut {
		out, err := json.MarshalIndent(card, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(a.stdout, "%s\n", out)
		return err
	}
	return a.printCard(card)
}

// cardError is a card that could not be read. Its exit code is the
// connection's when the server could not be reached or was busy, the
// protocol's when it answered something that is not a card.
type cardError struct{ err error }

func (e *cardError) Error() string { return e.err.Error() }
func (e *cardError) Unwrap() error { return e.err }

func (e *cardError) exitCode() int {
	var (
		status  *servercard.StatusError
		media   *servercard.MediaTypeError
		large   *servercard.TooLargeError
		invalid *servercard.InvalidError
	)
	switch {
	case errors.As(e.err, &status):
		if status.StatusCode >= 500 || status.StatusCode == http.StatusTooManyRequests {
			return exitConnection
		}
		return exitProtocol
	case errors.As(e.err, &media), errors.As(e.err, &large), errors.As(e.err, &invalid):
		return exitProtocol
	}
	return exitConnection
}

func (a *app) printCard(c *servercard.Card) error {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	head := peerLine(c.Name) + " " + peerLine(c.Version)
	if c.Title != "" {
		head += " (" + peerLine(c.Title) + ")"
	}
	line("%s", head)
	line("%s", peerLine(c.Description))
	if c.WebsiteURL != "" {
		line("website     %s", peerLine(c.WebsiteURL))
	}
	if r := c.Repository; r != nil {
		line("repository  %s (%s)", peerLine(r.URL), peerLine(r.Source))
	}
	if len(c.Remotes) == 0 {
		line("remote      none listed")
	}
	for _, r := range c.Remotes {
		line("remote      %s %s", peerLine(r.Type), peerLine(r.URL))
		if len(r.SupportedProtocolVersions) > 0 {
			line("            protocol %s", peerLine(strings.Join(r.SupportedProtocolVersions, ", ")))
		}
		for _, h := range r.Headers {
			line("            header %s%s", peerLine(h.Name), describeInput(h.Input))
		}
		for _, name := range slices.Sorted(mapsKeys(r.Variables)) {
			line("            variable %s%s", peerLine(name), describeInput(r.Variables[name]))
		}
	}
	_, err := fmt.Fprint(a.stdout, b.String())
	return err
}

// describeInput says what a header or variable asks of the person.
func describeInput(in servercard.Input) string {
	var flags []string
	if in.IsRequired {
		flags = append(flags, "required")
	}
	if in.IsSecret {
		flags = append(flags, "secret")
	}
	if in.Default != "" {
		flags = append(flags, "default "+peerLine(in.Default))
	}
	if len(in.Choices) > 0 {
		flags = append(flags, "one of "+peerLine(strings.Join(in.Choices, ", ")))
	}
	s := ""
	if len(flags) > 0 {
		s = " (" + strings.Join(flags, ", ") + ")"
	}
	if in.Description != "" {
		s += ": " + peerLine(in.Description)
	}
	return s
}
