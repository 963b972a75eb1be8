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
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// Config configures a [Transport]. The zero value works for a server that
// needs no authorization; anything else needs an Authorizer (a person
// consents in a browser) or a Grant (no person: client credentials,
// workload identity, enterprise-managed authorization).
type Config struct {
	// Authorizer runs the interactive step (the user's consent in a
	// browser). Without one (and without a Grant), a request the server
	// refuses with 401 fails with ErrNoAuthorizer once discovery is done.
	Authorizer Authorizer
	// Grant obtains tokens with no person present, in place of the
	// authorization code flow: [ClientCredentials], [WorkloadIdentity],
	// [EnterpriseManaged], or a [JWTBearer] of your own. Set either Grant
	// or Authorizer, not both: a grant that fails is not followed by a
	// consent screen.
	Grant Grant
	// DPoP, when set, binds tokens to a key the client holds (RFC 9449):
	// see [DPoP]. Nil: bearer tokens.
	DPoP *DPoP
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
	cfg  Config
	dpop *dpopProver // nil without Config.DPoP

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
	if c.Grant != nil && c.Authorizer != nil {
		return nil, errors.New("oauthclient: set Config.Grant or Config.Authorizer, not both")
	}
	t := &Transport{cfg: c, res: map[string]*resourceState{}}
	if c.DPoP != nil {
		p, err := newProver(c.DPoP, c.Now)
		if err != nil {
			return nil, err
		}
		t.dpop = p
	}
	return t, nil
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
			ch = authChallenge(resp.Header, tok)
			if reauthorized || ch["error"] == "use_dpop_nonce" {
				// A fresh token refused too, or a nonce refused again
				// after send's retry with it: not ours to fix.
				return resp, nil
			}
		case http.StatusForbidden:
			ch = authChallenge(resp.Header, tok)
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
//
// A DPoP-bound token goes with the DPoP scheme and a proof for this
// request, never as a bearer token; when the server answers that it wants
// a nonce (401, error="use_dpop_nonce", RFC 9449 section 9), the request is
// sent once more with it.
func (t *Transport) send(req *http.Request, getBody func() (io.ReadCloser, error), tok *oauth2.Token, retry bool) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		r := req.Clone(req.Context())
		if retry || attempt > 0 || req.GetBody == nil {
			body, err := getBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		target := htu(r.URL)
		bound := tok != nil && isDPoPToken(tok)
		switch {
		case bound:
			if t.dpop == nil {
				closeBody(r)
				return nil, errors.New("oauthclient: the token is bound to a DPoP key and Config.DPoP is not set; it is never sent as a bearer token")
			}
			proof, err := t.dpop.proof(t.dpop.alg, r.Method, target, tok.AccessToken)
			if err != nil {
				closeBody(r)
				return nil, err
			}
			r.Header.Set("Authorization", "DPoP "+tok.AccessToken)
			r.Header.Set("DPoP", proof)
		case tok != nil:
			r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		}
		resp, err := t.cfg.Base.RoundTrip(r)
		if err != nil || !bound {
			return resp, err
		}
		nonce := t.dpop.remember(target, resp.Header)
		if resp.StatusCode != http.StatusUnauthorized || attempt > 0 || !nonce ||
			challengeParams(resp.Header, "DPoP")["error"] != "use_dpop_nonce" {
			return resp, nil
		}
		drain(resp)
	}
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
	tok := t.tokenFor(creds, st.resource)
	if tok == nil || !t.expired(tok) {
		return tok, nil
	}
	canRefresh := tok.RefreshToken != "" && creds.Client != nil
	if !canRefresh && t.cfg.Grant == nil || st.asm == nil {
		return nil, nil // expired: the server's 401 starts a new authorization
	}
	t.authMu.Lock()
	defer t.authMu.Unlock()
	// Another request may have refreshed it while this one waited.
	if creds, err = t.cfg.Store.Load(ctx, st.issuer); err != nil || creds == nil {
		return nil, err
	}
	if cur := t.tokenFor(creds, st.resource); cur != nil && !t.expired(cur) {
		return cur, nil
	}
	if canRefresh {
		if nt, err := t.refresh(ctx, st.asm, t.registered(st.asm, creds), st.resource, tok); err == nil {
			return nt, t.saveToken(ctx, st.issuer, st.resource, creds, nt)
		}
		if t.cfg.Grant == nil {
			return nil, nil // refused: the 401 that follows starts over
		}
	}
	// No person to ask: the grant gets the next token before the server
	// has to refuse the old one.
	nt, err := t.grant(ctx, st.asm, t.registered(st.asm, creds), st.resource, st.scopes)
	if err != nil {
		return nil, err
	}
	return nt, t.saveToken(ctx, st.issuer, st.resource, creds, nt)
}

