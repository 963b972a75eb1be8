package jwtverify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/auth/resourceserver"
)

// DefaultAlgorithms are the signature algorithms accepted when
// Options.Algorithms is empty.
var DefaultAlgorithms = []string{"RS256", "ES256"}

// Defaults of [Options].
const (
	// DefaultRefreshInterval is the least time between two fetches of the
	// key set caused by tokens signed with an unknown key.
	DefaultRefreshInterval = time.Minute
	// DefaultMaxKeyAge is how long a fetched key set is used before it is
	// fetched again, so that a key the issuer withdrew stops working.
	DefaultMaxKeyAge = time.Hour
)

// maxDocument bounds what is read of a key set or metadata document.
const maxDocument = 1 << 20

// fetchTimeout bounds one fetch of a key set or metadata document, so that
// a slow authorization server holds requests up for at most this long.
const fetchTimeout = 10 * time.Second

// asymmetric are the algorithms a key set of public keys can verify.
var asymmetric = map[string]bool{
	"RS256": true, "RS384": true, "RS512": true,
	"PS256": true, "PS384": true, "PS512": true,
	"ES256": true, "ES384": true, "ES512": true,
	"EdDSA": true,
}

// Options configure a [Verifier].
type Options struct {
	// Issuer is the authorization server's issuer identifier; a token's
	// iss must equal it. Required.
	Issuer string
	// Audience is this resource's identifier (the Resource of its
	// protected resource metadata); a token's aud must contain it (RFC
	// 8707). Required.
	Audience string
	// JWKSURL is where the issuer publishes its keys. Empty means: read
	// jwks_uri from the issuer's authorization server metadata (RFC 8414,
	// then OpenID Connect discovery), whose issuer must equal Issuer.
	JWKSURL string
	// Algorithms are the signature algorithms accepted, by JWA name. Empty
	// means [DefaultAlgorithms]. Only asymmetric algorithms are allowed:
	// a symmetric one (HS256) would let anyone holding the shared secret
	// mint tokens, and "none" is never accepted.
	Algorithms []string
	// Leeway is the clock skew allowed when checking exp and nbf. Zero
	// means [resourceserver.DefaultLeeway]; negative means none.
	Leeway time.Duration
	// Now is the clock tokens and the key cache are checked against. Nil
	// means time.Now.
	Now func() time.Time
	// HTTPClient fetches the key set and metadata. Nil means
	// http.DefaultClient.
	HTTPClient *http.Client
	// RefreshInterval is the least time between fetches of the key set
	// caused by an unknown kid (the issuer may have rotated its keys).
	// Tokens with made-up kids cannot make the verifier fetch more often.
	// Zero means [DefaultRefreshInterval].
	RefreshInterval time.Duration
	// MaxKeyAge is how long a key set is used before it is fetched again.
	// Zero means [DefaultMaxKeyAge].
	MaxKeyAge time.Duration
	// RequireAccessTokenType refuses every token whose typ header is not
	// at+jwt (or application/at+jwt), as RFC 9068 §4 asks: also tokens
	// with no typ or typ "JWT". Set it when the issuer types its access
	// tokens; it then refuses every other token of that issuer with the
	// same audience, ID tokens without a nonce included. By default a
	// token without a type is accepted unless its claims show it is
	// another kind of token (see [Verifier.Verify]), because many issuers
	// send access tokens with no typ or typ "JWT".
	RequireAccessTokenType bool
}

// Verifier is a [resourceserver.Verifier] for JWT access tokens (RFC 9068)
// signed with a key of the issuer's JSON Web Key Set. It checks the
// signature, the algorithm, the token's type, iss, aud, exp and nbf, and reads sub,
// client_id (or azp), scope (or scp) and the DPoP key binding (cnf.jkt)
// into an [auth.Info]. Create one
// with [New]; it is safe for concurrent use.
type Verifier struct {
	issuer, audience string
	algs             []jose.SignatureAlgorithm
	leeway           time.Duration
	now              func() time.Time
	client           *http.Client
	refreshEvery     time.Duration
	maxAge           time.Duration
	requireType      bool

	// set is the key set in use, nil until the first fetch succeeds. It
	// is read without a lock, so that a token signed with a cached key
	// never waits for a fetch caused by another token (an unknown kid
	// would otherwise stall every request for the fetch's duration); a
	// fetch swaps a new set in.
	set atomic.Pointer[keySet]

	mu          sync.Mutex // guards what follows; never held during a fetch
	jwksURL     string
	lastAttempt time.Time  // when a fetch was last started, successful or not
	lastErr     error      // how the last finished fetch failed, or nil
	inflight    *fetchCall // the fetch under way, or nil
}

