package resourceserver_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-mcp/parley/auth/authtest"
	"github.com/parley-mcp/parley/auth/resourceserver"
)

// testClock is a settable clock for the authorization server and the
// verifiers.
type testClock struct{ ns atomic.Int64 }

func newTestClock() *testClock {
	c := new(testClock)
	c.ns.Store(time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *testClock) now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *testClock) add(d time.Duration) { c.ns.Add(int64(d)) }

// introspector returns an authorization server and an introspecting
// verifier registered with it as a confidential client using method.
func introspector(t *testing.T, clk *testClock, method string) (*authtest.Server, *resourceserver.Introspector) {
	t.Helper()
	as := authtest.NewServer(&authtest.Options{Now: clk.now})
	t.Cleanup(as.Close)
	rsClient := as.RegisterClient(authtest.Client{AuthMethod: method})
	in, err := resourceserver.NewIntrospector(&resourceserver.IntrospectionOptions{
		Endpoint:     as.IntrospectionEndpoint(),
		ClientID:     rsClient.ID,
		ClientSecret: rsClient.Secret,
		AuthMethod:   method,
		Audience:     resource,
		Issuer:       as.Issuer(),
		Now:          clk.now,
		Leeway:       -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	return as, in
}

func TestIntrospection(t *testing.T) {
	for _, method := range []string{authtest.AuthSecretBasic, authtest.AuthSecretPost} {
		t.Run(method, func(t *testing.T) {
			clk := newTestClock()
			as, in := introspector(t, clk, method)
			ctx := context.Background()
			tok := as.Issue(authtest.Grant{Subject: "alice", ClientID: "app", Resource: resource, Scopes: []string{"mcp:read"}, TTL: time.Minute})
			info, err := in.Verify(ctx, tok)
			if err != nil {
				t.Fatal(err)
			}
			if info.Subject != "alice" || info.ClientID != "app" || info.Issuer != as.Issuer() ||
				!slices.Equal(info.Scopes, []string{"mcp:read"}) || !info.Expiry.Equal(clk.now().Add(time.Minute)) {
				t.Errorf("info = %+v", info)
			}

			// Revoked: the AS says inactive.
			as.Revoke(tok)
			_, err = in.Verify(ctx, tok)
			wantRefusal(t, err, resourceserver.ErrInvalidToken, "not active")

			// Another resource's token, and an unknown one.
			other := as.Issue(authtest.Grant{Subject: "alice", ClientID: "app", Resource: "https://other.example.com/mcp"})
			_, err = in.Verify(ctx, other)
			wantRefusal(t, err, resourceserver.ErrInvalidToken, "audience")
			_, err = in.Verify(ctx, "made-up")
			wantRefusal(t, err, resourceserver.ErrInvalidToken, "not active")
		})
	}
}

func wantRefusal(t *testing.T, err, kind error, sub string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("err = %v, want %v", err, kind)
	}
	if !strings.Contains(err.Error(), sub) {
		t.Errorf("err = %v, want it to mention %q", err, sub)
	}
}

// The verifier checks exp itself with its own clock and leeway, whatever
// the authorization server says about activity.
func TestIntrospectionResponses(t *testing.T) {
	var body atomic.Value
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, secret, _ := r.BasicAuth(); id != "rs" || secret != "s%3Acret" { // form-encoded (RFC 6749 §2.3.1)
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		if r.PostFormValue("token") != "tok" {
			http.Error(w, "no token", http.StatusBadRequest)
			return
		}
		w.Write([]byte(body.Load().(string)))
	}))
	defer fake.Close()
	clk := newTestClock()
	exp := clk.now().Unix() + 60
	in, err := resourceserver.NewIntrospector(&resourceserver.IntrospectionOptions{
		Endpoint: fake.URL, ClientID: "rs", ClientSecret: "s:cret", Audience: resource, Issuer: issuer, Now: clk.now, Leeway: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	at := func(sec int64) string {
		return `{"active":true,"sub":"alice","client_id":"app","aud":["x","` + resource + `"],"exp":` + itoa(sec) + `}`
	}
	for _, tc := range []struct {
		name, body string
		advance    time.Duration
		kind       error
		sub        string
	}{
		{"good, no iss: the configured one", at(exp), 0, nil, ""},
		{"just before exp+leeway", at(exp), 65*time.Second - time.Millisecond, nil, ""},
		{"at exp+leeway", at(exp), 65 * time.Second, resourceserver.ErrInvalidToken, "expired"},
		{"inactive", `{"active":false}`, 0, resourceserver.ErrInvalidToken, "not active"},
		{"active as a string", `{"active":"true","aud":"` + resource + `"}`, 0, resourceserver.ErrUnavailable, "RFC 7662"},
		{"no active", `{"aud":"` + resource + `"}`, 0, resourceserver.ErrUnavailable, "RFC 7662"},
		{"no aud", `{"active":true,"sub":"alice"}`, 0, resourceserver.ErrInvalidToken, "audience"},
		{"other iss", `{"active":true,"iss":"https://evil.example","aud":"` + resource + `"}`, 0, resourceserver.ErrInvalidToken, "issued by"},
		{"not json", `<html>`, 0, resourceserver.ErrUnavailable, "RFC 7662"},
		{"nbf ahead", `{"active":true,"aud":"` + resource + `","nbf":` + itoa(exp) + `}`, 0, resourceserver.ErrInvalidToken, "not valid before"},
		{"DPoP without cnf", `{"active":true,"sub":"alice","aud":"` + resource + `","token_type":"DPoP"}`, 0, resourceserver.ErrInvalidToken, "cnf.jkt"},
		{"a cnf that is not an object", `{"active":true,"sub":"alice","aud":"` + resource + `","cnf":"x"}`, 0, resourceserver.ErrInvalidToken, "cnf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body.Store(tc.body)
			clk.add(tc.advance)
			defer clk.add(-tc.advance)
			info, err := in.Verify(context.Background(), "tok")
			if tc.kind == nil {
				if err != nil || info.Issuer != issuer || info.Subject != "alice" {
					t.Fatalf("%+v %v", info, err)
				}
				return
			}
			wantRefusal(t, err, tc.kind, tc.sub)
		})
	}

	// A DPoP-bound token's key (RFC 9449 section 6.2).
	jkt := "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"
	body.Store(`{"active":true,"sub":"alice","aud":"` + resource + `","token_type":"DPoP","cnf":{"jkt":"` + jkt + `"}}`)
	if info, err := in.Verify(context.Background(), "tok"); err != nil || info.KeyThumbprint != jkt {
		t.Errorf("a bound token: %+v, %v", info, err)
	}

	// Our own credentials refused, or the endpoint gone: unavailable, not
	// the token's fault.
	bad, _ := resourceserver.NewIntrospector(&resourceserver.IntrospectionOptions{Endpoint: fake.URL, ClientID: "rs", ClientSecret: "wrong", Audience: resource})
	_, err = bad.Verify(context.Background(), "tok")
	wantRefusal(t, err, resourceserver.ErrUnavailable, "401")
	fake.Close()
	_, err = in.Verify(context.Background(), "tok")
	wantRefusal(t, err, resourceserver.ErrUnavailable, "introspection")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestNewIntrospectorValidates(t *testing.T) {
	for name, o := range map[string]*resourceserver.IntrospectionOptions{
		"nil":         nil,
		"no endpoint": {ClientID: "rs", Audience: resource},
		"no client":   {Endpoint: "https://as.example/introspect", Audience: resource},
		"no audience": {Endpoint: "https://as.example/introspect", ClientID: "rs"},
		"bad method":  {Endpoint: "https://as.example/introspect", ClientID: "rs", Audience: resource, AuthMethod: "private_key_jwt"},
	} {
		if _, err := resourceserver.NewIntrospector(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
