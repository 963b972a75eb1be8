package auth_test

// The authorization packages end to end: a Parley server behind the
// resource-server middleware, tokens obtained by the Parley OAuth client's
// whole flow from an in-process authorization server, and a tool that asks
// a question, so that its state crosses the client between rounds.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/auth/authtest"
	"github.com/parley-mcp/parley/auth/jwtverify"
	"github.com/parley-mcp/parley/auth/oauthclient"
	"github.com/parley-mcp/parley/auth/resourceserver"
	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// fakeClock is a settable clock: the tests move it, never the wall clock.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 7, 28, 9, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// recorder is an http.RoundTripper that notes what went by: the status of
// every MCP request, the grant_type of every token request, and the
// Mcp-Session-Id the server handed out.
type recorder struct {
	base http.RoundTripper

	mu        sync.Mutex
	statuses  []int
	grants    []string
	sessionID string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.Body != nil && req.Header.Get("Content-Type") == "application/x-www-form-urlencoded" {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		if f, err := url.ParseQuery(string(b)); err == nil && f.Has("grant_type") {
			r.mu.Lock()
			r.grants = append(r.grants, f.Get("grant_type"))
			r.mu.Unlock()
		}
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	resp, err := r.base.RoundTrip(req)
	if err == nil {
		r.mu.Lock()
		r.statuses = append(r.statuses, resp.StatusCode)
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			r.sessionID = id
		}
		r.mu.Unlock()
	}
	return resp, err
}

// mark returns how many statuses and grants have been seen so far.
func (r *recorder) mark() (int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.statuses), len(r.grants)
}

// since returns the statuses and grants seen after mark.
func (r *recorder) since(statuses, grants int) ([]int, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.statuses[statuses:]), slices.Clone(r.grants[grants:])
}

type provisionArgs struct {
	Name string `json:"name"`
}

type regionForm struct {
	Region string `json:"region"`
}

// world is one authorization server, one protected MCP server and the
// clocks they judge tokens by.
type world struct {
	as       *authtest.Server
	resource string // the MCP endpoint's URL: the token audience
	asClock  *fakeClock
	rsClock  *fakeClock
}

// newWorld starts the authorization server and, behind the bearer
// middleware with a JWT verifier, an mcpserver whose "provision" tool asks
// for a region and then reports who called it.
func newWorld(t *testing.T) *world {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	w := &world{asClock: newFakeClock(), rsClock: newFakeClock()}
	w.as = authtest.NewServer(&authtest.Options{Subject: "ada", TokenTTL: time.Hour, Now: w.asClock.Now})
	t.Cleanup(w.as.Close)

	s, err := mcpserver.New(mcp.Implementation{Name: "db", Version: "1.0.0"}, &mcpserver.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	region := mcpserver.Elicit[regionForm]("region", func(a provisionArgs, _ *mcpserver.Call) string {
		return "Which region should " + a.Name + " live in?"
	})
	err = mcpserver.AddTool(s, &mcp.Tool{Name: "provision"}, func(ctx context.Context, c *mcpserver.Call, a provisionArgs) (string, error) {
		who := c.Auth()
		if who == nil || !who.SameCaller(auth.InfoFrom(ctx)) {
			return "", fmt.Errorf("no caller on the call or the context")
		}
		return fmt.Sprintf("%s provisioned %s in %s", who.Subject, a.Name, region.Get(c).Region), nil
	}, region)
	if err != nil {
		t.Fatal(err)
	}

	srv := httptest.NewUnstartedServer(nil)
	w.resource = "http://" + srv.Listener.Addr().String() + "/mcp"
	v, err := jwtverify.New(&jwtverify.Options{Issuer: w.as.Issuer(), Audience: w.resource, Now: w.rsClock.Now})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := resourceserver.New(&resourceserver.Options{
		Metadata: resourceserver.Metadata{Resource: w.resource, AuthorizationServers: []string{w.as.Issuer()}, ScopesSupported: []string{"db"}},
		Verifier: v,
		Scopes:   []string{"db"},
		Logger:   quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h := s.HTTPHandler(&streamhttp.HandlerOptions{Logger: quiet})
	rs.Mount(mux, h)
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("shutting the MCP handler down: %v", err)
		}
		srv.Close()
	})
	return w
}

// expireTokens moves the authorization server's and the resource server's
// clocks past the lifetime of every token issued so far (and past the
// verifier's leeway).
func (w *world) expireTokens() {
	w.asClock.Advance(2 * time.Hour)
	w.rsClock.Advance(2 * time.Hour)
}

// user is one OAuth client transport, the recorder under it and the store
// it keeps its registration and tokens in.
type user struct {
	oc    *oauthclient.Transport
	rec   *recorder
	store *oauthclient.MemoryStore
	clock *fakeClock
}

