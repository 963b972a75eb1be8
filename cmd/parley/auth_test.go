package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/parley-mcp/parley/auth/authtest"
	"github.com/parley-mcp/parley/auth/dpopverify"
	"github.com/parley-mcp/parley/auth/jwtverify"
	"github.com/parley-mcp/parley/auth/resourceserver"
)

// machineServer serves the fixture behind OAuth, taking DPoP-bound tokens
// only when dpopOnly, and returns its URL.
func machineServer(t *testing.T, as *authtest.Server, dpopOnly bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resource := "http://" + ln.Addr().String() + "/mcp"
	v, err := jwtverify.New(&jwtverify.Options{Issuer: as.Issuer(), Audience: resource})
	if err != nil {
		t.Fatal(err)
	}
	dv, err := dpopverify.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := resourceserver.New(&resourceserver.Options{
		Metadata:    resourceserver.Metadata{Resource: resource, AuthorizationServers: []string{as.Issuer()}},
		Verifier:    v,
		DPoP:        dv,
		RequireDPoP: dpopOnly,
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := newFixture()
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	rs.Mount(mux, s.HTTPHandler(nil))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return resource
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Each --auth mode gets parley a token with no person, with --dpop a
// DPoP-bound one (the server here takes nothing else), and secrets come
// from files or the environment.
func TestAuthModes(t *testing.T) {
	as := authtest.NewServer(nil)
	t.Cleanup(as.Close)
	url := machineServer(t, as, true)

	agent := as.RegisterClient(authtest.Client{ID: "agent"})
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	as.RegisterClient(authtest.Client{ID: "signer", AuthMethod: authtest.AuthPrivateKeyJWT, PublicKey: key.Public()})
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	keyFile := writeFile(t, "key.pem", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})))
	ecder, _ := x509.MarshalECPrivateKey(key)
	ecKeyFile := writeFile(t, "ec.pem", string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecder})))

	platform, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	as.TrustIssuer("https://cluster.example", platform.Public())
	s, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: platform}, nil)
	wl, _ := jwt.Signed(s).Claims(map[string]any{"iss": "https://cluster.example", "sub": "ops/agent", "aud": as.Issuer(), "exp": time.Now().Add(time.Hour).Unix()}).Serialize()

	idp := authtest.NewServer(nil)
	t.Cleanup(idp.Close)
	as.TrustIssuer(idp.Issuer(), idp.PublicKey())
	idp.RegisterClient(authtest.Client{ID: "desktop-sso", AuthMethod: authtest.AuthNone})
	idp.SetJAGClient(as.Issuer(), agent.ID)

	secretFile := writeFile(t, "secret", agent.Secret+"\n")
	for name, tc := range map[string]struct {
		args []string
		env  map[string]string
	}{
		"client credentials, secret file":               {args: []string{"--auth", "client-credentials", "--client-id", agent.ID, "--client-secret-file", secretFile}},
		"client credentials, environment":               {args: []string{"--auth", "client-credentials", "--client-id", agent.ID}, env: map[string]string{envClientSecret: agent.Secret}},
		"client credentials, PKCS #8 key":               {args: []string{"--auth", "client-credentials", "--client-id", "signer", "--client-key-file", keyFile}},
		"client credentials, EC key, the issuer pinned": {args: []string{"--auth", "client-credentials", "--client-id", "signer", "--client-key-file", ecKeyFile, "--issuer", as.Issuer()}},
		"workload identity":                             {args: []string{"--auth", "workload", "--token-file", writeFile(t, "wl", wl)}},
		"enterprise": {args: []string{"--auth", "enterprise", "--client-id", agent.ID, "--client-secret-file", secretFile,
			"--idp-token-endpoint", idp.TokenEndpoint(), "--idp-client-id", "desktop-sso", "--id-token-file", writeFile(t, "idt", idp.IssueIDToken("ada", "desktop-sso"))}},
		"enterprise, ID token from the environment": {args: []string{"--auth", "enterprise", "--client-id", agent.ID, "--client-secret-file", secretFile,
			"--idp-token-endpoint", idp.TokenEndpoint(), "--idp-client-id", "desktop-sso"}, env: map[string]string{envIDToken: idp.IssueIDToken("ada", "desktop-sso")}},
		"a DPoP key from a file": {args: []string{"--auth", "client-credentials", "--client-id", agent.ID, "--client-secret-file", secretFile, "--dpop-key-file", keyFile}},
	} {
		t.Run(name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			args := append(tc.args, "--dpop", url, "tools", "call", "add", "a=20", "b=22")
			r := runApp(t, &app{configDir: t.TempDir()}, args...)
			if r.code != exitOK || r.stdout != "42\n" {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}

	// Without --dpop this server (DPoP only) refuses the bearer token.
	r := runApp(t, &app{configDir: t.TempDir()}, "--auth", "client-credentials", "--client-id", agent.ID, "--client-secret-file", secretFile, url, "tools", "call", "add", "a=1", "b=1")
	if r.code == exitOK {
		t.Errorf("a bearer token was taken by a DPoP-only server: %q", r.stdout)
	}
	// A client pinned to another authorization server is not shown to
	// this one.
	r = runApp(t, &app{configDir: t.TempDir()}, "--auth", "client-credentials", "--client-id", agent.ID, "--client-secret-file", secretFile,
		"--issuer", "https://elsewhere.example", "--dpop", url, "tools", "call", "add", "a=1", "b=1")
	if r.code == exitOK || !strings.Contains(r.stderr, "registered out of band") {
		t.Errorf("the client shown to an issuer it is not pinned to: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// Secrets on the command line are refused with a pointer to the file flag
// or the environment; a mode without what it needs is a usage error.
func TestAuthFlagRefusals(t *testing.T) {
	for args, want := range map[string]string{
		"--client-secret s3cret":                  "--client-secret-file",
		"--id-token eyJ":                          "PARLEY_ID_TOKEN",
		"--token eyJ":                             "--token-file",
		"--client-key k":                          "--client-key-file",
		"--auth password":                         "want browser",
		"--auth client-credentials":               "needs --client-id",
		"--auth workload":                         "needs --token-file",
		"--auth enterprise --client-id a":         "needs --client-id",
		"--auth client-credentials --client-id a": "needs --client-id",
	} {
		r := runApp(t, &app{configDir: t.TempDir()}, append(strings.Fields(args), "http://127.0.0.1:1/mcp", "tools", "list")...)
		if r.code != exitUsage || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant exit %d and %q", args, r.code, r.stderr, exitUsage, want)
		}
		if strings.Contains(r.stderr, "s3cret") {
			t.Errorf("%s: the secret is echoed: %s", args, r.stderr)
		}
	}
	for name, content := range map[string]string{"empty": " \n", "not PEM": "x"} {
		p := writeFile(t, name, content)
		r := runApp(t, &app{configDir: t.TempDir()}, "--auth", "client-credentials", "--client-id", "a", "--client-key-file", p, "http://127.0.0.1:1/mcp", "tools", "list")
		if r.code == exitOK || !strings.Contains(r.stderr, "--client-key-file") {
			t.Errorf("a key file %s: exit %d, stderr:\n%s", name, r.code, r.stderr)
		}
	}
	big := writeFile(t, "big", strings.Repeat("x", maxSecretFile+1))
	r := runApp(t, &app{configDir: t.TempDir()}, "--auth", "client-credentials", "--client-id", "a", "--client-secret-file", big, "http://127.0.0.1:1/mcp", "tools", "list")
	if r.code == exitOK || !strings.Contains(r.stderr, "larger than") {
		t.Errorf("an oversized secret file: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