// keySet is a fetched key set; it is never modified once published.
type keySet struct {
	keys    []jose.JSONWebKey
	fetched time.Time
}

// fetchCall is one fetch of the key set, shared by every request that
// needs a newer set while it runs.
type fetchCall struct {
	done chan struct{} // closed when the fetch has ended
	err  error         // how it failed, or nil; read after done
}

// New checks opts and returns a Verifier. It fetches nothing: the key set
// is fetched by the first Verify.
func New(opts *Options) (*Verifier, error) {
	if opts == nil {
		return nil, errors.New("jwtverify: Options are required")
	}
	if opts.Issuer == "" {
		return nil, errors.New("jwtverify: Options.Issuer is required")
	}
	if opts.Audience == "" {
		return nil, errors.New("jwtverify: Options.Audience is required")
	}
	v := &Verifier{
		issuer:       opts.Issuer,
		audience:     opts.Audience,
		leeway:       opts.Leeway,
		now:          opts.Now,
		client:       opts.HTTPClient,
		refreshEvery: opts.RefreshInterval,
		maxAge:       opts.MaxKeyAge,
		requireType:  opts.RequireAccessTokenType,
		jwksURL:      opts.JWKSURL,
	}
	if v.jwksURL != "" {
		if err := checkURL(v.jwksURL); err != nil {
			return nil, fmt.Errorf("jwtverify: Options.JWKSURL: %w", err)
		}
	} else if err := checkURL(v.issuer); err != nil {
		return nil, fmt.Errorf("jwtverify: Options.Issuer (needed to discover the key set): %w", err)
	}
	algs := opts.Algorithms
	if len(algs) == 0 {
		algs = DefaultAlgorithms
	}
	for _, a := range algs {
		if !asymmetric[a] {
			return nil, fmt.Errorf("jwtverify: algorithm %q is not an asymmetric signature algorithm; allowed: RS*, PS*, ES*, EdDSA", a)
		}
		v.algs = append(v.algs, jose.SignatureAlgorithm(a))
	}
	switch {
	case v.leeway == 0:
		v.leeway = resourceserver.DefaultLeeway
	case v.leeway < 0:
		v.leeway = 0
	}
	if v.now == nil {
		v.now = time.Now
	}
	if v.client == nil {
		v.client = http.DefaultClient
	}
	if v.refreshEvery <= 0 {
		v.refreshEvery = DefaultRefreshInterval
	}
	if v.maxAge <= 0 {
		v.maxAge = DefaultMaxKeyAge
	}
	return v, nil
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", s)
	}
	return nil
}

// claims are the members of an access token the verifier reads.
type claims struct {
	Issuer    string           `json:"iss"`
	Subject   string           `json:"sub"`
	Audience  jwt.Audience     `json:"aud"`
	Expiry    *jwt.NumericDate `json:"exp"`
	NotBefore *jwt.NumericDate `json:"nbf"`
	ClientID  string           `json:"client_id"`
	AZP       string           `json:"azp"`
	Scope     string           `json:"scope"`
	SCP       json.RawMessage  `json:"scp"`
	// Confirmation is cnf (RFC 7800): the key a DPoP-bound token is
	// bound to, as jkt (RFC 9449 section 6.1).
	Confirmation json.RawMessage `json:"cnf"`

	// Claims of other kinds of token, read only to refuse them.
	Nonce  json.RawMessage `json:"nonce"`
	ATHash json.RawMessage `json:"at_hash"`
	CHash  json.RawMessage `json:"c_hash"`
	SHash  json.RawMessage `json:"s_hash"`
	Events json.RawMessage `json:"events"`
}

