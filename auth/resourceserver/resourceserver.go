package resourceserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/parley-mcp/parley/auth"
)

// DefaultLeeway is the clock skew the verifiers of this module allow
// between this server and the authorization server when they check a
// token's exp and nbf.
const DefaultLeeway = 30 * time.Second

// Verifier checks an access token. Verify returns what the token says
// about its bearer, or an error matching [ErrInvalidToken],
// [ErrInsufficientScope] or [ErrUnavailable]; any other error is taken
// for a failure of the verifier and answered with 500.
//
// A Verifier must check that the token was issued for this resource (its
// audience, RFC 8707), by a trusted issuer, and has not expired. It should
// fill the same Info fields on every request of one caller: the sealed
// requestState is bound to ClientID, Issuer and Subject.
type Verifier interface {
	Verify(ctx context.Context, token string) (*auth.Info, error)
}

// VerifierFunc adapts a function to [Verifier].
type VerifierFunc func(ctx context.Context, token string) (*auth.Info, error)

// Verify calls f.
func (f VerifierFunc) Verify(ctx context.Context, token string) (*auth.Info, error) {
	return f(ctx, token)
}

// Options configure a [ResourceServer].
type Options struct {
	// Metadata describes the resource; Resource and AuthorizationServers
	// are required. It is served as the protected resource metadata
	// document, and its resource's well-known URL is what every 401 and
	// 403 points the client to.
	Metadata Metadata
	// Verifier checks the bearer tokens. Required.
	Verifier Verifier
	// Scopes are the scopes every request must be granted. A token that
	// lacks one is answered with 403 insufficient_scope naming all of
	// them. Empty means any valid token will do.
	Scopes []string
	// Logger receives verifier failures (at error level) and refused
	// tokens (at debug level, with the reason). Nil means slog.Default().
	Logger *slog.Logger
	// RecheckInterval, when positive, has the token of a long request
	// checked again: once the request has run that long, and at that
	// interval after, for as long as it runs. Only requests that ask
	// ([auth.Revoked]) are re-checked: Parley's subscriptions/listen
	// streams and legacy GET streams. When the verifier refuses the token
	// (ErrInvalidToken: revoked, say) or it lacks a required scope, the
	// stream ends: a listen stream with a -32600 error whose data.reason
	// is "token_revoked", a GET stream by closing. A verifier that cannot
	// decide (ErrUnavailable, any other error) leaves the stream open
	// until the next re-check, and logs a warning; the token's expiry
	// still ends it. Each re-check is one Verify call: with introspection,
	// one request to the authorization server per open stream and
	// interval. Zero (the default) or negative: no re-checks; a stream
	// ends at its token's expiry.
	RecheckInterval time.Duration
	// DPoP, when set, also accepts DPoP-bound access tokens (RFC 9449)
	// presented with the DPoP scheme: the token is checked by Verifier,
	// must be bound to a key (cnf.jkt), and the request's proof of that
	// key is checked by DPoP (package dpopverify has one). Challenges then
	// offer both schemes, a Bearer one and a DPoP one with the algorithms
	// DPoP takes. Nil: bearer tokens only. Either way, a DPoP-bound token
	// presented as a bearer token is refused (section 7.2).
	DPoP DPoPVerifier
	// RequireDPoP refuses bearer tokens: only DPoP-bound tokens with their
	// proofs are taken, and challenges name only DPoP. It needs DPoP.
	RequireDPoP bool
}

// ResourceServer guards an MCP endpoint with OAuth bearer tokens: it
// serves the protected resource metadata document and refuses requests
// without a valid token, as the MCP authorization specification requires
// of a protected MCP server. Build one with [New]. It is safe for
// concurrent use.
type ResourceServer struct {
	verifier    Verifier
	scopes      []string
	scopeParam  string // the scope auth-param of a challenge, quoted, or ""
	metadataURL string
	metaPath    string
	mcpPath     string
	doc         metadataHandler
	log         *slog.Logger
	recheck     time.Duration // Options.RecheckInterval; 0: off
	dpop        DPoPVerifier  // Options.DPoP; nil: bearer tokens only
	schemes     []string      // the schemes taken, in the order challenged
	origin      string        // the resource's scheme and host, for htu
	algs        string        // the algs of the DPoP challenge
}

