package bridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// A legacy server asks its questions with requests of its own while it
// serves a call, and waits for the answers; a 2026-07-28 host has no
// back-channel and expects an input_required result instead. The bridge
// relays: the call runs on a session of its own (so that the server's
// questions belong to it alone), each question the server sends becomes
// one round of input_required toward the host, and the host's next round
// carries the answer to the waiting question. The requestState the host
// echoes names the waiting call; it means nothing outside this bridge
// process, which holds the call meanwhile (design record 033).

// statePrefix starts the requestState of a relayed round.
const statePrefix = "parley-bridge:"

// relay is one call of a legacy server that a 2026-07-28 host drives in
// rounds.
type relay struct {
	cancel context.CancelFunc // ends the call and its session
	asks   chan *question     // the server's questions, as its callbacks receive them
	done   chan relayOutcome  // the call's end; buffered
	round  int                // the rounds sent to the host so far
	asked  *question          // the question the host is answering
	key    string             // asked's key in the round
	timer  *time.Timer        // ends the call when the host does not come back
	state  string             // the requestState of the round the host holds
	ctx    context.Context    // the call's

	// current is the host's request the call now serves: the first, then
	// each round; the remote server's progress goes to it.
	current atomic.Pointer[hostRequest]
}

type hostRequest struct {
	ctx context.Context
	req *server.Request
}

// question is one question of the legacy server, waiting for its answer.
type question struct {
	req    mcp.InputRequest
	answer chan json.RawMessage // buffered
}

type relayOutcome struct {
	res mcp.AnyResult
	err error
}

// relays are the calls waiting for a 2026-07-28 host's next round, by the
// requestState of the round it was sent.
type relays struct {
	mu      sync.Mutex
	waiting map[string]*relay
	running sync.WaitGroup // the goroutines of relayed calls
}

func (rs *relays) init() { rs.waiting = make(map[string]*relay) }

// park keeps r until the host's next round, or until timeout.
func (rs *relays) park(r *relay, timeout time.Duration) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.waiting[r.state] = r
	r.timer = time.AfterFunc(timeout, func() {
		if rs.take(r.state) == r {
			r.cancel()
		}
	})
}

// take removes and returns the relay parked under state, or nil.
func (rs *relays) take(state string) *relay {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r := rs.waiting[state]
	if r != nil {
		delete(rs.waiting, state)
		r.timer.Stop()
	}
	return r
}

// closeAll ends every parked call.
func (rs *relays) closeAll() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for state, r := range rs.waiting {
		r.timer.Stop()
		r.cancel()
		delete(rs.waiting, state)
	}
}

// relayed serves a carrier request (p) of the host on a legacy remote
// server; start sends the call on a session and returns its result.
//
// A legacy host, or a 2026-07-28 host that declared nothing a server could
// ask for, needs no relay: the call goes on the shared session, whose
// questions (for a legacy host) go to the host's back-channel.
func (b *bridge) relayed(ctx context.Context, up *upstream, req *server.Request, p mcp.RequestStateParams, start func(context.Context, *client.Session) (mcp.AnyResult, error)) (mcp.AnyResult, error) {
	state, stated := p.LookupRequestState()
	if !stated || !strings.HasPrefix(state, statePrefix) {
		if req.Session() != nil || !asksAnything(req.ClientCapabilities()) {
			return start(b.forwarded(ctx, up, req), up.sess)
		}
		r := b.startRelay(up, req, start)
		r.current.Store(&hostRequest{ctx, req})
		return b.next(ctx, r)
	}
	r := b.relays.take(state)
	if r == nil {
		// Unknown, answered already, or timed out: the call is gone.
		return nil, mcp.NewInvalidRequestStateError()
	}
	responses, _ := p.Continuation()
	raw, ok := (*responses)[r.key]
	if !ok {
		r.cancel()
		return nil, wire.InvalidParams("Invalid params: inputResponses has no answer under %q", r.key)
	}
	r.current.Store(&hostRequest{ctx, req})
	r.asked.answer <- raw
	return b.next(ctx, r)
}

