package questionkey_test

import (
	"context"
	"testing"

	"github.com/parley-mcp/parley/internal/questionkey"
)

// TestWithFrom: a key and its round come back as they went in; a context
// without them says so.
func TestWithFrom(t *testing.T) {
	if _, _, ok := questionkey.From(context.Background()); ok {
		t.Fatal("From of a bare context: ok")
	}
	round := new(questionkey.Round)
	ctx := questionkey.With(context.Background(), "region", round)
	key, got, ok := questionkey.From(ctx)
	if !ok || key != "region" || got != round {
		t.Fatalf("From = %q, %p, %v; want region, %p, true", key, got, ok, round)
	}
	if _, other, _ := questionkey.From(questionkey.With(ctx, "size", new(questionkey.Round))); other == round {
		t.Error("a second round is the first")
	}
}

// TestEnable: keys are off until Enable, and on for good after it.
func TestEnable(t *testing.T) {
	if questionkey.Enabled() {
		t.Fatal("enabled before Enable")
	}
	questionkey.Enable()
	if !questionkey.Enabled() {
		t.Fatal("not enabled after Enable")
	}
}
