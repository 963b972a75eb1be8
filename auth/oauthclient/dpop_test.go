package oauthclient

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/oauth2"

	"github.com/parley-mcp/parley/auth/authtest"
)

// proofClaims decodes a DPoP proof's payload without checking it.
func proofClaims(t *testing.T, proof string) map[string]any {
	t.Helper()
	jws, err := jose.ParseSignedCompact(proof, []jose.SignatureAlgorithm{jose.ES256, jose.RS256, jose.PS256, jose.EdDSA})
	if err != nil {
		t.Fatalf("proof %q: %v", proof, err)
	}
	var c map[string]any
	if err := json.Unmarshal(jws.UnsafePayloadWithoutVerification(), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// With DPoP, the token request carries a proof, the token comes back bound
// (token_type DPoP), and every MCP request carries it with the DPoP scheme
// and a proof of its own: a fresh jti each time, the request's method and
// URL, the token's hash. It is never sent as a bearer token.
func TestDPoPClientCredentials(t *testing.T) {
	w := newGrantWorld(t, nil)
	c := w.as.RegisterClient(authtest.Client{ID: "agent"})
	rec := &tokenRecorder{}
	tr := grantTransport(t, Config{
		Grant:         ClientCredentials{},
		PreRegistered: preRegistered(ClientInfo{ClientID: c.ID, ClientSecret: c.Secret}),
		HTTPClient:    &http.Client{Transport: rec},
		DPoP:          &DPoP{},
	})
	for _, b := range []string{"a", "b", "c"} {
		mustOK(t, tr, w.url()+"?q=1", b) // the query is not part of htu
	}
	if got := w.schemes(); !slices.Equal(got, []string{"", "DPoP", "DPoP", "DPoP"}) {
		t.Fatalf("the MCP server saw %q (refusals %q)", got, w.refusals())
	}
	_, heads := rec.requests()
	tp := proofClaims(t, heads[0].Get("DPoP"))
	if tp["htm"] != "POST" || tp["htu"] != w.as.TokenEndpoint() || tp["ath"] != nil || tp["jti"] == "" {
		t.Errorf("token request proof %v", tp)
	}
	jtis := map[any]bool{}
	for _, p := range w.proofs {
		jtis[proofClaims(t, p)["jti"]] = true
	}
	if len(jtis) != 3 {
		t.Errorf("%d distinct jti in 3 proofs", len(jtis))
	}
}

// The authorization code flow with DPoP: the code is redeemed with a proof,
// and so is the refresh token, with the same key (a public client's refresh
// token is bound to it).
func TestDPoPAuthorizationCodeAndRefresh(t *testing.T) {
	clk := &clock{t: time.Now()}
	w := newGrantWorld(t, &authtest.Options{Now: clk.now, TokenTTL: time.Hour})
	tr := newTransport(t, Config{DPoP: &DPoP{}, Now: clk.now})
	mustOK(t, tr, w.url(), "x")
	clk.add(2 * time.Hour)
	mustOK(t, tr, w.url(), "y")
	if got := w.schemes(); !slices.Equal(got, []string{"", "DPoP", "DPoP"}) {
		t.Fatalf("the MCP server saw %q (refusals %q)", got, w.refusals())
	}
}

// A nonce the authorization server asks for (400 use_dpop_nonce) is put in
// a new proof and the token request sent again, once.
func TestDPoPNonceFromAuthorizationServer(t *testing.T) {
	w := newGrantWorld(t, &authtest.Options{RequireDPoPNonce: true})
	c := w.as.RegisterClient(authtest.Client{ID: "agent"})
	rec := &tokenRecorder{}
	tr := grantTransport(t, Config{
		Grant:         ClientCredentials{},
		PreRegistered: preRegistered(ClientInfo{ClientID: c.ID, ClientSecret: c.Secret}),
		HTTPClient:    &http.Client{Transport: rec},
		DPoP:          &DPoP{},
	})
	mustOK(t, tr, w.url(), "x")
	_, heads := rec.requests()
	if len(heads) != 2 {
		t.Fatalf("%d token requests, want 2", len(heads))
	}
	first, second := proofClaims(t, heads[0].Get("DPoP")), proofClaims(t, heads[1].Get("DPoP"))
	if first["nonce"] != nil || second["nonce"] != w.as.DPoPNonce() || first["jti"] == second["jti"] {
		t.Errorf("proofs %v then %v", first, second)
	}
	// A second refusal is the server's last word: no loop.
	w.as.RotateDPoPNonce()
	tr2 := grantTransport(t, Config{
		Grant:         ClientCredentials{},
		PreRegistered: preRegistered(ClientInfo{ClientID: c.ID, ClientSecret: c.Secret}),
		HTTPClient:    &http.Client{Transport: rotateNonce{w.as, http.DefaultTransport}},
		DPoP:          &DPoP{},
	})
	_, _, err := post(t, tr2, w.url(), "x")
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "use_dpop_nonce" {
		t.Errorf("err = %v, want use_dpop_nonce after one retry", err)
	}
}

// rotateNonce rotates the server's nonce before every token request, so no
// proof ever carries the current one.
type rotateNonce struct {
	as   *authtest.Server
	base http.RoundTripper
}

func (r rotateNonce) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.URL.Path, "/token") {
		r.as.RotateDPoPNonce()
	}
	return r.base.RoundTrip(req)
}

