package auth_test

import (
	"context"
	"testing"

	"github.com/parley-mcp/parley/auth"
)

func TestInfoRoundTrip(t *testing.T) {
	ctx := context.Background()
	if auth.InfoFrom(ctx) != nil {
		t.Fatal("a bare context carries auth info")
	}
	want := &auth.Info{ClientID: "c", Issuer: "https://as.example", Subject: "alice"}
	if got := auth.InfoFrom(auth.WithInfo(ctx, want)); got != want {
		t.Fatalf("InfoFrom = %v, want %v", got, want)
	}
	// A plain string key of the same spelling must not be mistaken for it.
	ctx = context.WithValue(ctx, "auth.Info", want) // deliberately the wrong kind of key
	if auth.InfoFrom(ctx) != nil {
		t.Fatal("a foreign context key was read as auth info")
	}
}
