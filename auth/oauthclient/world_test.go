package oauthclient

import (
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/parley-mcp/parley/auth/authtest"
	"github.com/parley-mcp/parley/auth/jwtverify"
)

// grantWorld is an authorization server (authtest) and an MCP server
// standing in front of it that checks tokens with jwtverify and, for the
// DPoP scheme, checks the proof itself, independently of Parley's own
// verifier: a test of the client here must not lean on the server code it
// is meant to agree with.
type grantWorld struct {
	as  *authtest.Server
	rs  *httptest.Server
	ver *jwtverify.Verifier

	rsNonce  string           // when set, DPoP proofs must carry it (RFC 9449 section 9)
	now      func() time.Time // the servers' clock
	override http.Handler     // when set, answers every MCP request instead

	mu       sync.Mutex
	seen     []string // "scheme" of each authorized request, "" without credentials
	proofs   []string // the DPoP header of each request that had one
	jtis     map[string]bool
	failures []string // why a request was refused
	bodies   []string
}

func newGrantWorld(t *testing.T, opts *authtest.Options) *grantWorld {
	t.Helper()
	w := &grantWorld{as: authtest.NewServer(opts), jtis: map[string]bool{}, now: time.Now}
	if opts != nil && opts.Now != nil {
		w.now = opts.Now
	}
	t.Cleanup(w.as.Close)
	w.rs = httptest.NewServer(http.HandlerFunc(w.serve))
	t.Cleanup(w.rs.Close)
	v, err := jwtverify.New(&jwtverify.Options{Issuer: w.as.Issuer(), Audience: w.url(), JWKSURL: w.as.JWKSURL(), Now: w.now})
	if err != nil {
		t.Fatal(err)
	}
	w.ver = v
	return w
}

func (w *grantWorld) url() string { return w.rs.URL + "/mcp" }

func (w *grantWorld) refuse(rw http.ResponseWriter, status int, challenge, why string) {
	w.mu.Lock()
	w.failures = append(w.failures, why)
	w.mu.Unlock()
	if challenge != "" {
		rw.Header().Add("WWW-Authenticate", challenge)
	}
	rw.WriteHeader(status)
}

func (w *grantWorld) setOverride(h http.Handler) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.override = h
}

func (w *grantWorld) serve(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	override := w.override
	w.mu.Unlock()
	if override != nil && r.URL.Path == "/mcp" {
		override.ServeHTTP(rw, r)
		return
	}
	if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
		writeJSON(rw, 200, map[string]any{"resource": w.url(), "authorization_servers": []string{w.as.Issuer()}})
		return
	}
	body, _ := io.ReadAll(r.Body)
	meta := fmt.Sprintf(`resource_metadata=%q`, w.rs.URL+"/.well-known/oauth-protected-resource/mcp")
	authz := r.Header.Values("Authorization")
	if len(authz) == 0 {
		w.mu.Lock()
		w.seen = append(w.seen, "")
		w.mu.Unlock()
		w.refuse(rw, 401, "Bearer "+meta, "no credentials")
		rw.Header().Add("WWW-Authenticate", `DPoP algs="ES256"`)
		return
	}
	scheme, tok, _ := strings.Cut(authz[0], " ")
	w.mu.Lock()
	w.seen = append(w.seen, scheme)
	w.mu.Unlock()
	info, err := w.ver.Verify(r.Context(), tok)
	if err != nil {
		w.refuse(rw, 401, `Bearer error="invalid_token", `+meta, err.Error())
		return
	}
	var claims struct {
		Cnf struct {
			JKT string `json:"jkt"`
		} `json:"cnf"`
	}
	parts := strings.Split(tok, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	json.Unmarshal(raw, &claims)
	switch scheme {
	case "Bearer":
		if claims.Cnf.JKT != "" {
			w.refuse(rw, 401, `Bearer error="invalid_token", `+meta, "a DPoP-bound token presented as a bearer token")
			return
		}
	case "DPoP":
		proofs := r.Header.Values("DPoP")
		if len(proofs) != 1 {
			w.refuse(rw, 401, `DPoP error="invalid_dpop_proof"`, "not one DPoP header")
			return
		}
		w.mu.Lock()
		w.proofs = append(w.proofs, proofs[0])
		w.mu.Unlock()
		jkt, nonce, why := w.checkProof(proofs[0], r.Method, w.url(), tok)
		if why != "" {
			w.refuse(rw, 401, `DPoP error="invalid_dpop_proof"`, why)
			return
		}
		if jkt != claims.Cnf.JKT {
			w.refuse(rw, 401, `DPoP error="invalid_token"`, "the proof's key is not the token's")
			return
		}
		if w.rsNonce != "" && nonce != w.rsNonce {
			rw.Header().Set("DPoP-Nonce", w.rsNonce)
			w.refuse(rw, 401, `DPoP error="use_dpop_nonce"`, "no nonce")
			return
		}
	default:
		w.refuse(rw, 401, "Bearer "+meta, "scheme "+scheme)
		return
	}
	w.mu.Lock()
	w.bodies = append(w.bodies, info.Subject+":"+string(body))
	w.mu.Unlock()
	rw.WriteHeader(200)
	rw.Write(body)
}

