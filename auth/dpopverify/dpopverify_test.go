package dpopverify

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/parley-mcp/parley/auth/resourceserver"
)

// The examples of RFC 9449: the proof of figure 13, presented with the
// access token of figure 6 to https://resource.example.org/protectedresource
// at its iat, and the proof of figure 2, for the token endpoint.
const (
	rfcProof      = "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6IkVDIiwieCI6Imw4dEZyaHgtMzR0VjNoUklDUkRZOXpDa0RscEJoRjQyVVFVZldWQVdCRnMiLCJ5IjoiOVZFNGpmX09rX282NHpiVFRsY3VOSmFqSG10NnY5VERWclUwQ2R2R1JEQSIsImNydiI6IlAtMjU2In19.eyJqdGkiOiJlMWozVl9iS2ljOC1MQUVCIiwiaHRtIjoiR0VUIiwiaHR1IjoiaHR0cHM6Ly9yZXNvdXJjZS5leGFtcGxlLm9yZy9wcm90ZWN0ZWRyZXNvdXJjZSIsImlhdCI6MTU2MjI2MjYxOCwiYXRoIjoiZlVIeU8ycjJaM0RaNTNFc05yV0JiMHhXWG9hTnk1OUlpS0NBcWtzbVFFbyJ9.2oW9RP35yRqzhrtNP86L-Ey71EOptxRimPPToA1plemAgR6pxHF8y6-yqyVnmcw6Fy1dqd-jfxSYoMxhAJpLjA"
	rfcTokenProof = "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6IkVDIiwieCI6Imw4dEZyaHgtMzR0VjNoUklDUkRZOXpDa0RscEJoRjQyVVFVZldWQVdCRnMiLCJ5IjoiOVZFNGpmX09rX282NHpiVFRsY3VOSmFqSG10NnY5VERWclUwQ2R2R1JEQSIsImNydiI6IlAtMjU2In19.eyJqdGkiOiItQndDM0VTYzZhY2MybFRjIiwiaHRtIjoiUE9TVCIsImh0dSI6Imh0dHBzOi8vc2VydmVyLmV4YW1wbGUuY29tL3Rva2VuIiwiaWF0IjoxNTYyMjYyNjE2fQ.2-GxA6T8lP4vfrg8v-FdWP0A0zdrj8igiMLvqRMUvwnQg4PtFLbdLXiOSsX0x7NVY-FNyJK70nfbV37xRZT3Lg"
	rfcToken      = "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"
	rfcJKT        = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I" // figure 9's cnf.jkt
	rfcURL        = "https://resource.example.org/protectedresource"
	rfcIAT        = 1562262618
)

// clock is a settable clock.
type clock struct{ ns atomic.Int64 }

func newClock(t time.Time) *clock { c := &clock{}; c.ns.Store(t.UnixNano()); return c }
func (c *clock) now() time.Time   { return time.Unix(0, c.ns.Load()) }
func (c *clock) set(t time.Time)  { c.ns.Store(t.UnixNano()) }

