package requeststate

import (
	"strconv"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

func formQuestion(message string) mcp.InputRequest {
	return mcp.NewElicitFormRequest(message, mcp.ElicitRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{"ok": &mcp.BooleanSchema{}},
		Required:   []string{"ok"},
	})
}

// The cache must answer exactly what digesting answers, for each question,
// whether it hits, misses, was emptied or is bypassed.
func TestCachedQuestionDigestIsTheDigest(t *testing.T) {
	check := func(q mcp.InputRequest) {
		t.Helper()
		want, err := questionDigest(q)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // a miss, then a hit
			got, err := cachedQuestionDigest(q)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("cached digest of %v = %x, want %x", q, got, want)
			}
		}
	}
	a, b := formQuestion("Book BER to LIS?"), formQuestion("Book BER to OPO?")
	check(a)
	check(b) // a different question right after a cached one
	check(a)
	da, _ := cachedQuestionDigest(a)
	db, _ := cachedQuestionDigest(b)
	if da == db {
		t.Fatal("two different questions share a digest")
	}
	for i := range maxCachedQuestions + 10 { // past the bound: emptied, still right
		check(formQuestion("Question " + strconv.Itoa(i) + "?"))
	}
	questionCache.RLock()
	n := len(questionCache.m)
	questionCache.RUnlock()
	if n > maxCachedQuestions {
		t.Errorf("the cache holds %d questions, over its bound of %d", n, maxCachedQuestions)
	}
	check(formQuestion(strings.Repeat("long ", maxCachedQuestionLen/4))) // not cached
	questionCache.RLock()
	defer questionCache.RUnlock()
	for k := range questionCache.m {
		if len(k) > maxCachedQuestionLen {
			t.Errorf("a question of %d bytes was cached, over the bound of %d", len(k), maxCachedQuestionLen)
		}
	}
}
