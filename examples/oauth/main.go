// Command oauth runs the whole of MCP authorization in one process, on
// loopback only: an OAuth 2.1 authorization server (Parley's test server,
// package authtest), an MCP server protected by it, and a Parley client
// that gets its token the way the MCP specification says a client must.
//
// The server is the Provisioner of ./examples/provision (a tool that asks
// which region a database should live in) behind the bearer-token
// middleware of package resourceserver, with a JWT verifier. The client
// puts package oauthclient's RoundTripper under its Streamable HTTP
// transport. Its first request has no token, so the server answers 401;
// from the challenge the client finds the server's metadata, then the
// authorization server's, registers itself, sends the user to consent
// (here a headless authorizer: the test server approves at once), redeems
// the code with PKCE and sends the request again. Every HTTP exchange is
// printed as it happens.
//
// Then the tool is called three times: once answered, once declined by
// the user, and once after the access token has expired (the clocks are
// moved forward), which the client repairs with its refresh token. Last,
// a second user refuses consent, and the program tells that refusal from
// other failures by the OAuth error's type.
//
//	go run ./examples/oauth
//
// See docs/guide/authorization.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/parley-mcp/parley/auth/authtest"
	"github.com/parley-mcp/parley/auth/jwtverify"
	"github.com/parley-mcp/parley/auth/oauthclient"
	"github.com/parley-mcp/parley/auth/resourceserver"
	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "oauth:", err)
		os.Exit(1)
	}
}

// The Provisioner: a tool that cannot finish without asking the user.

type provisionArgs struct {
	Name string `json:"name" jsonschema:"the database to create"`
}

type regionForm struct {
	Region string `json:"region" jsonschema:"where the database lives, such as eu-west-1"`
}

func newProvisioner(logger *slog.Logger) (*mcpserver.Server, error) {
	s, err := mcpserver.New(mcp.Implementation{Name: "provisioner", Version: "1.0.0"}, &mcpserver.Options{Logger: logger})
	if err != nil {
		return nil, err
	}
	region := mcpserver.Elicit[regionForm]("region", func(a provisionArgs, _ *mcpserver.Call) string {
		return "Which region should " + a.Name + " live in?"
	})
	err = mcpserver.AddTool(s, &mcp.Tool{Name: "provision", Description: "Create a database; asks which region it should live in."},
		func(ctx context.Context, c *mcpserver.Call, a provisionArgs) (string, error) {
			// The middleware put the verified token's claims on the call.
			who := c.Auth()
			return fmt.Sprintf("Provisioned '%s' in %s for %s.", a.Name, region.Get(c).Region, who.Subject), nil
		}, region)
	return s, err
}

// clock is the time the authorization server and the MCP server judge
// tokens by, so that the example can let a token expire without waiting
// an hour.
type clock struct{ skew atomic.Int64 }

func (c *clock) Now() time.Time { return time.Now().Add(time.Duration(c.skew.Load())) }

