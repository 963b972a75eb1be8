// Package dpopverify checks DPoP proofs (RFC 9449) for an MCP server that
// takes DPoP-bound access tokens: the [resourceserver.DPoPVerifier] of
// [resourceserver.Options.DPoP].
//
//	dv, err := dpopverify.New(nil) // defaults: a 5-minute window, replays refused in memory
//	rs, err := resourceserver.New(&resourceserver.Options{
//		Metadata: md,
//		Verifier: jwtVerifier, // reads the token's cnf.jkt
//		DPoP:     dv,
//	})
//
// A DPoP-bound token is useless to someone who copies it: each request
// must also carry a proof, a JWT signed with the key the token is bound to,
// naming the request's method and URL, the token's hash and the time, with
// an id of its own. The middleware checks the token and finds the key it is
// bound to; [Verifier.VerifyProof] checks the proof, each step of RFC 9449
// section 4.3:
//
//   - one proof, at most Options.MaxProofSize bytes, a JWS in compact form;
//   - typ dpop+jwt; alg one of Options.Algorithms (asymmetric only: never
//     none or HMAC); a public jwk in the header (no private key; RSA of at
//     least 2048 bits), with which the signature verifies;
//   - jti, htm, htu and iat present, with their types;
//   - htm the request's method; htu the request's URL, both normalized as
//     RFC 3986 sections 6.2.2 and 6.2.3 say (case of scheme and host,
//     default port, percent-encoding, dot segments), query and fragment
//     ignored;
//   - iat within Options.Window of the server's clock, either way;
//   - ath the hash of the token presented, and the jwk's thumbprint the
//     token's cnf.jkt;
//   - with Options.NonceKey, the server's current nonce (else 401
//     use_dpop_nonce with one);
//   - a jti not seen before for that key and URL while the proof could be
//     accepted: the replay store.
//
// Each refusal matches [resourceserver.ErrInvalidDPoPProof] (or
// [resourceserver.ErrUseDPoPNonce]) and says why; the middleware logs the
// reason and tells the client only the error code.
//
// # A fleet
//
// A replayed proof is caught only by the instance that saw it first,
// unless every instance records proofs in one store: package
// [github.com/parley-mcp/parley/auth/dpopverify/redisstore] is one, in
// Redis. Nonces need no shared state: they are made from the time and
// Options.NonceKey, so every instance with the same key accepts every
// other's. The clocks of the instances must agree to within the window.
package dpopverify

import (
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/parley-mcp/parley/auth/resourceserver"
)

// Defaults of [Options].
const (
	// DefaultWindow is how far a proof's iat may be from the server's
	// clock, either way: the proof's lifetime, and the clock skew
	// allowed.
	DefaultWindow = 5 * time.Minute
	// DefaultMaxProofSize bounds a proof: room for an RSA-4096 key and a
	// long URL, and not much more.
	DefaultMaxProofSize = 8 << 10
	// DefaultNonceLifetime is how long a nonce is issued for; it is
	// accepted for as long again after the next one is issued.
	DefaultNonceLifetime = 5 * time.Minute
)

// minRSABits is the least RSA modulus a proof may be signed with (RFC 7518
// section 3.3).
const minRSABits = 2048

// minNonceKey is the least length of Options.NonceKey.
const minNonceKey = 32

// DefaultAlgorithms are the algorithms proofs may be signed with when
// Options.Algorithms is empty: every asymmetric JWS algorithm.
var DefaultAlgorithms = []string{"ES256", "ES384", "ES512", "PS256", "PS384", "PS512", "RS256", "RS384", "RS512", "EdDSA"}

// asymmetric are the algorithms Options.Algorithms may name.
var asymmetric = map[string]bool{
	"ES256": true, "ES384": true, "ES512": true,
	"PS256": true, "PS384": true, "PS512": true,
	"RS256": true, "RS384": true, "RS512": true,
	"EdDSA": true,
}

