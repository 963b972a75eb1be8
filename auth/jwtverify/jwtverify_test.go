package jwtverify_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/auth/authtest"
	"github.com/parley-mcp/parley/auth/jwtverify"
	"github.com/parley-mcp/parley/auth/resourceserver"
)

const resource = "https://mcp.example.com/mcp"

// clock is a settable test clock.
type clock struct{ t atomic.Int64 }

func newClock() *clock {
	c := new(clock)
	c.set(time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC))
	return c
}
func (c *clock) now() time.Time      { return time.Unix(0, c.t.Load()) }
func (c *clock) set(t time.Time)     { c.t.Store(t.UnixNano()) }
func (c *clock) add(d time.Duration) { c.t.Add(int64(d)) }

// countingAS wraps an authtest server and counts the fetches of its key
// set.
type countingAS struct {
	*authtest.Server
	jwksFetches atomic.Int32
	jwks        *httptest.Server
	hold        atomic.Pointer[gate] // when set, fetches wait at it
}

// gate holds key-set fetches up until the test opens it.
type gate struct {
	entered chan struct{} // a fetch has arrived and waits
	release chan struct{}
	once    sync.Once
}

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

// holdFetches makes every later fetch of the key set wait until the
// returned gate is opened (at the latest when the test ends).
func (as *countingAS) holdFetches(t *testing.T) *gate {
	g := &gate{entered: make(chan struct{}, 16), release: make(chan struct{})}
	as.hold.Store(g)
	t.Cleanup(g.open) // before the server closes: it waits for its handlers
	return g
}

func newAS(t *testing.T, clk *clock) *countingAS {
	t.Helper()
	as := &countingAS{Server: authtest.NewServer(&authtest.Options{Now: clk.now})}
	t.Cleanup(as.Close)
	// A proxy in front of the key set, to count fetches.
	as.jwks = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		as.jwksFetches.Add(1)
		if g := as.hold.Load(); g != nil {
			select {
			case g.entered <- struct{}{}:
			default:
			}
			select {
			case <-g.release:
			case <-r.Context().Done():
				return
			}
		}
		resp, err := http.Get(as.JWKSURL())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(as.jwks.Close)
	return as
}

func newVerifier(t *testing.T, as *countingAS, clk *clock, mod func(*jwtverify.Options)) *jwtverify.Verifier {
	t.Helper()
	o := jwtverify.Options{Issuer: as.Issuer(), Audience: resource, JWKSURL: as.jwks.URL, Now: clk.now}
	if mod != nil {
		mod(&o)
	}
	v, err := jwtverify.New(&o)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func grant(mod func(*authtest.Grant)) authtest.Grant {
	g := authtest.Grant{Subject: "alice", ClientID: "app", Resource: resource, Scopes: []string{"mcp:read", "mcp:write"}, TTL: time.Hour}
	if mod != nil {
		mod(&g)
	}
	return g
}

func wantInvalid(t *testing.T, err error, sub string) {
	t.Helper()
	if !errors.Is(err, resourceserver.ErrInvalidToken) {
		t.Fatalf("err = %v, want ErrInvalidToken", err)
	}
	if !strings.Contains(err.Error(), sub) {
		t.Errorf("err = %v, want it to mention %q", err, sub)
	}
}

func TestVerifyGood(t *testing.T) {
	clk := newClock()
	as := newAS(t, clk)
	v := newVerifier(t, as, clk, nil)
	info, err := v.Verify(context.Background(), as.Issue(grant(nil)))
	if err != nil {
		t.Fatal(err)
	}
	if info.Subject != "alice" || info.ClientID != "app" || info.Issuer != as.Issuer() ||
		!slices.Equal(info.Scopes, []string{"mcp:read", "mcp:write"}) || !info.Expiry.Equal(clk.now().Add(time.Hour)) {
		t.Errorf("info = %+v", info)
	}
}

// Expiry: good strictly before exp+leeway, refused at it (RFC 7519: "on or
// after"), and nbf symmetric.
func TestVerifyExpiryBoundary(t *testing.T) {
	clk := newClock()
	as := newAS(t, clk)
	v := newVerifier(t, as, clk, func(o *jwtverify.Options) { o.Leeway = 10 * time.Second })
	start := clk.now()
	tok := as.Issue(grant(func(g *authtest.Grant) { g.TTL = time.Minute }))
	exp := start.Add(time.Minute)

	clk.set(exp.Add(10*time.Second - time.Millisecond))
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("within the leeway: %v", err)
	}
	clk.set(exp.Add(10 * time.Second))
	_, err := v.Verify(context.Background(), tok)
	wantInvalid(t, err, "expired")

	clk.set(start)
	nbf := as.Issue(grant(func(g *authtest.Grant) { g.Claims = map[string]any{"nbf": start.Add(time.Minute).Unix()} }))
	clk.set(start.Add(50*time.Second - time.Millisecond))
	_, err = v.Verify(context.Background(), nbf)
	wantInvalid(t, err, "not valid before")
	clk.set(start.Add(50 * time.Second))
	if _, err := v.Verify(context.Background(), nbf); err != nil {
		t.Fatalf("nbf within the leeway: %v", err)
	}

	// No exp at all is refused: an access token must end.
	clk.set(start)
	_, err = v.Verify(context.Background(), as.Issue(grant(func(g *authtest.Grant) { g.Claims = map[string]any{"exp": nil} })))
	wantInvalid(t, err, "no exp")
}

