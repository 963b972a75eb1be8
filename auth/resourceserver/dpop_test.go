package resourceserver_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/auth/dpopverify"
	"github.com/parley-mcp/parley/auth/resourceserver"
)

// dpopClient holds a key and makes proofs with it.
type dpopClient struct {
	t   *testing.T
	key *ecdsa.PrivateKey
	jkt string
}

func newDPoPClient(t *testing.T) *dpopClient {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tp, _ := (&jose.JSONWebKey{Key: k.Public()}).Thumbprint(crypto.SHA256)
	return &dpopClient{t: t, key: k, jkt: base64.RawURLEncoding.EncodeToString(tp)}
}

func (c *dpopClient) proof(method, url, token string, extra map[string]any) string {
	c.t.Helper()
	sum := sha256.Sum256([]byte(token))
	claims := map[string]any{"jti": rand.Text(), "htm": method, "htu": url, "iat": time.Now().Unix(), "ath": base64.RawURLEncoding.EncodeToString(sum[:])}
	for k, v := range extra {
		claims[k] = v
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: c.key}, (&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt"))
	if err != nil {
		c.t.Fatal(err)
	}
	b, _ := json.Marshal(claims)
	jws, _ := s.Sign(b)
	out, _ := jws.CompactSerialize()
	return out
}

// boundVerifier knows "bound" (a token bound to jkt), "unbound" and
// "bound-read-only" (bound, without the write scope).
func boundVerifier(jkt string) resourceserver.Verifier {
	return resourceserver.VerifierFunc(func(ctx context.Context, token string) (*auth.Info, error) {
		info := &auth.Info{ClientID: "app", Issuer: issuer, Subject: "alice", Scopes: []string{"mcp:read", "mcp:write"}}
		switch token {
		case "bound":
			info.KeyThumbprint = jkt
		case "unbound":
		case "bound-read-only":
			info.KeyThumbprint, info.Scopes = jkt, []string{"mcp:read"}
		default:
			return nil, fmt.Errorf("%w: unknown", resourceserver.ErrInvalidToken)
		}
		return info, nil
	})
}

// dpopGuarded returns the middleware with DPoP in front of a handler that
// reports the caller and the key its token is bound to.
func dpopGuarded(t *testing.T, jkt string, dv resourceserver.DPoPVerifier, requireDPoP bool) http.Handler {
	t.Helper()
	rs, err := resourceserver.New(&resourceserver.Options{
		Metadata:    resourceserver.Metadata{Resource: resource, AuthorizationServers: []string{issuer}},
		Verifier:    boundVerifier(jkt),
		Scopes:      []string{"mcp:write"},
		DPoP:        dv,
		RequireDPoP: requireDPoP,
		Logger:      slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	return rs.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := auth.InfoFrom(r.Context())
		fmt.Fprintf(w, "%s %s", info.Subject, info.KeyThumbprint)
	}))
}