// newUser returns an OAuth client transport with a headless authorizer.
// pre, when not nil, is the registration to use instead of registering.
func newUser(t *testing.T, pre *oauthclient.ClientInfo) *user {
	t.Helper()
	u := &user{rec: &recorder{base: http.DefaultTransport}, store: oauthclient.NewMemoryStore(), clock: newFakeClock()}
	cfg := &oauthclient.Config{
		Authorizer: &oauthclient.HeadlessAuthorizer{},
		Store:      u.store,
		Base:       u.rec,
		HTTPClient: &http.Client{Transport: u.rec},
		Now:        u.clock.Now,
	}
	if pre != nil {
		cfg.PreRegistered = func(string) *oauthclient.ClientInfo { return pre }
	}
	oc, err := oauthclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u.oc = oc
	return u
}

// connect opens a client session to the world's server through u's
// transport; version pins the protocol ("" negotiates, which reaches
// 2026-07-28). elicit, when not nil, runs before the region is answered.
func (u *user) connect(t *testing.T, w *world, version mcp.ProtocolVersion, elicit func()) *client.Session {
	t.Helper()
	c := client.New(mcp.Implementation{Name: "app", Version: "1.0.0"}, &client.Options{
		ProtocolVersion: version,
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			if elicit != nil {
				elicit()
			}
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "eu"}}, nil
		},
		Logger: slog.New(slog.DiscardHandler),
	})
	sess, err := c.Connect(context.Background(), streamhttp.NewClientTransport(w.resource, &streamhttp.ClientOptions{
		HTTPClient: u.oc.Client(),
		Logger:     slog.New(slog.DiscardHandler),
	}))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

// registration returns the client registration u holds with w's
// authorization server.
func (u *user) registration(t *testing.T, w *world) *oauthclient.ClientInfo {
	t.Helper()
	creds, err := u.store.Load(context.Background(), w.as.Issuer())
	if err != nil || creds == nil || creds.Client == nil {
		t.Fatalf("no registration with %s: %v %v", w.as.Issuer(), creds, err)
	}
	return creds.Client
}

func regionAnswer(t *testing.T) mcp.InputResponses {
	t.Helper()
	var answers mcp.InputResponses
	if err := answers.Set("region", &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "eu"}}); err != nil {
		t.Fatal(err)
	}
	return answers
}

func resultText(t *testing.T, res mcp.AnyResult) string {
	t.Helper()
	r, ok := res.(*mcp.CallToolResult)
	if !ok || len(r.Content) != 1 {
		t.Fatalf("result %#v", res)
	}
	text, ok := r.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content %#v", r.Content[0])
	}
	if r.IsError {
		t.Fatalf("tool error: %s", text.Text)
	}
	return text.Text
}