// New checks opts and returns a ResourceServer.
func New(opts *Options) (*ResourceServer, error) {
	if opts == nil || opts.Verifier == nil {
		return nil, errors.New("resourceserver: Options.Verifier is required")
	}
	doc, err := opts.Metadata.render()
	if err != nil {
		return nil, err
	}
	u, _ := parseResource(opts.Metadata.Resource) // checked by render
	for _, s := range opts.Scopes {
		if !validScope(s) {
			return nil, fmt.Errorf("resourceserver: Options.Scopes: %q is not a scope token (RFC 6749 §3.3)", s)
		}
	}
	rs := &ResourceServer{
		verifier: opts.Verifier,
		scopes:   append([]string(nil), opts.Scopes...),
		metaPath: metadataPath(u),
		mcpPath:  u.Path,
		doc:      doc,
		log:      opts.Logger,
		recheck:  max(opts.RecheckInterval, 0),
	}
	if rs.mcpPath == "" {
		rs.mcpPath = "/"
	}
	rs.metadataURL, _ = MetadataURL(opts.Metadata.Resource)
	if len(rs.scopes) > 0 {
		rs.scopeParam = strings.Join(rs.scopes, " ")
	}
	if rs.log == nil {
		rs.log = slog.Default()
	}
	if opts.RequireDPoP && opts.DPoP == nil {
		return nil, errors.New("resourceserver: Options.RequireDPoP needs Options.DPoP")
	}
	if !opts.RequireDPoP {
		rs.schemes = append(rs.schemes, schemeBearer)
	}
	if opts.DPoP != nil {
		rs.dpop = opts.DPoP
		rs.schemes = append(rs.schemes, schemeDPoP)
		var algs []string
		for _, a := range opts.DPoP.Algorithms() {
			if validScope(a) { // a token: it goes into a quoted-string
				algs = append(algs, a)
			}
		}
		rs.algs = strings.Join(algs, " ")
		rs.origin = u.Scheme + "://" + u.Host
	}
	return rs, nil
}

// MetadataURL returns the URL of the resource's metadata document, the
// resource_metadata of every challenge.
func (rs *ResourceServer) MetadataURL() string { return rs.metadataURL }

// MetadataPath returns the path to mount [ResourceServer.MetadataHandler]
// at: the well-known prefix followed by the resource's path.
func (rs *ResourceServer) MetadataPath() string { return rs.metaPath }

// MetadataHandler serves the protected resource metadata document to GET
// and HEAD. Mount it at [ResourceServer.MetadataPath], without the bearer
// middleware: clients read it before they have a token.
func (rs *ResourceServer) MetadataHandler() http.Handler { return rs.doc }

// Mount registers the metadata document at its well-known path and mcp,
// behind [ResourceServer.Wrap], at the resource's path. Both patterns
// match their paths exactly, for every method.
func (rs *ResourceServer) Mount(mux *http.ServeMux, mcp http.Handler) {
	mux.Handle(rs.metaPath, rs.MetadataHandler())
	mcpPattern := rs.mcpPath
	if strings.HasSuffix(mcpPattern, "/") {
		mcpPattern += "{$}" // a trailing slash would otherwise match a whole subtree
	}
	mux.Handle(mcpPattern, rs.Wrap(mcp))
}