// send makes a POST to resource with the Authorization and DPoP headers
// given (each may be several).
func send(h http.Handler, authz []string, proofs ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, resource, strings.NewReader("{}"))
	req.Header["Authorization"] = authz
	if len(proofs) > 0 {
		req.Header["Dpop"] = proofs
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

var allAlgs = `algs="` + strings.Join(dpopverify.DefaultAlgorithms, " ") + `"`

// Every way a DPoP request can fail, as the client is told: the status,
// and the challenges (the error only in the challenge of the scheme used;
// both schemes offered when both are taken).
func TestDPoPMiddleware(t *testing.T) {
	c := newDPoPClient(t)
	other := newDPoPClient(t)
	dv, err := dpopverify.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	h := dpopGuarded(t, c.jkt, dv, false)
	meta := `resource_metadata="` + metadataURL + `"`
	bearerNone := `Bearer scope="mcp:write", ` + meta
	dpopNone := `DPoP ` + allAlgs + `, scope="mcp:write", ` + meta
	replayed := c.proof("POST", resource, "bound", nil)
	send(h, []string{"DPoP bound"}, replayed)
	for _, tc := range []struct {
		name   string
		authz  []string
		proofs []string
		status int
		want   []string // WWW-Authenticate fields, in order
	}{
		{"good", []string{"DPoP bound"}, []string{c.proof("POST", resource, "bound", nil)}, 200, nil},
		{"the scheme in lower case", []string{"dpop bound"}, []string{c.proof("POST", resource, "bound", nil)}, 200, nil},
		{"an unbound bearer token", []string{"Bearer unbound"}, nil, 200, nil},
		{"no credentials", nil, nil, 401, []string{bearerNone, dpopNone}},
		{"another scheme", []string{"Basic YTpi"}, nil, 401, []string{bearerNone, dpopNone}},
		{"a bearer presentation of a bound token", []string{"Bearer bound"}, nil, 401,
			[]string{`Bearer error="invalid_token", scope="mcp:write", ` + meta, dpopNone}},
		{"the proof missing", []string{"DPoP bound"}, nil, 401,
			[]string{bearerNone, `DPoP error="invalid_dpop_proof", ` + allAlgs + `, scope="mcp:write", ` + meta}},
		{"two proofs", []string{"DPoP bound"}, []string{c.proof("POST", resource, "bound", nil), c.proof("POST", resource, "bound", nil)}, 401,
			[]string{bearerNone, `DPoP error="invalid_dpop_proof", ` + allAlgs + `, scope="mcp:write", ` + meta}},
		{"a replayed proof", []string{"DPoP bound"}, []string{replayed}, 401,
			[]string{bearerNone, `DPoP error="invalid_dpop_proof", ` + allAlgs + `, scope="mcp:write", ` + meta}},
		{"a proof for another URL", []string{"DPoP bound"}, []string{c.proof("POST", "https://mcp.example.com/other", "bound", nil)}, 401,
			[]string{bearerNone, `DPoP error="invalid_dpop_proof", ` + allAlgs + `, scope="mcp:write", ` + meta}},
		{"a proof for another method", []string{"DPoP bound"}, []string{c.proof("GET", resource, "bound", nil)}, 401,
			[]string{bearerNone, `DPoP error="invalid_dpop_proof", ` + allAlgs + `, scope="mcp:write", ` + meta}},
		{"a proof of another key", []string{"DPoP bound"}, []string{other.proof("POST", resource, "bound", nil)}, 401,
			[]string{bearerNone, `DPoP error="invalid_dpop_proof", ` + allAlgs + `, scope="mcp:write", ` + meta}},
		{"an unbound token with the DPoP scheme", []string{"DPoP unbound"}, []string{c.proof("POST", resource, "unbound", nil)}, 401,
			[]string{bearerNone, `DPoP error="invalid_token", ` + allAlgs + `, scope="mcp:write", ` + meta}},
		{"a refused token", []string{"DPoP nope"}, []string{c.proof("POST", resource, "nope", nil)}, 401,
			[]string{bearerNone, `DPoP error="invalid_token", ` + allAlgs + `, scope="mcp:write", ` + meta}},
		{"a scope missing", []string{"DPoP bound-read-only"}, []string{c.proof("POST", resource, "bound-read-only", nil)}, 403,
			[]string{bearerNone, `DPoP error="insufficient_scope", ` + allAlgs + `, scope="mcp:write", ` + meta}},
		{"a malformed token", []string{`DPoP a"b`}, nil, 400,
			[]string{`Bearer ` + meta, `DPoP error="invalid_request", ` + allAlgs + `, ` + meta}},
		{"two Authorization headers", []string{"DPoP bound", "Bearer unbound"}, nil, 400,
			[]string{`Bearer error="invalid_request", ` + meta, `DPoP error="invalid_request", ` + allAlgs + `, ` + meta}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := send(h, tc.authz, tc.proofs...)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d (%s)", rec.Code, tc.status, rec.Body)
			}
			if got := rec.Header().Values("WWW-Authenticate"); !slices.Equal(got, tc.want) {
				t.Errorf("WWW-Authenticate\n got %q\nwant %q", got, tc.want)
			}
			if tc.status == 200 && !strings.Contains(rec.Body.String(), "alice") {
				t.Errorf("body %q", rec.Body)
			}
		})
	}
}