// tokenFor returns the token creds hold for resource, or nil when there is
// none this Transport can use: a DPoP-bound token is no use without
// Config.DPoP (it is never sent as a bearer token).
func (t *Transport) tokenFor(creds *Credentials, resource string) *oauth2.Token {
	tok := creds.Tokens[resource]
	if tok != nil && isDPoPToken(tok) && t.dpop == nil {
		return nil
	}
	return tok
}

// registered returns the client's registration with asm: the
// pre-registered one (which carries what a Store does not keep, such as a
// private key), else the one creds hold.
func (t *Transport) registered(asm *ServerMetadata, creds *Credentials) *ClientInfo {
	if t.cfg.PreRegistered != nil {
		if c := t.cfg.PreRegistered(asm.Issuer); c != nil && c.ClientID != "" {
			cc := *c
			return &cc
		}
	}
	return creds.Client
}

// grant gets a token for resource with Config.Grant.
func (t *Transport) grant(ctx context.Context, asm *ServerMetadata, client *ClientInfo, resource string, scopes []string) (*oauth2.Token, error) {
	form, err := t.cfg.Grant.TokenParams(ctx, &GrantRequest{
		Server: asm, Resource: resource, Scopes: slices.Clone(scopes), Client: client, HTTPClient: t.cfg.HTTPClient,
	})
	if err != nil {
		return nil, err
	}
	if form.Get("grant_type") == "" {
		return nil, fmt.Errorf("oauthclient: the Grant (%T) gave no grant_type", t.cfg.Grant)
	}
	form.Set("resource", resource)
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	return t.tokenRequest(ctx, asm, client, form, nil)
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
		if asm, err = discoverServer(ctx, t.cfg.HTTPClient, issuer, t.cfg.Grant == nil); err != nil {
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
		switch old := t.tokenFor(creds, prm.Resource); {
		case old == nil:
		case sent == nil && !t.expired(old):
			// The request went without a token only because this
			// Transport had not learnt the server's issuer yet: a token
			// that a persistent Store kept from an earlier process is
			// tried before the user is sent to log in again.
			return old, nil
		case old.RefreshToken != "":
			if nt, err := t.refresh(ctx, asm, t.registered(asm, creds), prm.Resource, old); err == nil {
				return nt, t.saveToken(ctx, issuer, prm.Resource, creds, nt)
			}
			// A refused refresh token is dead: authorize anew.
		}
	}

	var scopes []string
	var client *ClientInfo
	var tok *oauth2.Token
	if t.cfg.Grant != nil {
		// No offline_access: a grant needs no refresh token, it is
		// presented again (and client credentials get none, RFC 6749
		// section 4.4.3).
		scopes = selectScopes(ch["scope"], prm, prev.scopes, nil)
		client = t.registered(asm, creds)
		tok, err = t.grant(ctx, asm, client, prm.Resource, scopes)
	} else {
		if t.cfg.Authorizer == nil {
			return nil, ErrNoAuthorizer
		}
		scopes = selectScopes(ch["scope"], prm, prev.scopes, asm)
		if client, err = t.clientFor(ctx, asm, creds); err != nil {
			return nil, err
		}
		tok, err = t.authorizeCode(ctx, asm, client, prm.Resource, scopes)
	}
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_client" && client != nil && creds.Client != nil && creds.Client.ClientID == client.ClientID {
			// The server forgot the registration: drop it, so the
			// next attempt registers anew.
			creds.Client = nil
			t.cfg.Store.Save(ctx, issuer, creds)
		}
		return nil, err
	}
	if client != nil {
		creds.Client = client
	}
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
	if tok := t.tokenFor(creds, st.resource); tok != nil && !t.expired(tok) {
		return tok, nil
	}
	return nil, nil
}
