package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"github.com/parley-mcp/parley/auth/oauthclient"
)

// oauthClient returns the HTTP client for a URL server: requests carry the
// token parley holds for it, and a 401 starts the browser login through a
// loopback redirect, or, with --auth, the grant it names.
func (a *app) oauthClient() (*http.Client, error) {
	path, err := a.tokenPath()
	if err != nil {
		return nil, fmt.Errorf("finding the token cache: %w", err)
	}
	if a.opts.auth.mode != "" && a.opts.auth.mode != authBrowser {
		cfg, err := a.opts.auth.config()
		if err != nil {
			return nil, err
		}
		cfg.Store = &fileStore{path: path}
		oc, err := oauthclient.New(cfg)
		if err != nil {
			return nil, err
		}
		return oc.Client(), nil
	}
	dpop, err := a.opts.auth.dpopConfig()
	if err != nil {
		return nil, err
	}
	lo := &oauthclient.LoopbackOptions{Out: a.stderr}
	if a.opts.open {
		lo.Open = a.open
	}
	authz, err := oauthclient.NewLoopbackAuthorizer(lo)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, func() { authz.Close() })
	oc, err := oauthclient.New(&oauthclient.Config{
		Authorizer: authz,
		Store:      &fileStore{path: path},
		ClientName: "parley (command line)",
		DPoP:       dpop,
	})
	if err != nil {
		return nil, err
	}
	return oc.Client(), nil
}

// fileStore is an oauthclient.Store kept in one JSON file, readable and
// writable by its owner only (0600, in a 0700 directory): it holds client
// secrets and tokens.
type fileStore struct {
	path string
	mu   sync.Mutex
}

// Load implements oauthclient.Store.
func (s *fileStore) Load(_ context.Context, issuer string) (*oauthclient.Credentials, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all, err := s.read()
	if err != nil {
		return nil, err
	}
	return all[issuer], nil
}

// Save implements oauthclient.Store.
func (s *fileStore) Save(_ context.Context, issuer string, c *oauthclient.Credentials) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	all, err := s.read()
	if err != nil {
		return err
	}
	all[issuer] = c
	data, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("token cache: %w", err)
	}
	// MkdirAll leaves an existing directory as it was: tighten it, since
	// what is inside grants access to the user's servers.
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("token cache: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".tokens-*.json") // created 0600
	if err != nil {
		return fmt.Errorf("token cache: %w", err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("token cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("token cache: %w", err)
	}
	return nil
}

// read returns every issuer's credentials; a missing file holds none.
func (s *fileStore) read() (map[string]*oauthclient.Credentials, error) {
	all := map[string]*oauthclient.Credentials{}
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return all, nil
	}
	if err != nil {
		return nil, fmt.Errorf("token cache: %w", err)
	}
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, fmt.Errorf("token cache %s: %w", s.path, err)
	}
	return all, nil
}