// Wrap returns next behind the bearer-token check. A request reaches next
// only with a valid token that grants every required scope, and with the
// token's [auth.Info] on its context ([auth.InfoFrom]), where the server's
// handlers and the requestState boundary find it. Otherwise:
//
//   - no Authorization header, or one of another scheme: 401 with a
//     challenge naming the metadata URL and the required scopes;
//   - an Authorization header that is not a well-formed bearer credential
//     (RFC 6750 §2.1), or more than one: 400 invalid_request;
//   - a token the verifier refuses ([ErrInvalidToken]), and a DPoP-bound
//     token presented as a bearer token: 401 invalid_token;
//   - with Options.DPoP, a DPoP token whose proof is missing, or more than
//     one, or refused ([ErrInvalidDPoPProof]): 401 invalid_dpop_proof; a
//     proof without the server's nonce ([ErrUseDPoPNonce]): 401
//     use_dpop_nonce with the nonce in DPoP-Nonce; an unbound token
//     presented with the DPoP scheme: 401 invalid_token;
//   - a token without a required scope ([ErrInsufficientScope]): 403
//     insufficient_scope with the scopes needed;
//   - a verifier that cannot decide ([ErrUnavailable]): 503, and any other
//     verifier error 500; both are logged.
//
// With Options.RecheckInterval, a request that asks ([auth.Revoked]) has
// its token checked again while it runs.
//
// Tokens are read from the Authorization header only: MCP forbids them in
// the query string, and form bodies are JSON-RPC here.
func (rs *ResourceServer) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, token, problem := rs.credentials(r.Header)
		switch problem {
		case noCredentials:
			rs.challenge(w, http.StatusUnauthorized, "", "", rs.scopeParam)
			return
		case malformed:
			rs.challenge(w, http.StatusBadRequest, scheme, "invalid_request", "")
			return
		}
		var err error
		if scheme == schemeDPoP {
			err = proofCount(r.Header)
		}
		var info *auth.Info
		if err == nil {
			info, err = rs.verifier.Verify(r.Context(), token)
		}
		if err == nil && info == nil {
			err = errors.New("resourceserver: the verifier returned neither an Info nor an error")
		}
		var nonce string
		if err == nil {
			nonce, err = rs.checkBinding(r, scheme, token, info)
		}
		if err == nil {
			if missing := rs.missingScope(info); missing != "" {
				err = fmt.Errorf("%w: the token lacks scope %q", &InsufficientScopeError{Scopes: rs.scopes}, missing)
			}
		}
		if nonce != "" {
			// The next proof's nonce goes with whatever the answer is
			// (RFC 9449 section 8.2).
			w.Header().Set("DPoP-Nonce", nonce)
		}
		if err != nil {
			rs.refuse(w, r, scheme, err)
			return
		}
		ctx := auth.WithInfo(r.Context(), info)
		if rs.recheck > 0 {
			tw := &tokenWatch{rs: rs, ctx: ctx, token: token}
			defer tw.stop()
			ctx = auth.WithRevocation(ctx, tw.revoked)
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func (rs *ResourceServer) missingScope(info *auth.Info) string {
	for _, s := range rs.scopes {
		if !info.HasScope(s) {
			return s
		}
	}
	return ""
}

// refuse answers a request whose token (presented with scheme) was not
// accepted.
func (rs *ResourceServer) refuse(w http.ResponseWriter, r *http.Request, scheme string, err error) {
	var scopeErr *InsufficientScopeError
	var nonceErr *DPoPNonceError
	switch {
	case r.Context().Err() != nil && errors.Is(err, r.Context().Err()):
		// The client went away while its token was being checked; it
		// hears nothing, and the operator need not be paged.
		rs.log.LogAttrs(r.Context(), slog.LevelDebug, "resourceserver: request ended during token verification", slog.String("err", err.Error()))
		http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
	case errors.Is(err, ErrInvalidToken):
		rs.log.LogAttrs(r.Context(), slog.LevelDebug, "resourceserver: refused a token", slog.String("err", err.Error()))
		rs.challenge(w, http.StatusUnauthorized, scheme, "invalid_token", rs.scopeParam)
	case errors.Is(err, ErrInvalidDPoPProof):
		rs.log.LogAttrs(r.Context(), slog.LevelDebug, "resourceserver: refused a DPoP proof", slog.String("err", err.Error()))
		rs.challenge(w, http.StatusUnauthorized, schemeDPoP, "invalid_dpop_proof", rs.scopeParam)
	case errors.As(err, &nonceErr) && validNonce(nonceErr.Nonce):
		rs.log.LogAttrs(r.Context(), slog.LevelDebug, "resourceserver: asked for a DPoP nonce", slog.String("err", err.Error()))
		w.Header().Set("DPoP-Nonce", nonceErr.Nonce)
		rs.challenge(w, http.StatusUnauthorized, schemeDPoP, "use_dpop_nonce", rs.scopeParam)
	case errors.As(err, &scopeErr):
		rs.log.LogAttrs(r.Context(), slog.LevelDebug, "resourceserver: refused a token", slog.String("err", err.Error()))
		rs.challenge(w, http.StatusForbidden, scheme, "insufficient_scope", scopeParamOf(scopeErr.Scopes, rs.scopeParam))
	case errors.Is(err, ErrInsufficientScope):
		rs.log.LogAttrs(r.Context(), slog.LevelDebug, "resourceserver: refused a token", slog.String("err", err.Error()))
		rs.challenge(w, http.StatusForbidden, scheme, "insufficient_scope", rs.scopeParam)
	case errors.Is(err, ErrUnavailable):
		rs.log.LogAttrs(r.Context(), slog.LevelError, "resourceserver: cannot verify tokens", slog.String("err", err.Error()))
		http.Error(w, "the access token cannot be verified now", http.StatusServiceUnavailable)
	default:
		rs.log.LogAttrs(r.Context(), slog.LevelError, "resourceserver: token verifier failed", slog.String("err", err.Error()))
		http.Error(w, "internal error verifying the access token", http.StatusInternalServerError)
	}
}

// scopeParamOf joins the scopes a verifier named, keeping only valid scope
// tokens (they go into a header), or falls back to the configured ones.
func scopeParamOf(scopes []string, fallback string) string {
	var b strings.Builder
	for _, s := range scopes {
		if !validScope(s) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	if b.Len() == 0 {
		return fallback
	}
	return b.String()
}

// quoteEscape escapes '"' and '\' for a quoted-string (RFC 9110 §5.6.4).
func quoteEscape(s string) string {
	if !strings.ContainsAny(s, `"\`) {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return r.Replace(s)
}

type credentialProblem int

const (
	credentialsOK credentialProblem = iota
	noCredentials
	malformed
)

// credentials reads the token of the Authorization header, and the scheme
// it came with: Bearer (unless Options.RequireDPoP) or, with Options.DPoP,
// DPoP. A request with no Authorization header, or one of another scheme,
// has no credentials for us; one whose token is not exactly one b64token
// (RFC 6750 §2.1, RFC 9449 §7.1), or a second Authorization header, is
// malformed.
func (rs *ResourceServer) credentials(h http.Header) (scheme, token string, problem credentialProblem) {
	values := h.Values("Authorization")
	switch len(values) {
	case 0:
		return "", "", noCredentials
	case 1:
	default:
		return "", "", malformed
	}
	name, rest, _ := strings.Cut(values[0], " ")
	for _, s := range rs.schemes {
		if strings.EqualFold(name, s) {
			scheme = s
		}
	}
	if scheme == "" {
		return "", "", noCredentials
	}
	token = strings.TrimLeft(rest, " ")
	if !validB64Token(token) {
		return scheme, "", malformed
	}
	return scheme, token, credentialsOK
}

// validB64Token reports whether s is a b64token: 1*( ALPHA / DIGIT / "-" /
// "." / "_" / "~" / "+" / "/" ) *"=".
func validB64Token(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}

// validNonce reports whether s may be sent as a DPoP-Nonce: 1*NQCHAR (RFC
// 9449 §8.1), which is the scope-token syntax.
func validNonce(s string) bool { return validScope(s) }

// validScope reports whether s is a scope-token: 1*( %x21 / %x23-5B /
// %x5D-7E ), printable ASCII but for space, '"' and '\'.
func validScope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
