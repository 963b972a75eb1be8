package oauthclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// ResourceMetadata is an OAuth 2.0 protected-resource metadata document
// (RFC 9728), the fields this package reads.
type ResourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers,omitempty"`
	ScopesSupported      []string `json:"scopes_supported,omitempty"`
}

// ServerMetadata is an authorization server metadata document (RFC 8414,
// or OpenID Connect Discovery), the fields this package reads.
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint,omitempty"`
	ScopesSupported                   []string `json:"scopes_supported,omitempty"`
	GrantTypesSupported               []string `json:"grant_types_supported,omitempty"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported,omitempty"`
	// AuthorizationResponseIssParameterSupported (RFC 9207): when true,
	// every authorization response carries iss, and a response without
	// one is refused.
	AuthorizationResponseIssParameterSupported bool `json:"authorization_response_iss_parameter_supported,omitempty"`
	// ClientIDMetadataDocumentSupported: the server accepts an https URL
	// of a client metadata document as client_id.
	ClientIDMetadataDocumentSupported bool `json:"client_id_metadata_document_supported,omitempty"`
	// TokenEndpointAuthSigningAlgValuesSupported are the algorithms the
	// server takes client assertions (private_key_jwt) signed with.
	TokenEndpointAuthSigningAlgValuesSupported []string `json:"token_endpoint_auth_signing_alg_values_supported,omitempty"`
	// DPoPSigningAlgValuesSupported are the algorithms the server takes
	// DPoP proofs signed with (RFC 9449 section 5.1); a server that lists
	// some supports DPoP.
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported,omitempty"`
}

// maxMetadataSize bounds a metadata, registration or token response body: a
// peer must not make the client buffer without limit.
const maxMetadataSize = 1 << 20

// getJSON fetches u into v. found is false for a status that says "not
// here" (4xx), so the caller can try its next candidate; other failures are
// errors.
func getJSON(ctx context.Context, hc *http.Client, u string, v any) (found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataSize+1))
	if err != nil {
		return false, fmt.Errorf("oauthclient: reading %s: %w", u, err)
	}
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		return false, nil
	}
	if resp.StatusCode != http.StatusOK {
		return false, &HTTPError{URL: u, StatusCode: resp.StatusCode, Body: snippet(body)}
	}
	if len(body) > maxMetadataSize {
		return false, fmt.Errorf("oauthclient: %s: metadata larger than %d bytes", u, maxMetadataSize)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return false, fmt.Errorf("oauthclient: %s is not a metadata document: %w", u, err)
	}
	return true, nil
}

func snippet(b []byte) string {
	const n = 200
	if len(b) > n {
		b = b[:n]
	}
	return strings.TrimSpace(string(b))
}

// resourceMetadataURLs lists where the protected-resource metadata of
// serverURL may be, in the order RFC 9728 and the MCP authorization spec
// give: the URL of the WWW-Authenticate resource_metadata parameter, then
// the path-aware well-known URL, then the one at the root.
func resourceMetadataURLs(serverURL *url.URL, fromHeader string) []string {
	var out []string
	if fromHeader != "" {
		out = append(out, fromHeader)
	}
	base := url.URL{Scheme: serverURL.Scheme, Host: serverURL.Host}
	const wk = "/.well-known/oauth-protected-resource"
	if p := strings.TrimSuffix(serverURL.EscapedPath(), "/"); p != "" {
		out = append(out, base.String()+wk+p)
	}
	out = append(out, base.String()+wk)
	return out
}

// discoverResource finds and validates the protected-resource metadata of
// serverURL. A document whose resource does not cover serverURL is refused
// with a *ResourceMismatchError, not skipped: a server that points the
// client at metadata for another resource is wrong or hostile either way.
//
// The metadata may come over plain HTTP from the MCP server's own origin
// (the user chose that URL) or from a loopback host; anything else, the
// URL of the challenge or a redirect, must be https, so that an https
// server's metadata cannot be swapped on the way.
func discoverResource(ctx context.Context, hc *http.Client, serverURL *url.URL, fromHeader string) (*ResourceMetadata, error) {
	allow := func(u *url.URL) bool { return secureURL(u) || sameOrigin(u, serverURL) }
	if fromHeader != "" {
		if u, err := url.Parse(fromHeader); err == nil && !allow(u) {
			return nil, &InsecureURLError{URL: fromHeader, Role: "resource_metadata"}
		}
	}
	hc = guardRedirects(hc, "resource_metadata", allow)
	var errs []error
	for _, u := range resourceMetadataURLs(serverURL, fromHeader) {
		var md ResourceMetadata
		found, err := getJSON(ctx, hc, u, &md)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, ErrInsecureURL) {
				return nil, err
			}
			errs = append(errs, err)
			continue
		}
		if !found {
			continue
		}
		if !resourceCovers(md.Resource, serverURL) {
			return nil, &ResourceMismatchError{ServerURL: serverURL.String(), Resource: md.Resource, MetadataURL: u}
		}
		if len(md.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("%w: %s names no authorization server", ErrDiscovery, u)
		}
		return &md, nil
	}
	return nil, fmt.Errorf("%w: no protected resource metadata for %s (%v)", ErrDiscovery, serverURL, joinErrs(errs))
}