// Verify checks token and returns what it says. Refusals match
// [resourceserver.ErrInvalidToken]; a key set that cannot be fetched
// matches [resourceserver.ErrUnavailable].
//
// A token must say it is an access token, or at least not say it is
// something else. RFC 9068 §4 has resource servers refuse any typ other
// than at+jwt; RFC 8725 §3.11 explains why: an issuer signs ID tokens,
// logout tokens and other JWTs with the same keys, often for an audience
// that may equal this resource, and only the type tells them apart. So a
// typ that names another kind of token (logout+jwt, secevent+jwt, …) is
// refused. But many issuers send access tokens with no typ or with typ
// "JWT", which says only that the token is a JWT, and refusing those
// would lock their users out; such untyped tokens are accepted unless a
// claim marks them as another kind: nonce, at_hash, c_hash or s_hash (an
// OpenID Connect ID token) or events (a logout or other security event
// token, RFC 8417). Options.RequireAccessTokenType refuses untyped tokens
// altogether, for issuers that type theirs.
func (v *Verifier) Verify(ctx context.Context, token string) (*auth.Info, error) {
	tok, err := jwt.ParseSigned(token, v.algs)
	if err != nil {
		// Also where an algorithm outside the pinned list ends.
		return nil, fmt.Errorf("%w: %w", resourceserver.ErrInvalidToken, err)
	}
	if len(tok.Headers) != 1 {
		return nil, fmt.Errorf("%w: %d signatures", resourceserver.ErrInvalidToken, len(tok.Headers))
	}
	hdr := tok.Headers[0]
	// Checked before any key is looked up: a token of the wrong type
	// causes no fetch.
	typed, err := v.checkType(hdr.ExtraHeaders)
	if err != nil {
		return nil, err
	}
	keys, err := v.candidates(ctx, hdr.KeyID, hdr.Algorithm)
	if err != nil {
		return nil, err
	}
	var c claims
	verified := false
	for _, k := range keys {
		if err := tok.Claims(k.Key, &c); err == nil {
			verified = true
			break
		}
	}
	if !verified {
		return nil, fmt.Errorf("%w: the signature does not verify with the issuer's key %q", resourceserver.ErrInvalidToken, hdr.KeyID)
	}
	if !typed {
		if claim := otherKind(&c); claim != "" {
			return nil, fmt.Errorf("%w: a token without typ at+jwt that carries %s is not an access token (an ID or security event token)", resourceserver.ErrInvalidToken, claim)
		}
	}
	return v.check(&c)
}

// checkType reads the typ header: typed is true for an access token's type
// (RFC 9068 §4: at+jwt, also as the full media type application/at+jwt,
// which like every media type compares case-insensitively, RFC 8725
// §3.11), false for a token without a type of its own (no typ, or "JWT",
// RFC 7519 §5.1). Any other typ is refused, and so is an untyped token
// when the verifier requires the type.
func (v *Verifier) checkType(hdr map[jose.HeaderKey]any) (typed bool, err error) {
	raw, present := hdr[jose.HeaderType]
	if !present {
		if v.requireType {
			return false, fmt.Errorf("%w: no typ; this verifier accepts only typ at+jwt", resourceserver.ErrInvalidToken)
		}
		return false, nil
	}
	typ, ok := raw.(string)
	if !ok {
		return false, fmt.Errorf("%w: typ is not a string", resourceserver.ErrInvalidToken)
	}
	switch strings.TrimPrefix(strings.ToLower(typ), "application/") {
	case "at+jwt":
		return true, nil
	case "jwt":
		if v.requireType {
			return false, fmt.Errorf("%w: typ %q; this verifier accepts only typ at+jwt", resourceserver.ErrInvalidToken, typ)
		}
		return false, nil
	}
	return false, fmt.Errorf("%w: typ %q is not an access token's (at+jwt)", resourceserver.ErrInvalidToken, typ)
}

// otherKind returns the name of a claim that only tokens other than access
// tokens carry, or "". It is consulted only for untyped tokens.
//
// Keycloak before version 25 also put nonce into access tokens (it has
// since stopped, its issue 26893); with such an issuer, untyped tokens
// issued after an authorization request with a nonce are refused here.
func otherKind(c *claims) string {
	switch {
	case c.Nonce != nil:
		return "nonce"
	case c.ATHash != nil:
		return "at_hash"
	case c.CHash != nil:
		return "c_hash"
	case c.SHash != nil:
		return "s_hash"
	case c.Events != nil:
		return "events"
	}
	return ""
}

