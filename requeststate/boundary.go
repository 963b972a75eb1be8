package requeststate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// The log-only reasons a token is refused for.
const (
	reasonMalformed   = "malformed"
	reasonUnknownKey  = "unknown key"
	reasonAuthFailed  = "authentication failed"
	reasonCodec       = "codec error"
	reasonCodecReject = "refused by the codec"
	reasonEnvelope    = "malformed envelope"
	reasonVersion     = "unsupported envelope version"
	reasonFuture      = "issued in the future"
	reasonExpired     = "expired"
	reasonAudience    = "audience mismatch"
	reasonRequest     = "bound to another request (method, target or arguments differ)"
	reasonArguments   = "arguments cannot be digested"
	reasonDrift       = "principal drift (bound with a principal and presented without one, or the reverse)"
	reasonPrincipal   = "principal mismatch"
	reasonHook        = "principal hook failed"
)

// Boundary seals the requestState of outgoing input_required results and
// verifies every requestState that comes back. It is a server.StateSealer:
// build one with [NewBoundary] and install it with server.Server.SealState,
// or let [Protect] do both. A Boundary is safe for concurrent use.
type Boundary struct {
	codec     Codec
	ttl       time.Duration
	audience  string
	principal func(ctx context.Context, req *server.Request) (string, error)
	now       func() time.Time
	log       *slog.Logger
	singleUse SingleUseStore // nil: a state may be used again within its TTL
	rejected  func(ctx context.Context, req *server.Request, reason string, err error)
}

var (
	_ server.StateSealer         = (*Boundary)(nil)
	_ server.AnnotatedStateProof = (*verified)(nil) // a StateProof that carries annotations
)

// NewBoundary checks p (nil means [ProcessLocal]) and returns the boundary
// for a server named serverName, the default audience.
func NewBoundary(serverName string, p *Policy) (*Boundary, error) {
	if p == nil {
		p = ProcessLocal()
	}
	return p.resolve(serverName)
}

// Protect attaches the boundary to a low-level server as its StateSealer
// (server.Server.SealState): from now on, every requestState its handlers
// return is sealed and every one a client sends is verified, in a step of
// the server's dispatch that runs outside every middleware, so all of them
// and the handlers see plaintext whatever the order of Use calls. p nil
// means [ProcessLocal]. The audience defaults to the server's name, and the
// logger to the server's. A server takes one boundary: a second Protect
// returns an error wrapping server.ErrStateSealerSet.
func Protect(s *server.Server, p *Policy) error {
	b, err := NewBoundary(s.Info().Name, p)
	if err != nil {
		return err
	}
	if p == nil || p.Logger == nil {
		b.log = s.Logger()
	}
	if err := s.SealState(b); err != nil {
		return fmt.Errorf("requeststate: %w", err)
	}
	return nil
}

// MustProtect is [Protect] for start-up code: it panics if the policy is
// invalid (a short or duplicate key, no server name, both or neither of
// Keys and Codec) or the server has a boundary already, which is a
// configuration error to fix before serving.
func MustProtect(s *server.Server, p *Policy) {
	if err := Protect(s, p); err != nil {
		panic(err)
	}
}

// Open is the boundary's half of server.StateSealer on the way in: it
// verifies an inbound requestState (an empty one included: no token is
// empty, so it is refused) and returns its plaintext and what it proved.
// Every failure is logged with its reason and answered with the one fixed
// error. Answers in inputResponses to questions the sealed round did not
// ask are dropped from req's params.
func (b *Boundary) Open(ctx context.Context, req *server.Request, token string) (string, server.StateProof, error) {
	v := new(verified)
	if err := b.open(ctx, req, token, v); err != nil {
		return "", nil, err
	}
	if p := carrierParams(req.Method, req.Params); p != nil {
		responses, _ := p.Continuation()
		v.dropUnasked(responses)
	}
	return string(v.cl.state), v, nil
}

// Seal is the boundary's half of server.StateSealer on the way out: it
// seals the plaintext requestState of ir, bound to req's method, target and
// arguments, its caller, the questions ir asks, this server and a fresh
// expiry. Arguments that decoders read differently cannot be bound and are
// the client's -32602; any other failure is logged and answered -32603.
func (b *Boundary) Seal(ctx context.Context, req *server.Request, ir *mcp.InputRequiredResult) (string, error) {
	// The principal and request digest that verified the inbound token,
	// if there was one, seal the outbound one.
	id := new(identity)
	if v, ok := req.StateProof().(*verified); ok {
		id = &v.id
	}
	return b.sealWithID(ctx, req, ir, id)
}

