package oauthclient

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Each typed error below matches one of them with
// [errors.Is], so a caller that only needs the category can skip
// [errors.As].
var (
	// ErrNoAuthorizer: the server asked for authorization, but the
	// [Config] has no [Authorizer] to run the interactive step with.
	ErrNoAuthorizer = errors.New("oauthclient: authorization required but no Authorizer configured")
	// ErrIssuerMismatch: an issuer the client was given (in authorization
	// server metadata, or in the iss parameter of the authorization
	// response) is not the issuer it expected. See [IssuerMismatchError].
	ErrIssuerMismatch = errors.New("oauthclient: issuer mismatch")
	// ErrResourceMismatch: the protected-resource metadata names another
	// resource than the server the client talks to. See
	// [ResourceMismatchError].
	ErrResourceMismatch = errors.New("oauthclient: protected resource metadata is for another resource")
	// ErrStepUpLimit: the server kept answering 403 insufficient_scope
	// after Config.MaxStepUps re-authorizations. See [StepUpLimitError].
	ErrStepUpLimit = errors.New("oauthclient: step-up authorization limit reached")
	// ErrRegistrationFailed: the client has no client id for the
	// authorization server and could not get one. See [RegistrationError].
	ErrRegistrationFailed = errors.New("oauthclient: client registration failed")
	// ErrStateMismatch: the state parameter of the authorization response
	// is not the one the client sent, so the response may belong to
	// another authorization request (a CSRF attempt, or a stale tab).
	ErrStateMismatch = errors.New("oauthclient: authorization response state does not match the request")
	// ErrPKCEUnsupported: the authorization server does not advertise the
	// S256 PKCE method, and MCP clients must not proceed without it.
	ErrPKCEUnsupported = errors.New("oauthclient: authorization server does not support PKCE with S256")
	// ErrDiscovery: no usable protected-resource or authorization server
	// metadata was found.
	ErrDiscovery = errors.New("oauthclient: metadata discovery failed")
	// ErrInsecureURL: an authorization server URL, or a redirect met on
	// the way to one, is not https (and not on a loopback host), so the
	// metadata, the authorization request or the code with its PKCE
	// verifier would cross the network in the clear. See
	// [InsecureURLError].
	ErrInsecureURL = errors.New("oauthclient: authorization server URL is not https")
	// ErrDPoPUnsupported: [DPoP.Required] is set, and the authorization
	// server did not bind the token to the client's key (it answered with
	// token_type Bearer), or takes no proof the key can make.
	ErrDPoPUnsupported = errors.New("oauthclient: the authorization server does not bind tokens to the DPoP key")
)

// IssuerMismatchError says which issuer was expected and which one came.
type IssuerMismatchError struct {
	// Where names what carried the wrong issuer: the metadata document
	// (RFC 8414 section 3.3) or "authorization response" (RFC 9207).
	Where    string
	Expected string
	Got      string
	// Missing: the authorization response had no iss parameter although
	// the server advertises authorization_response_iss_parameter_supported.
	Missing bool
}

// Error implements error.
func (e *IssuerMismatchError) Error() string {
	if e.Missing {
		return fmt.Sprintf("oauthclient: %s has no iss, but the authorization server %s advertises authorization_response_iss_parameter_supported", e.Where, e.Expected)
	}
	return fmt.Sprintf("oauthclient: %s issuer %q is not the expected %q", e.Where, e.Got, e.Expected)
}

// Is makes errors.Is(err, ErrIssuerMismatch) true.
func (e *IssuerMismatchError) Is(target error) bool { return target == ErrIssuerMismatch }

// ResourceMismatchError is a protected-resource metadata document whose
// resource does not cover the server URL (RFC 9728 section 3.3).
type ResourceMismatchError struct {
	// ServerURL is the URL the client sent its request to.
	ServerURL string
	// Resource is what the metadata at MetadataURL claims to describe.
	Resource    string
	MetadataURL string
}

