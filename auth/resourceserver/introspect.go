package resourceserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/parley-mcp/parley/auth"
)

// maxIntrospectionResponse bounds what is read of an introspection
// response.
const maxIntrospectionResponse = 1 << 20

// IntrospectionOptions configure an [Introspector].
type IntrospectionOptions struct {
	// Endpoint is the authorization server's introspection endpoint (its
	// metadata's introspection_endpoint). Required.
	Endpoint string
	// ClientID and ClientSecret are this resource server's credentials at
	// the authorization server. Required: RFC 7662 requires the caller of
	// the endpoint to authenticate.
	ClientID     string
	ClientSecret string
	// AuthMethod is how they are sent: "client_secret_basic" (the
	// default) or "client_secret_post".
	AuthMethod string
	// Audience is this resource's identifier ([Metadata.Resource]). An
	// active token whose aud does not contain it is refused, and so is one
	// with no aud at all. Required.
	Audience string
	// Issuer is the authorization server's issuer identifier. When set, a
	// response naming another iss is refused, and a response without iss
	// is taken to be from Issuer (so that Info.Issuer is the same on every
	// request). Recommended.
	Issuer string
	// HTTPClient sends the introspection requests. Nil means
	// http.DefaultClient; set one with a timeout.
	HTTPClient *http.Client
	// Now is the clock exp and nbf are checked against. Nil means
	// time.Now.
	Now func() time.Time
	// Leeway is the clock skew allowed when checking exp and nbf. Zero
	// means [DefaultLeeway]; negative means none.
	Leeway time.Duration
}

// Introspector is a [Verifier] that asks the authorization server about
// each token (OAuth 2.0 Token Introspection, RFC 7662). It suits opaque
// tokens and servers that must notice revocation at once; every request
// costs a round trip to the authorization server, and nothing is cached.
type Introspector struct {
	opts   IntrospectionOptions
	client *http.Client
	now    func() time.Time
	leeway time.Duration
}

// NewIntrospector checks opts and returns an Introspector.
func NewIntrospector(opts *IntrospectionOptions) (*Introspector, error) {
	if opts == nil {
		return nil, errors.New("resourceserver: IntrospectionOptions are required")
	}
	in := &Introspector{opts: *opts, client: opts.HTTPClient, now: opts.Now, leeway: opts.Leeway}
	if u, err := url.Parse(opts.Endpoint); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("resourceserver: IntrospectionOptions.Endpoint %q is not an http(s) URL", opts.Endpoint)
	}
	if opts.ClientID == "" {
		return nil, errors.New("resourceserver: IntrospectionOptions.ClientID is required")
	}
	if opts.Audience == "" {
		return nil, errors.New("resourceserver: IntrospectionOptions.Audience is required")
	}
	switch opts.AuthMethod {
	case "":
		in.opts.AuthMethod = "client_secret_basic"
	case "client_secret_basic", "client_secret_post":
	default:
		return nil, fmt.Errorf("resourceserver: IntrospectionOptions.AuthMethod %q is neither client_secret_basic nor client_secret_post", opts.AuthMethod)
	}
	if in.client == nil {
		in.client = http.DefaultClient
	}
	if in.now == nil {
		in.now = time.Now
	}
	switch {
	case in.leeway == 0:
		in.leeway = DefaultLeeway
	case in.leeway < 0:
		in.leeway = 0
	}
	return in, nil
}

// introspection is the part of an RFC 7662 response the verifier reads.
type introspection struct {
	Active    *bool        `json:"active"`
	Scope     string       `json:"scope"`
	ClientID  string       `json:"client_id"`
	Subject   string       `json:"sub"`
	Issuer    string       `json:"iss"`
	Audience  audience     `json:"aud"`
	Expiry    *numericDate `json:"exp"`
	NotBefore *numericDate `json:"nbf"`
	// Confirmation is the key a DPoP-bound token is bound to (RFC 9449
	// section 6.2), and TokenType says DPoP for such a token.
	Confirmation json.RawMessage `json:"cnf"`
	TokenType    string          `json:"token_type"`
}

