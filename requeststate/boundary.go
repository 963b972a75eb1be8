package requeststate

import (
	"context"
	"errors"
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
// verifies every requestState that comes back. Build one with [NewBoundary]
// and install [Boundary.Wrap] as server middleware, or let [Protect] do
// both. A Boundary is safe for concurrent use.
type Boundary struct {
	codec     Codec
	ttl       time.Duration
	audience  string
	principal func(ctx context.Context, req *server.Request) (string, error)
	now       func() time.Time
	log       *slog.Logger
	singleUse SingleUseStore // nil: a state may be used again within its TTL
}

// NewBoundary checks p (nil means [ProcessLocal]) and returns the boundary
// for a server named serverName, the default audience.
func NewBoundary(serverName string, p *Policy) (*Boundary, error) {
	if p == nil {
		p = ProcessLocal()
	}
	return p.resolve(serverName)
}

// Protect attaches the boundary to a low-level server: from now on, every
// requestState its handlers return is sealed and every one a client sends
// is verified. p nil means [ProcessLocal]. The audience defaults to the
// server's name, and the logger to the server's.
//
// Middleware added to s before Protect sees sealed tokens; middleware
// added after it, and the handlers, see plaintext. Attach it once.
func Protect(s *server.Server, p *Policy) error {
	b, err := NewBoundary(s.Info().Name, p)
	if err != nil {
		return err
	}
	if p == nil || p.Logger == nil {
		b.log = s.Logger()
	}
	s.Use(b.Wrap)
	return nil
}

// MustProtect is [Protect] for start-up code: it panics if the policy is
// invalid (a short or duplicate key, no server name, both or neither of
// Keys and Codec), which is a configuration error to fix before serving.
func MustProtect(s *server.Server, p *Policy) {
	if err := Protect(s, p); err != nil {
		panic(err)
	}
}

// Wrap is the boundary as a [server.Middleware]: s.Use(b.Wrap).
//
// On tools/call, prompts/get and resources/read it verifies every inbound
// requestState, an empty one included, and replaces it with the plaintext
// before next runs, whether or not the handler ever issues state; answers
// in inputResponses to questions the sealed round did not ask are dropped.
// An input_required result with a requestState (an empty plaintext
// included, when present) is returned as a copy with the state sealed.
// Other methods pass through untouched.
func (b *Boundary) Wrap(next server.Handler) server.Handler {
	return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
		p := carrierParams(req.Method, req.Params)
		if p == nil {
			return next(ctx, req)
		}
		var id identity
		// Present is what counts, not empty: "requestState":"" is a state
		// like any other, and no token is empty, so it is refused here.
		if token, present := p.LookupRequestState(); present {
			v, err := b.open(ctx, req, token, &id)
			if err != nil {
				return nil, err
			}
			p.SetRequestState(string(v.cl.state), true)
			responses, _ := p.Continuation()
			v.dropUnasked(responses)
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
		token, err := b.seal(ctx, req, ir, &id)
		if errors.Is(err, errAmbiguous) {
			// The client's fault, not the server's: arguments that
			// decoders read differently can be bound to no state. Said
			// only now, when state is to be sealed, because checking every
			// call up front would cost each call a digest it may never need.
			b.log.LogAttrs(ctx, slog.LevelWarn, "requeststate: refusing to seal requestState",
				slog.String("method", req.Method), slog.String("err", err.Error()))
			return nil, wire.InvalidParams("Invalid params: %s", strings.TrimPrefix(err.Error(), "requeststate: "))
		}
		if err != nil {
			b.log.LogAttrs(ctx, slog.LevelError, "requeststate: refusing to seal requestState",
				slog.String("method", req.Method), slog.String("err", err.Error()))
			return nil, wire.Internal("")
		}
		sealed := *ir // the handler may share its value; never write into it
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

// verified is what an inbound token proved, kept in the handler's context
// for [Asked].
type verified struct {
	cl claims
}

type verifiedKey struct{}

// open unseals and checks an inbound token. Every failure is logged with
// its reason and returned as the fixed rejection.
func (b *Boundary) open(ctx context.Context, req *server.Request, token string, id *identity) (*verified, error) {
	v := new(verified)
	reason, cause := b.check(ctx, req, token, id, &v.cl)
	if reason == "" {
		return v, nil
	}
	attrs := []slog.Attr{slog.String("method", req.Method), slog.String("reason", reason)}
	if cause != nil {
		attrs = append(attrs, slog.String("err", cause.Error()))
	}
	b.log.LogAttrs(ctx, slog.LevelWarn, "requeststate: rejected requestState", attrs...)
	return nil, rejection(cause)
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
		// Last, so that only a token valid in every other respect is used up.
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
func Asked(ctx context.Context, key string, q mcp.InputRequest) bool {
	v, _ := ctx.Value(verifiedKey{}).(*verified)
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
