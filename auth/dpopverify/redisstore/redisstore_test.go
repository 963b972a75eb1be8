package redisstore_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/parley-mcp/parley/auth/dpopverify"
	"github.com/parley-mcp/parley/auth/dpopverify/redisstore"
	"github.com/parley-mcp/parley/auth/resourceserver"
	"github.com/parley-mcp/parley/internal/redistest"
)

func id(n byte) dpopverify.ProofID {
	var i dpopverify.ProofID
	i[0], i[31] = n, 0xa5
	return i
}

// SET NX: the first Consume records the id under the prefix until the
// expiry (rounded up to the millisecond), every later one is ErrReplayed.
func TestConsumeOnce(t *testing.T) {
	rs := redistest.Start(t)
	c := rs.Client(t)
	s := redisstore.New(c, nil)
	ctx := context.Background()
	expires := time.Now().Add(10 * time.Minute).Truncate(time.Millisecond).Add(123*time.Millisecond + 400*time.Microsecond)
	if err := s.Consume(ctx, id(1), expires, "caller"); err != nil {
		t.Fatal(err)
	}
	if err := s.Consume(ctx, id(1), expires.Add(time.Hour), "another"); !errors.Is(err, dpopverify.ErrReplayed) {
		t.Fatalf("second Consume: %v, want ErrReplayed", err)
	}
	key := redisstore.DefaultPrefix + id(1).String()
	want := expires.Add(time.Millisecond).Truncate(time.Millisecond).UnixMilli()
	if got, err := c.Do(ctx, "PEXPIRETIME", key).Int64(); err != nil || got != want {
		t.Fatalf("PEXPIRETIME %s = %d, %v; want %d", key, got, err, want)
	}
	if err := s.Consume(ctx, id(2), time.Time{}, ""); err == nil || !strings.Contains(err.Error(), "no expiry") {
		t.Fatalf("zero expiry: %v", err)
	}
	p := redisstore.New(c, &redisstore.Options{Prefix: "other:"})
	if err := p.Consume(ctx, id(1), expires, ""); err != nil {
		t.Fatalf("another prefix: %v", err)
	}
	if n, _ := c.Exists(ctx, "other:"+id(1).String()).Result(); n != 1 {
		t.Error("the prefix was not used")
	}
}

// Redis gone: the store says so, and the verifier refuses the proof as
// unavailable (503), never as accepted.
func TestRedisDown(t *testing.T) {
	rs := redistest.Start(t)
	s := redisstore.New(rs.Client(t), nil)
	rs.Stop()
	err := s.Consume(context.Background(), id(1), time.Now().Add(time.Minute), "")
	if err == nil || errors.Is(err, dpopverify.ErrReplayed) {
		t.Fatalf("Consume with Redis stopped: %v", err)
	}
	v, err := dpopverify.New(&dpopverify.Options{Replay: s})
	if err != nil {
		t.Fatal(err)
	}
	k, jkt := key(t)
	_, err = v.VerifyProof(context.Background(), request(t, k, jkt, proof(t, k)))
	if !errors.Is(err, resourceserver.ErrUnavailable) {
		t.Fatalf("VerifyProof with Redis stopped: %v, want ErrUnavailable", err)
	}
}

// A fleet: two instances (verifiers with their own Redis clients) share one
// Redis; a proof accepted by one is refused by the other, and of 16
// concurrent presentations of one proof across both, exactly one is
// accepted.
func TestFleet(t *testing.T) {
	rs := redistest.Start(t)
	a, _ := dpopverify.New(&dpopverify.Options{Replay: redisstore.New(rs.Client(t), nil)})
	b, _ := dpopverify.New(&dpopverify.Options{Replay: redisstore.New(rs.Client(t), nil)})
	k, jkt := key(t)
	p := proof(t, k)
	if _, err := a.VerifyProof(context.Background(), request(t, k, jkt, p)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.VerifyProof(context.Background(), request(t, k, jkt, p)); !errors.Is(err, resourceserver.ErrInvalidDPoPProof) {
		t.Fatalf("the other instance: %v, want a replay refused", err)
	}
	p2 := proof(t, k)
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted := 0
	for i := range 16 {
		v := a
		if i%2 == 1 {
			v = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := v.VerifyProof(context.Background(), request(t, k, jkt, p2)); err == nil {
				mu.Lock()
				accepted++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if accepted != 1 {
		t.Fatalf("%d of 16 presentations accepted, want 1", accepted)
	}
}

const target = "https://mcp.example.com/mcp"

func key(t *testing.T) (crypto.Signer, string) {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tp, _ := (&jose.JSONWebKey{Key: k.Public()}).Thumbprint(crypto.SHA256)
	return k, base64.RawURLEncoding.EncodeToString(tp)
}

func proof(t *testing.T, k crypto.Signer) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k}, (&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"jti": rand.Text(), "htm": "POST", "htu": target, "iat": time.Now().Unix(), "ath": ath("tok")})
	jws, err := s.Sign(b)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := jws.CompactSerialize()
	return out
}

func ath(tok string) string {
	h := crypto.SHA256.New()
	h.Write([]byte(tok))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

func request(t *testing.T, _ crypto.Signer, jkt, p string) *resourceserver.DPoPProof {
	return &resourceserver.DPoPProof{Proof: p, Method: "POST", URL: target, AccessToken: "tok", KeyThumbprint: jkt}
}