// Verify asks the introspection endpoint about token.
func (in *Introspector) Verify(ctx context.Context, token string) (*auth.Info, error) {
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	if in.opts.AuthMethod == "client_secret_post" {
		form.Set("client_id", in.opts.ClientID)
		form.Set("client_secret", in.opts.ClientSecret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.opts.Endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("%w: introspection request: %w", ErrUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if in.opts.AuthMethod == "client_secret_basic" {
		// RFC 6749 §2.3.1: both parts are form-encoded before Basic.
		req.SetBasicAuth(url.QueryEscape(in.opts.ClientID), url.QueryEscape(in.opts.ClientSecret))
	}
	resp, err := in.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: introspection: %w", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxIntrospectionResponse+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading the introspection response: %w", ErrUnavailable, err)
	}
	if resp.StatusCode != http.StatusOK {
		// Not the token's fault: 401 here means our own credentials
		// were refused.
		return nil, fmt.Errorf("%w: the introspection endpoint answered %d: %s", ErrUnavailable, resp.StatusCode, snippet(body))
	}
	if len(body) > maxIntrospectionResponse {
		return nil, fmt.Errorf("%w: the introspection response exceeds %d bytes", ErrUnavailable, maxIntrospectionResponse)
	}
	var r introspection
	if err := json.Unmarshal(body, &r); err != nil || r.Active == nil {
		return nil, fmt.Errorf("%w: the introspection response is not an RFC 7662 response (err %v): %s", ErrUnavailable, err, snippet(body))
	}
	if !*r.Active {
		return nil, fmt.Errorf("%w: the authorization server says the token is not active", ErrInvalidToken)
	}
	issuer := r.Issuer
	switch {
	case in.opts.Issuer != "" && issuer == "":
		issuer = in.opts.Issuer
	case in.opts.Issuer != "" && issuer != in.opts.Issuer:
		return nil, fmt.Errorf("%w: issued by %q, not %q", ErrInvalidToken, issuer, in.opts.Issuer)
	}
	if !r.Audience.contains(in.opts.Audience) {
		return nil, fmt.Errorf("%w: audience %q does not include this resource %q", ErrInvalidToken, []string(r.Audience), in.opts.Audience)
	}
	jkt, err := KeyThumbprintOf(r.Confirmation)
	if err != nil {
		return nil, err
	}
	if jkt == "" && strings.EqualFold(r.TokenType, "DPoP") {
		// A token the server calls DPoP-bound, without the key it is
		// bound to: the binding cannot be checked, so the token is not
		// taken (it would otherwise pass as a bearer token).
		return nil, fmt.Errorf("%w: the introspection response says token_type DPoP but has no cnf.jkt", ErrInvalidToken)
	}
	info := &auth.Info{ClientID: r.ClientID, Issuer: issuer, Subject: r.Subject, Scopes: strings.Fields(r.Scope), KeyThumbprint: jkt}
	if r.Expiry != nil {
		info.Expiry = r.Expiry.Time()
	}
	if err := checkTimes(in.now(), in.leeway, r.Expiry, r.NotBefore); err != nil {
		return nil, err
	}
	return info, nil
}

// checkTimes checks exp and nbf (either may be nil: introspection need not
// send them) with leeway: a token is good from nbf-leeway, inclusive, to
// exp+leeway, exclusive (RFC 7519 §4.1.4: "on or after" exp it is not).
func checkTimes(now time.Time, leeway time.Duration, exp, nbf *numericDate) error {
	if exp != nil && !now.Before(exp.Time().Add(leeway)) {
		return fmt.Errorf("%w: expired at %s", ErrInvalidToken, exp.Time().UTC().Format(time.RFC3339))
	}
	if nbf != nil && now.Before(nbf.Time().Add(-leeway)) {
		return fmt.Errorf("%w: not valid before %s", ErrInvalidToken, nbf.Time().UTC().Format(time.RFC3339))
	}
	return nil
}

// snippet returns the start of a body for an error message.
func snippet(b []byte) string {
	const n = 200
	b = bytes.TrimSpace(b)
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// audience is an aud member: one string or an array of them.
type audience []string

func (a *audience) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*a = audience{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("aud is neither a string nor an array of strings")
	}
	*a = many
	return nil
}

func (a audience) contains(s string) bool {
	for _, v := range a {
		if v == s {
			return true
		}
	}
	return false
}

// numericDate is a JSON number of seconds since the Unix epoch, as exp,
// nbf and iat are written (RFC 7519 §2); fractions are kept to the
// millisecond.
type numericDate float64

// maxNumericDate keeps conversions in range: about 34,000 years.
const maxNumericDate = 1 << 40

// UnmarshalJSON reads a number, refusing negative and absurd ones.
func (d *numericDate) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return errors.New("a date is not a number")
	}
	if f < 0 || f > maxNumericDate {
		return fmt.Errorf("date %v is out of range", f)
	}
	*d = numericDate(f)
	return nil
}

// Time returns d as a time.Time.
func (d numericDate) Time() time.Time { return time.UnixMilli(int64(float64(d) * 1000)) }
