package resourceserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/parley-mcp/parley/auth"
)

// DPoP's refusals (RFC 9449 section 7.1). A [DPoPVerifier] returns one of
// them, wrapped with its reason.
var (
	// ErrInvalidDPoPProof: the DPoP proof is missing, malformed, forged,
	// for another request (method or URL), too old, replayed, or for
	// another token or key. The client is told 401 with
	// error="invalid_dpop_proof" in a DPoP challenge.
	ErrInvalidDPoPProof = errors.New("resourceserver: invalid DPoP proof")
	// ErrUseDPoPNonce: the proof lacks the server's current nonce (RFC
	// 9449 section 9). The client is told 401 with error="use_dpop_nonce"
	// and the nonce in DPoP-Nonce; return a [*DPoPNonceError] to give it.
	ErrUseDPoPNonce = errors.New("resourceserver: the DPoP proof lacks the server's nonce")
)

// DPoPNonceError is an [ErrUseDPoPNonce] carrying the nonce the client is
// to put in its next proof.
type DPoPNonceError struct {
	// Nonce goes to the client in the DPoP-Nonce header.
	Nonce string
	// Reason says what was wrong with the proof's nonce, for the log.
	Reason string
}

// Error says why.
func (e *DPoPNonceError) Error() string {
	return "resourceserver: the DPoP proof lacks the server's nonce: " + e.Reason
}

// Is makes a *DPoPNonceError match [ErrUseDPoPNonce].
func (e *DPoPNonceError) Is(target error) bool { return target == ErrUseDPoPNonce }

// A DPoPVerifier checks the DPoP proofs (RFC 9449) that come with
// DPoP-bound access tokens, for [Options.DPoP]. Package
// [github.com/parley-mcp/parley/auth/dpopverify] has one.
//
// The middleware has checked the access token first (the Verifier) and
// found it bound to a key; VerifyProof checks the rest of RFC 9449 section
// 4.3: the proof's signature with its own key, that key against the
// token's thumbprint, its type, algorithm, method, URL, age, token hash and
// nonce, and that it was not used before.
type DPoPVerifier interface {
	// VerifyProof checks p. It returns the nonce to give the client for
	// its next proof ("" for none), or an error matching
	// ErrInvalidDPoPProof, ErrUseDPoPNonce (a *DPoPNonceError) or
	// ErrUnavailable (the replay store cannot be reached); any other
	// error is the verifier's own failure, answered with 500.
	VerifyProof(ctx context.Context, p *DPoPProof) (nextNonce string, err error)
	// Algorithms returns the JWS algorithms proofs may be signed with, for
	// the algs of the DPoP challenge.
	Algorithms() []string
}

// DPoPProof is a DPoP proof to check, and what it must match.
type DPoPProof struct {
	// Proof is the value of the request's one DPoP header.
	Proof string
	// Method is the request's HTTP method (htm).
	Method string
	// URL is the request's URL as the client addressed it, without query
	// (htu): the resource's scheme and host, and the request's path.
	URL string
	// AccessToken is the token presented with the proof (ath).
	AccessToken string
	// KeyThumbprint is the token's cnf.jkt: the proof's key must have it.
	KeyThumbprint string
	// Caller names the token's principal ([auth.PrincipalKey]), for a
	// replay store that gives every caller a share.
	Caller string
}

// KeyThumbprintOf reads the jkt of a token's cnf claim (RFC 7800, RFC 9449
// section 6), for a [Verifier] that fills [auth.Info.KeyThumbprint]: ""
// when cnf is absent or has no jkt (another confirmation method), an error
// matching [ErrInvalidToken] when cnf is not an object or its jkt is not
// the base64url encoding of a SHA-256 thumbprint.
func KeyThumbprintOf(cnf json.RawMessage) (string, error) {
	if len(cnf) == 0 || string(cnf) == "null" {
		return "", nil
	}
	var c map[string]json.RawMessage
	if err := json.Unmarshal(cnf, &c); err != nil {
		return "", fmt.Errorf("%w: cnf is not an object", ErrInvalidToken)
	}
	raw, ok := c["jkt"]
	if !ok {
		return "", nil
	}
	var jkt string
	if err := json.Unmarshal(raw, &jkt); err != nil {
		return "", fmt.Errorf("%w: cnf.jkt is not a string", ErrInvalidToken)
	}
	if b, err := base64.RawURLEncoding.DecodeString(jkt); err != nil || len(b) != 32 {
		return "", fmt.Errorf("%w: cnf.jkt is not a base64url SHA-256 thumbprint", ErrInvalidToken)
	}
	return jkt, nil
}

