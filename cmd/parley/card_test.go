package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/experimental/servercard"
)

// serveCard serves the fixture over HTTP with its card at the reserved
// location, and returns the endpoint's URL.
func serveCard(t *testing.T, edit func(c *servercard.Card)) string {
	t.Helper()
	s, err := newFixture()
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h := s.HTTPHandler(nil)
	mux.Handle("/mcp", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		h.Shutdown(context.Background())
		srv.Close()
	})
	card, err := servercard.Build(s.LowLevel(), &servercard.Options{
		Name:        "dev.parley/fixture",
		Description: "A fixture for parley's tests.",
		URL:         "https://fixture.example/mcp",
		Headers: []servercard.KeyValueInput{{Name: "X-Api-Key",
			Input: servercard.Input{IsRequired: true, IsSecret: true, Description: "the key from your account page"}}},
		Repository: &servercard.Repository{URL: "https://example.com/parley", Source: "git"},
	})
	if err != nil {
		t.Fatal(err)
	}
	card.Remotes[0].SupportedProtocolVersions = []string{"2026-07-28", "2025-11-25"}
	card.Remotes[0].Variables = map[string]servercard.Input{"region": {Default: "eu", Choices: []string{"eu", "us"}}}
	if edit != nil {
		edit(card)
	}
	if err := servercard.Mount(mux, "/mcp", card, nil); err != nil {
		t.Fatal(err)
	}
	return srv.URL + "/mcp"
}

func TestCard(t *testing.T) {
	url := serveCard(t, nil)
	for _, args := range [][]string{{"card", url}, {url, "card"}, {"card", url + "/server-card"}} {
		r := runApp(t, &app{}, args...)
		if r.code != exitOK || r.stderr != "" {
			t.Fatalf("parley %v: exit %d, stderr %q", args, r.code, r.stderr)
		}
		golden(t, "card", r.stdout)
	}
	r := runApp(t, &app{}, "--json", "card", url)
	var c servercard.Card
	if err := json.Unmarshal([]byte(r.stdout), &c); err != nil || r.code != exitOK || c.Name != "dev.parley/fixture" || c.Schema != servercard.SchemaURL {
		t.Errorf("--json: exit %d, %v\n%s", r.code, err, r.stdout)
	}
}

// What the server chose is printed without its control sequences.
func TestCardControlCharacters(t *testing.T) {
	url := serveCard(t, func(c *servercard.Card) {
		c.Title = "Fixture\x1b]0;pwned\x07\x1b[2J"
		c.Remotes[0].Headers[0].Description = "line\nbreak \u202eevil"
	})
	r := runApp(t, &app{}, "card", url)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if strings.ContainsAny(r.stdout, "\x1b\x07\u202e") || strings.Contains(r.stdout, "line\nbreak") {
		t.Errorf("control characters reached the terminal: %q", r.stdout)
	}
}

func TestCardFailures(t *testing.T) {
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/busy/server-card":
			w.WriteHeader(http.StatusTooManyRequests)
		case "/broken/server-card":
			w.WriteHeader(http.StatusBadGateway)
		case "/html/server-card":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html></html>"))
		case "/invalid/server-card":
			w.Header().Set("Content-Type", servercard.MediaType)
			w.Write([]byte(`{"$schema":"` + servercard.SchemaURL + `","name":"nope","version":"1","description":"d"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(bare.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"card", bare.URL + "/none"}, exitProtocol, "404"},
		{[]string{"card", bare.URL + "/busy"}, exitConnection, "429"},
		{[]string{"card", bare.URL + "/broken"}, exitConnection, "502"},
		{[]string{"card", bare.URL + "/html"}, exitProtocol, "text/html"},
		{[]string{"card", bare.URL + "/invalid"}, exitProtocol, "name"},
		{[]string{"card", closed.URL + "/mcp"}, exitConnection, "connect"},
		{[]string{"card"}, exitUsage, "needs the server's URL"},
		{[]string{"card", bare.URL, "extra"}, exitUsage, "only the URL"},
		{[]string{"card", "--", "./server"}, exitUsage, "not a command"},
	} {
		r := runApp(t, &app{}, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("parley %v: exit %d, want %d; stderr %q, want it to say %q", tc.args, r.code, tc.code, r.stderr, tc.want)
		}
	}
}
