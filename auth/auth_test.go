package auth_test

import (
	"context"
	"testing"
	"time"

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
	//lint:ignore SA1029 deliberately the wrong kind of key
	ctx = context.WithValue(ctx, "auth.Info", want)
	if auth.InfoFrom(ctx) != nil {
		t.Fatal("a foreign context key was read as auth info")
	}
}

func TestSameCaller(t *testing.T) {
	base := &auth.Info{ClientID: "c", Issuer: "https://as.example", Subject: "alice", Scopes: []string{"read"}, Expiry: time.Unix(100, 0)}
	refreshed := &auth.Info{ClientID: "c", Issuer: "https://as.example", Subject: "alice", Scopes: []string{"read", "write"}, Expiry: time.Unix(200, 0)}
	if !base.SameCaller(refreshed) {
		t.Error("a refreshed token (new scopes, new expiry) is another caller")
	}
	for name, other := range map[string]*auth.Info{
		"client":  {ClientID: "d", Issuer: "https://as.example", Subject: "alice"},
		"issuer":  {ClientID: "c", Issuer: "https://other.example", Subject: "alice"},
		"subject": {ClientID: "c", Issuer: "https://as.example", Subject: "bob"},
		"nil":     nil,
	} {
		if base.SameCaller(other) || other.SameCaller(base) {
			t.Errorf("a different %s is the same caller", name)
		}
	}
	var none *auth.Info
	if !none.SameCaller(nil) {
		t.Error("two unauthenticated callers differ")
	}
	if !refreshed.HasScope("write") || base.HasScope("write") || none.HasScope("read") {
		t.Error("HasScope")
	}
}