// A nonce the MCP server asks for (401 with DPoP error="use_dpop_nonce")
// is put in a new proof and the request sent again, once, body and all;
// later requests carry it from the start. A server that refuses again is
// answered with its 401, without a new authorization.
func TestDPoPNonceFromResourceServer(t *testing.T) {
	w := newGrantWorld(t, nil)
	w.rsNonce = "n-1"
	c := w.as.RegisterClient(authtest.Client{ID: "agent"})
	rec := &tokenRecorder{}
	tr := grantTransport(t, Config{
		Grant:         ClientCredentials{},
		PreRegistered: preRegistered(ClientInfo{ClientID: c.ID, ClientSecret: c.Secret}),
		HTTPClient:    &http.Client{Transport: rec},
		DPoP:          &DPoP{},
	})
	mustOK(t, tr, w.url(), "first")
	mustOK(t, tr, w.url(), "second")
	if got := w.refusals(); !slices.Equal(got, []string{"no credentials", "no nonce"}) {
		t.Errorf("refusals %q; want one for the missing token, one for the missing nonce", got)
	}
	if got := proofClaims(t, w.proofs[len(w.proofs)-1])["nonce"]; got != "n-1" {
		t.Errorf("the last proof's nonce %v", got)
	}

	// From now on every request is refused for a stale nonce.
	w.setOverride(rejectNonce{w})
	status, _, err := post(t, tr, w.url(), "third")
	if err != nil || status != http.StatusUnauthorized {
		t.Fatalf("status %d, err %v; want the server's 401", status, err)
	}
	if forms, _ := rec.requests(); len(forms) != 1 {
		t.Errorf("%d token requests; a nonce refusal must not start a new authorization", len(forms))
	}
}

// rejectNonce answers every request use_dpop_nonce with a new nonce.
type rejectNonce struct{ w *grantWorld }

func (r rejectNonce) ServeHTTP(rw http.ResponseWriter, req *http.Request) {
	r.w.mu.Lock()
	r.w.seen = append(r.w.seen, "nonce-refused")
	r.w.mu.Unlock()
	rw.Header().Set("DPoP-Nonce", "n-"+rand.Text())
	rw.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
	rw.WriteHeader(http.StatusUnauthorized)
}