// asksAnything reports whether caps let a server ask anything.
func asksAnything(caps *mcp.ClientCapabilities) bool {
	return caps.Elicitation != nil || caps.Sampling != nil || caps.Roots != nil
}

// startRelay begins the call on a session of its own, which declares the
// capabilities the host declared on this request and hands the server's
// questions to the relay.
func (b *bridge) startRelay(up *upstream, req *server.Request, start func(context.Context, *client.Session) (mcp.AnyResult, error)) *relay {
	ctx, cancel := context.WithCancel(b.ctx)
	r := &relay{cancel: cancel, asks: make(chan *question), done: make(chan relayOutcome, 1), ctx: ctx}
	ask := func(ctx context.Context, q mcp.InputRequest) (json.RawMessage, error) {
		qq := &question{req: q, answer: make(chan json.RawMessage, 1)}
		select {
		case r.asks <- qq:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-r.ctx.Done():
			return nil, r.ctx.Err()
		}
		select {
		case raw := <-qq.answer:
			return raw, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-r.ctx.Done():
			return nil, r.ctx.Err()
		}
	}
	c := client.New(b.info, &client.Options{
		Capabilities:    withoutExtensions(req.ClientCapabilities()),
		ProtocolVersion: up.sess.ProtocolVersion(),
		Logger:          b.log,
		RequestTimeout:  b.opts.RequestTimeout,
		OnLog:           b.forwardLog,
		Cache:           noCache,
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			raw, err := ask(ctx, &mcp.ElicitRequest{Params: p})
			if err != nil {
				return nil, err
			}
			return mcp.InputResponses{"a": raw}.Elicit("a")
		},
		Sample: func(ctx context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
			raw, err := ask(ctx, &mcp.CreateMessageRequest{Params: *p})
			if err != nil {
				return nil, err
			}
			return mcp.InputResponses{"a": raw}.Sample("a")
		},
		ListRoots: func(ctx context.Context) (*mcp.ListRootsResult, error) {
			raw, err := ask(ctx, &mcp.ListRootsRequest{})
			if err != nil {
				return nil, err
			}
			return mcp.InputResponses{"a": raw}.Roots("a")
		},
	})
	b.relays.running.Add(1)
	go func() {
		defer b.relays.running.Done()
		defer cancel()
		sess, err := c.Connect(ctx, b.remote)
		if err != nil {
			r.done <- relayOutcome{err: err}
			return
		}
		defer sess.Close()
		res, err := start(client.WithRequestOptions(ctx, &client.RequestOptions{OnProgress: r.progress}), sess)
		r.done <- relayOutcome{res, err}
	}()
	return r
}

// progress hands the remote server's progress to the host's request the
// call now serves, under that request's token, if it gave one.
func (r *relay) progress(_ context.Context, p *mcp.ProgressNotificationParams) {
	h := r.current.Load()
	if h == nil || !h.req.Meta.ProgressToken.IsValid() {
		return
	}
	c := *p
	c.Meta = nil
	c.ProgressToken = h.req.Meta.ProgressToken
	_ = h.req.Notify(h.ctx, mcp.NotificationProgress, &c)
}

// next waits for what the relayed call does next: ask a question, which
// becomes the round returned to the host, or end. The host's cancellation
// of its request ends the call.
func (b *bridge) next(ctx context.Context, r *relay) (mcp.AnyResult, error) {
	select {
	case q := <-r.asks:
		r.round++
		if r.round > b.opts.MaxRounds {
			r.cancel()
			b.log.Error("bridge: the remote server still asks after the round limit", "maxRounds", b.opts.MaxRounds)
			return nil, wire.Internal("")
		}
		r.asked = q
		r.key = "q" + strconv.Itoa(r.round)
		r.state = statePrefix + randomID() + ":" + strconv.Itoa(r.round)
		b.relays.park(r, b.opts.AnswerTimeout)
		ir := &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{r.key: q.req}}
		ir.SetRequestState(r.state, true)
		return ir, nil
	case o := <-r.done:
		return o.res, o.err
	case <-ctx.Done():
		r.cancel()
		return nil, ctx.Err()
	}
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