// requestURL is the URL a proof for r must name: the resource's origin,
// which is what the client was given (a proxy in front may have changed the
// request's own), and the request's path.
func (rs *ResourceServer) requestURL(r *http.Request) string {
	return rs.origin + r.URL.EscapedPath()
}

// checkBinding holds a token to how it was presented: a DPoP-bound token
// only with the DPoP scheme and a valid proof of its key, an unbound one
// only as a bearer token (RFC 9449 sections 7.1 and 7.2). It returns the
// nonce to give the client for its next proof, if any.
func (rs *ResourceServer) checkBinding(r *http.Request, scheme, token string, info *auth.Info) (string, error) {
	if scheme == schemeBearer {
		if info.KeyThumbprint != "" {
			// A bound token that was taken from its client would
			// otherwise work without the key: the downgrade section
			// 7.2 forbids.
			return "", fmt.Errorf("%w: a DPoP-bound token presented as a bearer token", ErrInvalidToken)
		}
		return "", nil
	}
	if info.KeyThumbprint == "" {
		return "", fmt.Errorf("%w: the token is not DPoP-bound, but was presented with the DPoP scheme", ErrInvalidToken)
	}
	return rs.dpop.VerifyProof(r.Context(), &DPoPProof{
		Proof:         r.Header.Get("DPoP"),
		Method:        r.Method,
		URL:           rs.requestURL(r),
		AccessToken:   token,
		KeyThumbprint: info.KeyThumbprint,
		Caller:        auth.PrincipalKey(info),
	})
}

// proofCount checks that a DPoP request has exactly one proof (RFC 9449
// section 4.3, step 1), before anything costs a verification.
func proofCount(h http.Header) error {
	switch n := len(h.Values("DPoP")); n {
	case 1:
		return nil
	case 0:
		return fmt.Errorf("%w: the request has no DPoP header", ErrInvalidDPoPProof)
	default:
		return fmt.Errorf("%w: the request has %d DPoP headers", ErrInvalidDPoPProof, n)
	}
}

// Authentication schemes.
const (
	schemeBearer = "Bearer"
	schemeDPoP   = "DPoP"
)

// challenge writes the challenges of a refusal: a Bearer challenge (RFC
// 6750 section 3) when bearer tokens are taken, a DPoP challenge (RFC 9449
// section 7.1, with algs) when DPoP is, each with the metadata URL (RFC
// 9728 section 5.1) and the scope. code (an RFC 6750 or RFC 9449 error)
// goes in the challenge of scheme, the one the client used; with scheme ""
// (no credentials, or ambiguous ones), in every challenge.
func (rs *ResourceServer) challenge(w http.ResponseWriter, status int, scheme, code, scope string) {
	for _, s := range rs.schemes {
		var b strings.Builder
		b.WriteString(s)
		sep := " "
		param := func(name, value string) {
			b.WriteString(sep + name + `="` + value + `"`)
			sep = ", "
		}
		if code != "" && (scheme == "" || scheme == s) {
			param("error", code)
		}
		if s == schemeDPoP {
			param("algs", rs.algs)
		}
		if scope != "" {
			param("scope", scope) // scope tokens hold no '"' or '\'
		}
		param("resource_metadata", quoteEscape(rs.metadataURL))
		w.Header().Add("WWW-Authenticate", b.String())
	}
	http.Error(w, http.StatusText(status), status)
}
