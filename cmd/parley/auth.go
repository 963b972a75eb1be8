package main

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/parley-mcp/parley/auth/oauthclient"
)

// The --auth modes: how parley gets a token for a server that asks.
const (
	authBrowser      = "browser"            // a person logs in (the default)
	authClientCreds  = "client-credentials" // an agent with no person
	authWorkload     = "workload"           // workload identity federation
	authEnterprise   = "enterprise"         // enterprise-managed authorization
	envClientSecret  = "PARLEY_CLIENT_SECRET"
	envIDToken       = "PARLEY_ID_TOKEN"
	maxSecretFile    = 64 << 10
	secretsNotInArgs = "secrets are never taken on the command line, where other users and the shell's history see them"
)

// authFlags are --auth and the flags that go with it. Secrets come from
// files or the environment only.
type authFlags struct {
	mode             string // --auth
	clientID         string // --client-id
	secretFile       string // --client-secret-file
	keyFile          string // --client-key-file: a PEM private key, for private_key_jwt
	issuer           string // --issuer: the only authorization server the client is shown to
	tokenFile        string // --token-file: the workload's platform token
	idTokenFile      string // --id-token-file: the user's ID token, for enterprise
	idpTokenEndpoint string // --idp-token-endpoint
	idpClientID      string // --idp-client-id
	dpop             bool   // --dpop
	dpopKeyFile      string // --dpop-key-file
}

// parse reads flag name, if it is one of these; known is false otherwise.
// next returns the flag's value.
func (f *authFlags) parse(name string, next func() (string, error)) (known bool, err error) {
	str := map[string]*string{
		"client-id":          &f.clientID,
		"client-secret-file": &f.secretFile,
		"client-key-file":    &f.keyFile,
		"issuer":             &f.issuer,
		"token-file":         &f.tokenFile,
		"id-token-file":      &f.idTokenFile,
		"idp-token-endpoint": &f.idpTokenEndpoint,
		"idp-client-id":      &f.idpClientID,
		"dpop-key-file":      &f.dpopKeyFile,
	}
	switch name {
	case "auth":
		if f.mode, err = next(); err == nil {
			switch f.mode {
			case authBrowser, authClientCreds, authWorkload, authEnterprise:
			default:
				err = fmt.Errorf("--auth %q: want %s, %s, %s or %s", f.mode, authBrowser, authClientCreds, authWorkload, authEnterprise)
			}
		}
		return true, err
	case "dpop":
		f.dpop = true
		return true, nil
	case "client-secret":
		return true, fmt.Errorf("--client-secret: %s; use --client-secret-file, or %s", secretsNotInArgs, envClientSecret)
	case "id-token":
		return true, fmt.Errorf("--id-token: %s; use --id-token-file, or %s", secretsNotInArgs, envIDToken)
	case "token", "client-key", "dpop-key":
		return true, fmt.Errorf("--%s: %s; use --%s-file", name, secretsNotInArgs, name)
	}
	if p, ok := str[name]; ok {
		*p, err = next()
		return true, err
	}
	return false, nil
}

// config returns the OAuth client's configuration for a mode with no
// person present.
func (f *authFlags) config() (*oauthclient.Config, error) {
	dpop, err := f.dpopConfig()
	if err != nil {
		return nil, err
	}
	cfg := &oauthclient.Config{DPoP: dpop}
	var client *oauthclient.ClientInfo
	if f.clientID != "" {
		client = &oauthclient.ClientInfo{ClientID: f.clientID}
		switch {
		case f.keyFile != "":
			k, err := readPrivateKey(f.keyFile)
			if err != nil {
				return nil, fmt.Errorf("--client-key-file: %w", err)
			}
			client.Key = k
		case f.secretFile != "":
			s, err := readSecret(f.secretFile)
			if err != nil {
				return nil, fmt.Errorf("--client-secret-file: %w", err)
			}
			client.ClientSecret = s
		default:
			client.ClientSecret = os.Getenv(envClientSecret)
		}
	}
	switch f.mode {
	case authClientCreds:
		if client == nil || client.ClientSecret == "" && client.Key == nil {
			return nil, usagef("--auth %s needs --client-id and --client-secret-file (or %s) or --client-key-file", authClientCreds, envClientSecret)
		}
		cfg.Grant = oauthclient.ClientCredentials{}
	case authWorkload:
		if f.tokenFile == "" {
			return nil, usagef("--auth %s needs --token-file, the file the platform writes the workload's token to", authWorkload)
		}
		cfg.Grant = &oauthclient.WorkloadIdentity{TokenFile: f.tokenFile}
	case authEnterprise:
		if client == nil || f.idpTokenEndpoint == "" || f.idpClientID == "" || f.idTokenFile == "" && os.Getenv(envIDToken) == "" {
			return nil, usagef("--auth %s needs --client-id (and its secret or key), --idp-token-endpoint, --idp-client-id, and --id-token-file (or %s)", authEnterprise, envIDToken)
		}
		idTokenFile := f.idTokenFile
		cfg.Grant = &oauthclient.EnterpriseManaged{
			IdentityToken: func(context.Context) (string, error) {
				if idTokenFile == "" {
					return os.Getenv(envIDToken), nil
				}
				return readSecret(idTokenFile) // read anew: the sign-in may have been renewed
			},
			IdPTokenEndpoint: f.idpTokenEndpoint,
			IdPClient:        &oauthclient.ClientInfo{ClientID: f.idpClientID},
		}
	}
	if client != nil {
		issuer := f.issuer
		cfg.PreRegistered = func(is string) *oauthclient.ClientInfo {
			if issuer != "" && is != issuer {
				return nil // never shown to another authorization server
			}
			c := *client
			return &c
		}
	}
	return cfg, nil
}

// dpopConfig returns the DPoP configuration of --dpop and --dpop-key-file,
// nil without either.
func (f *authFlags) dpopConfig() (*oauthclient.DPoP, error) {
	if !f.dpop && f.dpopKeyFile == "" {
		return nil, nil
	}
	d := &oauthclient.DPoP{}
	if f.dpopKeyFile != "" {
		k, err := readPrivateKey(f.dpopKeyFile)
		if err != nil {
			return nil, fmt.Errorf("--dpop-key-file: %w", err)
		}
		d.Key = k
	}
	return d, nil
}

// readSecret reads a secret or token from a file, without the white space
// around it.
func readSecret(name string) (string, error) {
	b, err := readLimited(name)
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%s is empty", name)
	}
	return s, nil
}

func readLimited(name string) ([]byte, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxSecretFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, maxSecretFile)
	}
	return os.ReadFile(name)
}

// readPrivateKey reads a PEM private key: PKCS #8, or an EC or RSA key in
// its own form.
func readPrivateKey(name string) (crypto.Signer, error) {
	b, err := readLimited(name)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("%s holds no PEM block", name)
	}
	var k any
	switch block.Type {
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		k, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, errors.New(name + ": not a signing key")
	}
	return s, nil
}
