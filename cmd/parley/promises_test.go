package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-mcp/parley/auth/authtest"
	"github.com/parley-mcp/parley/auth/jwtverify"
	"github.com/parley-mcp/parley/auth/oauthclient"
	"github.com/parley-mcp/parley/auth/resourceserver"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport/streamhttp"

	"golang.org/x/oauth2"
)

// An --answer wins over the same field in an --answers file, wherever
// each stands on the command line; the file's other fields still count.
func TestAnswerWinsOverAnswersFile(t *testing.T) {
	for name, args := range map[string][]string{
		"file first":   {"--json", "--answers", "testdata/answers.json", "--answer", "name=Zed", "tools", "call", "signup"},
		"answer first": {"--json", "--answer", "name=Zed", "--answers", "testdata/answers.json", "tools", "call", "signup"},
	} {
		t.Run(name, func(t *testing.T) {
			r := runFixture(t, args...)
			if r.code != exitOK || !strings.Contains(r.stdout, `\"name\":\"Zed\"`) || !strings.Contains(r.stdout, `\"email\":\"ada@example.com\"`) {
				t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s\nwant name Zed from --answer and the file's email", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// maxItems (and minItems) of a multi-select are checked exactly: as many
// choices as the bound are accepted, one more (or fewer) is refused.
func TestMultiSelectItemBoundsExact(t *testing.T) {
	for _, s := range []mcp.PrimitiveSchemaDefinition{
		&mcp.UntitledMultiSelectEnumSchema{MinItems: ptr(2), MaxItems: ptr(3), Items: mcp.UntitledEnumItems{Enum: []string{"a", "b", "c", "d"}}},
		&mcp.TitledMultiSelectEnumSchema{MinItems: ptr(2), MaxItems: ptr(3), Items: mcp.TitledEnumItems{AnyOf: []mcp.EnumOption{{Const: "a"}, {Const: "b"}, {Const: "c"}, {Const: "d"}}}},
	} {
		for in, want := range map[string][]string{"a,b": {"a", "b"}, "a,b,c": {"a", "b", "c"}} {
			if got, err := convertAnswer(s, in); err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%T %q: %v, %v; want accepted", s, in, got, err)
			}
		}
		for in, msg := range map[string]string{"a,b,c,d": "choose at most 3", "a": "choose at least 2"} {
			if _, err := convertAnswer(s, in); err == nil || !strings.Contains(err.Error(), msg) {
				t.Errorf("%T %q: error %v, want %q", s, in, err, msg)
			}
		}
	}
}

// A required field with a default is answered by its default: a form
// whose other required fields have answers needs nothing more, and sends
// the default.
func TestRequiredFieldWithDefaultIsAnswered(t *testing.T) {
	schema := &mcp.ElicitRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{
			"name":  &mcp.StringSchema{},
			"plan":  &mcp.UntitledSingleSelectEnumSchema{Enum: []string{"basic", "pro"}, Default: "basic"},
			"seats": &mcp.NumberSchema{Type: mcp.TypeInteger, Default: ptr(3.0)},
			"terms": &mcp.BooleanSchema{Default: ptr(true)},
		},
		Required: []string{"name", "plan", "seats", "terms"},
	}
	content, missing, err := fillForm(formFields(schema), map[string]any{"name": "Ada"})
	if err != nil || len(missing) != 0 {
		t.Fatalf("missing %v, err %v; want the defaults to answer", missing, err)
	}
	want := map[string]any{"name": "Ada", "plan": "basic", "seats": 3.0, "terms": true}
	if !reflect.DeepEqual(content, want) {
		t.Errorf("content %v, want %v", content, want)
	}
	if _, missing, _ := fillForm(formFields(schema), nil); len(missing) != 1 || missing[0].name != "name" {
		t.Errorf("without answers, missing %v; want only name, the field without a default", missing)
	}
}

// A server that answers a request with HTTP 429 (too many requests) is a
// connection that does not work now, exit code 4, not the server's word
// on the request (3): a script should retry later, not fix its call.
func TestTooManyRequestsIsAConnectionFailure(t *testing.T) {
	s, err := newFixture()
	if err != nil {
		t.Fatal(err)
	}
	h := s.HTTPHandler(nil)
	limited := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get(streamhttp.HeaderMethod) != mcp.MethodCallTool:
		case r.Header.Get(streamhttp.HeaderName) == "add":
			w.Header().Set("Retry-After", "30")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		case r.Header.Get(streamhttp.HeaderName) == "gone":
			http.Error(w, "no such thing", http.StatusNotFound)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		h.Shutdown(context.Background())
		limited.Close()
	})
	r := runApp(t, &app{configDir: t.TempDir()}, limited.URL, "tools", "call", "add", "a=1", "b=2")
	if r.code != exitConnection || !strings.Contains(r.stderr, "429") {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit %d naming the 429", r.code, r.stderr, exitConnection)
	}
	// Another 4xx that answers the request is the server's word on it.
	r = runApp(t, &app{configDir: t.TempDir()}, limited.URL, "tools", "call", "gone")
	if r.code != exitProtocol || !strings.Contains(r.stderr, "404") {
		t.Errorf("a 404: exit %d, want %d\nstderr:\n%s", r.code, exitProtocol, r.stderr)
	}
}

// Saving one authorization server's credentials keeps every other's in
// the token file, and tokens of several servers of one authorization
// server stay side by side.
func TestFileStoreKeepsOtherServers(t *testing.T) {
	s := &fileStore{path: t.TempDir() + "/parley/tokens.json"}
	ctx := t.Context()
	a := &oauthclient.Credentials{Client: &oauthclient.ClientInfo{ClientID: "a"}, Tokens: map[string]*oauth2.Token{"https://one/mcp": {AccessToken: "t1"}}}
	b := &oauthclient.Credentials{Client: &oauthclient.ClientInfo{ClientID: "b"}, Tokens: map[string]*oauth2.Token{"https://three/mcp": {AccessToken: "t3"}}}
	for issuer, c := range map[string]*oauthclient.Credentials{"https://as-a": a, "https://as-b": b} {
		if err := s.Save(ctx, issuer, c); err != nil {
			t.Fatal(err)
		}
	}
	a.Tokens["https://two/mcp"] = &oauth2.Token{AccessToken: "t2"}
	if err := s.Save(ctx, "https://as-a", a); err != nil {
		t.Fatal(err)
	}
	gotA, err := s.Load(ctx, "https://as-a")
	if err != nil || gotA == nil || gotA.Tokens["https://one/mcp"] == nil || gotA.Tokens["https://two/mcp"] == nil {
		t.Errorf("as-a after saving it again: %+v, %v; want both servers' tokens", gotA, err)
	}
	gotB, err := s.Load(ctx, "https://as-b")
	if err != nil || gotB == nil || gotB.Client.ClientID != "b" || gotB.Tokens["https://three/mcp"].AccessToken != "t3" {
		t.Errorf("as-b after saving as-a: %+v, %v; want it kept", gotB, err)
	}
}

// protectedFixture serves the fixture behind OAuth with as as its
// authorization server and returns its resource URL.
func protectedFixture(t *testing.T, as *authtest.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resource := "http://" + ln.Addr().String() + "/mcp"
	verifier, err := jwtverify.New(&jwtverify.Options{Issuer: as.Issuer(), Audience: resource})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := resourceserver.New(&resourceserver.Options{
		Metadata: resourceserver.Metadata{Resource: resource, AuthorizationServers: []string{as.Issuer()}, ScopesSupported: []string{"mcp"}},
		Verifier: verifier,
		Scopes:   []string{"mcp"},
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := newFixture()
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h := s.HTTPHandler(nil)
	rs.Mount(mux, h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() {
		h.Shutdown(context.Background())
		srv.Close()
	})
	return resource
}

// Logging in to one server keeps the tokens parley saved for the others:
// two servers of one authorization server and one of another, each logged
// in to once, are all reached again without a login.
func TestLoginKeepsOtherServersTokens(t *testing.T) {
	opts := &authtest.Options{Subject: "ada", ScopesSupported: []string{"mcp", "offline_access"}}
	as1, as2 := authtest.NewServer(opts), authtest.NewServer(opts)
	t.Cleanup(as1.Close)
	t.Cleanup(as2.Close)
	servers := []string{protectedFixture(t, as1), protectedFixture(t, as1), protectedFixture(t, as2)}
	config := t.TempDir()
	var logins atomic.Int32
	browser := func(u string) error {
		logins.Add(1)
		go func() {
			resp, err := http.Get(u)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		return nil
	}
	for round := 1; round <= 2; round++ {
		for i, url := range servers {
			r := runApp(t, &app{configDir: config, openURL: browser}, "--open", url, "tools", "call", "add", "a=20", "b=22")
			if r.code != exitOK || r.stdout != "42\n" {
				t.Fatalf("round %d, server %d: exit %d, stdout %q, stderr:\n%s", round, i, r.code, r.stdout, r.stderr)
			}
		}
		if got := logins.Load(); got != 3 {
			t.Fatalf("after round %d: %d logins, want 3 (one per server, the first time only)", round, got)
		}
	}
}

// --json prints an empty list as [], not null, for every list command:
// a script can iterate over it without a check.
func TestJSONEmptyList(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "empty", Version: "1"}, &server.Options{Logger: slog.New(slog.DiscardHandler)})
	s.HandleListTools(func(context.Context, *server.Request, *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		return &mcp.ListToolsResult{}, nil
	})
	s.HandleListPrompts(func(context.Context, *server.Request, *mcp.PaginatedRequestParams) (*mcp.ListPromptsResult, error) {
		return &mcp.ListPromptsResult{}, nil
	})
	s.HandleListResources(func(context.Context, *server.Request, *mcp.PaginatedRequestParams) (*mcp.ListResourcesResult, error) {
		return &mcp.ListResourcesResult{}, nil
	})
	s.HandleListResourceTemplates(func(context.Context, *server.Request, *mcp.PaginatedRequestParams) (*mcp.ListResourceTemplatesResult, error) {
		return &mcp.ListResourceTemplatesResult{}, nil
	})
	srv := httptest.NewServer(streamhttp.NewHandler(s, nil))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tools", "list"}, "{\n  \"tools\": []\n}\n"},
		{[]string{"prompts", "list"}, "{\n  \"prompts\": []\n}\n"},
		{[]string{"resources", "list"}, "{\n  \"resources\": []\n}\n"},
		{[]string{"resources", "templates"}, "{\n  \"resourceTemplates\": []\n}\n"},
	} {
		r := runApp(t, &app{configDir: t.TempDir()}, append([]string{srv.URL, "--json"}, tc.args...)...)
		if r.code != exitOK || r.stdout != tc.want {
			t.Errorf("parley --json %s: exit %d, stdout %q, want %q\nstderr:\n%s", strings.Join(tc.args, " "), r.code, r.stdout, tc.want, r.stderr)
		}
	}
}