// Without DPoP configured the middleware still refuses a DPoP-bound token
// as a bearer token (it cannot check the proof, so it must not take the
// token), and the DPoP scheme is another scheme: no credentials.
func TestBoundTokenRefusedAsBearerWithoutDPoP(t *testing.T) {
	c := newDPoPClient(t)
	h := dpopGuarded(t, c.jkt, nil, false)
	rec := send(h, []string{"Bearer bound"})
	if rec.Code != 401 || rec.Header().Get("WWW-Authenticate") != `Bearer error="invalid_token", scope="mcp:write", resource_metadata="`+metadataURL+`"` {
		t.Errorf("a bound token as a bearer token: %d %q", rec.Code, rec.Header().Values("WWW-Authenticate"))
	}
	rec = send(h, []string{"DPoP bound"}, c.proof("POST", resource, "bound", nil))
	if got := rec.Header().Values("WWW-Authenticate"); rec.Code != 401 || len(got) != 1 || !strings.HasPrefix(got[0], "Bearer scope=") {
		t.Errorf("the DPoP scheme without DPoP: %d %q", rec.Code, got)
	}
	if send(h, []string{"Bearer unbound"}).Code != 200 {
		t.Error("an unbound bearer token was refused")
	}
}

// RequireDPoP: bearer tokens are not credentials at all, and only the DPoP
// challenge is offered.
func TestRequireDPoP(t *testing.T) {
	c := newDPoPClient(t)
	dv, _ := dpopverify.New(nil)
	h := dpopGuarded(t, c.jkt, dv, true)
	rec := send(h, []string{"Bearer unbound"})
	if got := rec.Header().Values("WWW-Authenticate"); rec.Code != 401 || len(got) != 1 || got[0] != `DPoP `+allAlgs+`, scope="mcp:write", resource_metadata="`+metadataURL+`"` {
		t.Errorf("a bearer token: %d %q", rec.Code, got)
	}
	if rec := send(h, []string{"DPoP bound"}, c.proof("POST", resource, "bound", nil)); rec.Code != 200 {
		t.Errorf("a DPoP token: %d", rec.Code)
	}
	if _, err := resourceserver.New(&resourceserver.Options{
		Metadata: resourceserver.Metadata{Resource: resource, AuthorizationServers: []string{issuer}},
		Verifier: boundVerifier(c.jkt), RequireDPoP: true,
	}); err == nil {
		t.Error("RequireDPoP without DPoP was taken")
	}
}

// Nonces through the middleware: a proof without one is answered 401
// use_dpop_nonce with the nonce in DPoP-Nonce; with it, the request goes
// through; with the previous period's, it goes through and the answer
// carries the next nonce.
func TestDPoPNonceMiddleware(t *testing.T) {
	c := newDPoPClient(t)
	now := time.Now()
	clk := func() time.Time { return now }
	dv, err := dpopverify.New(&dpopverify.Options{NonceKey: []byte(strings.Repeat("n", 32)), NonceLifetime: time.Hour, Now: clk})
	if err != nil {
		t.Fatal(err)
	}
	h := dpopGuarded(t, c.jkt, dv, false)
	rec := send(h, []string{"DPoP bound"}, c.proof("POST", resource, "bound", nil))
	nonce := rec.Header().Get("DPoP-Nonce")
	if rec.Code != 401 || nonce == "" || rec.Header().Values("WWW-Authenticate")[1] != `DPoP error="use_dpop_nonce", `+allAlgs+`, scope="mcp:write", resource_metadata="`+metadataURL+`"` {
		t.Fatalf("without a nonce: %d nonce %q %q", rec.Code, nonce, rec.Header().Values("WWW-Authenticate"))
	}
	rec = send(h, []string{"DPoP bound"}, c.proof("POST", resource, "bound", map[string]any{"nonce": nonce}))
	if rec.Code != 200 || rec.Header().Get("DPoP-Nonce") != "" {
		t.Fatalf("with the nonce: %d, DPoP-Nonce %q", rec.Code, rec.Header().Get("DPoP-Nonce"))
	}
	now = now.Add(time.Hour)
	rec = send(h, []string{"DPoP bound"}, c.proof("POST", resource, "bound", map[string]any{"nonce": nonce, "iat": now.Unix()}))
	if next := rec.Header().Get("DPoP-Nonce"); rec.Code != 200 || next == "" || next == nonce {
		t.Fatalf("with the previous nonce: %d, DPoP-Nonce %q", rec.Code, next)
	}
}

