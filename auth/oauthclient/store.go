package oauthclient

import (
	"context"
	"crypto"
	"maps"
	"slices"
	"sync"

	"golang.org/x/oauth2"
)

// ClientInfo is a client registration with one authorization server.
type ClientInfo struct {
	// ClientID is the client_id: issued by dynamic registration, given by
	// the operator (pre-registration), or the URL of the client's metadata
	// document.
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	// TokenEndpointAuthMethod is how the client authenticates at the
	// token endpoint: "client_secret_basic", "client_secret_post",
	// "private_key_jwt" or "none". Empty: private_key_jwt when Key is set,
	// none without a secret, else chosen from what the server supports.
	TokenEndpointAuthMethod string `json:"token_endpoint_auth_method,omitempty"`
	// RedirectURI is the redirect URI registered with the client, when the
	// registration fixed one.
	RedirectURI string `json:"redirect_uri,omitempty"`

	// Key, for private_key_jwt (RFC 7523 section 2.2), signs the client's
	// assertions: an ECDSA, Ed25519 or RSA private key whose public key the
	// authorization server has, or any crypto.Signer over one (a key in a
	// hardware module or a cloud KMS). It is never stored: a client with a
	// key is given by Config.PreRegistered on every use.
	Key crypto.Signer `json:"-"`
	// KeyID is Key's kid at the authorization server, when it has one.
	KeyID string `json:"-"`
	// SigningAlgorithm is the JWS algorithm to sign with Key; empty: the
	// one Key's type implies (ES256 for P-256, EdDSA, RS256 for RSA unless
	// the server lists another it takes).
	SigningAlgorithm string `json:"-"`
}

// Credentials are what the client holds for one authorization server: its
// registration there and the tokens it issued, by resource.
type Credentials struct {
	Client *ClientInfo `json:"client,omitempty"`
	// Tokens maps a resource identifier (the MCP server's URL as its
	// protected-resource metadata names it) to the tokens for it.
	Tokens map[string]*oauth2.Token `json:"tokens,omitempty"`
}

// clone returns a deep enough copy of c that the caller may change it.
func (c *Credentials) clone() *Credentials {
	if c == nil {
		return nil
	}
	out := &Credentials{Tokens: make(map[string]*oauth2.Token, len(c.Tokens))}
	if c.Client != nil {
		ci := *c.Client
		out.Client = &ci
	}
	for k, t := range c.Tokens {
		if t != nil {
			tc := *t
			out.Tokens[k] = &tc
		}
	}
	return out
}

// Store keeps credentials per authorization server, keyed by its issuer
// identifier. Keying by issuer is what makes a client re-register when a
// server moves to another authorization server, instead of presenting one
// server's client id (or tokens) to another: credentials are never
// portable between issuers.
//
// A Store is used from several goroutines. Implementations that persist
// should encrypt secrets at rest.
type Store interface {
	// Load returns the credentials for issuer, or nil and no error when
	// there are none.
	Load(ctx context.Context, issuer string) (*Credentials, error)
	// Save replaces the credentials for issuer.
	Save(ctx context.Context, issuer string, c *Credentials) error
}

// MemoryStore is a Store that keeps credentials in memory, for the life of
// the process. The zero value is ready to use.
type MemoryStore struct {
	mu sync.Mutex
	m  map[string]*Credentials
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{} }

// Load implements [Store]. It returns a copy.
func (s *MemoryStore) Load(_ context.Context, issuer string) (*Credentials, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[issuer].clone(), nil
}

// Save implements [Store]. It keeps a copy.
func (s *MemoryStore) Save(_ context.Context, issuer string, c *Credentials) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*Credentials{}
	}
	s.m[issuer] = c.clone()
	return nil
}

// Issuers returns the issuers the store has credentials for, for
// inspection and tests.
func (s *MemoryStore) Issuers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.m))
}