// A proof of RFC 9449 is accepted for the request it was made for, once.
func TestRFCExample(t *testing.T) {
	clk := newClock(time.Unix(rfcIAT, 0))
	v, err := New(&Options{Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	req := &resourceserver.DPoPProof{Proof: rfcProof, Method: "GET", URL: rfcURL, AccessToken: rfcToken, KeyThumbprint: rfcJKT}
	if next, err := v.VerifyProof(context.Background(), req); err != nil || next != "" {
		t.Fatalf("the RFC's proof: %q, %v", next, err)
	}
	if _, err := v.VerifyProof(context.Background(), req); !errors.Is(err, resourceserver.ErrInvalidDPoPProof) || !strings.Contains(err.Error(), "used before") {
		t.Fatalf("the RFC's proof again: %v, want a replay", err)
	}
	// Figure 2 is a proof for a token request: at a resource it lacks
	// ath, and names another URL.
	clk.set(time.Unix(1562262616, 0))
	for _, url := range []string{"https://server.example.com/token", rfcURL} {
		_, err := v.VerifyProof(context.Background(), &resourceserver.DPoPProof{Proof: rfcTokenProof, Method: "POST", URL: url, AccessToken: rfcToken, KeyThumbprint: rfcJKT})
		if !errors.Is(err, resourceserver.ErrInvalidDPoPProof) {
			t.Errorf("figure 2 at %s: %v", url, err)
		}
	}
	// The thumbprint of the examples' key is figure 9's jkt.
	p, err := parseProof(rfcProof, v.algs, v.maxSize)
	if err != nil || p.jkt != rfcJKT {
		t.Fatalf("thumbprint %q, %v; want %s", p.jkt, err, rfcJKT)
	}
}

// prover makes proofs for the tests, with every part settable.
type prover struct {
	t   testing.TB
	key crypto.Signer
	alg jose.SignatureAlgorithm
	jkt string
}

func newProver(t testing.TB) *prover {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	return proverFor(t, k, jose.ES256)
}

func proverFor(t testing.TB, key crypto.Signer, alg jose.SignatureAlgorithm) *prover {
	t.Helper()
	tp, err := (&jose.JSONWebKey{Key: key.Public()}).Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return &prover{t: t, key: key, alg: alg, jkt: base64.RawURLEncoding.EncodeToString(tp)}
}

const (
	token  = "the-access-token"
	target = "https://mcp.example.com/mcp"
)

// claims returns the claims of a good proof for a POST to target with
// token at now; a test changes them.
func (p *prover) claims(now time.Time) map[string]any {
	return map[string]any{"jti": rand.Text(), "htm": "POST", "htu": target, "iat": now.Unix(), "ath": tokenHash(token)}
}

// sign signs claims (any JSON value) with the prover's key, with typ and
// the public jwk in the header unless told otherwise.
func (p *prover) sign(claims any, opts ...func(*jose.SignerOptions)) string {
	p.t.Helper()
	o := (&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt")
	for _, f := range opts {
		f(o)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: p.alg, Key: p.key}, o)
	if err != nil {
		p.t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := s.Sign(payload)
	if err != nil {
		p.t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		p.t.Fatal(err)
	}
	return out
}

func (p *prover) request(proof string) *resourceserver.DPoPProof {
	return &resourceserver.DPoPProof{Proof: proof, Method: "POST", URL: target, AccessToken: token, KeyThumbprint: p.jkt, Caller: "c"}
}

var t0 = time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)

func verifier(t *testing.T, o Options) (*Verifier, *clock) {
	t.Helper()
	clk := newClock(t0)
	o.Now = clk.now
	v, err := New(&o)
	if err != nil {
		t.Fatal(err)
	}
	return v, clk
}

// wantInvalid checks err refuses the proof, with a reason containing why.
func wantInvalid(t *testing.T, name string, err error, why string) {
	t.Helper()
	if !errors.Is(err, resourceserver.ErrInvalidDPoPProof) || !strings.Contains(err.Error(), why) {
		t.Errorf("%s: err = %v, want an invalid proof (%q)", name, err, why)
	}
}

// Each claim at its edge: iat exactly the window old, or ahead, is
// accepted, and a second more is not; htm and htu only the request's
// (after normalization); ath only the token's; the key only the one the
// token is bound to.
func TestClaimEdges(t *testing.T) {
	v, _ := verifier(t, Options{Window: time.Minute})
	p := newProver(t)
	ok := func(name string, c map[string]any, url string) {
		t.Helper()
		r := p.request(p.sign(c))
		if url != "" {
			r.URL = url
		}
		if _, err := v.VerifyProof(context.Background(), r); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	refused := func(name string, c map[string]any, why string) {
		t.Helper()
		_, err := v.VerifyProof(context.Background(), p.request(p.sign(c)))
		wantInvalid(t, name, err, why)
	}
	with := func(k string, val any) map[string]any {
		c := p.claims(t0)
		c[k] = val
		return c
	}
	ok("a good proof", p.claims(t0), "")
	ok("iat exactly the window old", with("iat", t0.Add(-time.Minute).Unix()), "")
	refused("iat a second older than the window", with("iat", t0.Add(-time.Minute-time.Second).Unix()), "more than the window")
	ok("iat exactly the window ahead", with("iat", t0.Add(time.Minute).Unix()), "")
	refused("iat a second further ahead", with("iat", t0.Add(time.Minute+time.Second).Unix()), "in the future")
	ok("iat with a fraction", with("iat", float64(t0.Unix())+0.25), "")
	// Further ahead than a time.Duration reaches (292 years), where
	// now.Sub(iat) saturates and negating it overflows: a proof made for
	// the year 2500 must not pass as a current one (and be remembered
	// for ever).
	refused("iat centuries ahead", with("iat", t0.AddDate(500, 0, 0).Unix()), "in the future")
	refused("iat at the top of its range", with("iat", maxIAT), "in the future")
	refused("another method", with("htm", "GET"), "htm")
	refused("the method in lower case", with("htm", "post"), "htm")
	refused("another path", with("htu", "https://mcp.example.com/other"), "htu")
	refused("a trailing slash", with("htu", target+"/"), "htu")
	refused("another host", with("htu", "https://mcp.example.org/mcp"), "htu")
	refused("another scheme", with("htu", "http://mcp.example.com/mcp"), "htu")
	refused("another port", with("htu", "https://mcp.example.com:8443/mcp"), "htu")
	refused("userinfo", with("htu", "https://user@mcp.example.com/mcp"), "htu")
	refused("not a URL", with("htu", "mcp"), "htu")
	ok("case, default port, dot segments, escapes", with("htu", "HTTPS://MCP.Example.COM:443/a/../%6Dcp"), "")
	ok("a query and fragment are ignored", with("htu", target+"?x=1#f"), "")
	ok("a request URL with a query", p.claims(t0), target+"?page=2")
	refused("no ath", func() map[string]any { c := p.claims(t0); delete(c, "ath"); return c }(), "no ath")
	refused("another token's ath", with("ath", tokenHash("another-token")), "ath is not the hash")

	other := newProver(t)
	_, err := v.VerifyProof(context.Background(), p.request(other.sign(other.claims(t0))))
	wantInvalid(t, "a key that does not match cnf.jkt", err, "not the one the token is bound to")

	proof := p.sign(p.claims(t0))
	if _, err := v.VerifyProof(context.Background(), p.request(proof)); err != nil {
		t.Fatal(err)
	}
	_, err = v.VerifyProof(context.Background(), p.request(proof))
	wantInvalid(t, "a replayed proof", err, "used before")
	// The same jti with another key, or for another URL, is another
	// proof: clients do not share a jti space.
	c := other.claims(t0)
	c["jti"] = "shared"
	r := other.request(other.sign(c))
	if _, err := v.VerifyProof(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	c2 := p.claims(t0)
	c2["jti"] = "shared"
	if _, err := v.VerifyProof(context.Background(), p.request(p.sign(c2))); err != nil {
		t.Errorf("another key's jti refused this one's: %v", err)
	}
}

// A proof is remembered for as long as it could be accepted: replayed at
// the last instant of its window, it is still refused.
func TestReplayAtTheEndOfTheWindow(t *testing.T) {
	v, clk := verifier(t, Options{Window: time.Minute})
	p := newProver(t)
	proof := p.sign(p.claims(t0))
	if _, err := v.VerifyProof(context.Background(), p.request(proof)); err != nil {
		t.Fatal(err)
	}
	clk.set(t0.Add(time.Minute))
	_, err := v.VerifyProof(context.Background(), p.request(proof))
	wantInvalid(t, "a replay at the end of the window", err, "used before")
	clk.set(t0.Add(time.Minute + time.Second))
	_, err = v.VerifyProof(context.Background(), p.request(proof))
	wantInvalid(t, "after the window", err, "more than the window")
}

// What cannot be a proof is refused before anything costs a store write:
// the size limit exactly, the compact form, typ, alg (never none or HMAC,
// only those configured), the jwk (present, public, RSA large enough), the
// signature, and the claims with their types.
func TestMalformedProofs(t *testing.T) {
	v, _ := verifier(t, Options{MaxProofSize: 1024, Algorithms: []string{"ES256", "RS256"}})
	p := newProver(t)
	refused := func(name, proof, why string) {
		t.Helper()
		_, err := v.VerifyProof(context.Background(), p.request(proof))
		wantInvalid(t, name, err, why)
	}
	// The limit, exactly: a proof padded to 1024 bytes is read, one of
	// 1025 is not.
	pad := func(n int) string {
		c := p.claims(t0)
		c["pad"] = ""
		s := p.sign(c)
		for len(s) < n {
			c["pad"] = c["pad"].(string) + "x"
			s = p.sign(c)
		}
		return s
	}
	atLimit := pad(1024)
	for len(atLimit) != 1024 {
		atLimit = pad(1024) // signatures vary in length by a character or so
	}
	if _, err := v.VerifyProof(context.Background(), p.request(atLimit)); err != nil {
		t.Errorf("a proof of exactly MaxProofSize: %v", err)
	}
	refused("a byte over the limit", atLimit+"A", "more than the limit of 1024")

	good := p.sign(p.claims(t0))
	parts := strings.Split(good, ".")
	refused("two parts", parts[0]+"."+parts[1], "compact")
	refused("four parts", good+".x", "compact")
	refused("not base64", "!!."+parts[1]+"."+parts[2], "")
	refused("a tampered payload", parts[0]+"."+base64.RawURLEncoding.EncodeToString([]byte(`{"jti":"x"}`))+"."+parts[2], "signature")
	refused("no typ", p.sign(p.claims(t0), func(o *jose.SignerOptions) { delete(o.ExtraHeaders, jose.HeaderType) }), "typ")
	refused("typ JWT", p.sign(p.claims(t0), func(o *jose.SignerOptions) { o.WithType("JWT") }), "typ")
	refused("no jwk", p.sign(p.claims(t0), func(o *jose.SignerOptions) { o.EmbedJWK = false }), "no jwk")

	hs, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("0123456789abcdef0123456789abcdef")}, (&jose.SignerOptions{}).WithType("dpop+jwt"))
	hsig, _ := hs.Sign([]byte(`{}`))
	hsProof, _ := hsig.CompactSerialize()
	refused("HS256", hsProof, "unexpected signature algorithm")
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"typ":"dpop+jwt","alg":"none"}`)) + "." + parts[1] + "."
	refused("alg none", none, "")
	es384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	refused("an algorithm not configured (ES384)", proverFor(t, es384, jose.ES384).sign(p.claims(t0)), "unexpected signature algorithm")

	// A private key in the jwk.
	hdr := map[string]any{"typ": "dpop+jwt", "alg": "ES256", "jwk": jose.JSONWebKey{Key: p.key}}
	hb, _ := json.Marshal(hdr)
	refused("a private jwk", base64.RawURLEncoding.EncodeToString(hb)+"."+parts[1]+"."+parts[2], "")

	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err == nil { // Go may refuse keys this small
		refused("RSA of 1024 bits", proverFor(t, small, jose.RS256).sign(p.claims(t0)), "bits")
	}

	for name, c := range map[string]any{
		"no jti":            map[string]any{"htm": "POST", "htu": target, "iat": t0.Unix(), "ath": tokenHash(token)},
		"empty jti":         map[string]any{"jti": "", "htm": "POST", "htu": target, "iat": t0.Unix(), "ath": tokenHash(token)},
		"no htm":            map[string]any{"jti": "a", "htu": target, "iat": t0.Unix(), "ath": tokenHash(token)},
		"no htu":            map[string]any{"jti": "a", "htm": "POST", "iat": t0.Unix(), "ath": tokenHash(token)},
		"no iat":            map[string]any{"jti": "a", "htm": "POST", "htu": target, "ath": tokenHash(token)},
		"iat a string":      map[string]any{"jti": "a", "htm": "POST", "htu": target, "iat": "now", "ath": tokenHash(token)},
		"iat negative":      map[string]any{"jti": "a", "htm": "POST", "htu": target, "iat": -1, "ath": tokenHash(token)},
		"iat out of range":  map[string]any{"jti": "a", "htm": "POST", "htu": target, "iat": 1e300, "ath": tokenHash(token)},
		"jti a number":      map[string]any{"jti": 7, "htm": "POST", "htu": target, "iat": t0.Unix(), "ath": tokenHash(token)},
		"claims not object": []string{"a"},
	} {
		refused(name, p.sign(c), "")
	}
}

// failingStore is a ReplayStore that cannot be reached, or is full.
type failingStore struct{ err error }

func (f failingStore) Consume(context.Context, ProofID, time.Time, string) error { return f.err }

// A store that cannot record the proof refuses it as unavailable (503, not
// a reason to re-authorize): failing closed; nothing is recorded for a
// proof refused for another reason.
func TestReplayStoreFailure(t *testing.T) {
	p := newProver(t)
	for _, storeErr := range []error{errors.New("connection refused"), ErrStoreFull, ErrCallerShareFull} {
		v, _ := verifier(t, Options{Replay: failingStore{storeErr}})
		_, err := v.VerifyProof(context.Background(), p.request(p.sign(p.claims(t0))))
		if !errors.Is(err, resourceserver.ErrUnavailable) || !errors.Is(err, storeErr) {
			t.Errorf("store error %v: err = %v, want ErrUnavailable wrapping it", storeErr, err)
		}
	}
	m, _ := NewMemoryStore(nil)
	v, _ := verifier(t, Options{Replay: m})
	c := p.claims(t0)
	c["htm"] = "GET"
	v.VerifyProof(context.Background(), p.request(p.sign(c)))
	if m.Len() != 0 {
		t.Errorf("a refused proof was recorded (%d entries)", m.Len())
	}
}

// Nonces: none, a forged one, or one two periods old is answered
// use_dpop_nonce with the current one; the current one is accepted; the
// previous one too, with the current one for the next proof. Another
// instance with the same key takes them all the same.
func TestNonces(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	v, clk := verifier(t, Options{NonceKey: key, NonceLifetime: time.Minute})
	other, _ := New(&Options{NonceKey: key, NonceLifetime: time.Minute, Now: clk.now})
	p := newProver(t)
	withNonce := func(n string) *resourceserver.DPoPProof {
		c := p.claims(clk.now())
		if n != "" {
			c["nonce"] = n
		}
		return p.request(p.sign(c))
	}
	_, err := v.VerifyProof(context.Background(), withNonce(""))
	var ne *resourceserver.DPoPNonceError
	if !errors.As(err, &ne) || !errors.Is(err, resourceserver.ErrUseDPoPNonce) || ne.Nonce != v.Nonce() {
		t.Fatalf("no nonce: %v", err)
	}
	cur := ne.Nonce
	if next, err := other.VerifyProof(context.Background(), withNonce(cur)); err != nil || next != "" {
		t.Fatalf("the current nonce at another instance: %q, %v", next, err)
	}
	forged := base64.RawURLEncoding.EncodeToString(append(make([]byte, 8), make([]byte, 16)...))
	for name, n := range map[string]string{"forged": forged, "garbage": "x", "another key's": func() string {
		w, _ := New(&Options{NonceKey: []byte(strings.Repeat("z", 32)), NonceLifetime: time.Minute, Now: clk.now})
		return w.Nonce()
	}()} {
		if _, err := v.VerifyProof(context.Background(), withNonce(n)); !errors.As(err, &ne) || ne.Nonce != cur {
			t.Errorf("%s nonce: %v", name, err)
		}
	}
	clk.set(clk.now().Add(time.Minute)) // the next period: cur is the previous one
	next, err := v.VerifyProof(context.Background(), withNonce(cur))
	if err != nil || next == "" || next == cur || next != v.Nonce() {
		t.Fatalf("the previous nonce: next %q, %v", next, err)
	}
	clk.set(clk.now().Add(time.Minute)) // two periods on: cur is stale
	if _, err := v.VerifyProof(context.Background(), withNonce(cur)); !errors.As(err, &ne) || ne.Nonce != v.Nonce() {
		t.Errorf("a stale nonce: %v", err)
	}
	if n, _ := verifier(t, Options{}); n.Nonce() != "" {
		t.Error("a verifier without NonceKey hands out nonces")
	}
}

// Options that would weaken the checks are refused.
func TestNewRefusals(t *testing.T) {
	for name, o := range map[string]Options{
		"HS256":                     {Algorithms: []string{"HS256"}},
		"none":                      {Algorithms: []string{"none"}},
		"a short nonce key":         {NonceKey: make([]byte, 31)},
		"a negative window":         {Window: -time.Second},
		"a negative size":           {MaxProofSize: -1},
		"a negative nonce lifetime": {NonceLifetime: -time.Second},
	} {
		if _, err := New(&o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	v, _ := New(nil)
	if got := v.Algorithms(); len(got) != len(DefaultAlgorithms) {
		t.Errorf("Algorithms() = %v", got)
	}
}

// The URL normalization of RFC 3986 sections 6.2.2 and 6.2.3.
func TestNormalizeURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://example.com/mcp":               "https://example.com/mcp",
		"HTTPS://EXAMPLE.COM/mcp":               "https://example.com/mcp",
		"https://example.com:443/mcp":           "https://example.com/mcp",
		"http://example.com:80/mcp":             "http://example.com/mcp",
		"http://example.com:443/mcp":            "http://example.com:443/mcp",
		"https://example.com":                   "https://example.com/",
		"https://example.com/a/./b/../c":        "https://example.com/a/c",
		"https://example.com/a/..":              "https://example.com/",
		"https://example.com/%7euser/%2f%e2%82": "https://example.com/~user/%2F%E2%82",
		"https://[::1]:8080/mcp":                "https://[::1]:8080/mcp",
		"https://[::1]:443/mcp":                 "https://[::1]/mcp",
		"https://example.com/mcp?a=b#c":         "https://example.com/mcp",
	} {
		if got, err := normalizeURL(in); err != nil || got != want {
			t.Errorf("normalizeURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "mcp", "ftp://example.com/x", "https:///x", "https://u:p@example.com/", "https://example.com/%zz", "https://example.com/%4"} {
		if got, err := normalizeURL(in); err == nil {
			t.Errorf("normalizeURL(%q) = %q, want an error", in, got)
		}
	}
}

// FuzzParseProof: whatever a client sends as a DPoP header, parsing and
// verifying it never panics, and a proof it accepts has every required
// claim.
func FuzzParseProof(f *testing.F) {
	f.Add(rfcProof)
	f.Add(rfcTokenProof)
	f.Add("a.b.c")
	f.Add("..")
	f.Add("eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6Im5vbmUifQ.e30.")
	algs := []jose.SignatureAlgorithm{jose.ES256, jose.ES384, jose.ES512, jose.RS256, jose.PS256, jose.EdDSA}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parseProof(s, algs, DefaultMaxProofSize)
		if err != nil {
			if !errors.Is(err, resourceserver.ErrInvalidDPoPProof) {
				t.Fatalf("a refusal that is not ErrInvalidDPoPProof: %v", err)
			}
			return
		}
		if p.jkt == "" || p.jti == "" || p.htm == "" || p.htu == "" {
			t.Fatalf("accepted a proof without a required claim: %+v", p)
		}
		normalizeURL(p.htu)
	})
}

// BenchmarkVerifyProof: one ES256 proof checked and recorded in the memory
// store, as the middleware does for every DPoP request.
func BenchmarkVerifyProof(b *testing.B) {
	p := newProver(b)
	v, err := New(nil)
	if err != nil {
		b.Fatal(err)
	}
	proofs := make([]string, b.N)
	for i := range proofs {
		proofs[i] = p.sign(p.claims(time.Now()))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := v.VerifyProof(context.Background(), p.request(proofs[i])); err != nil {
			b.Fatal(err)
		}
	}
}