// sealWithID is Seal with the request's identity given, and its failures
// turned into the errors a client gets.
func (b *Boundary) sealWithID(ctx context.Context, req *server.Request, ir *mcp.InputRequiredResult, id *identity) (string, error) {
	token, err := b.seal(ctx, req, ir, id)
	if errors.Is(err, errAmbiguous) {
		// The client's fault, not the server's: arguments that decoders
		// read differently can be bound to no state. Said only now, when
		// state is to be sealed, because checking every call up front
		// would cost each call a digest it may never need.
		b.log.LogAttrs(ctx, slog.LevelWarn, "requeststate: refusing to seal requestState",
			slog.String("method", req.Method), slog.String("err", err.Error()))
		return "", wire.InvalidParams("Invalid params: %s", strings.TrimPrefix(err.Error(), "requeststate: "))
	}
	if err != nil {
		b.log.LogAttrs(ctx, slog.LevelError, "requeststate: refusing to seal requestState",
			slog.String("method", req.Method), slog.String("err", err.Error()))
		return "", wire.Internal("")
	}
	return token, nil
}

// Wrap is the boundary as a [server.Middleware]: s.Use(b.Wrap). It runs
// Open and Seal around next, as the server's step does, but only for the
// middleware added after it: those added before see tokens.
//
// Deprecated: attach the boundary with [Protect] (or
// server.Server.SealState), which runs it outside every middleware.
func (b *Boundary) Wrap(next server.Handler) server.Handler { return b.wrap(next) }

// wrap is Wrap, kept unexported for the benchmarks and tests that measure
// the boundary without a server around it.
func (b *Boundary) wrap(next server.Handler) server.Handler {
	return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
		p := carrierParams(req.Method, req.Params)
		if p == nil {
			return next(ctx, req)
		}
		var v *verified
		if token, present := p.LookupRequestState(); present {
			plain, proof, err := b.Open(ctx, req, token)
			if err != nil {
				return nil, err
			}
			p.SetRequestState(plain, true)
			v = proof.(*verified)
			ctx = context.WithValue(ctx, verifiedKey{}, v)
		}
		res, err := next(ctx, req)
		if err != nil {
			return res, err
		}
		ir, ok := res.(*mcp.InputRequiredResult)
		if !ok {
			return res, nil
		}
		if _, present := ir.LookupRequestState(); !present {
			return res, nil
		}
		id := new(identity)
		if v != nil {
			id = &v.id
		}
		token, err := b.sealWithID(ctx, req, ir, id)
		if err != nil {
			return nil, err
		}
		sealed := *ir
		sealed.SetRequestState(token, true)
		return &sealed, nil
	}
}

// identity is what one request is bound to, each part worked out at most
// once: the principal and the request digest that verified the inbound
// token seal the outbound one. (On a round that echoed state, reusing the
// digest also means a handler that rewrites its params still binds the next
// token to what the client sent.)
type identity struct {
	known     bool
	principal string
	err       error

	digested bool
	digest   [digestLen]byte
}

func (id *identity) requestDigest(req *server.Request) ([digestLen]byte, error) {
	if id.digested {
		return id.digest, nil
	}
	d, err := requestDigest(req.Method, req.Params)
	if err == nil {
		id.digest, id.digested = d, true
	}
	return d, err
}

func (b *Boundary) principalOf(ctx context.Context, req *server.Request, id *identity) (string, error) {
	if !id.known {
		id.principal, id.err = b.principal(ctx, req)
		id.known = true
	}
	return id.principal, id.err
}

// seal builds the envelope of an outgoing state and seals it.
func (b *Boundary) seal(ctx context.Context, req *server.Request, ir *mcp.InputRequiredResult, id *identity) (string, error) {
	var env sealing
	var err error
	if env.request, err = id.requestDigest(req); err != nil {
		return "", err
	}
	principal, err := b.principalOf(ctx, req, id)
	if err != nil {
		return "", errors.New("the Principal hook failed: " + err.Error())
	}
	if env.questions, err = questionDigests(ir.InputRequests); err != nil {
		return "", err
	}
	env.issued = b.now().UnixMilli()
	env.expires = env.issued + b.ttl.Milliseconds()
	env.audience = b.audience
	env.state = ir.RequestState
	env.annotations = sortAnnotations(req.StateAnnotations())
	var claim [principalLen]byte
	if principal != "" {
		claim = newPrincipalClaim(principal)
		env.principal = &claim
	}
	if b.singleUse != nil {
		env.id = newStateID()
	}
	return b.codec.Seal(appendEnvelope(make([]byte, 0, env.len()), &env))
}

// verified is what an inbound token proved: the server keeps it as the
// request's server.StateProof, and it carries the identity that verified
// the token to the sealing of the next one.
type verified struct {
	cl claims
	id identity
}