// Error implements error.
func (e *ResourceMismatchError) Error() string {
	return fmt.Sprintf("oauthclient: protected resource metadata %s is for %q, not for %s", e.MetadataURL, e.Resource, e.ServerURL)
}

// Is makes errors.Is(err, ErrResourceMismatch) true.
func (e *ResourceMismatchError) Is(target error) bool { return target == ErrResourceMismatch }

// StepUpLimitError is returned when the server still refuses a request for
// insufficient scope after Limit re-authorizations in a row.
type StepUpLimitError struct {
	Limit int
	// Scopes are the scopes of the last authorization request.
	Scopes []string
}

// Error implements error.
func (e *StepUpLimitError) Error() string {
	return fmt.Sprintf("oauthclient: server still answers insufficient_scope after %d step-up authorizations (Config.MaxStepUps; last scopes %q)", e.Limit, strings.Join(e.Scopes, " "))
}

// Is makes errors.Is(err, ErrStepUpLimit) true.
func (e *StepUpLimitError) Is(target error) bool { return target == ErrStepUpLimit }

// RegistrationError is a failed client registration with Issuer.
type RegistrationError struct {
	Issuer string
	// Reason says why, in words, when there is no Err.
	Reason string
	Err    error
}

// Error implements error.
func (e *RegistrationError) Error() string {
	msg := "oauthclient: no client registration with " + e.Issuer
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is makes errors.Is(err, ErrRegistrationFailed) true.
func (e *RegistrationError) Is(target error) bool { return target == ErrRegistrationFailed }

// Unwrap returns the cause.
func (e *RegistrationError) Unwrap() error { return e.Err }

// AuthorizationError is an error response of the authorization endpoint
// (RFC 6749 section 4.1.2.1): the user denied access, say.
type AuthorizationError struct {
	Code        string // the error parameter, such as "access_denied"
	Description string
	URI         string
}

// Error implements error.
func (e *AuthorizationError) Error() string {
	msg := "oauthclient: authorization refused: " + e.Code
	if e.Description != "" {
		msg += ": " + e.Description
	}
	return msg
}

// HTTPError is a metadata or registration endpoint that answered with an
// unexpected status.
type HTTPError struct {
	URL        string
	StatusCode int
	Body       string // the start of the body, for diagnosis
}

// Error implements error.
func (e *HTTPError) Error() string {
	return fmt.Sprintf("oauthclient: %s answered %d: %s", e.URL, e.StatusCode, e.Body)
}

// InsecureURLError is a URL the client refused to use because it is not
// https and its host is not loopback (localhost, 127.0.0.0/8 or ::1): the
// MCP authorization specification wants every authorization server URL
// served over HTTPS, and following a plain-HTTP one would let anyone on
// the path read or rewrite the metadata, the authorization request, or the
// code and its PKCE verifier.
type InsecureURLError struct {
	// URL is the refused URL.
	URL string
	// Role is what the client was about to use URL for: "issuer" (the
	// protected resource's authorization_servers entry),
	// "resource_metadata", "authorization_server_metadata",
	// "authorization_endpoint", "token_endpoint" or
	// "registration_endpoint".
	Role string
	// From is set when URL is where a redirect pointed: the URL that
	// redirected there (fetched for Role).
	From string
}

// Error implements error.
func (e *InsecureURLError) Error() string {
	if e.From != "" {
		return fmt.Sprintf("oauthclient: refusing the redirect from %s (%s) to %s: authorization server URLs must be https except on a loopback host", e.From, e.Role, e.URL)
	}
	return fmt.Sprintf("oauthclient: refusing %s %s: authorization server URLs must be https except on a loopback host", e.Role, e.URL)
}

// Is makes errors.Is(err, ErrInsecureURL) true.
func (e *InsecureURLError) Is(target error) bool { return target == ErrInsecureURL }
