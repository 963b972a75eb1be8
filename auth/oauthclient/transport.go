package oauthclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// Config configures a [Transport]. The zero value works for a server that
// needs no authorization; anything else needs an Authorizer.
type Config struct {
	// Authorizer runs the interactive step (the user's consent in a
	// browser). Without one, a request the server refuses with 401 fails
	// with ErrNoAuthorizer once discovery is done.
	Authorizer Authorizer
	// Store keeps client registrations and tokens per authorization
	// server. Default: a new MemoryStore.
	Store Store
	// Base sends the MCP requests. Default: http.DefaultTransport.
	Base http.RoundTripper
	// HTTPClient sends the metadata, registration and token requests.
	// Default: a client over Base.
	HTTPClient *http.Client
	// ClientName is the client_name of dynamic registration. Default:
	// "Parley MCP client".
	ClientName string
	// ApplicationType is the application_type of dynamic registration:
	// "native" (the default: desktop, CLI and loopback redirects) or "web".
	ApplicationType string
	// ClientIDMetadataURL is the https URL of this client's metadata
	// document. When set and the authorization server advertises
	// client_id_metadata_document_supported, the URL is the client_id and
	// no registration happens.
	ClientIDMetadataURL string
	// PreRegistered returns the client registered out of band with the
	// authorization server issuer, or nil. It comes first: a client that
	// has credentials for a server uses them.
	PreRegistered func(issuer string) *ClientInfo
	// MaxStepUps bounds how many times in a row the transport
	// re-authorizes with more scopes after 403 insufficient_scope before
	// it gives up with a *StepUpLimitError. Default 2 (so at most three
	// authorizations for one request); negative: never step up.
	MaxStepUps int
	// Now is the clock that token expiry is judged by. Default: time.Now.
	Now func() time.Time
}

// expirySkew: a token this close to its expiry is refreshed before use,
// so it does not expire on the way.
const expirySkew = 10 * time.Second

// Transport is an http.RoundTripper that authorizes MCP requests with
// OAuth 2.1. It sends each request with the access token it holds for the
// server; when the server answers 401 it discovers the authorization
// server, registers, runs the authorization code flow and retries; when it
// answers 403 insufficient_scope it re-authorizes with the wider scope.
//
// A Transport may serve several MCP servers; it is safe for concurrent use.
// It runs one authorization at a time.
type Transport struct {
	cfg Config

	mu  sync.Mutex
	res map[string]*resourceState // by resourceKey

	authMu sync.Mutex // held for a whole discovery-and-authorization
}

// resourceState is what the transport learnt about one MCP server URL.
type resourceState struct {
	issuer   string // of the authorization server it last used
	resource string // the resource identifier of its metadata
	asm      *ServerMetadata
	scopes   []string // requested at the last authorization
	stepUps  int      // step-up authorizations since the last success
}

// New returns a Transport for cfg. It fails when cfg is inconsistent.
func New(cfg *Config) (*Transport, error) {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	if c.Store == nil {
		c.Store = NewMemoryStore()
	}
	if c.Base == nil {
		c.Base = http.DefaultTransport
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Transport: c.Base}
	}
	if c.ClientName == "" {
		c.ClientName = "Parley MCP client"
	}
	if c.ApplicationType == "" {
		c.ApplicationType = "native"
	}
	if c.MaxStepUps == 0 {
		c.MaxStepUps = 2
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.ClientIDMetadataURL != "" {
		u, err := url.Parse(c.ClientIDMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" || u.Fragment != "" {
			return nil, fmt.Errorf("oauthclient: Config.ClientIDMetadataURL %q must be an https URL with a path", c.ClientIDMetadataURL)
		}
	}
	return &Transport{cfg: c, res: map[string]*resourceState{}}, nil
}

// Client returns an *http.Client that sends through t: the value for
// streamhttp.ClientOptions.HTTPClient.
func (t *Transport) Client() *http.Client { return &http.Client{Transport: t} }

// resourceKey identifies the MCP server a request goes to: its URL without
// query and fragment.
func resourceKey(u *url.URL) *url.URL {
	k := *u
	k.RawQuery, k.ForceQuery, k.Fragment, k.RawFragment, k.User = "", false, "", "", nil
	return &k
}

func (t *Transport) state(key string) *resourceState {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.res[key]
	if st == nil {
		st = &resourceState{}
		t.res[key] = st
	}
	return st
}

