package oauthclient

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/cryptosigner"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/oauth2"
)

// DPoP configures sender-constrained tokens (RFC 9449, the MCP extension
// SEP-1932): every token request carries a proof that the client holds a
// private key, the authorization server binds the token to that key, and
// every request to the MCP server carries the token with the DPoP scheme
// and a fresh proof for that request (its method and URL, and the token's
// hash). A token that leaks is useless without the key.
//
// A token the authorization server bound to the key (token_type DPoP) is
// never sent as a bearer token. Nonces a server asks for (use_dpop_nonce,
// from the authorization server or the MCP server) are put in the next
// proof, and the request that was refused for want of one is sent again,
// once.
type DPoP struct {
	// Key signs the proofs. Nil: New generates a P-256 key, which the
	// Transport keeps for its life. Tokens a persistent Store kept from
	// an earlier process are bound to that process's key: with a key of
	// its own each run, a client has them refused once and gets new ones
	// (give it the same Key every run to keep them).
	Key crypto.Signer
	// Algorithm is the JWS algorithm of the proofs. Empty: the one Key's
	// type implies (ES256 for P-256; RS256 for RSA unless the
	// authorization server lists another it takes).
	Algorithm string
	// Required refuses to use a token that is not bound to the key: an
	// authorization server that answers with token_type Bearer, or that
	// lists DPoP algorithms none of which fits the key, fails the request
	// with ErrDPoPUnsupported. Otherwise such a token is used as the
	// bearer token it is.
	Required bool
}

// dpopProver makes DPoP proofs with one key, and remembers the nonces the
// servers gave.
type dpopProver struct {
	key      crypto.Signer
	alg      jose.SignatureAlgorithm // chosen from the key (and Config)
	want     string                  // DPoP.Algorithm
	required bool
	now      func() time.Time

	mu      sync.Mutex
	signers map[jose.SignatureAlgorithm]jose.Signer
	nonces  map[string]string // by htu: the nonce its server gave last
}

// newProver checks d and returns its prover.
func newProver(d *DPoP, now func() time.Time) (*dpopProver, error) {
	key := d.Key
	if key == nil {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("oauthclient: generating a DPoP key: %w", err)
		}
		key = k
	}
	alg, err := keyAlgorithm(key.Public(), d.Algorithm, nil)
	if err != nil {
		return nil, fmt.Errorf("oauthclient: Config.DPoP: %w", err)
	}
	return &dpopProver{
		key: key, alg: alg, want: d.Algorithm, required: d.Required, now: now,
		signers: map[jose.SignatureAlgorithm]jose.Signer{},
		nonces:  map[string]string{},
	}, nil
}

// algorithmFor returns the algorithm to sign the proofs of a token request
// to asm with: the key's, or, for an RSA key and no Algorithm configured,
// one the server lists. ok is false when the server lists DPoP algorithms
// and none fits the key: it would refuse the proof.
func (p *dpopProver) algorithmFor(asm *ServerMetadata) (jose.SignatureAlgorithm, bool) {
	listed := asm.DPoPSigningAlgValuesSupported
	if len(listed) == 0 {
		return p.alg, true
	}
	alg, err := keyAlgorithm(p.key.Public(), p.want, listed)
	if err != nil {
		return "", false
	}
	for _, a := range listed {
		if a == string(alg) {
			return alg, true
		}
	}
	return "", false
}

// htu is the URL a proof names: u without query, fragment and userinfo
// (RFC 9449 section 4.2).
func htu(u *url.URL) string {
	c := *u
	c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment, c.User = "", false, "", "", nil
	return c.String()
}

// proof returns a fresh proof for a request of method to target, with the
// hash of accessToken when there is one and the nonce the server of target
// gave last, signed with alg.
func (p *dpopProver) proof(alg jose.SignatureAlgorithm, method, target, accessToken string) (string, error) {
	p.mu.Lock()
	signer := p.signers[alg]
	nonce := p.nonces[target]
	p.mu.Unlock()
	if signer == nil {
		opts := (&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt")
		s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: cryptosigner.Opaque(p.key)}, opts)
		if err != nil {
			return "", fmt.Errorf("oauthclient: DPoP signer: %w", err)
		}
		p.mu.Lock()
		p.signers[alg] = s
		p.mu.Unlock()
		signer = s
	}
	claims := map[string]any{
		"jti": rand.Text(),
		"htm": method,
		"htu": target,
		"iat": p.now().Unix(),
	}
	if accessToken != "" {
		claims["ath"] = accessTokenHash(accessToken)
	}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	s, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		return "", fmt.Errorf("oauthclient: signing a DPoP proof: %w", err)
	}
	return s, nil
}

// accessTokenHash is the ath of a proof: base64url(SHA-256(token)).
func accessTokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// maxNonce bounds a nonce kept from a server's DPoP-Nonce header.
const maxNonce = 1024

// remember keeps the DPoP-Nonce of a response from the server of target,
// for the next proof to it. It reports whether there was a valid one.
func (p *dpopProver) remember(target string, h http.Header) bool {
	vals := h.Values("DPoP-Nonce")
	if len(vals) != 1 || !validNonce(vals[0]) {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nonces[target] = vals[0]
	return true
}

// validNonce checks the nonce syntax, 1*NQCHAR (RFC 9449 section 8.1):
// printable ASCII but '"' and '\', and space. Anything else (a header
// that could break the proof, or one too long to be a nonce) is ignored.
func validNonce(s string) bool {
	if s == "" || len(s) > maxNonce {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// isDPoPToken reports whether tok is bound to a DPoP key (token_type
// DPoP): such a token is only ever sent with the DPoP scheme and a proof.
func isDPoPToken(tok *oauth2.Token) bool {
	return strings.EqualFold(tok.TokenType, "DPoP")
}