// Options configure a [Verifier]. Nil or zero fields mean the defaults.
type Options struct {
	// Algorithms are the JWS algorithms proofs may be signed with.
	// Default: [DefaultAlgorithms]. Only asymmetric ones are allowed.
	Algorithms []string
	// Window is how far a proof's iat may be from the server's clock,
	// either way (RFC 9449 section 11.1): a proof is accepted from Window
	// before its iat to Window after it, both inclusive. Default
	// [DefaultWindow].
	Window time.Duration
	// MaxProofSize bounds the DPoP header, in bytes. Default
	// [DefaultMaxProofSize].
	MaxProofSize int
	// Replay records the proofs seen, so that each is accepted once.
	// Default: a [MemoryStore] with its defaults, which serves one
	// process; a fleet shares one (package redisstore).
	Replay ReplayStore
	// NonceKey, when set (32 bytes or more, the same on every instance),
	// makes the server require its nonce in every proof (RFC 9449 section
	// 9): a proof without the current nonce is answered use_dpop_nonce
	// with one. Nonces limit how long a proof made in advance stays
	// useful, to the nonce's lifetime. Nil: no nonces.
	NonceKey []byte
	// NonceLifetime is how long a nonce is issued for; the previous one is
	// still accepted for as long again, so a nonce lives between one and
	// two lifetimes. Default [DefaultNonceLifetime].
	NonceLifetime time.Duration
	// Now is the server's clock. Default time.Now.
	Now func() time.Time
}

// Verifier checks DPoP proofs; see the package documentation. It is safe
// for concurrent use.
type Verifier struct {
	algs     []jose.SignatureAlgorithm
	names    []string
	window   time.Duration
	maxSize  int
	replay   ReplayStore
	nonceKey []byte
	lifetime time.Duration
	now      func() time.Time
}

// New checks opts and returns a Verifier.
func New(opts *Options) (*Verifier, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	v := &Verifier{window: o.Window, maxSize: o.MaxProofSize, replay: o.Replay, lifetime: o.NonceLifetime, now: o.Now}
	names := o.Algorithms
	if len(names) == 0 {
		names = DefaultAlgorithms
	}
	for _, a := range names {
		if !asymmetric[a] {
			return nil, fmt.Errorf("dpopverify: algorithm %q is not an asymmetric JWS algorithm (RFC 9449 section 11.6)", a)
		}
		v.algs = append(v.algs, jose.SignatureAlgorithm(a))
		v.names = append(v.names, a)
	}
	switch {
	case v.window == 0:
		v.window = DefaultWindow
	case v.window < 0:
		return nil, fmt.Errorf("dpopverify: Options.Window must not be negative, got %v", v.window)
	}
	switch {
	case v.maxSize == 0:
		v.maxSize = DefaultMaxProofSize
	case v.maxSize < 0:
		return nil, fmt.Errorf("dpopverify: Options.MaxProofSize must not be negative, got %d", v.maxSize)
	}
	if v.now == nil {
		v.now = time.Now
	}
	if v.replay == nil {
		m, err := NewMemoryStore(&MemoryStoreOptions{Now: v.now}) // the verifier's clock: proofs expire by it
		if err != nil {
			return nil, err
		}
		v.replay = m
	}
	if o.NonceKey != nil {
		if len(o.NonceKey) < minNonceKey {
			return nil, fmt.Errorf("dpopverify: Options.NonceKey has %d bytes; it needs %d or more", len(o.NonceKey), minNonceKey)
		}
		v.nonceKey = append([]byte(nil), o.NonceKey...)
	}
	switch {
	case v.lifetime == 0:
		v.lifetime = DefaultNonceLifetime
	case v.lifetime < 0:
		return nil, fmt.Errorf("dpopverify: Options.NonceLifetime must not be negative, got %v", v.lifetime)
	}
	return v, nil
}

// Algorithms implements [resourceserver.DPoPVerifier].
func (v *Verifier) Algorithms() []string { return append([]string(nil), v.names...) }

// invalid returns the refusal of a proof, for reason.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", resourceserver.ErrInvalidDPoPProof, fmt.Sprintf(format, args...))
}