// snapshot returns a copy of the state of key, for reading without t.mu.
func (t *Transport) snapshot(key string) resourceState {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st := t.res[key]; st != nil {
		c := *st
		c.scopes = slices.Clone(st.scopes)
		return c
	}
	return resourceState{}
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	serverURL := resourceKey(req.URL)
	key := serverURL.String()
	getBody, err := replayable(req)
	if err != nil {
		return nil, err
	}
	tok, err := t.currentToken(ctx, key)
	if err != nil {
		closeBody(req) // RoundTrip closes the body, whatever happens
		return nil, err
	}
	resp, err := t.send(req, getBody, tok, false)
	if err != nil {
		return nil, err
	}
	reauthorized := false
	for {
		var stepUp bool
		var ch map[string]string
		switch resp.StatusCode {
		case http.StatusUnauthorized:
			if reauthorized {
				return resp, nil // a fresh token refused too: not ours to fix
			}
			ch = bearerChallenge(resp.Header)
		case http.StatusForbidden:
			ch = bearerChallenge(resp.Header)
			if ch["error"] != "insufficient_scope" || t.cfg.MaxStepUps < 0 {
				return resp, nil
			}
			st := t.snapshot(key)
			if st.stepUps >= t.cfg.MaxStepUps {
				drain(resp)
				return nil, &StepUpLimitError{Limit: t.cfg.MaxStepUps, Scopes: st.scopes}
			}
			stepUp = true
		default:
			if resp.StatusCode < 400 {
				t.mu.Lock()
				if st := t.res[key]; st != nil {
					st.stepUps = 0
				}
				t.mu.Unlock()
			}
			return resp, nil
		}
		if ch == nil {
			ch = map[string]string{}
		}
		drain(resp)
		tok, err = t.reauthorize(ctx, serverURL, ch, tok, stepUp)
		if err != nil {
			return nil, err
		}
		reauthorized = true
		if resp, err = t.send(req, getBody, tok, true); err != nil {
			return nil, err
		}
	}
}

// replayable returns a function that gives the request body anew, for the
// retry after an authorization. Requests built from a bytes or strings
// reader have one already; others are read into memory once.
func replayable(req *http.Request) (func() (io.ReadCloser, error), error) {
	if req.Body == nil || req.Body == http.NoBody {
		return func() (io.ReadCloser, error) { return http.NoBody, nil }, nil
	}
	if req.GetBody != nil {
		return req.GetBody, nil
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("oauthclient: reading the request body: %w", err)
	}
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }, nil
}