// check validates the claims of a token whose signature verified.
func (v *Verifier) check(c *claims) (*auth.Info, error) {
	now := v.now()
	switch {
	case c.Issuer != v.issuer:
		return nil, fmt.Errorf("%w: issued by %q, not %q", resourceserver.ErrInvalidToken, c.Issuer, v.issuer)
	case !c.Audience.Contains(v.audience):
		return nil, fmt.Errorf("%w: audience %q does not include this resource %q", resourceserver.ErrInvalidToken, []string(c.Audience), v.audience)
	case c.Expiry == nil:
		return nil, fmt.Errorf("%w: no exp", resourceserver.ErrInvalidToken)
	case !now.Before(c.Expiry.Time().Add(v.leeway)):
		// RFC 7519 §4.1.4: not accepted on or after exp (plus leeway).
		return nil, fmt.Errorf("%w: expired at %s", resourceserver.ErrInvalidToken, c.Expiry.Time().UTC().Format(time.RFC3339))
	case c.NotBefore != nil && now.Before(c.NotBefore.Time().Add(-v.leeway)):
		return nil, fmt.Errorf("%w: not valid before %s", resourceserver.ErrInvalidToken, c.NotBefore.Time().UTC().Format(time.RFC3339))
	}
	scopes, err := scopesOf(c)
	if err != nil {
		return nil, err
	}
	jkt, err := resourceserver.KeyThumbprintOf(c.Confirmation)
	if err != nil {
		return nil, err
	}
	clientID := c.ClientID
	if clientID == "" {
		clientID = c.AZP
	}
	return &auth.Info{ClientID: clientID, Issuer: c.Issuer, Subject: c.Subject, Scopes: scopes, Expiry: c.Expiry.Time(), KeyThumbprint: jkt}, nil
}

// scopesOf reads scope (RFC 9068: a space-separated string) or, failing
// that, scp (a string or an array, as some issuers write it).
func scopesOf(c *claims) ([]string, error) {
	if c.Scope != "" || len(c.SCP) == 0 {
		return strings.Fields(c.Scope), nil
	}
	var one string
	if err := json.Unmarshal(c.SCP, &one); err == nil {
		return strings.Fields(one), nil
	}
	var many []string
	if err := json.Unmarshal(c.SCP, &many); err != nil {
		return nil, fmt.Errorf("%w: scp is neither a string nor an array of strings", resourceserver.ErrInvalidToken)
	}
	return many, nil
}

// candidates returns the keys that may have signed a token with kid and
// alg, fetching the key set when there is none yet, when it is older than
// MaxKeyAge, or when no key has kid; but never more often than once per
// RefreshInterval.
//
// A token whose key is in a current set takes no lock and never waits,
// whatever fetch is under way. A token that needs a newer set waits for
// one fetch, shared by every such token, or until its ctx ends. That
// includes tokens checked against a set past MaxKeyAge: the age limit is
// there so that a key the issuer withdrew stops working, so they wait for
// the new set rather than pass on the old one.
func (v *Verifier) candidates(ctx context.Context, kid, alg string) ([]jose.JSONWebKey, error) {
	now := v.now()
	if set := v.set.Load(); set != nil && now.Sub(set.fetched) < v.maxAge {
		if keys := matching(set.keys, kid, alg); len(keys) > 0 {
			return keys, nil
		}
	}
	call, lastErr := v.startFetch(ctx, now)
	if call != nil {
		select {
		case <-call.done:
			lastErr = call.err
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: waiting for the key set: %w", resourceserver.ErrUnavailable, ctx.Err())
		}
	}
	// Whether this request fetched, waited, or was held back by the rate
	// limit, the set to use is the newest one: another request's fetch
	// may have ended since the first look.
	set := v.set.Load()
	if set == nil {
		return nil, fmt.Errorf("%w: the key set could not be fetched: %w", resourceserver.ErrUnavailable, lastErr)
	}
	// A failed refresh of an old set keeps using the old set: an issuer
	// that is briefly down should not lock every user out.
	keys := matching(set.keys, kid, alg)
	if len(keys) == 0 {
		if call != nil && call.err != nil {
			// The key may be a new one the fetch would have brought.
			return nil, call.err
		}
		return nil, fmt.Errorf("%w: no key of the issuer has kid %q and fits %s", resourceserver.ErrInvalidToken, kid, alg)
	}
	return keys, nil
}