// VerifyProof implements [resourceserver.DPoPVerifier]: it checks p (see
// the package documentation) and, when it is good, records it as used.
func (v *Verifier) VerifyProof(ctx context.Context, p *resourceserver.DPoPProof) (string, error) {
	pr, err := parseProof(p.Proof, v.algs, v.maxSize)
	if err != nil {
		return "", err
	}
	if pr.htm != p.Method {
		return "", invalid("htm %q is not the request's method %s", pr.htm, p.Method)
	}
	want, err := normalizeURL(p.URL)
	if err != nil {
		return "", fmt.Errorf("dpopverify: the request's URL %q: %w", p.URL, err)
	}
	got, err := normalizeURL(pr.htu)
	if err != nil {
		return "", invalid("htu %q: %v", pr.htu, err)
	}
	if got != want {
		return "", invalid("htu %q is not the request's URL %s", pr.htu, p.URL)
	}
	now := v.now()
	// Times are compared, not durations: iat.Sub saturates at 292 years,
	// and a saturated duration negated overflows, which once let a proof
	// dated centuries ahead pass as current.
	if pr.iat.Before(now.Add(-v.window)) {
		return "", invalid("issued %v ago, more than the window (%v)", now.Sub(pr.iat).Round(time.Second), v.window)
	} else if pr.iat.After(now.Add(v.window)) {
		return "", invalid("issued %v in the future, more than the window (%v)", pr.iat.Sub(now).Round(time.Second), v.window)
	}
	if pr.ath == "" {
		return "", invalid("no ath: a proof presented with an access token carries its hash")
	}
	if subtle.ConstantTimeCompare([]byte(pr.ath), []byte(tokenHash(p.AccessToken))) != 1 {
		return "", invalid("ath is not the hash of the access token presented")
	}
	if subtle.ConstantTimeCompare([]byte(pr.jkt), []byte(p.KeyThumbprint)) != 1 {
		return "", invalid("the proof's key (thumbprint %s) is not the one the token is bound to", pr.jkt)
	}
	var next string
	if v.nonceKey != nil {
		cur := v.epoch(now)
		switch e, ok := v.nonceEpoch(pr.nonce); {
		case pr.nonce == "":
			return "", &resourceserver.DPoPNonceError{Nonce: v.nonce(cur), Reason: "the proof has no nonce"}
		case !ok || (e != cur && e != cur-1):
			return "", &resourceserver.DPoPNonceError{Nonce: v.nonce(cur), Reason: "the proof's nonce is not a current one of this server"}
		case e != cur:
			next = v.nonce(cur) // still good; here is the one after it
		}
	}
	// Recorded last: a proof refused for any other reason must not burn
	// a jti, and only a proof of the token's own key gets this far.
	err = v.replay.Consume(ctx, proofID(pr.jkt, want, pr.jti), pr.iat.Add(v.window+time.Second), p.Caller)
	switch {
	case err == nil:
		return next, nil
	case errors.Is(err, ErrReplayed):
		return "", invalid("jti %q was used before", pr.jti)
	default:
		return "", fmt.Errorf("%w: recording a DPoP proof: %w", resourceserver.ErrUnavailable, err)
	}
}

// proofID is the replay store's key of a proof: its jti, in the context of
// its key and URL (RFC 9449 section 11.1), hashed so that the store holds
// a fixed size whatever the proof says.
func proofID(jkt, htu, jti string) ProofID {
	h := sha256.New()
	for _, s := range [...]string{jkt, htu, jti} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	var id ProofID
	h.Sum(id[:0])
	return id
}

// tokenHash is a proof's ath for token: base64url(SHA-256(token)).
func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// epoch is the nonce period now falls in.
func (v *Verifier) epoch(now time.Time) uint64 {
	return uint64(now.UnixNano()) / uint64(v.lifetime)
}

// nonce is the nonce of period e: the period and a MAC of it under
// NonceKey, which no one without the key can forge or predict.
func (v *Verifier) nonce(e uint64) string {
	var b [8 + nonceMAC]byte
	binary.BigEndian.PutUint64(b[:8], e)
	copy(b[8:], v.mac(e))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// nonceMAC is how many bytes of the MAC a nonce carries.
const nonceMAC = 16

func (v *Verifier) mac(e uint64) []byte {
	m := hmac.New(sha256.New, v.nonceKey)
	m.Write([]byte("parley dpop nonce\x00"))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], e)
	m.Write(b[:])
	return m.Sum(nil)[:nonceMAC]
}

