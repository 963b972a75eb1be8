package requeststate_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/requeststate"
)

// spread returns a 32-byte key that cycles through n distinct byte values.
func spread(n int) []byte {
	k := make([]byte, 32)
	for i := range k {
		k[i] = byte(0x41 + i%n)
	}
	return k
}

func TestWeakKeysRefused(t *testing.T) {
	weak := map[string][]byte{
		"32 zero bytes":         make([]byte, 32),
		"one repeated byte":     bytes.Repeat([]byte{0x5a}, 32),
		"64 zero bytes":         make([]byte, 64),
		"two-byte pattern":      bytes.Repeat([]byte{0xde, 0xad}, 16),
		"a word repeated":       []byte(strings.Repeat("secret", 6)),
		"15 distinct values":    spread(requeststate.MinKeyDistinctBytes - 1),
		"ASCII digits repeated": []byte(strings.Repeat("0123456789", 4)),
	}
	for name, k := range weak {
		for _, ring := range [][][]byte{{k}, {key(1), k}} {
			_, err := requeststate.NewAESGCM(ring)
			if !errors.Is(err, requeststate.ErrWeakKey) {
				t.Errorf("%s (ring of %d): err = %v, want ErrWeakKey", name, len(ring), err)
				continue
			}
			var ke *requeststate.KeyError
			if !errors.As(err, &ke) || ke.Index != len(ring)-1 {
				t.Errorf("%s: err = %#v, want a KeyError for keys[%d]", name, err, len(ring)-1)
			}
			if !strings.Contains(err.Error(), "distinct byte values") {
				t.Errorf("%s: the error does not say why: %v", name, err)
			}
		}
		// Through a Policy, where keys usually enter.
		if _, err := requeststate.NewBoundary("svc", &requeststate.Policy{Keys: [][]byte{k}}); !errors.Is(err, requeststate.ErrWeakKey) {
			t.Errorf("%s via Policy: err = %v, want ErrWeakKey", name, err)
		}
	}

	good := map[string][]byte{
		"16 distinct values": spread(requeststate.MinKeyDistinctBytes),
		"hashed":             key(7),
	}
	for range 100 {
		k := make([]byte, 32)
		rand.Read(k)
		good["random"] = k
		for name, k := range good {
			if _, err := requeststate.NewAESGCM([][]byte{k}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
	// A short key is refused for its length, not as weak.
	if _, err := requeststate.NewAESGCM([][]byte{make([]byte, 8)}); err == nil || errors.Is(err, requeststate.ErrWeakKey) {
		t.Errorf("short zero key: err = %v, want the length error", err)
	}
}