// startFetch returns the fetch under way, or starts one if the rate limit
// allows; nil, with how the last fetch failed, when it does not.
func (v *Verifier) startFetch(ctx context.Context, now time.Time) (*fetchCall, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.inflight != nil {
		return v.inflight, nil
	}
	// Every fetch, failed or not, waits RefreshInterval after the last
	// attempt: neither tokens with made-up kids nor an issuer that is down
	// make the verifier fetch on every request.
	mayFetch := v.lastAttempt.IsZero() || now.Sub(v.lastAttempt) >= v.refreshEvery
	if !mayFetch {
		return nil, v.lastErr
	}
	v.lastAttempt = now
	call := &fetchCall{done: make(chan struct{})}
	v.inflight = call
	jwksURL := v.jwksURL
	// The fetch serves every request that waits for it, so none of them
	// owns it: it runs on its own, bounded by fetchTimeout, and a request
	// that goes away does not cancel it (a failed fetch would hold all of
	// them off for RefreshInterval). It keeps the values of ctx, for
	// whatever the HTTP client reads from them.
	ctx = context.WithoutCancel(ctx)
	go func() {
		set, jwksURL, err := v.fetch(ctx, jwksURL, now)
		v.mu.Lock()
		defer v.mu.Unlock()
		if set != nil {
			v.set.Store(set)
		}
		if jwksURL != "" {
			v.jwksURL = jwksURL
		}
		v.lastErr = err
		call.err = err
		v.inflight = nil
		close(call.done)
	}()
	return call, nil
}

// matching returns the public signing keys that fit kid (all keys when the
// token names none) and alg.
func matching(keys []jose.JSONWebKey, kid, alg string) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, k := range keys {
		if kid != "" && k.KeyID != kid {
			continue
		}
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		if k.Algorithm != "" && k.Algorithm != alg {
			continue
		}
		out = append(out, k)
	}
	return out
}

// fetch fetches the key set from jwksURL, or from the URL in the issuer's
// metadata when jwksURL is empty, and returns it with the URL it used.
// It holds no lock.
func (v *Verifier) fetch(ctx context.Context, jwksURL string, now time.Time) (*keySet, string, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	if jwksURL == "" {
		u, err := v.discover(ctx)
		if err != nil {
			return nil, "", err
		}
		jwksURL = u
	}
	body, err := v.get(ctx, jwksURL)
	if err != nil {
		return nil, jwksURL, err
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, jwksURL, fmt.Errorf("%w: the key set at %s is not a JWK Set: %w", resourceserver.ErrUnavailable, jwksURL, err)
	}
	keys := make([]jose.JSONWebKey, 0, len(set.Keys))
	for _, raw := range set.Keys {
		var k jose.JSONWebKey
		// A key of a type this library does not know is skipped, not
		// fatal: the set may hold keys for other purposes.
		if err := k.UnmarshalJSON(raw); err != nil || !k.Valid() || !k.IsPublic() {
			continue
		}
		keys = append(keys, k)
	}
	return &keySet{keys: keys, fetched: now}, jwksURL, nil
}

// discover reads jwks_uri from the issuer's metadata: RFC 8414 first
// (the well-known suffix between host and path), then OpenID Connect
// discovery (the suffix after the path).
func (v *Verifier) discover(ctx context.Context) (string, error) {
	u, _ := url.Parse(v.issuer) // checked by New
	path := strings.TrimSuffix(u.Path, "/")
	oauth := *u
	oauth.Path, oauth.RawPath = "/.well-known/oauth-authorization-server"+path, ""
	oidc := *u
	oidc.Path, oidc.RawPath = path+"/.well-known/openid-configuration", ""
	var errs []error
	for _, where := range []string{oauth.String(), oidc.String()} {
		body, err := v.get(ctx, where)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var md struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := json.Unmarshal(body, &md); err != nil {
			return "", fmt.Errorf("%w: metadata at %s: %w", resourceserver.ErrUnavailable, where, err)
		}
		// RFC 8414 §3.3: metadata naming another issuer must not be used.
		if md.Issuer != v.issuer {
			return "", fmt.Errorf("%w: metadata at %s names issuer %q, not %q", resourceserver.ErrUnavailable, where, md.Issuer, v.issuer)
		}
		if err := checkURL(md.JWKSURI); err != nil {
			return "", fmt.Errorf("%w: metadata at %s: jwks_uri: %w", resourceserver.ErrUnavailable, where, err)
		}
		return md.JWKSURI, nil
	}
	return "", errors.Join(errs...)
}

// get fetches a JSON document; every failure matches ErrUnavailable.
func (v *Verifier) get(ctx context.Context, where string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, where, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", resourceserver.ErrUnavailable, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: fetching %s: %w", resourceserver.ErrUnavailable, where, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: fetching %s: status %d", resourceserver.ErrUnavailable, where, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading %s: %w", resourceserver.ErrUnavailable, where, err)
	}
	if len(body) > maxDocument {
		return nil, fmt.Errorf("%w: %s exceeds %d bytes", resourceserver.ErrUnavailable, where, maxDocument)
	}
	return body, nil
}
