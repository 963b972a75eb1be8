package requeststate

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// The token format of the built-in codec:
//
//	"rs1." base64url-without-padding( kid[4] || nonce[12] || ciphertext || tag[16] )
//
// The prefix names the format, not the algorithm: a future format gets a new
// prefix, and the prefix is authenticated (with the key id) as associated
// data, so a token cannot be re-labelled into another format or moved to
// another slot of the ring.
const (
	tokenPrefix = "rs1."
	kidLen      = 4
	nonceLen    = 12
	tagLen      = 16
	// minRawLen is the shortest body a token can have: an empty plaintext.
	minRawLen = kidLen + nonceLen + tagLen
)

// MinKeyLen is the shortest key the built-in codec accepts: 32 bytes, so
// that a key has at least the 256 bits of the AES-256 key derived from it.
const MinKeyLen = 32

// The HKDF info strings. Each derived value has its own, so the key id
// reveals nothing about the encryption key.
const (
	hkdfInfoAEAD = "parley/requeststate/v1/aes-256-gcm"
	hkdfInfoKID  = "parley/requeststate/v1/key-id"
)

var (
	// b64 is the only spelling a token may use: unpadded base64url, with
	// the unused bits of the last character zero.
	b64 = base64.RawURLEncoding.Strict()
)

// AESGCM is the built-in [Codec]: AES-256-GCM under keys derived with
// HKDF-SHA256 from a ring of secrets. The first key seals; every key
// unseals, which is what makes rotation without downtime possible (see the
// package documentation).
//
// Each token carries a fresh random 96-bit nonce. Random nonces are safe for
// about 2^32 tokens per key; rotate a key long before it has sealed that
// many (at a sustained 100 tokens a second that is more than a year).
type AESGCM struct {
	keys []ringKey
}

// ringKey is one key of the ring, ready to use: its AEAD is built once, at
// construction, and its associated data precomputed.
type ringKey struct {
	id   [kidLen]byte
	ad   [len(tokenPrefix) + kidLen]byte
	aead cipher.AEAD
}

// MinKeyDistinctBytes is the fewest distinct byte values a key must hold:
// a key with fewer is refused as not random (see [ErrWeakKey]).
//
// This is a cheap guard against blunders, not an entropy estimate: an
// all-zero key, a key of one repeated byte, a short pattern repeated, or a
// word typed over and over. 32 bytes drawn uniformly at random hold about
// 30.1 distinct values on average, and fewer than 16 with probability about
// 3.2e-17 (the count follows the occupancy distribution: the chance of
// exactly k distinct values is C(256,k)·S(32,k)·k!/256^32, S being Stirling
// numbers of the second kind), so a real key is never refused. A key that
// passes is not thereby a good one: only a key from a cryptographic random
// source is.
const MinKeyDistinctBytes = 16

// ErrWeakKey is wrapped by the [KeyError] of a key refused because it
// cannot be random: it holds fewer than [MinKeyDistinctBytes] distinct byte
// values, like 32 zero bytes do. Match it with errors.Is.
var ErrWeakKey = errors.New("requeststate: key is not random")

// KeyError reports a key that NewAESGCM (or a [Policy]) refuses. Index is
// the key's position in the ring. Err, when set, is the class of the
// refusal ([ErrWeakKey]) for errors.Is.
type KeyError struct {
	Index  int
	Reason string
	Err    error
}

// Unwrap returns the class of the refusal, if it has one.
func (e *KeyError) Unwrap() error { return e.Err }

// distinctBytes counts the distinct byte values of b.
func distinctBytes(b []byte) int {
	var seen [256]bool
	n := 0
	for _, c := range b {
		if !seen[c] {
			seen[c] = true
			n++
		}
	}
	return n
}

// Error names the key and, for a short key, says how to make a good one.
func (e *KeyError) Error() string {
	return fmt.Sprintf("requeststate: keys[%d] %s", e.Index, e.Reason)
}

// NewAESGCM returns the built-in codec for a key ring. keys[0] seals new
// tokens; every key unseals. Each key must be at least [MinKeyLen] bytes of
// secret randomness (a key with fewer than [MinKeyDistinctBytes] distinct
// byte values is refused with [ErrWeakKey]), and no key may appear twice. The keys are copied: the
// caller may wipe its slices afterwards.
func NewAESGCM(keys [][]byte) (*AESGCM, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("requeststate: the key ring is empty; give at least one key of %d or more random bytes", MinKeyLen)
	}
	c := &AESGCM{keys: make([]ringKey, len(keys))}
	for i, secret := range keys {
		if len(secret) < MinKeyLen {
			return nil, &KeyError{Index: i, Reason: fmt.Sprintf(
				"is %d bytes; a key must be at least %d bytes of secret randomness. Generate one with `openssl rand -base64 32` (or `head -c 32 /dev/urandom | base64`) and decode it with ParseKeys",
				len(secret), MinKeyLen)}
		}
		if n := distinctBytes(secret); n < MinKeyDistinctBytes {
			return nil, &KeyError{Index: i, Err: ErrWeakKey, Reason: fmt.Sprintf(
				"has only %d distinct byte values (at least %d are required; random 32 bytes have about 30), so it is not random: an all-zero or repeated-pattern key is as good as none. Generate one with `openssl rand -base64 32`",
				n, MinKeyDistinctBytes)}
		}
		for j := range i {
			if bytes.Equal(secret, keys[j]) {
				return nil, &KeyError{Index: i, Reason: fmt.Sprintf("duplicates keys[%d]", j)}
			}
		}
		k, err := newRingKey(secret)
		if err != nil {
			return nil, &KeyError{Index: i, Reason: err.Error()}
		}
		for j := range i {
			if c.keys[j].id == k.id {
				// Distinct keys with one 32-bit id: astronomically rare,
				// but a ring must map ids to keys one to one.
				return nil, &KeyError{Index: i, Reason: fmt.Sprintf("has the same key id as keys[%d]; generate another key", j)}
			}
		}
		c.keys[i] = k
	}
	return c, nil
}