// sameOrigin reports whether u has the scheme and authority of origin.
func sameOrigin(u, origin *url.URL) bool {
	return strings.EqualFold(u.Scheme, origin.Scheme) && strings.EqualFold(u.Host, origin.Host)
}

func joinErrs(errs []error) string {
	if len(errs) == 0 {
		return "every candidate URL answered not found"
	}
	s := make([]string, len(errs))
	for i, e := range errs {
		s[i] = e.Error()
	}
	return strings.Join(s, "; ")
}

// resourceCovers reports whether the resource identifier res names
// serverURL: the same scheme and authority, and a path that is serverURL's
// or one of its ancestors on a segment boundary. An ancestor is allowed
// because the metadata at the root well-known URL describes the whole
// origin (RFC 9728 section 3.3 compares with the identifier the well-known
// URL was built from, which for the root is the origin).
func resourceCovers(res string, serverURL *url.URL) bool {
	r, err := url.Parse(res)
	if err != nil || r.Fragment != "" || r.Opaque != "" {
		return false
	}
	if !strings.EqualFold(r.Scheme, serverURL.Scheme) || !strings.EqualFold(r.Host, serverURL.Host) {
		return false
	}
	rp := strings.TrimSuffix(r.EscapedPath(), "/")
	sp := strings.TrimSuffix(serverURL.EscapedPath(), "/")
	return rp == sp || strings.HasPrefix(sp, rp+"/")
}

// serverMetadataURLs lists the well-known URLs of issuer's metadata in the
// order of the MCP authorization spec: for an issuer with a path, OAuth
// path insertion, OpenID path insertion, then OpenID path appending; for
// one without, OAuth then OpenID.
func serverMetadataURLs(issuer string) ([]string, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil, fmt.Errorf("%w: authorization server %q is not a URL: %v", ErrDiscovery, issuer, err)
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%w: authorization server %q is not an issuer identifier (RFC 8414 section 2)", ErrDiscovery, issuer)
	}
	origin := u.Scheme + "://" + u.Host
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	if path == "" {
		return []string{
			origin + "/.well-known/oauth-authorization-server",
			origin + "/.well-known/openid-configuration",
		}, nil
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + path,
		origin + "/.well-known/openid-configuration" + path,
		origin + path + "/.well-known/openid-configuration",
	}, nil
}

// discoverServer fetches the metadata of issuer and checks that it is
// issuer's own: its issuer field must equal issuer exactly (RFC 8414
// section 3.3, OpenID Discovery section 4.3). A mismatch is refused at
// once, not skipped, since the document at a well-known URL of the issuer
// claiming to be someone else is an attack or a misconfiguration.
//
// The issuer, every redirect on the way to its metadata, and the
// authorization and token endpoints must be https unless on a loopback
// host; anything else is refused with an *InsecureURLError before the
// client sends the user or a code there. The registration endpoint is
// checked when it is used (register), since a client registered otherwise
// never goes there.
//
// codeFlow: the client will run the authorization code flow, so the
// server must have an authorization endpoint and offer PKCE with S256.
// A client with a Grant goes to the token endpoint only.
func discoverServer(ctx context.Context, hc *http.Client, issuer string, codeFlow bool) (*ServerMetadata, error) {
	urls, err := serverMetadataURLs(issuer)
	if err != nil {
		return nil, err
	}
	if err := requireSecure(issuer, "issuer"); err != nil {
		return nil, err
	}
	hc = guardRedirects(hc, "authorization_server_metadata", secureURL)
	var errs []error
	for _, u := range urls {
		var md ServerMetadata
		found, err := getJSON(ctx, hc, u, &md)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, ErrInsecureURL) {
				return nil, err
			}
			errs = append(errs, err)
			continue
		}
		if !found {
			continue
		}
		if md.Issuer != issuer {
			return nil, &IssuerMismatchError{Where: "metadata at " + u, Expected: issuer, Got: md.Issuer}
		}
		if md.TokenEndpoint == "" || codeFlow && md.AuthorizationEndpoint == "" {
			return nil, fmt.Errorf("%w: %s lacks authorization_endpoint or token_endpoint", ErrDiscovery, u)
		}
		if md.AuthorizationEndpoint != "" {
			if err := requireSecure(md.AuthorizationEndpoint, "authorization_endpoint"); err != nil {
				return nil, err
			}
		}
		if err := requireSecure(md.TokenEndpoint, "token_endpoint"); err != nil {
			return nil, err
		}
		if codeFlow && !slices.Contains(md.CodeChallengeMethodsSupported, "S256") {
			return nil, fmt.Errorf("%w (%s lists code_challenge_methods_supported %q)", ErrPKCEUnsupported, u, md.CodeChallengeMethodsSupported)
		}
		return &md, nil
	}
	return nil, fmt.Errorf("%w: no authorization server metadata for %s (%v)", ErrDiscovery, issuer, joinErrs(errs))
}