// nonceEpoch reads the period of a nonce this server made; ok is false for
// anything else.
func (v *Verifier) nonceEpoch(nonce string) (uint64, bool) {
	b, err := base64.RawURLEncoding.DecodeString(nonce)
	if err != nil || len(b) != 8+nonceMAC {
		return 0, false
	}
	e := binary.BigEndian.Uint64(b[:8])
	return e, hmac.Equal(b[8:], v.mac(e))
}

// Nonce returns the nonce proofs must carry now, with Options.NonceKey, or
// "" without: for a server that hands it out before it is asked (in a 401
// without credentials, say).
func (v *Verifier) Nonce() string {
	if v.nonceKey == nil {
		return ""
	}
	return v.nonce(v.epoch(v.now()))
}

// proof is a DPoP proof whose signature verified, with its claims.
type proof struct {
	jkt   string // the thumbprint of its jwk
	jti   string
	htm   string
	htu   string
	iat   time.Time
	ath   string
	nonce string
}

// claims are a proof's claims as they are sent; pointers tell a claim that
// is missing from an empty one.
type claims struct {
	JTI   *string  `json:"jti"`
	HTM   *string  `json:"htm"`
	HTU   *string  `json:"htu"`
	IAT   *float64 `json:"iat"`
	ATH   *string  `json:"ath"`
	Nonce *string  `json:"nonce"`
}

// maxIAT keeps iat in time.Time's range: about 34,000 years.
const maxIAT = 1 << 40

// parseProof parses and verifies a proof (RFC 9449 section 4.3, steps 2 to
// 7): its syntax, typ, alg, jwk and signature, and reads its claims,
// checking the required ones are there (step 3). Every refusal matches
// resourceserver.ErrInvalidDPoPProof.
func parseProof(s string, algs []jose.SignatureAlgorithm, maxSize int) (*proof, error) {
	if len(s) > maxSize {
		return nil, invalid("the proof has %d bytes, more than the limit of %d (Options.MaxProofSize)", len(s), maxSize)
	}
	if strings.Count(s, ".") != 2 {
		return nil, invalid("not a JWS in compact form")
	}
	jws, err := jose.ParseSignedCompact(s, algs)
	if err != nil {
		// Also where an algorithm outside Options.Algorithms ends.
		return nil, invalid("%v", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, invalid("%d signatures", len(jws.Signatures))
	}
	h := jws.Signatures[0].Protected
	typ, _ := h.ExtraHeaders[jose.HeaderType].(string)
	if !strings.EqualFold(typ, "dpop+jwt") {
		return nil, invalid("typ %q is not dpop+jwt", typ)
	}
	jwk := h.JSONWebKey
	if jwk == nil {
		return nil, invalid("no jwk in the header")
	}
	if !jwk.IsPublic() {
		return nil, invalid("the jwk is a private key")
	}
	if !jwk.Valid() {
		return nil, invalid("the jwk is not a valid key")
	}
	if k, ok := jwk.Key.(*rsa.PublicKey); ok && k.N.BitLen() < minRSABits {
		return nil, invalid("an RSA key of %d bits; at least %d are needed", k.N.BitLen(), minRSABits)
	}
	payload, err := jws.Verify(jwk)
	if err != nil {
		return nil, invalid("the signature does not verify with the jwk")
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, invalid("the claims: %v", err)
	}
	switch {
	case c.JTI == nil || *c.JTI == "":
		return nil, invalid("no jti")
	case c.HTM == nil || *c.HTM == "":
		return nil, invalid("no htm")
	case c.HTU == nil || *c.HTU == "":
		return nil, invalid("no htu")
	case c.IAT == nil:
		return nil, invalid("no iat")
	case math.IsNaN(*c.IAT) || *c.IAT < 0 || *c.IAT > maxIAT:
		return nil, invalid("iat %v is out of range", *c.IAT)
	}
	tp, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, invalid("the jwk has no thumbprint: %v", err)
	}
	sec, frac := math.Modf(*c.IAT)
	p := &proof{
		jkt: base64.RawURLEncoding.EncodeToString(tp),
		jti: *c.JTI, htm: *c.HTM, htu: *c.HTU,
		iat: time.Unix(int64(sec), int64(frac*1e9)),
	}
	if c.ATH != nil {
		p.ath = *c.ATH
	}
	if c.Nonce != nil {
		p.nonce = *c.Nonce
	}
	return p, nil
}