func newRingKey(secret []byte) (ringKey, error) {
	var k ringKey
	aeadKey, err := hkdf.Key(sha256.New, secret, nil, hkdfInfoAEAD, 32)
	if err != nil {
		return k, err
	}
	kid, err := hkdf.Key(sha256.New, secret, nil, hkdfInfoKID, kidLen)
	if err != nil {
		return k, err
	}
	block, err := aes.NewCipher(aeadKey)
	if err != nil {
		return k, err
	}
	if k.aead, err = cipher.NewGCM(block); err != nil {
		return k, err
	}
	copy(k.id[:], kid)
	copy(k.ad[:], tokenPrefix)
	copy(k.ad[len(tokenPrefix):], kid)
	return k, nil
}

// encodeChunk is how many raw bytes Seal encodes at a time: a multiple of 3,
// so that only the last chunk has a partial group.
const encodeChunk = 768

// Seal encrypts plaintext under the first key of the ring.
func (c *AESGCM) Seal(plaintext []byte) (string, error) {
	k := &c.keys[0]
	raw := make([]byte, kidLen+nonceLen, minRawLen+len(plaintext))
	copy(raw, k.id[:])
	nonce := raw[kidLen : kidLen+nonceLen]
	rand.Read(nonce) // never fails (it aborts the program instead)
	raw = k.aead.Seal(raw, nonce, plaintext, k.ad[:])

	// Encode straight into the string's storage, through a stack buffer,
	// so the token costs one allocation beyond raw.
	var b strings.Builder
	b.Grow(len(tokenPrefix) + b64.EncodedLen(len(raw)))
	b.WriteString(tokenPrefix)
	var buf [encodeChunk / 3 * 4]byte
	for len(raw) > 0 {
		n := min(len(raw), encodeChunk)
		b64.Encode(buf[:], raw[:n])
		b.Write(buf[:b64.EncodedLen(n)])
		raw = raw[n:]
	}
	return b.String(), nil
}

// Unseal decrypts a token sealed under any key of the ring. Every failure
// is an *InvalidStateError: "malformed" (not this format, not canonical
// base64url, too short), "unknown key" (sealed under a key this ring lacks:
// most often another instance's process-local key, or a retired one) or
// "authentication failed" (altered, or sealed for another format).
func (c *AESGCM) Unseal(token string) ([]byte, error) {
	body, ok := strings.CutPrefix(token, tokenPrefix)
	if !ok {
		return nil, invalid(reasonMalformed)
	}
	raw, ok := decodeStrict(body)
	if !ok || len(raw) < minRawLen {
		return nil, invalid(reasonMalformed)
	}
	var k *ringKey
	for i := range c.keys {
		if string(c.keys[i].id[:]) == string(raw[:kidLen]) {
			k = &c.keys[i]
			break
		}
	}
	if k == nil {
		return nil, invalid(reasonUnknownKey)
	}
	// Decrypt in place: the plaintext overwrites the ciphertext.
	sealed := raw[kidLen+nonceLen:]
	plain, err := k.aead.Open(sealed[:0], raw[kidLen:kidLen+nonceLen], sealed, k.ad[:])
	if err != nil {
		return nil, invalid(reasonAuthFailed)
	}
	return plain, nil
}

// decodeStrict decodes unpadded base64url, accepting exactly the text
// Encode produces. The standard decoder in strict mode already refuses
// padding and non-zero trailing bits but skips CR and LF, so every byte is
// checked against the alphabet first.
func decodeStrict(s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if !isBase64URL(s[i]) {
			return nil, false
		}
	}
	raw := make([]byte, b64.DecodedLen(len(s)))
	n, err := b64.Decode(raw, []byte(s))
	if err != nil {
		return nil, false
	}
	return raw[:n], true
}

func isBase64URL(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// ParseKeys reads a key ring from text, such as an environment variable:
// keys in standard or URL-safe base64 (padded or not), separated by commas
// or white space, the sealing key first. It checks nothing but the
// encoding; NewAESGCM and the Policy check the keys themselves.
//
//	keys, err := requeststate.ParseKeys(os.Getenv("MCP_STATE_KEYS"))
func ParseKeys(text string) ([][]byte, error) {
	fields := strings.FieldsFunc(text, func(r rune) bool {
		return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	})
	if len(fields) == 0 {
		return nil, fmt.Errorf("requeststate: no keys in the text")
	}
	keys := make([][]byte, len(fields))
	for i, f := range fields {
		var err error
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if keys[i], err = enc.DecodeString(f); err == nil {
				break
			}
		}
		if err != nil {
			return nil, fmt.Errorf("requeststate: key %d is not base64", i)
		}
	}
	return keys, nil
}