// The first request of a client without a token is refused with 401; the
// OAuth client discovers the authorization server from the challenge,
// registers (RFC 7591), authorizes with PKCE and retries. The grants it
// used are the authorization code's, and the registration is stored.
func TestEndToEndFullFlow(t *testing.T) {
	w := newWorld(t)
	ada := newUser(t, nil)
	sess := ada.connect(t, w, "", nil)
	if sess.ProtocolVersion() != mcp.Version20260728 {
		t.Fatalf("version %s", sess.ProtocolVersion())
	}
	statuses, grants := ada.rec.since(0, 0)
	if !slices.Contains(statuses, http.StatusUnauthorized) || !slices.Equal(grants, []string{"authorization_code"}) {
		t.Fatalf("statuses %v, grants %v: want a 401 then one authorization code grant", statuses, grants)
	}
	if reg := ada.registration(t, w); reg.ClientID == "" {
		t.Fatal("no client id registered")
	}
	res, err := sess.CallTool(context.Background(), "provision", map[string]any{"name": "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); got != "ada provisioned orders in eu" {
		t.Errorf("result %q", got)
	}
}

// A round's requestState is bound to the principal the token named: Bob,
// using the same OAuth client registration as Ada, cannot continue Ada's
// call; the server answers with the fixed requestState error. Ada can.
func TestEndToEndStateBoundToSubject(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	ada := newUser(t, nil) // registers dynamically
	adaSess := ada.connect(t, w, mcp.Version20260728, nil)

	w.as.SetSubject("bob")
	reg := ada.registration(t, w)
	bob := newUser(t, reg) // the same client, another user
	bobSess := bob.connect(t, w, mcp.Version20260728, nil)
	if got := bob.registration(t, w).ClientID; got != reg.ClientID {
		t.Fatalf("bob's client %s, ada's %s: want one client", got, reg.ClientID)
	}

	call, err := client.ToolCall("provision", map[string]any{"name": "orders"})
	if err != nil {
		t.Fatal(err)
	}
	_, pending, err := adaSess.Begin(ctx, call)
	if err != nil || pending == nil {
		t.Fatalf("ada's first round: pending %v, err %v", pending, err)
	}
	_, _, err = bobSess.Continue(ctx, pending, regionAnswer(t))
	if !mcp.IsInvalidRequestState(err) {
		t.Fatalf("bob continuing ada's call: err = %v, want the invalid requestState error", err)
	}
	res, next, err := adaSess.Continue(ctx, pending, regionAnswer(t))
	if err != nil || next != nil {
		t.Fatalf("ada's second round: next %v, err %v", next, err)
	}
	if got := resultText(t, res); got != "ada provisioned orders in eu" {
		t.Errorf("result %q", got)
	}
	// And Bob, on his own call, is Bob.
	res, err = bobSess.CallTool(ctx, "provision", map[string]any{"name": "users"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); got != "bob provisioned users in eu" {
		t.Errorf("bob's result %q", got)
	}
}

// An access token that expires between two rounds: the server refuses the
// second round with 401, the OAuth client redeems its refresh token and
// sends the round again, and the call completes for the same user. When
// the client's own clock also says the token has expired, it refreshes
// before sending and the server never sees the stale token.
func TestEndToEndTokenExpiresMidFlow(t *testing.T) {
	for _, clientKnows := range []bool{false, true} {
		t.Run(fmt.Sprintf("clientClockAdvanced=%v", clientKnows), func(t *testing.T) {
			w := newWorld(t)
			ctx := context.Background()
			ada := newUser(t, nil)
			sess := ada.connect(t, w, mcp.Version20260728, nil)
			call, err := client.ToolCall("provision", map[string]any{"name": "orders"})
			if err != nil {
				t.Fatal(err)
			}
			_, pending, err := sess.Begin(ctx, call)
			if err != nil || pending == nil {
				t.Fatalf("first round: pending %v, err %v", pending, err)
			}

			w.expireTokens()
			if clientKnows {
				ada.clock.Advance(2 * time.Hour)
			}
			s0, g0 := ada.rec.mark()
			res, next, err := sess.Continue(ctx, pending, regionAnswer(t))
			if err != nil || next != nil {
				t.Fatalf("second round: next %v, err %v", next, err)
			}
			if got := resultText(t, res); got != "ada provisioned orders in eu" {
				t.Errorf("result %q", got)
			}
			statuses, grants := ada.rec.since(s0, g0)
			if !slices.Equal(grants, []string{"refresh_token"}) {
				t.Errorf("grants during the second round %v, want one refresh_token grant", grants)
			}
			if got := slices.Contains(statuses, http.StatusUnauthorized); got == clientKnows {
				t.Errorf("statuses during the second round %v: 401 seen = %v, want %v", statuses, got, !clientKnows)
			}
		})
	}
}

// The same two properties on a legacy (2025-11-25) session, through the
// same RoundTripper: the session serves only the caller who opened it, and
// a token that expires while the server waits for the answer to its
// elicitation is refreshed when the answer is posted.
func TestEndToEndLegacySession(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	ada := newUser(t, nil)
	var s0, g0 int
	sess := ada.connect(t, w, mcp.Version20251125, func() {
		// The server is waiting for this answer, in the middle of the
		// call: let the token expire now.
		w.expireTokens()
		s0, g0 = ada.rec.mark()
	})
	if sess.ProtocolVersion() != mcp.Version20251125 {
		t.Fatalf("version %s", sess.ProtocolVersion())
	}
	ada.rec.mu.Lock()
	sessionID := ada.rec.sessionID
	ada.rec.mu.Unlock()
	if sessionID == "" {
		t.Fatal("no Mcp-Session-Id seen")
	}

	// Bob, with a valid token of the same client, may not use Ada's
	// session: to him it does not exist.
	bobToken := w.as.Issue(authtest.Grant{Subject: "bob", ClientID: ada.registration(t, w).ClientID, Resource: w.resource, Scopes: []string{"db"}})
	req, _ := http.NewRequest(http.MethodPost, w.resource, bytes.NewReader([]byte(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)))
	req.Header.Set("Authorization", "Bearer "+bobToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sessionID)
	req.Header.Set("MCP-Protocol-Version", string(mcp.Version20251125))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("bob on ada's session: HTTP %d, want 404", resp.StatusCode)
	}

	res, err := sess.CallTool(ctx, "provision", map[string]any{"name": "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); got != "ada provisioned orders in eu" {
		t.Errorf("result %q", got)
	}
	statuses, grants := ada.rec.since(s0, g0)
	if !slices.Contains(statuses, http.StatusUnauthorized) || !slices.Equal(grants, []string{"refresh_token"}) {
		t.Errorf("after the token expired: statuses %v, grants %v; want a 401 and one refresh_token grant", statuses, grants)
	}
}