// stubDPoP is a DPoPVerifier that answers with err, for the answers a real
// one gives rarely.
type stubDPoP struct {
	err  error
	next string
}

func (s stubDPoP) VerifyProof(context.Context, *resourceserver.DPoPProof) (string, error) {
	return s.next, s.err
}
func (s stubDPoP) Algorithms() []string { return []string{"ES256", `bad"alg`} }

// A verifier that cannot decide (its replay store is down) is answered 503,
// not a challenge; one that fails otherwise, 500; a nonce that is not a
// nonce is never written to a header. Algorithms that are not tokens are
// left out of the challenge.
func TestDPoPVerifierFailures(t *testing.T) {
	c := newDPoPClient(t)
	for _, tc := range []struct {
		stub   stubDPoP
		status int
	}{
		{stubDPoP{err: fmt.Errorf("%w: redis down", resourceserver.ErrUnavailable)}, 503},
		{stubDPoP{err: errors.New("a bug")}, 500},
		{stubDPoP{err: &resourceserver.DPoPNonceError{Nonce: "bad\"nonce\r\n", Reason: "x"}}, 500},
		{stubDPoP{next: "n-2"}, 200},
	} {
		h := dpopGuarded(t, c.jkt, tc.stub, false)
		rec := send(h, []string{"DPoP bound"}, "a.b.c")
		if rec.Code != tc.status {
			t.Errorf("%v: %d, want %d", tc.stub, rec.Code, tc.status)
		}
		if tc.status != 200 && rec.Header().Get("DPoP-Nonce") != "" {
			t.Errorf("%v: DPoP-Nonce %q", tc.stub, rec.Header().Get("DPoP-Nonce"))
		}
		if tc.status == 200 && rec.Header().Get("DPoP-Nonce") != "n-2" {
			t.Errorf("the next nonce was not sent")
		}
	}
	rec := send(dpopGuarded(t, c.jkt, stubDPoP{}, false), nil)
	if got := rec.Header().Values("WWW-Authenticate")[1]; !strings.HasPrefix(got, `DPoP algs="ES256", `) {
		t.Errorf("challenge %q", got)
	}
}

// KeyThumbprintOf reads cnf.jkt for a verifier, refusing what cannot be a
// thumbprint.
func TestKeyThumbprintOf(t *testing.T) {
	good := base64.RawURLEncoding.EncodeToString(make([]byte, 32))
	for in, want := range map[string]string{
		``:                               "",
		`null`:                           "",
		`{}`:                             "",
		`{"x5t#S256":"abc"}`:             "",
		`{"jkt":"` + good + `"}`:         good,
		`{"jkt":"` + good + `","x":"y"}`: good,
	} {
		if got, err := resourceserver.KeyThumbprintOf(json.RawMessage(in)); err != nil || got != want {
			t.Errorf("%s: %q, %v", in, got, err)
		}
	}
	for _, in := range []string{`"jkt"`, `[]`, `{"jkt":7}`, `{"jkt":""}`, `{"jkt":"abc"}`, `{"jkt":"` + good + `="}`} {
		if _, err := resourceserver.KeyThumbprintOf(json.RawMessage(in)); !errors.Is(err, resourceserver.ErrInvalidToken) {
			t.Errorf("%s: %v, want ErrInvalidToken", in, err)
		}
	}
}
