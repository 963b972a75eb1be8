package servercard

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// upstream is the copy of the proposal's schema and examples
// (testdata/upstream/README.md).
const upstream = "testdata/upstream"

// schema compiles the proposal's schema.json.
func schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(upstream, "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const u = "https://parley.invalid/server-card.schema.json"
	if err := c.AddResource(u, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(u + "#/$defs/ServerCard")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// schemaValid reports whether data is a card by the proposal's schema.
func schemaValid(t *testing.T, s *jsonschema.Schema, data []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(v)
}

// The upstream examples: the valid ones decode, validate and re-encode to
// the same members; each invalid one is refused, naming its member, as the
// schema refuses it.
func TestUpstreamExamples(t *testing.T) {
	s := schema(t)
	for _, kind := range []string{"valid", "invalid"} {
		files, err := filepath.Glob(filepath.Join(upstream, "examples/ServerCard", kind, "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no %s examples: %v", kind, err)
		}
		for _, f := range files {
			t.Run(kind+"/"+filepath.Base(f), func(t *testing.T) {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				schemaErr := schemaValid(t, s, data)
				var c Card
				if err := json.Unmarshal(data, &c); err != nil {
					t.Fatal(err)
				}
				err = c.Validate()
				if kind == "valid" {
					if schemaErr != nil || err != nil {
						t.Fatalf("schema: %v; Validate: %v", schemaErr, err)
					}
					out, _ := json.Marshal(&c)
					if !sameJSON(t, data, out) {
						t.Errorf("re-encoded\n%s\nwant the members of\n%s", out, data)
					}
					return
				}
				var inv *InvalidError
				if schemaErr == nil || !errors.As(err, &inv) {
					t.Fatalf("schema: %v; Validate: %v; want both to refuse", schemaErr, err)
				}
			})
		}
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		t.Fatal("not JSON")
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func validCard() *Card {
	return &Card{Schema: SchemaURL, Name: "com.example/weather", Version: "1.0.0", Description: "Forecasts."}
}

// Validate at every edge it enforces: each case is checked against the
// proposal's schema too, so that Validate never accepts a card the schema
// refuses. It is stricter in three places: version ranges (a rule of the
// proposal's prose), and an empty version, header name or repository
// source, which the schema requires only to be present.
func TestValidateEdges(t *testing.T) {
	s := schema(t)
	cases := []struct {
		name   string
		edit   func(c *Card)
		field  string // "" when valid
		schema bool   // whether the schema alone refuses it too
	}{
		{"valid", func(c *Card) {}, "", false},
		{"schema wrong", func(c *Card) {
			c.Schema = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server-card.schema.json"
		}, "$schema", true},
		{"name of 2", func(c *Card) { c.Name = "a/" }, "name", true},
		{"name of 3", func(c *Card) { c.Name = "a/b" }, "", false},
		{"name of 200", func(c *Card) { c.Name = strings.Repeat("a", 198) + "/b" }, "", false},
		{"name of 201", func(c *Card) { c.Name = strings.Repeat("a", 199) + "/b" }, "name", true},
		{"name without slash", func(c *Card) { c.Name = "weather" }, "name", true},
		{"name with two slashes", func(c *Card) { c.Name = "com.example/a/b" }, "name", true},
		{"version missing", func(c *Card) { c.Version = "" }, "version", false},
		{"version of 255", func(c *Card) { c.Version = "1." + strings.Repeat("0", 253) }, "", false},
		{"version of 256", func(c *Card) { c.Version = "1." + strings.Repeat("0", 254) }, "version", true},
		{"version caret", func(c *Card) { c.Version = "^1.2.3" }, "version", false},
		{"version tilde", func(c *Card) { c.Version = "~1.2.3" }, "version", false},
		{"version gte", func(c *Card) { c.Version = ">=1.2.3" }, "version", false},
		{"version x", func(c *Card) { c.Version = "1.x" }, "version", false},
		{"version star", func(c *Card) { c.Version = "1.*" }, "version", false},
		{"version prerelease", func(c *Card) { c.Version = "2.1.0-alpha.x" }, "", false},
		{"version build", func(c *Card) { c.Version = "2.1.0+build.5" }, "", false},
		{"description empty", func(c *Card) { c.Description = "" }, "description", true},
		{"description of 100", func(c *Card) { c.Description = strings.Repeat("é", 100) }, "", false},
		{"description of 101", func(c *Card) { c.Description = strings.Repeat("é", 101) }, "description", true},
		{"title of 100", func(c *Card) { c.Title = strings.Repeat("t", 100) }, "", false},
		{"title of 101", func(c *Card) { c.Title = strings.Repeat("t", 101) }, "title", true},
		{"website relative", func(c *Card) { c.WebsiteURL = "/docs" }, "websiteUrl", true},
		{"repository without source", func(c *Card) { c.Repository = &Repository{URL: "https://github.com/x/y"} }, "repository.source", false},
		{"repository without url", func(c *Card) { c.Repository = &Repository{Source: "github"} }, "repository.url", true},
		{"icon relative", func(c *Card) { c.Icons = []mcp.Icon{{Src: "icon.png"}} }, "icons[0].src", true},
		{"icon theme", func(c *Card) { c.Icons = []mcp.Icon{{Src: "https://x/i.png", Theme: "blue"}} }, "icons[0].theme", true},
		{"remote type", func(c *Card) { c.Remotes = []Remote{{Type: "stdio", URL: "https://x/mcp"}} }, "remotes[0].type", true},
		{"remote url", func(c *Card) { c.Remotes = []Remote{{Type: TransportSSE, URL: "ftp://x/mcp"}} }, "remotes[0].url", true},
		{"remote url template", func(c *Card) { c.Remotes = []Remote{{Type: TransportStreamableHTTP, URL: "{base}/mcp"}} }, "", false},
		{"remote url with space", func(c *Card) { c.Remotes = []Remote{{Type: TransportStreamableHTTP, URL: "https://x/a b"}} }, "remotes[0].url", true},
		{"header without name", func(c *Card) {
			c.Remotes = []Remote{{Type: TransportStreamableHTTP, URL: "https://x/mcp", Headers: []KeyValueInput{{Input: Input{Value: "v"}}}}}
		}, "remotes[0].headers[0].name", false},
		{"header format", func(c *Card) {
			c.Remotes = []Remote{{Type: TransportStreamableHTTP, URL: "https://x/mcp", Headers: []KeyValueInput{{Name: "X", Input: Input{Format: "date"}}}}}
		}, "remotes[0].headers[0].format", true},
		{"header variable format", func(c *Card) {
			c.Remotes = []Remote{{Type: TransportStreamableHTTP, URL: "https://x/mcp", Headers: []KeyValueInput{{Name: "X", Variables: map[string]Input{"t": {Format: "int"}}}}}}
		}, "remotes[0].headers[0].variables.t.format", true},
		{"url variable format", func(c *Card) {
			c.Remotes = []Remote{{Type: TransportStreamableHTTP, URL: "https://{t}.x/mcp", Variables: map[string]Input{"t": {Format: "uuid"}}}}
		}, "remotes[0].variables.t.format", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := validCard()
			tc.edit(c)
			err := c.Validate()
			var inv *InvalidError
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("Validate: %v, want nil", err)
			case tc.field != "" && !errors.As(err, &inv):
				t.Fatalf("Validate: %v, want an *InvalidError for %s", err, tc.field)
			case tc.field != "" && inv.Field != tc.field:
				t.Fatalf("Validate names %q (%v), want %q", inv.Field, err, tc.field)
			}
			data, _ := json.Marshal(c)
			schemaErr := schemaValid(t, s, data)
			if want := tc.field == "" || !tc.schema; (schemaErr == nil) != want {
				t.Errorf("the proposal's schema says %v; this case expects it to accept: %v", schemaErr, want)
			}
		})
	}
}

func newServer(t *testing.T, info mcp.Implementation) *server.Server {
	t.Helper()
	return server.New(info, nil)
}

// Build takes what the server knows and what only the deployment knows,
// and its card is valid by the proposal's schema.
func TestBuild(t *testing.T) {
	s := newServer(t, mcp.Implementation{
		Name: "weather", Title: "Weather", Version: "1.4.0", Description: "Forecasts and warnings.",
		WebsiteURL: "https://weather.example.com", Icons: []mcp.Icon{{Src: "https://weather.example.com/i.png", Sizes: []string{"48x48"}}},
	})
	c, err := Build(s, &Options{
		Name:       "com.example/weather",
		URL:        "https://weather.example.com/mcp",
		Headers:    []KeyValueInput{{Name: "X-Api-Key", Input: Input{IsRequired: true, IsSecret: true}}},
		Repository: &Repository{URL: "https://github.com/example/weather", Source: "github"},
		Meta:       map[string]json.RawMessage{"com.example/tier": json.RawMessage(`"gold"`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "com.example/weather" || c.Version != "1.4.0" || c.Title != "Weather" || c.Description != "Forecasts and warnings." ||
		c.WebsiteURL != "https://weather.example.com" || len(c.Icons) != 1 || c.Repository.Source != "github" {
		t.Errorf("card = %+v", c)
	}
	if len(c.Remotes) != 1 || c.Remotes[0].Type != TransportStreamableHTTP || c.Remotes[0].URL != "https://weather.example.com/mcp" ||
		len(c.Remotes[0].Headers) != 1 {
		t.Fatalf("remotes = %+v", c.Remotes)
	}
	var want []string
	for _, v := range s.SupportedVersions() {
		want = append(want, string(v))
	}
	if got := strings.Join(c.Remotes[0].SupportedProtocolVersions, ","); got != strings.Join(want, ",") || got == "" {
		t.Errorf("versions = %q, want %q", got, want)
	}
	data, _ := json.Marshal(c)
	if err := schemaValid(t, schema(t), data); err != nil {
		t.Errorf("the built card breaks the schema: %v\n%s", err, data)
	}
}

func TestBuildDefaultsAndRefusals(t *testing.T) {
	// A reverse-DNS server name is the card's name; no URL, no remote.
	c, err := Build(newServer(t, mcp.Implementation{Name: "org.acme/tickets", Version: "2", Description: "Tickets."}), nil)
	if err != nil || c.Name != "org.acme/tickets" || c.Remotes != nil {
		t.Fatalf("Build = %+v, %v", c, err)
	}
	// A free-form name needs Options.Name.
	if _, err := Build(newServer(t, mcp.Implementation{Name: "tickets", Version: "2", Description: "Tickets."}), nil); !errors.Is(err, ErrNoName) {
		t.Errorf("free-form name: %v, want ErrNoName", err)
	}
	// A server without a description needs Options.Description.
	var inv *InvalidError
	if _, err := Build(newServer(t, mcp.Implementation{Name: "org.acme/tickets", Version: "2"}), nil); !errors.As(err, &inv) || inv.Field != "description" {
		t.Errorf("no description: %v, want an InvalidError for description", err)
	}
	c, err = Build(newServer(t, mcp.Implementation{Name: "org.acme/tickets", Version: "2"}), &Options{Description: "Tickets, short."})
	if err != nil || c.Description != "Tickets, short." {
		t.Errorf("Options.Description: %+v, %v", c, err)
	}
	// The card does not share the caller's slices and maps.
	opts := &Options{Name: "org.acme/tickets", URL: "https://a/mcp", Headers: []KeyValueInput{{Name: "A"}}, Meta: map[string]json.RawMessage{"k/v": []byte("1")}}
	c, err = Build(newServer(t, mcp.Implementation{Name: "t", Version: "2", Description: "T."}), opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Headers[0].Name = "B"
	opts.Meta["k/w"] = []byte("2")
	if c.Remotes[0].Headers[0].Name != "A" || len(c.Meta) != 1 {
		t.Errorf("the card follows the options it was built from: %+v", c)
	}
}
