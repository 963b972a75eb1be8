package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-mcp/parley/auth/authtest"
	"github.com/parley-mcp/parley/auth/jwtverify"
	"github.com/parley-mcp/parley/auth/resourceserver"
)

// runApp runs parley with args as main would, but with a's fields (no
// terminal), and returns stdout, stderr and the exit code.
func runApp(t *testing.T, a *app, args ...string) result {
	t.Helper()
	var stdout, stderr lockedBuffer
	a.stdin, a.stdout, a.stderr = strings.NewReader(""), &stdout, &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := run(ctx, a, args)
	if ctx.Err() != nil {
		t.Fatalf("parley %s did not finish within 30s", strings.Join(args, " "))
	}
	return result{stdout.String(), stderr.String(), code}
}

// TestStdioServer runs the fixture as a command after --, as a person
// does, and gets what the in-process fixture gives.
func TestStdioServer(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PARLEY_TEST_ROLE", "fixture") // for the child; this process has passed TestMain
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("protocol="+version, func(t *testing.T) {
			args := []string{"tools", "call", "add", "a=1", "b=2"}
			if version != "" {
				args = append([]string{"--protocol", version}, args...)
			}
			r := runApp(t, &app{}, append(args, "--", exe)...)
			if r.code != exitOK || r.stdout != "3\n" {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant exit 0 and 3", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestConnectionFailure: a server that cannot be started or reached is
// exit code 4, with a message saying so.
func TestConnectionFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/mcp"
	ln.Close() // nothing listens there now
	for name, args := range map[string][]string{
		"command": {"info", "--", filepath.Join(t.TempDir(), "no-such-server")},
		"url":     {closed, "info"},
	} {
		t.Run(name, func(t *testing.T) {
			r := runApp(t, &app{configDir: t.TempDir()}, args...)
			if r.code != exitConnection || !strings.Contains(r.stderr, "parley: ") {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d and a message", r.code, r.stderr, exitConnection)
			}
		})
	}
}

// TestNoServer: without a URL or a command, parley says what is missing.
func TestNoServer(t *testing.T) {
	r := runApp(t, &app{}, "tools", "list")
	if r.code != exitUsage || !strings.Contains(r.stderr, "no server") {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit %d naming the missing server", r.code, r.stderr, exitUsage)
	}
}

// TestOAuthLogin connects to a server behind OAuth: the first run logs in
// through the loopback redirect (the "browser" follows the authorization
// URL) and caches the tokens owner-only; the second run reuses them
// without a login.
func TestOAuthLogin(t *testing.T) {
	as := authtest.NewServer(&authtest.Options{Subject: "ada", ScopesSupported: []string{"mcp", "offline_access"}})
	defer as.Close()
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
	defer srv.Close()

	config := t.TempDir()
	var logins atomic.Int32
	browser := func(u string) error {
		// The authorization server approves at once and redirects to
		// parley's loopback listener, which the client follows.
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
	for n := 1; n <= 2; n++ {
		r := runApp(t, &app{configDir: config, openURL: browser}, "--open", resource, "tools", "call", "add", "a=20", "b=22")
		if r.code != exitOK || r.stdout != "42\n" {
			t.Fatalf("run %d: exit %d, stdout %q, stderr:\n%s", n, r.code, r.stdout, r.stderr)
		}
		if got := logins.Load(); got != 1 {
			t.Fatalf("after run %d: %d logins, want 1 (the second run uses the cached token)", n, got)
		}
	}
	dir := filepath.Join(config, "parley")
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "tokens.json"): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s has mode %v, want %v", path, got, want)
		}
	}
}

// TestHTTPServer connects to the fixture over Streamable HTTP, in either
// generation, and answers its form there.
func TestHTTPServer(t *testing.T) {
	url := serveFixtureHTTP(t)
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("protocol="+version, func(t *testing.T) {
			args := []string{"--answers", "testdata/answers.json", url, "tools", "call", "signup"}
			if version != "" {
				args = append([]string{"--protocol", version}, args...)
			}
			r := runApp(t, &app{configDir: t.TempDir()}, args...)
			if r.code != exitOK || !strings.Contains(r.stdout, `signed up: {"age":30`) {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}