// checkProof checks a DPoP proof (RFC 9449 section 4.3) for a request of
// method to target with token, and returns its key's thumbprint and nonce,
// or why it is refused.
func (w *grantWorld) checkProof(proof, method, target, token string) (jkt, nonce, why string) {
	jws, err := jose.ParseSignedCompact(proof, []jose.SignatureAlgorithm{jose.ES256, jose.RS256, jose.PS256, jose.EdDSA, jose.ES384})
	if err != nil {
		return "", "", "not a JWS: " + err.Error()
	}
	h := jws.Signatures[0].Protected
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != "dpop+jwt" {
		return "", "", "typ " + typ
	}
	if h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() {
		return "", "", "no public jwk"
	}
	payload, err := jws.Verify(h.JSONWebKey)
	if err != nil {
		return "", "", "signature"
	}
	var c struct {
		JTI, HTM, HTU, ATH, Nonce string
		IAT                       int64
	}
	json.Unmarshal(payload, &c)
	sum := sha256.Sum256([]byte(token))
	switch {
	case c.HTM != method:
		return "", "", "htm " + c.HTM
	case c.HTU != target:
		return "", "", "htu " + c.HTU
	case c.ATH != base64.RawURLEncoding.EncodeToString(sum[:]):
		return "", "", "ath"
	case c.JTI == "":
		return "", "", "no jti"
	case c.IAT == 0 || w.now().Sub(time.Unix(c.IAT, 0)).Abs() > 5*time.Minute:
		return "", "", "iat"
	}
	w.mu.Lock()
	replay := w.jtis[c.JTI]
	w.jtis[c.JTI] = true
	w.mu.Unlock()
	if replay {
		return "", "", "replayed jti"
	}
	tp, _ := h.JSONWebKey.Thumbprint(crypto.SHA256)
	return base64.RawURLEncoding.EncodeToString(tp), c.Nonce, ""
}

func (w *grantWorld) schemes() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.seen)
}

func (w *grantWorld) refusals() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.failures)
}

// grantTransport returns a Transport for cfg, which has a Grant and no
// Authorizer.
func grantTransport(t *testing.T, cfg Config) *Transport {
	t.Helper()
	tr, err := New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// tokenRecorder is an http.RoundTripper that records the form and headers
// of every token request it forwards.
type tokenRecorder struct {
	mu    sync.Mutex
	forms []map[string][]string
	heads []http.Header
}

func (r *tokenRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/token") {
		b, _ := io.ReadAll(req.Body)
		req.Body.Close()
		f, _ := url.ParseQuery(string(b))
		r.mu.Lock()
		r.forms = append(r.forms, f)
		r.heads = append(r.heads, req.Header.Clone())
		r.mu.Unlock()
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(strings.NewReader(string(b)))
	}
	return http.DefaultTransport.RoundTrip(req)
}

func (r *tokenRecorder) requests() ([]map[string][]string, []http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.forms), slices.Clone(r.heads)
}