// StateAnnotation implements server.AnnotatedStateProof: the value the
// verified round sealed under key (server.Request.AnnotateState).
func (v *verified) StateAnnotation(key string) (string, bool) {
	if v == nil {
		return "", false
	}
	return v.cl.annotation(key)
}

// Asked implements server.StateProof (see [Asked]).
func (v *verified) Asked(key string, q mcp.InputRequest) bool {
	if v == nil || q == nil {
		return false
	}
	want, ok := v.cl.asked(key)
	if !ok {
		return false
	}
	got, err := cachedQuestionDigest(q)
	return err == nil && string(got[:]) == string(want)
}

type verifiedKey struct{}

// open unseals and checks an inbound token into v. Every failure is
// logged with its reason and returned as the fixed rejection.
func (b *Boundary) open(ctx context.Context, req *server.Request, token string, v *verified) error {
	reason, cause := b.check(ctx, req, token, &v.id, &v.cl)
	if reason == "" {
		return nil
	}
	attrs := []slog.Attr{slog.String("method", req.Method), slog.String("reason", reason)}
	if cause != nil {
		attrs = append(attrs, slog.String("err", cause.Error()))
	}
	b.log.LogAttrs(ctx, slog.LevelWarn, "requeststate: rejected requestState", attrs...)
	err := rejection(cause)
	if b.rejected != nil {
		b.rejected(ctx, req, reason, err)
	}
	return err
}

// check returns "" when token is valid for req, or the reason it is not
// (and, for failures outside the boundary's own checks, their error).
func (b *Boundary) check(ctx context.Context, req *server.Request, token string, id *identity, cl *claims) (string, error) {
	plain, err := b.codec.Unseal(token)
	if err != nil {
		var ise *InvalidStateError
		switch {
		case errors.As(err, &ise):
			return ise.Reason, nil
		case errors.Is(err, ErrInvalidState):
			return reasonCodecReject, nil
		}
		// Not a refusal but a failure (a KMS that is down, say): the
		// client still gets the fixed rejection, the operator the error.
		return reasonCodec, err
	}
	if reason := parseEnvelope(plain, cl); reason != "" {
		return reason, nil
	}
	now := b.now().UnixMilli()
	// Written so that every comparison fails closed: an expiry before the
	// issue time, or an issue time absurdly far in the past, is refused.
	if cl.issued > now+ClockSkew.Milliseconds() {
		return reasonFuture, nil
	}
	if !(now < cl.expires) || !(now-cl.issued < b.ttl.Milliseconds()) {
		return reasonExpired, nil
	}
	if string(cl.audience) != b.audience {
		return reasonAudience, nil
	}
	digest, err := id.requestDigest(req)
	if err != nil {
		return reasonArguments, nil
	}
	if digest != cl.request {
		return reasonRequest, nil
	}
	principal, err := b.principalOf(ctx, req, id)
	if err != nil {
		return reasonHook, err
	}
	switch {
	case (principal != "") != (cl.principal != nil):
		return reasonDrift, nil
	case principal != "" && !principalMatches(cl.principal, principal):
		return reasonPrincipal, nil
	}
	if b.singleUse != nil {
		// Last, so that only a token valid in every other respect is used
		// up, and counted against the share of the principal it verified
		// for.
		cl.principalKey = principal
		return b.consume(ctx, cl)
	}
	return "", nil
}

// dropUnasked removes the answers to questions the sealed round did not
// ask. A client answers the latest round only; an answer under another key
// is at best stale and at worst an attempt to slip in an answer to a
// question the handler has not asked yet.
func (v *verified) dropUnasked(responses *mcp.InputResponses) {
	for key := range *responses {
		if _, ok := v.cl.asked(key); !ok {
			delete(*responses, key)
		}
	}
}

// Asked reports whether the round whose requestState this request echoes
// asked exactly q under key: the same kind, message, schema and parameters,
// as it went on the wire. A handler whose questions can change between
// deploys (a reworded message, a new field in a schema) calls it before
// consuming the answer under key, and asks again when it reports false.
//
// It reports false when the request carried no requestState, when no
// boundary verified it, or when the round asked nothing under key. Build
// questions from the request's arguments, not from per-call data (a
// timestamp, a live price): a question that renders differently every
// round never matches.
//
// Handlers have the same answer without the context:
// req.StateProof().Asked(key, q) (nil-safe through this function's check).
func Asked(ctx context.Context, key string, q mcp.InputRequest) bool {
	if v, ok := ctx.Value(verifiedKey{}).(*verified); ok {
		return v.Asked(key, q) // attached by the deprecated Wrap
	}
	proof := server.StateProofFrom(ctx)
	return proof != nil && proof.Asked(key, q)
}