func TestVerifyRefusesClaims(t *testing.T) {
	clk := newClock()
	as := newAS(t, clk)
	v := newVerifier(t, as, clk, nil)
	for _, tc := range []struct {
		name string
		mod  func(*authtest.Grant)
		want string
	}{
		{"wrong audience", func(g *authtest.Grant) { g.Resource = "https://other.example.com/mcp" }, "audience"},
		{"no audience", func(g *authtest.Grant) { g.Resource = "" }, "audience"},
		{"audience prefix", func(g *authtest.Grant) { g.Resource = resource + "/sub" }, "audience"},
		{"wrong issuer", func(g *authtest.Grant) { g.Claims = map[string]any{"iss": "https://evil.example"} }, "issued by"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.Verify(context.Background(), as.Issue(grant(tc.mod)))
			wantInvalid(t, err, tc.want)
		})
	}
	// An audience array that includes the resource is fine.
	tok := as.Issue(grant(func(g *authtest.Grant) { g.Claims = map[string]any{"aud": []string{"https://other.example", resource}} }))
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Errorf("aud array: %v", err)
	}
}

// signWith signs claims with key under alg and kid, outside authtest.
func signWith(t *testing.T, alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func goodClaims(as *countingAS, clk *clock) map[string]any {
	return map[string]any{"iss": as.Issuer(), "aud": resource, "sub": "mallory", "exp": clk.now().Add(time.Hour).Unix()}
}

func TestVerifyRefusesAlgorithms(t *testing.T) {
	clk := newClock()
	as := newAS(t, clk)
	v := newVerifier(t, as, clk, nil)
	ctx := context.Background()

	// HS256, keyed with bytes an attacker chooses.
	hs := signWith(t, jose.HS256, []byte("0123456789abcdef0123456789abcdef"), "key-1", goodClaims(as, clk))
	_, err := v.Verify(ctx, hs)
	wantInvalid(t, err, "")

	// alg "none": a header and payload with an empty signature.
	enc := base64.RawURLEncoding.EncodeToString
	payload, _ := json.Marshal(goodClaims(as, clk))
	none := enc([]byte(`{"alg":"none","kid":"key-1"}`)) + "." + enc(payload) + "."
	_, err = v.Verify(ctx, none)
	wantInvalid(t, err, "")

	// ES256 with a key the issuer does not have, under the issuer's kid.
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	forged := signWith(t, jose.ES256, k, "key-1", goodClaims(as, clk))
	_, err = v.Verify(ctx, forged)
	wantInvalid(t, err, "")

	// An RS256-only verifier refuses the issuer's own ES256 tokens.
	es := authtest.NewServer(&authtest.Options{Algorithm: "ES256", Now: clk.now})
	defer es.Close()
	rsOnly, err := jwtverify.New(&jwtverify.Options{Issuer: es.Issuer(), Audience: resource, Now: clk.now, Algorithms: []string{"RS256"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = rsOnly.Verify(ctx, es.Issue(grant(nil)))
	wantInvalid(t, err, "")
	// And the default (RS256, ES256) takes them, discovering the key set
	// from the issuer's metadata.
	both, _ := jwtverify.New(&jwtverify.Options{Issuer: es.Issuer(), Audience: resource, Now: clk.now})
	if _, err := both.Verify(ctx, es.Issue(grant(nil))); err != nil {
		t.Errorf("ES256 through discovery: %v", err)
	}

	for _, bad := range [][]string{{"HS256"}, {"none"}, {"RS256", "HS512"}} {
		if _, err := jwtverify.New(&jwtverify.Options{Issuer: as.Issuer(), Audience: resource, Algorithms: bad}); err == nil {
			t.Errorf("New accepted algorithms %v", bad)
		}
	}
}

// A token signed with a key the verifier has not seen makes it fetch the
// key set again, at most once per RefreshInterval.
func TestVerifyUnknownKidRefresh(t *testing.T) {
	clk := newClock()
	as := newAS(t, clk)
	v := newVerifier(t, as, clk, func(o *jwtverify.Options) { o.RefreshInterval = time.Minute })
	ctx := context.Background()
	if _, err := v.Verify(ctx, as.Issue(grant(nil))); err != nil {
		t.Fatal(err)
	}
	if n := as.jwksFetches.Load(); n != 1 {
		t.Fatalf("%d fetches after the first token", n)
	}

	// Made-up kids within the interval: no fetch.
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for i := range 5 {
		_, err := v.Verify(ctx, signWith(t, jose.ES256, k, "made-up-"+string(rune('a'+i)), goodClaims(as, clk)))
		wantInvalid(t, err, "kid")
	}
	if n := as.jwksFetches.Load(); n != 1 {
		t.Fatalf("made-up kids caused %d fetches", n-1)
	}

	// The issuer rotates; the new kid is unknown and the interval has not
	// passed, so it is refused without a fetch...
	as.RotateKey()
	rotated := as.Issue(grant(nil))
	_, err := v.Verify(ctx, rotated)
	wantInvalid(t, err, "kid")
	// ...and accepted once it has, after one fetch.
	clk.add(time.Minute)
	if _, err := v.Verify(ctx, rotated); err != nil {
		t.Fatalf("after the refresh: %v", err)
	}
	if n := as.jwksFetches.Load(); n != 2 {
		t.Errorf("%d fetches, want 2", n)
	}
	// The old key still works (it is still in the set).
	if _, err := v.Verify(ctx, as.Issue(grant(nil))); err != nil {
		t.Fatal(err)
	}

	// Past MaxKeyAge the set is fetched again even for known kids.
	clk.add(jwtverify.DefaultMaxKeyAge)
	if _, err := v.Verify(ctx, as.Issue(grant(func(g *authtest.Grant) { g.TTL = 2 * time.Hour }))); err != nil {
		t.Fatal(err)
	}
	if n := as.jwksFetches.Load(); n != 3 {
		t.Errorf("%d fetches, want 3", n)
	}
}

// A key set that cannot be fetched is the verifier's problem, not the
// token's: ErrUnavailable, and no fetch storm.
func TestVerifyUnavailable(t *testing.T) {
	clk := newClock()
	as := newAS(t, clk)
	tok := as.Issue(grant(nil))
	var fetches atomic.Int32
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		http.Error(w, "down", http.StatusBadGateway)
	}))
	defer down.Close()
	v, err := jwtverify.New(&jwtverify.Options{Issuer: as.Issuer(), Audience: resource, JWKSURL: down.URL, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_, err = v.Verify(context.Background(), tok)
		if !errors.Is(err, resourceserver.ErrUnavailable) || errors.Is(err, resourceserver.ErrInvalidToken) {
			t.Fatalf("err = %v, want ErrUnavailable only", err)
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("%d fetches of a failing key set within the refresh interval, want 1", n)
	}

	// Discovery that finds metadata of another issuer is refused.
	liar := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"issuer":"https://someone.else","jwks_uri":"` + as.JWKSURL() + `"}`))
	}))
	defer liar.Close()
	v, _ = jwtverify.New(&jwtverify.Options{Issuer: liar.URL, Audience: resource, Now: clk.now})
	_, err = v.Verify(context.Background(), as.Issue(grant(func(g *authtest.Grant) { g.Claims = map[string]any{"iss": liar.URL} })))
	if !errors.Is(err, resourceserver.ErrUnavailable) || !strings.Contains(err.Error(), "names issuer") {
		t.Errorf("err = %v", err)
	}
}

func TestVerifyMalformed(t *testing.T) {
	clk := newClock()
	as := newAS(t, clk)
	v := newVerifier(t, as, clk, nil)
	for _, tok := range []string{"", "abc", "a.b.c", strings.Repeat("x.", 3), as.Issue(grant(nil)) + "x"} {
		_, err := v.Verify(context.Background(), tok)
		wantInvalid(t, err, "")
	}
	// scp as an array is read as scopes.
	info, err := v.Verify(context.Background(), as.Issue(grant(func(g *authtest.Grant) {
		g.Scopes = nil
		g.Claims = map[string]any{"scp": []string{"a", "b"}}
	})))
	if err != nil || !slices.Equal(info.Scopes, []string{"a", "b"}) {
		t.Errorf("scp: %+v %v", info, err)
	}
}

func TestNewValidates(t *testing.T) {
	for _, o := range []*jwtverify.Options{
		nil,
		{Audience: resource, Issuer: ""},
		{Issuer: "https://as.example"},
		{Issuer: "not a url", Audience: resource},
		{Issuer: "https://as.example", Audience: resource, JWKSURL: "ftp://x"},
	} {
		if _, err := jwtverify.New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

// The request that starts a key-set fetch may go away; the fetch serves
// everyone, so it goes on, and nobody is locked out for RefreshInterval.
func TestVerifyFetchOutlivesItsRequest(t *testing.T) {
	clk := newClock()
	as := newAS(t, clk)
	v := newVerifier(t, as, clk, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tok := as.Issue(grant(nil))
	v.Verify(ctx, tok)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("after a cancelled first request: %v", err)
	}
	if n := as.jwksFetches.Load(); n != 1 {
		t.Errorf("%d fetches, want 1", n)
	}
}

// result is what one Verify returned.
type result struct {
	info *auth.Info
	err  error
}

func verifyAsync(ctx context.Context, v *jwtverify.Verifier, token string) <-chan result {
	ch := make(chan result, 1)
	go func() {
		info, err := v.Verify(ctx, token)
		ch <- result{info, err}
	}()
	return ch
}

// await returns the result of a Verify, failing the test when ctx ends
// first.
func await(t *testing.T, ctx context.Context, ch <-chan result, what string) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		t.Fatalf("%s: still waiting when the test's deadline passed", what)
		return result{}
	}
}

// fetchUnderWay is a verifier with a cached key set, and a fetch of a newer
// set that waits at a gate: started by a token signed with the issuer's
// new key.
type fetchUnderWay struct {
	as      *countingAS
	v       *jwtverify.Verifier
	gate    *gate
	ctx     context.Context // the test's deadline
	known   string          // a token signed with the cached key
	rotated string          // a token signed with the new key
	first   <-chan result   // the Verify of rotated that fetches
}

func startFetchUnderWay(t *testing.T) *fetchUnderWay {
	t.Helper()
	clk := newClock()
	f := &fetchUnderWay{as: newAS(t, clk)}
	f.v = newVerifier(t, f.as, clk, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	f.ctx = ctx
	f.known = f.as.Issue(grant(nil))
	if _, err := f.v.Verify(ctx, f.known); err != nil {
		t.Fatal(err)
	}
	clk.add(jwtverify.DefaultRefreshInterval) // an unknown kid may fetch again
	f.as.RotateKey()
	f.rotated = f.as.Issue(grant(nil))
	f.gate = f.as.holdFetches(t)
	f.first = verifyAsync(ctx, f.v, f.rotated)
	select {
	case <-f.gate.entered:
	case r := <-f.first:
		t.Fatalf("a token with an unknown kid did not wait for a fetch: %v", r.err)
	case <-ctx.Done():
		t.Fatal("a token with an unknown kid caused no fetch")
	}
	return f
}

// finish opens the gate and checks that the token that fetched is good
// and that there were two fetches in all.
func (f *fetchUnderWay) finish(t *testing.T) {
	t.Helper()
	f.gate.open()
	if r := await(t, f.ctx, f.first, "the token that fetched"); r.err != nil {
		t.Errorf("the token that fetched: %v", r.err)
	}
	if n := f.as.jwksFetches.Load(); n != 2 {
		t.Errorf("%d fetches, want 2", n)
	}
}

// A token with an unknown kid makes the verifier fetch the key set; tokens
// whose key is cached go on meanwhile, however long the fetch takes.
func TestVerifyCachedKeyDoesNotWaitForFetch(t *testing.T) {
	f := startFetchUnderWay(t)
	r := await(t, f.ctx, verifyAsync(f.ctx, f.v, f.known), "a token with a cached key during another token's key-set fetch")
	if r.err != nil {
		t.Fatalf("a token with a cached key during a fetch: %v", r.err)
	}
	f.finish(t)
}

// watchedCtx tells when Verify starts waiting on it: a request waiting for
// a fetch selects on Done, and nothing else in Verify reads it.
type watchedCtx struct {
	context.Context
	waiting chan struct{}
	once    sync.Once
}

func watch(ctx context.Context) *watchedCtx {
	return &watchedCtx{Context: ctx, waiting: make(chan struct{})}
}

func (c *watchedCtx) Done() <-chan struct{} {
	c.once.Do(func() { close(c.waiting) })
	return c.Context.Done()
}

// Tokens with an unknown kid that arrive while a fetch is under way wait
// for that fetch, not for one of their own (the rate limit would refuse
// it), and are good once it brings their key.
func TestVerifyUnknownKidsShareOneFetch(t *testing.T) {
	f := startFetchUnderWay(t)
	wctx := watch(f.ctx)
	second := verifyAsync(wctx, f.v, f.rotated)
	select {
	case <-wctx.waiting:
	case r := <-second:
		t.Fatalf("a second token with the new kid did not wait for the fetch under way: %v", r.err)
	case <-f.ctx.Done():
		t.Fatal("a second token with the new kid never waited for the fetch under way")
	}
	f.finish(t)
	if r := await(t, f.ctx, second, "the second token"); r.err != nil {
		t.Errorf("the second token, after the fetch: %v", r.err)
	}
}

// A request waiting for a fetch stops waiting when its context ends; the
// fetch goes on for the others.
func TestVerifyWaitEndsWithContext(t *testing.T) {
	f := startFetchUnderWay(t)
	ctx, cancel := context.WithCancel(f.ctx)
	wctx := watch(ctx)
	waiter := verifyAsync(wctx, f.v, f.rotated)
	select {
	case <-wctx.waiting:
	case r := <-waiter:
		t.Fatalf("did not wait for the fetch under way: %v", r.err)
	case <-f.ctx.Done():
		t.Fatal("never waited for the fetch under way")
	}
	cancel()
	r := await(t, f.ctx, waiter, "a request whose context was cancelled while it waited for a fetch")
	if !errors.Is(r.err, resourceserver.ErrUnavailable) || !errors.Is(r.err, context.Canceled) {
		t.Errorf("err = %v, want ErrUnavailable and context.Canceled", r.err)
	}
	f.finish(t)
}

// keyIssuer is an issuer with one ES256 key that signs whatever header and
// claims a test asks for.
type keyIssuer struct {
	key  *ecdsa.PrivateKey
	jwks *httptest.Server
}

func newKeyIssuer(t *testing.T) *keyIssuer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	set, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	ki := &keyIssuer{key: k}
	ki.jwks = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(set)
	}))
	t.Cleanup(ki.jwks.Close)
	return ki
}

func (ki *keyIssuer) issuer() string { return ki.jwks.URL }

// sign signs claims with typ as the typ header; nil means none.
func (ki *keyIssuer) sign(t *testing.T, typ any, claims map[string]any) string {
	t.Helper()
	opts := new(jose.SignerOptions)
	if typ != nil {
		opts = opts.WithHeader(jose.HeaderType, typ)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: ki.key, KeyID: "k1"}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (ki *keyIssuer) verifier(t *testing.T, clk *clock, strict bool) *jwtverify.Verifier {
	t.Helper()
	v, err := jwtverify.New(&jwtverify.Options{Issuer: ki.issuer(), Audience: resource, JWKSURL: ki.jwks.URL, Now: clk.now, RequireAccessTokenType: strict})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The typ header: an access token's type is accepted, another kind of
// token's is refused, and a token without a type of its own is accepted
// unless its claims mark it as an ID token or a security event token, or
// the verifier requires the type.
func TestVerifyType(t *testing.T) {
	clk := newClock()
	ki := newKeyIssuer(t)
	lenient := ki.verifier(t, clk, false)
	strict := ki.verifier(t, clk, true)
	with := func(extra map[string]any) map[string]any {
		c := map[string]any{"iss": ki.issuer(), "aud": resource, "sub": "alice", "client_id": "app",
			"iat": clk.now().Unix(), "exp": clk.now().Add(time.Hour).Unix()}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	access := with(nil)
	// An ID token of the same issuer for a client whose id is this
	// resource's identifier: the audience matches.
	idToken := with(map[string]any{"nonce": "n-0S6_WzA2Mj", "at_hash": "77QmUPtjPfzWtF2AnpK9RQ", "azp": resource})
	logout := with(map[string]any{"jti": "bWJq", "sid": "08a5019c",
		"events": map[string]any{"http://schemas.openid.net/event/backchannel-logout": map[string]any{}}})
	for _, tc := range []struct {
		name         string
		typ          any // nil: no typ header
		claims       map[string]any
		lenient      string // "": accepted; else a part of the refusal
		strictRefuse bool
	}{
		{"at+jwt", "at+jwt", access, "", false},
		{"application/at+jwt", "application/at+jwt", access, "", false},
		{"media type case-insensitively", "Application/AT+JWT", access, "", false},
		{"at+jwt says so, whatever the claims", "at+jwt", idToken, "", false},
		{"logout token", "logout+jwt", logout, `typ "logout+jwt"`, true},
		{"logout token as a media type", "application/logout+jwt", logout, `typ "application/logout+jwt"`, true},
		{"security event token", "secevent+jwt", access, `typ "secevent+jwt"`, true},
		{"generic JOSE", "JOSE", access, `typ "JOSE"`, true},
		{"a type that only ends like ours", "x-at+jwt", access, `typ "x-at+jwt"`, true},
		{"typ not a string", 1, access, "typ is not a string", true},
		{"empty typ", "", access, `typ ""`, true},
		{"no typ", nil, access, "", true},
		{"JWT", "JWT", access, "", true},
		{"application/jwt", "application/jwt", access, "", true},
		{"ID token with JWT", "JWT", idToken, "nonce", true},
		{"ID token without typ", nil, idToken, "nonce", true},
		{"nonce only", nil, with(map[string]any{"nonce": "n"}), "nonce", true},
		{"at_hash only", "JWT", with(map[string]any{"at_hash": "x"}), "at_hash", true},
		{"c_hash only", nil, with(map[string]any{"c_hash": "x"}), "c_hash", true},
		{"s_hash only", nil, with(map[string]any{"s_hash": "x"}), "s_hash", true},
		{"logout token without typ", nil, logout, "events", true},
		{"logout token with JWT", "JWT", logout, "events", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := ki.sign(t, tc.typ, tc.claims)
			_, err := lenient.Verify(context.Background(), tok)
			if tc.lenient == "" {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
			} else {
				wantInvalid(t, err, tc.lenient)
			}
			_, err = strict.Verify(context.Background(), tok)
			if tc.strictRefuse {
				wantInvalid(t, err, "typ")
			} else if err != nil {
				t.Errorf("RequireAccessTokenType: refused: %v", err)
			}
		})
	}
}

// A DPoP-bound token (RFC 9449 section 6.1) says which key: cnf.jkt goes
// into Info.KeyThumbprint; a cnf that cannot be read refuses the token
// rather than let it pass as a bearer token.
func TestVerifyKeyBinding(t *testing.T) {
	clk := newClock()
	as := newAS(t, clk)
	v := newVerifier(t, as, clk, nil)
	jkt := base64.RawURLEncoding.EncodeToString(make([]byte, 32))
	info, err := v.Verify(context.Background(), as.Issue(grant(func(g *authtest.Grant) { g.KeyThumbprint = jkt })))
	if err != nil || info.KeyThumbprint != jkt {
		t.Fatalf("a bound token: %+v, %v", info, err)
	}
	if info, err := v.Verify(context.Background(), as.Issue(grant(nil))); err != nil || info.KeyThumbprint != "" {
		t.Fatalf("a bearer token: %+v, %v", info, err)
	}
	for name, cnf := range map[string]any{
		"cnf a string":     "x",
		"jkt a number":     map[string]any{"jkt": 7},
		"jkt not 32 bytes": map[string]any{"jkt": "abc"},
	} {
		_, err := v.Verify(context.Background(), as.Issue(grant(func(g *authtest.Grant) { g.Claims = map[string]any{"cnf": cnf} })))
		if !errors.Is(err, resourceserver.ErrInvalidToken) || !strings.Contains(err.Error(), "cnf") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