func run(ctx context.Context, w io.Writer) error {
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	var serverTime clock

	// 1. The authorization server. A real deployment uses its identity
	// provider instead; nothing below depends on which one.
	as := authtest.NewServer(&authtest.Options{
		Subject:         "ada",
		ScopesSupported: []string{"db", "offline_access"},
		Now:             serverTime.Now,
	})
	defer as.Close()
	fmt.Fprintf(w, "authorization server at %s\n", as.Issuer())

	// 2. The protected MCP server. Its resource identifier is the URL of
	// its MCP endpoint; tokens must be issued for exactly that audience.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	resource := "http://" + ln.Addr().String() + "/mcp"
	verifier, err := jwtverify.New(&jwtverify.Options{Issuer: as.Issuer(), Audience: resource, Now: serverTime.Now})
	if err != nil {
		return err
	}
	rs, err := resourceserver.New(&resourceserver.Options{
		Metadata: resourceserver.Metadata{
			Resource:             resource,
			AuthorizationServers: []string{as.Issuer()},
			ScopesSupported:      []string{"db"},
			ResourceName:         "Provisioner",
		},
		Verifier: verifier,
		Scopes:   []string{"db"},
		Logger:   quiet,
	})
	if err != nil {
		return err
	}
	s, err := newProvisioner(quiet)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	h := s.HTTPHandler(&streamhttp.HandlerOptions{Logger: quiet})
	rs.Mount(mux, h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer func() {
		// The MCP handler first (it ends its streams and sessions), then
		// the HTTP server.
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := errors.Join(h.Shutdown(sctx), srv.Shutdown(sctx)); err != nil {
			fmt.Fprintf(w, "shutting down: %v\n", err)
		}
	}()
	fmt.Fprintf(w, "MCP server at %s, metadata at %s\n\n", resource, rs.MetadataURL())

	// 3. The client. Every HTTP request it makes, for MCP or for OAuth,
	// goes through a printer, so the flow can be watched.
	tap := &printer{w: w, base: http.DefaultTransport, names: map[string]string{
		hostOf(as.Issuer()): "auth server", hostOf(resource): "MCP server",
	}}
	fmt.Fprintln(w, "Ada connects:")
	sess, err := connect(ctx, w, tap, resource)
	if err != nil {
		return fmt.Errorf("ada's connection: %w", err)
	}
	defer sess.Close()
	fmt.Fprintf(w, "connected, protocol %s\n\n", sess.ProtocolVersion())

	// 4. The tool, answered and declined. The token the client holds is
	// reused: no OAuth traffic.
	fmt.Fprintln(w, "Ada provisions 'orders' and picks a region:")
	if err := provision(ctx, w, sess, "orders"); err != nil {
		return err
	}
	fmt.Fprintln(w, "Ada provisions 'scratch' but declines to pick a region:")
	if err := provision(ctx, w, sess, "scratch"); err != nil {
		return err
	}

	// 5. An hour and a half later the access token has expired. The MCP
	// server refuses it with 401; the client redeems its refresh token
	// (no user involved) and sends the request again.
	serverTime.skew.Store(int64(90 * time.Minute))
	fmt.Fprintln(w, "90 minutes later, Ada provisions 'billing':")
	if err := provision(ctx, w, sess, "billing"); err != nil {
		return err
	}

	// 6. Another user refuses consent. The client cannot get a token and
	// says why; the application decides what to do (here: report it).
	as.SetSubject("") // the test server now answers "access_denied"
	fmt.Fprintln(w, "Carol connects and clicks \"deny\":")
	other, err := connect(ctx, w, tap, resource)
	if err == nil {
		other.Close()
		return fmt.Errorf("carol connected without consent")
	}
	// Connect's error is the JSON-RPC error (-32603) that stands in for
	// the answer the server never got to give, and it wraps the OAuth
	// transport's typed error: errors.As finds either.
	var denied *oauthclient.AuthorizationError
	if errors.As(err, &denied) && denied.Code == "access_denied" {
		fmt.Fprintf(w, "no connection for Carol: she refused consent (%s)\n", denied.Code)
		return nil
	}
	fmt.Fprintf(w, "no connection for Carol: %v\n", err)
	return nil
}

// connect opens a session to the server at resource, authorized by a new
// OAuth client transport (which registers itself with the authorization
// server on the first 401).
func connect(ctx context.Context, w io.Writer, tap *printer, resource string) (*client.Session, error) {
	oc, err := oauthclient.New(&oauthclient.Config{
		// The headless authorizer requests the authorization URL itself
		// and reads the redirect: fine for a test server that approves at
		// once. An application for people uses a LoopbackAuthorizer,
		// which opens a browser.
		Authorizer: &oauthclient.HeadlessAuthorizer{HTTPClient: &http.Client{Transport: tap}},
		ClientName: "oauth example",
		Base:       tap,
	})
	if err != nil {
		return nil, err
	}
	c := client.New(mcp.Implementation{Name: "oauth-example", Version: "1.0.0"}, &client.Options{
		// The callback stands in for a form shown to the user, who picks
		// eu-west-1 for every database except "scratch".
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			form, ok := p.(*mcp.ElicitRequestFormParams)
			if !ok {
				return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
			}
			if strings.Contains(form.Message, "scratch") {
				fmt.Fprintf(w, "  the server asks %q; the user declines\n", form.Message)
				return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
			}
			fmt.Fprintf(w, "  the server asks %q; the user picks eu-west-1\n", form.Message)
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "eu-west-1"}}, nil
		},
		Logger: slog.New(slog.DiscardHandler),
	})
	sess, err := c.Connect(ctx, streamhttp.NewClientTransport(resource, &streamhttp.ClientOptions{
		HTTPClient: oc.Client(),
		Logger:     slog.New(slog.DiscardHandler),
	}))
	return sess, err
}

// provision calls the tool and prints how it ended. A refusal by the tool
// (the user declined) is an answer, not a failure of the program.
func provision(ctx context.Context, w io.Writer, sess *client.Session, name string) error {
	res, err := sess.CallTool(ctx, "provision", map[string]any{"name": name})
	if err != nil {
		return fmt.Errorf("provision %s: %w", name, err)
	}
	var text []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text = append(text, t.Text)
		}
	}
	if res.IsError {
		fmt.Fprintf(w, "  the tool stopped: %s\n\n", strings.Join(text, " "))
		return nil
	}
	fmt.Fprintf(w, "  %s\n\n", strings.Join(text, " "))
	return nil
}

// printer is an http.RoundTripper that prints each exchange: who it went
// to, what it was, and the status that came back.
type printer struct {
	w     io.Writer
	base  http.RoundTripper
	names map[string]string // host: name to print
}

func (p *printer) RoundTrip(req *http.Request) (*http.Response, error) {
	what := req.Method + " " + req.URL.Path
	if m := req.Header.Get("Mcp-Method"); m != "" {
		what += " (" + m + ")"
	}
	if req.Header.Get("Authorization") != "" {
		what += " with a token"
	}
	resp, err := p.base.RoundTrip(req)
	switch {
	case err != nil:
		fmt.Fprintf(p.w, "  -> %s: %s: %v\n", p.names[req.URL.Host], what, err)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		fmt.Fprintf(p.w, "  -> %s: %s: %s (%s)\n", p.names[req.URL.Host], what, resp.Status, resp.Header.Get("WWW-Authenticate"))
	default:
		fmt.Fprintf(p.w, "  -> %s: %s: %s\n", p.names[req.URL.Host], what, resp.Status)
	}
	return resp, err
}

// hostOf returns the host:port of an absolute URL.
func hostOf(u string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return u
	}
	return parsed.Host
}
