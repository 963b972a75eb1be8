package resourceserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// WellKnownPath is the well-known URI suffix of protected resource metadata
// (RFC 9728 §3).
const WellKnownPath = "/.well-known/oauth-protected-resource"

// Metadata is an OAuth 2.0 protected resource metadata document (RFC 9728
// §2): what a client reads to learn which authorization server issues
// tokens for this resource, and how to present them. Empty members are
// left out of the document.
type Metadata struct {
	// Resource is the resource identifier: the canonical URL of the MCP
	// endpoint, such as "https://mcp.example.com/mcp" (https, no fragment).
	// Tokens must name it as their audience (RFC 8707), and clients check
	// that it equals the URL they connected to. Required.
	Resource string `json:"resource"`
	// AuthorizationServers are the issuer identifiers of the authorization
	// servers that issue tokens for the resource. MCP requires at least
	// one.
	AuthorizationServers []string `json:"authorization_servers,omitempty"`
	// JWKSURI is the resource's own key set, for resources that sign
	// responses; most leave it empty.
	JWKSURI string `json:"jwks_uri,omitempty"`
	// ScopesSupported are the scopes clients may request for the resource.
	ScopesSupported []string `json:"scopes_supported,omitempty"`
	// BearerMethodsSupported are the ways the resource accepts a bearer
	// token. Empty means ["header"], the only one MCP allows and the only
	// one the middleware reads.
	BearerMethodsSupported []string `json:"bearer_methods_supported,omitempty"`
	// ResourceSigningAlgValuesSupported are the algorithms the resource
	// signs responses with, if it does.
	ResourceSigningAlgValuesSupported []string `json:"resource_signing_alg_values_supported,omitempty"`
	// ResourceName is a human-readable name for the resource.
	ResourceName string `json:"resource_name,omitempty"`
	// ResourceDocumentation is the URL of documentation for developers.
	ResourceDocumentation string `json:"resource_documentation,omitempty"`
	// ResourcePolicyURI and ResourceTOSURI are the URLs of the resource's
	// data policy and terms of service.
	ResourcePolicyURI string `json:"resource_policy_uri,omitempty"`
	ResourceTOSURI    string `json:"resource_tos_uri,omitempty"`
}

// MetadataURL returns the URL a resource's metadata is served at (RFC 9728
// §3.1): the well-known suffix goes between the host and the path, so
// "https://mcp.example.com/mcp" has its metadata at
// "https://mcp.example.com/.well-known/oauth-protected-resource/mcp".
func MetadataURL(resource string) (string, error) {
	u, err := parseResource(resource)
	if err != nil {
		return "", err
	}
	u.Path = metadataPath(u)
	u.RawPath = ""
	return u.String(), nil
}

// metadataPath is the path part of [MetadataURL]: a terminating slash of
// the resource's path is dropped before the suffix goes in front of it.
func metadataPath(u *url.URL) string {
	return WellKnownPath + strings.TrimSuffix(u.Path, "/")
}

// parseResource checks a resource identifier: an absolute http(s) URL with
// a host and no fragment (RFC 8707 §2).
func parseResource(resource string) (*url.URL, error) {
	u, err := url.Parse(resource)
	if err != nil {
		return nil, fmt.Errorf("resourceserver: resource identifier: %w", err)
	}
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return nil, fmt.Errorf("resourceserver: resource identifier %q is not an http(s) URL", resource)
	case u.Host == "":
		return nil, fmt.Errorf("resourceserver: resource identifier %q has no host", resource)
	case u.Fragment != "" || strings.Contains(resource, "#"):
		return nil, fmt.Errorf("resourceserver: resource identifier %q has a fragment", resource)
	case u.User != nil:
		return nil, fmt.Errorf("resourceserver: resource identifier %q has user information", resource)
	}
	return u, nil
}

// check validates m and returns the rendered document with defaults
// applied.
func (m *Metadata) render() ([]byte, error) {
	if _, err := parseResource(m.Resource); err != nil {
		return nil, err
	}
	if len(m.AuthorizationServers) == 0 {
		return nil, errors.New("resourceserver: Metadata.AuthorizationServers is empty; MCP requires at least one")
	}
	doc := *m
	if len(doc.BearerMethodsSupported) == 0 {
		doc.BearerMethodsSupported = []string{"header"}
	}
	return json.Marshal(&doc)
}

// metadataHandler serves a rendered document to GET and HEAD.
type metadataHandler []byte

func (doc metadataHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	// The document is public, and browser-based clients read it across
	// origins.
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Cache-Control", "public, max-age=3600")
	if r.Method == http.MethodGet {
		w.Write(doc)
	}
}