// A DPoP-bound token is never sent as a bearer token: not by a Transport
// without DPoP that finds one in its Store (it authorizes anew), and never
// by send.
func TestDPoPBoundTokenNeverSentAsBearer(t *testing.T) {
	w := newGrantWorld(t, nil)
	c := w.as.RegisterClient(authtest.Client{ID: "agent"})
	store := NewMemoryStore()
	cfg := Config{
		Grant:         ClientCredentials{},
		PreRegistered: preRegistered(ClientInfo{ClientID: c.ID, ClientSecret: c.Secret}),
		Store:         store,
		DPoP:          &DPoP{},
	}
	mustOK(t, grantTransport(t, cfg), w.url(), "x")
	creds, _ := store.Load(context.Background(), w.as.Issuer())
	bound := creds.Tokens[w.url()]
	if bound == nil || !isDPoPToken(bound) {
		t.Fatalf("stored token %+v, want a DPoP one", bound)
	}
	cfg.DPoP = nil
	mustOK(t, grantTransport(t, cfg), w.url(), "y")
	for _, why := range w.refusals() {
		if strings.Contains(why, "bearer") {
			t.Errorf("the server refused %q", why)
		}
	}
	tr := grantTransport(t, Config{Grant: ClientCredentials{}})
	req, _ := http.NewRequest(http.MethodPost, w.url(), strings.NewReader("z"))
	if _, err := tr.send(req, func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("z")), nil }, bound, false); err == nil || !strings.Contains(err.Error(), "never sent as a bearer token") {
		t.Errorf("send of a bound token without a key: %v", err)
	}
}

// An authorization server that answers a proof with a bearer token: with
// DPoP.Required the request fails; without, the bearer token is used as
// such. So does a server that lists algorithms the key cannot make.
func TestDPoPRequired(t *testing.T) {
	for _, required := range []bool{false, true} {
		as := newFakeAS(t, nil) // knows nothing of DPoP: always Bearer
		rs := newFakeRS(t, as, nil)
		tr := newTransport(t, Config{DPoP: &DPoP{Required: required}})
		_, _, err := post(t, tr, rs.url(), "x")
		if required != errors.Is(err, ErrDPoPUnsupported) {
			t.Errorf("required %v: err = %v", required, err)
		}
		if !required && (err != nil || rs.authHeaders()[1] != "Bearer tok-1") {
			t.Errorf("not required: err %v, headers %q", err, rs.authHeaders())
		}
	}
	p, err := newProver(&DPoP{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.algorithmFor(&ServerMetadata{DPoPSigningAlgValuesSupported: []string{"EdDSA"}}); ok {
		t.Error("a P-256 key was taken for a server that lists only EdDSA")
	}
	if alg, ok := p.algorithmFor(&ServerMetadata{DPoPSigningAlgValuesSupported: []string{"RS256", "ES256"}}); !ok || alg != "ES256" {
		t.Errorf("algorithmFor = %s %v", alg, ok)
	}
}

// The caller's key (a crypto.Signer: here RSA and Ed25519) signs the
// proofs; the token is bound to its thumbprint.
func TestDPoPCallersKey(t *testing.T) {
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, ek, _ := ed25519.GenerateKey(rand.Reader)
	for name, key := range map[string]crypto.Signer{"RSA": rk, "Ed25519": ek} {
		t.Run(name, func(t *testing.T) {
			w := newGrantWorld(t, nil)
			c := w.as.RegisterClient(authtest.Client{ID: "agent"})
			tr := grantTransport(t, Config{
				Grant:         ClientCredentials{},
				PreRegistered: preRegistered(ClientInfo{ClientID: c.ID, ClientSecret: c.Secret}),
				DPoP:          &DPoP{Key: key},
			})
			mustOK(t, tr, w.url(), "x")
			jws, _ := jose.ParseSignedCompact(w.proofs[0], []jose.SignatureAlgorithm{jose.RS256, jose.PS256, jose.EdDSA})
			want := jose.JSONWebKey{Key: key.Public()}
			got, _ := jws.Signatures[0].Protected.JSONWebKey.Thumbprint(crypto.SHA256)
			exp, _ := want.Thumbprint(crypto.SHA256)
			if base64.RawURLEncoding.EncodeToString(got) != base64.RawURLEncoding.EncodeToString(exp) {
				t.Error("the proof's jwk is not the caller's key")
			}
		})
	}
	if _, err := New(&Config{DPoP: &DPoP{Key: rk, Algorithm: "ES256"}}); err == nil {
		t.Error("New took an RSA key with algorithm ES256")
	}
}

// BenchmarkProof: the proof a DPoP request carries, signed with a P-256
// key.
func BenchmarkProof(b *testing.B) {
	p, err := newProver(&DPoP{}, time.Now)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.proof(p.alg, "POST", "https://mcp.example.com/mcp", "token"); err != nil {
			b.Fatal(err)
		}
	}
}