// send sends a copy of req with tok (if any). The first send of a request
// with its own GetBody-less body must use the (already consumed and
// buffered) replay, hence fresh.
func (t *Transport) send(req *http.Request, getBody func() (io.ReadCloser, error), tok *oauth2.Token, retry bool) (*http.Response, error) {
	r := req.Clone(req.Context())
	if retry || req.GetBody == nil {
		body, err := getBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	if tok != nil {
		r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	}
	return t.cfg.Base.RoundTrip(r)
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// CloseIdleConnections closes the idle connections of Config.Base, for
// http.Client.CloseIdleConnections.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.cfg.Base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// currentToken returns the token held for the server at key, refreshed
// first when it has expired and can be; nil when there is none.
func (t *Transport) currentToken(ctx context.Context, key string) (*oauth2.Token, error) {
	st := t.snapshot(key)
	if st.issuer == "" {
		return nil, nil
	}
	creds, err := t.cfg.Store.Load(ctx, st.issuer)
	if err != nil || creds == nil {
		return nil, err
	}
	tok := creds.Tokens[st.resource]
	if tok == nil || !t.expired(tok) {
		return tok, nil
	}
	if tok.RefreshToken == "" || creds.Client == nil || st.asm == nil {
		return nil, nil // expired: the server's 401 starts a new authorization
	}
	t.authMu.Lock()
	defer t.authMu.Unlock()
	// Another request may have refreshed it while this one waited.
	if creds, err = t.cfg.Store.Load(ctx, st.issuer); err != nil || creds == nil {
		return nil, err
	}
	if cur := creds.Tokens[st.resource]; cur != nil && !t.expired(cur) {
		return cur, nil
	}
	nt, err := t.refresh(ctx, st.asm, creds.Client, st.resource, tok)
	if err != nil {
		return nil, nil // refused: the 401 that follows starts over
	}
	return nt, t.saveToken(ctx, st.issuer, st.resource, creds, nt)
}

func (t *Transport) expired(tok *oauth2.Token) bool {
	return !tok.Expiry.IsZero() && !t.cfg.Now().Add(expirySkew).Before(tok.Expiry)
}

func (t *Transport) saveToken(ctx context.Context, issuer, resource string, creds *Credentials, tok *oauth2.Token) error {
	if creds.Tokens == nil {
		creds.Tokens = map[string]*oauth2.Token{}
	}
	creds.Tokens[resource] = tok
	if err := t.cfg.Store.Save(ctx, issuer, creds); err != nil {
		return fmt.Errorf("oauthclient: saving credentials for %s: %w", issuer, err)
	}
	return nil
}

// reauthorize gets a new token for serverURL after the server refused sent
// (nil: the request had none) with challenge ch. stepUp: the refusal was
// 403 insufficient_scope, so only a new authorization with more scopes
// helps; otherwise a refresh is tried first.
func (t *Transport) reauthorize(ctx context.Context, serverURL *url.URL, ch map[string]string, sent *oauth2.Token, stepUp bool) (*oauth2.Token, error) {
	key := serverURL.String()
	t.authMu.Lock()
	defer t.authMu.Unlock()

	// Another request may have authorized while this one waited.
	if !stepUp {
		if cur, err := t.currentTokenLocked(ctx, key); err == nil && cur != nil && (sent == nil || cur.AccessToken != sent.AccessToken) {
			return cur, nil
		}
	}

	// Discover again every time: the server may have moved to another
	// authorization server since the last token (SEP-2352).
	prm, err := discoverResource(ctx, t.cfg.HTTPClient, serverURL, ch["resource_metadata"])
	if err != nil {
		return nil, err
	}
	issuer := prm.AuthorizationServers[0]
	prev := t.snapshot(key)
	asm := prev.asm
	if prev.issuer != issuer || asm == nil {
		if asm, err = discoverServer(ctx, t.cfg.HTTPClient, issuer); err != nil {
			return nil, err
		}
	}
	if prev.issuer != issuer {
		prev.scopes = nil // scopes of another server's authorization
	}
	st := t.state(key)
	t.mu.Lock()
	st.issuer, st.resource, st.asm = issuer, prm.Resource, asm
	t.mu.Unlock()

	creds, err := t.cfg.Store.Load(ctx, issuer)
	if err != nil {
		return nil, fmt.Errorf("oauthclient: loading credentials for %s: %w", issuer, err)
	}
	if creds == nil {
		creds = &Credentials{}
	}
	if !stepUp && creds.Client != nil {
		switch old := creds.Tokens[prm.Resource]; {
		case old == nil:
		case sent == nil && !t.expired(old):
			// The request went without a token only because this
			// Transport had not learnt the server's issuer yet: a token
			// that a persistent Store kept from an earlier process is
			// tried before the user is sent to log in again.
			return old, nil
		case old.RefreshToken != "":
			if nt, err := t.refresh(ctx, asm, creds.Client, prm.Resource, old); err == nil {
				return nt, t.saveToken(ctx, issuer, prm.Resource, creds, nt)
			}
			// A refused refresh token is dead: authorize anew.
		}
	}

	if t.cfg.Authorizer == nil {
		return nil, ErrNoAuthorizer
	}
	scopes := selectScopes(ch["scope"], prm, prev.scopes, asm)
	client, err := t.clientFor(ctx, asm, creds)
	if err != nil {
		return nil, err
	}
	tok, err := t.authorizeCode(ctx, asm, client, prm.Resource, scopes)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_client" && creds.Client != nil && creds.Client.ClientID == client.ClientID {
			// The server forgot the registration: drop it, so the
			// next attempt registers anew.
			creds.Client = nil
			t.cfg.Store.Save(ctx, issuer, creds)
		}
		return nil, err
	}
	creds.Client = client
	t.mu.Lock()
	st.scopes = scopes
	if stepUp {
		st.stepUps++
	}
	t.mu.Unlock()
	return tok, t.saveToken(ctx, issuer, prm.Resource, creds, tok)
}

// currentTokenLocked is currentToken without refreshing, for a caller that
// holds authMu.
func (t *Transport) currentTokenLocked(ctx context.Context, key string) (*oauth2.Token, error) {
	st := t.snapshot(key)
	if st.issuer == "" {
		return nil, nil
	}
	creds, err := t.cfg.Store.Load(ctx, st.issuer)
	if err != nil || creds == nil {
		return nil, err
	}
	if tok := creds.Tokens[st.resource]; tok != nil && !t.expired(tok) {
		return tok, nil
	}
	return nil, nil
}
