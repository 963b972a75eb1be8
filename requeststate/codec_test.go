package requeststate_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/requeststate"
)

func mustCodec(t testing.TB, keys ...[]byte) *requeststate.AESGCM {
	t.Helper()
	c, err := requeststate.NewAESGCM(keys)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCodecRoundTrip(t *testing.T) {
	c := mustCodec(t, key(1))
	for _, p := range [][]byte{nil, []byte("x"), []byte("héllo, wörld"), {0, 1, 2, 255}, bytes.Repeat([]byte("ab"), 32<<10)} {
		tok, err := c.Seal(p)
		if err != nil {
			t.Fatal(err)
		}
		// prefix + base64url of kid(4) nonce(12) ciphertext tag(16), exactly.
		if want := 4 + base64.RawURLEncoding.EncodedLen(32+len(p)); len(tok) != want || !strings.HasPrefix(tok, "rs1.") {
			t.Fatalf("token of %d bytes: length %d, want %d, prefix %q", len(p), len(tok), want, tok[:4])
		}
		if len(p) > 4 && strings.Contains(tok, base64.RawURLEncoding.EncodeToString(p[:len(p)/3*3])) {
			t.Fatal("the token shows its plaintext")
		}
		got, err := c.Unseal(tok)
		if err != nil || !bytes.Equal(got, p) {
			t.Fatalf("Unseal = %q, %v; want %q", got, err, p)
		}
	}
	a, _ := c.Seal([]byte("same"))
	b, _ := c.Seal([]byte("same"))
	if a == b {
		t.Fatal("two seals of one plaintext gave one token: the nonce is not fresh")
	}
}

// wantInvalid fails unless err is an ErrInvalidState with the reason.
func wantInvalid(t *testing.T, what string, err error, reason string) {
	t.Helper()
	var ise *requeststate.InvalidStateError
	if !errors.Is(err, requeststate.ErrInvalidState) || !errors.As(err, &ise) {
		t.Fatalf("%s: err = %v, want ErrInvalidState", what, err)
	}
	if reason != "" && ise.Reason != reason {
		t.Fatalf("%s: reason %q, want %q", what, ise.Reason, reason)
	}
}

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// TestTamperMatrix changes every character of a token to every other
// character of the alphabet, and flips every bit of its decoded body: no
// variant may unseal.
func TestTamperMatrix(t *testing.T) {
	c := mustCodec(t, key(1))
	tok, err := c.Seal([]byte(`{"round":2,"answers":{"name":"Alice"}}`))
	if err != nil {
		t.Fatal(err)
	}
	variants := 0
	for i := 0; i < len(tok); i++ {
		for j := 0; j < len(alphabet)+1; j++ {
			var ch byte = '.'
			if j < len(alphabet) {
				ch = alphabet[j]
			}
			if ch == tok[i] {
				continue
			}
			bad := tok[:i] + string(ch) + tok[i+1:]
			if _, err := c.Unseal(bad); !errors.Is(err, requeststate.ErrInvalidState) {
				t.Fatalf("token with byte %d changed to %q unsealed (err %v)", i, ch, err)
			}
			variants++
		}
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(tok, "rs1."))
	if err != nil {
		t.Fatal(err)
	}
	for i := range raw {
		for bit := range 8 {
			flipped := bytes.Clone(raw)
			flipped[i] ^= 1 << bit
			bad := "rs1." + base64.RawURLEncoding.EncodeToString(flipped)
			_, err := c.Unseal(bad)
			reason := "authentication failed"
			if i < 4 {
				reason = "unknown key"
			}
			wantInvalid(t, "bit flip", err, reason)
			variants++
		}
	}
	t.Logf("%d variants refused", variants)
}

func TestMalformedTokens(t *testing.T) {
	c := mustCodec(t, key(1))
	tok, _ := c.Seal([]byte("state"))
	body := strings.TrimPrefix(tok, "rs1.")
	cases := map[string]string{
		"empty":             "",
		"no prefix":         body,
		"another prefix":    "rs2." + body,
		"upper-case":        "RS1." + body,
		"prefix only":       "rs1.",
		"padding":           tok + "=",
		"newline inside":    tok[:10] + "\n" + tok[10:],
		"trailing newline":  tok + "\n",
		"space":             tok + " ",
		"std alphabet":      strings.NewReplacer("-", "+", "_", "/").Replace(tok) + strings.Repeat("+", 0),
		"too short":         "rs1." + base64.RawURLEncoding.EncodeToString(make([]byte, 31)),
		"one char too few":  tok[:len(tok)-1],
		"garbage":           "rs1.!!!!",
		"impossible length": "rs1." + body + "A",
	}
	for name, bad := range cases {
		if bad == tok {
			continue // the replacer found nothing to replace
		}
		_, err := c.Unseal(bad)
		wantInvalid(t, name, err, "")
	}
	// Truncation at every length.
	for n := 0; n < len(tok); n++ {
		if _, err := c.Unseal(tok[:n]); !errors.Is(err, requeststate.ErrInvalidState) {
			t.Fatalf("token truncated to %d characters unsealed", n)
		}
	}
}

// TestNonCanonicalLastCharacter: base64url's last character may carry
// unused bits; every spelling but the canonical one is refused.
func TestNonCanonicalLastCharacter(t *testing.T) {
	c := mustCodec(t, key(1))
	for n := 0; n < 3; n++ { // plaintext lengths giving each tail size
		tok, _ := c.Seal(bytes.Repeat([]byte{'a'}, n))
		if len(strings.TrimPrefix(tok, "rs1."))%4 == 0 {
			continue // no partial group: no unused bits
		}
		last := tok[len(tok)-1]
		for j := 0; j < len(alphabet); j++ {
			if alphabet[j] == last {
				continue
			}
			if _, err := c.Unseal(tok[:len(tok)-1] + alphabet[j:j+1]); !errors.Is(err, requeststate.ErrInvalidState) {
				t.Fatalf("last character %q for %q unsealed", alphabet[j], last)
			}
		}
	}
}

func TestTransplantedKeyID(t *testing.T) {
	a := mustCodec(t, key(1))
	b := mustCodec(t, key(2))
	both := mustCodec(t, key(1), key(2))
	ta, _ := a.Seal([]byte("state"))
	tb, _ := b.Seal([]byte("state"))
	ra, _ := base64.RawURLEncoding.DecodeString(ta[4:])
	rb, _ := base64.RawURLEncoding.DecodeString(tb[4:])
	copy(ra[:4], rb[:4]) // a's ciphertext, labelled with b's key
	forged := "rs1." + base64.RawURLEncoding.EncodeToString(ra)
	_, err := both.Unseal(forged)
	wantInvalid(t, "transplanted key id", err, "authentication failed")
	_, err = a.Unseal(tb)
	wantInvalid(t, "foreign key", err, "unknown key")
}

func TestRingRotation(t *testing.T) {
	oldKey, newKey := key(1), key(2)
	phase0 := mustCodec(t, oldKey)
	phase1 := mustCodec(t, oldKey, newKey)
	phase2 := mustCodec(t, newKey, oldKey)
	phase3 := mustCodec(t, newKey)
	t0, _ := phase0.Seal([]byte("0"))
	t1, _ := phase1.Seal([]byte("1"))
	t2, _ := phase2.Seal([]byte("2"))
	for name, ok := range map[string]bool{
		"phase 1 reads phase 0": unseals(phase1, t0), "phase 0 reads phase 1": unseals(phase0, t1),
		"phase 2 reads phase 1": unseals(phase2, t1), "phase 1 reads phase 2": unseals(phase1, t2),
		"phase 3 reads phase 2": unseals(phase3, t2),
	} {
		if !ok {
			t.Errorf("%s: refused", name)
		}
	}
	if unseals(phase3, t1) || unseals(phase0, t2) {
		t.Error("a retired or unknown key still unseals")
	}
}

func unseals(c requeststate.Codec, tok string) bool {
	_, err := c.Unseal(tok)
	return err == nil
}

func TestKeyErrors(t *testing.T) {
	cases := []struct {
		keys [][]byte
		want string
	}{
		{nil, "the key ring is empty"},
		{[][]byte{key(1), make([]byte, 31)}, "keys[1] is 31 bytes; a key must be at least 32 bytes"},
		{[][]byte{key(1), key(2), key(1)}, "keys[2] duplicates keys[0]"},
	}
	for _, c := range cases {
		_, err := requeststate.NewAESGCM(c.keys)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("keys %d: err = %v, want %q", len(c.keys), err, c.want)
		}
	}
	_, err := requeststate.NewAESGCM([][]byte{make([]byte, 16)})
	var ke *requeststate.KeyError
	if !errors.As(err, &ke) || ke.Index != 0 || !strings.Contains(err.Error(), "openssl rand -base64 32") {
		t.Errorf("short key: %v, want a *KeyError for keys[0] that says how to make a key", err)
	}
}

func TestKeysAreCopied(t *testing.T) {
	k := key(1)
	c := mustCodec(t, k)
	tok, _ := c.Seal([]byte("x"))
	clear(k)
	if !unseals(c, tok) {
		t.Fatal("wiping the caller's key broke the codec")
	}
}

func TestParseKeys(t *testing.T) {
	a := base64.StdEncoding.EncodeToString(key(1))
	b := base64.RawURLEncoding.EncodeToString(key(2))
	keys, err := requeststate.ParseKeys(" " + a + ",\n" + b + " ")
	if err != nil || len(keys) != 2 || !bytes.Equal(keys[0], key(1)) || !bytes.Equal(keys[1], key(2)) {
		t.Fatalf("ParseKeys = %v, %v", keys, err)
	}
	if _, err := requeststate.ParseKeys("  "); err == nil {
		t.Error("no keys parsed without error")
	}
	if _, err := requeststate.ParseKeys(a + ",not*base64"); err == nil || strings.Contains(err.Error(), "not*base64") {
		t.Errorf("bad key: %v (the error must not echo key text)", err)
	}
}
