package bridge

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// connect reaches the remote server once, declaring caps, and makes the
// server the host talks to: the remote server's identity, capabilities
// and instructions, with a handler for every method that forwards it.
//
// A legacy host (legacyHost) declared caps for its whole session, and the
// remote session declares them too; a legacy remote server's questions
// then go to the host's back-channel. A 2026-07-28 host declares its
// capabilities per request: the session declares none, and each request
// forwarded to a 2026-07-28 server carries the host's own, while a legacy
// server's questions are relayed through a session of their own (relay.go).
func (b *bridge) connect(caps *mcp.ClientCapabilities, legacyHost bool) (*upstream, error) {
	if up := b.up.Load(); up != nil {
		return up, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if up := b.up.Load(); up != nil {
		return up, nil
	}
	copts := &client.Options{
		Capabilities:    withoutExtensions(caps),
		ProtocolVersion: b.opts.ProtocolVersion,
		Logger:          b.log,
		RequestTimeout:  b.opts.RequestTimeout,
		OnLog:           b.forwardLog,
		Cache:           noCache,
	}
	if legacyHost {
		copts.Elicit = func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			raw, err := b.askHost(ctx, mcp.MethodElicit, p)
			if err != nil {
				return nil, err
			}
			return mcp.InputResponses{"a": raw}.Elicit("a")
		}
		copts.Sample = func(ctx context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
			raw, err := b.askHost(ctx, mcp.MethodCreateMessage, p)
			if err != nil {
				return nil, err
			}
			return mcp.InputResponses{"a": raw}.Sample("a")
		}
		copts.ListRoots = func(ctx context.Context) (*mcp.ListRootsResult, error) {
			raw, err := b.askHost(ctx, mcp.MethodListRoots, nil)
			if err != nil {
				return nil, err
			}
			return mcp.InputResponses{"a": raw}.Roots("a")
		}
	}
	sess, err := client.New(b.info, copts).Connect(b.ctx, b.remote)
	if err != nil {
		return nil, fmt.Errorf("bridge: connecting to the remote server: %w", err)
	}
	up := &upstream{sess: sess, legacy: sess.ProtocolVersion().Era() == mcp.EraLegacy}
	info := mcp.Implementation{Name: "parley-bridge"}
	if si := sess.ServerInfo(); si != nil {
		info = *si
	}
	up.srv = server.New(info, &server.Options{
		Capabilities:  mirrorCapabilities(sess.ServerCapabilities()),
		Instructions:  sess.Instructions(),
		Bridge:        &server.BridgeOptions{MaxRounds: b.opts.MaxRounds},
		AnswerTimeout: b.opts.AnswerTimeout,
		Logger:        b.log,
	})
	b.register(up)
	b.up.Store(up)
	b.followChanges(up)
	b.log.Debug("bridge: connected", "remote", info.Name, "version", sess.ProtocolVersion())
	return up, nil
}

// noCache turns the client's cache off: the bridge forwards the remote
// server's results with their ttlMs and cacheScope, and caching them is
// the host's decision; a second cache here would serve the host a result
// its own had already let go of.
var noCache = &client.CacheOptions{Disable: true}

// mirrorCapabilities is what the bridge declares to the host: the remote
// server's capabilities, less its extensions, whose methods the bridge
// does not forward.
func mirrorCapabilities(remote *mcp.ServerCapabilities) *mcp.ServerCapabilities {
	c := *remote
	c.Extensions = nil
	return &c
}

// withoutExtensions returns the host's capabilities less its extensions:
// the bridge does not forward extension methods (a task's tasks/get, say),
// so the remote server must not count on the host's.
func withoutExtensions(caps *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	if len(caps.Extensions) == 0 {
		return caps
	}
	c := *caps
	c.Extensions = nil
	return &c
}

// askHost sends a legacy remote server's question to a legacy host over
// its back-channel, within Options.AnswerTimeout.
func (b *bridge) askHost(ctx context.Context, method string, params any) (json.RawMessage, error) {
	var raw json.RawMessage
	if params != nil {
		var err error
		if raw, err = mcp.Marshal(params); err != nil {
			return nil, fmt.Errorf("bridge: encoding %s: %w", method, err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, b.opts.AnswerTimeout)
	defer cancel()
	return b.call(ctx, method, raw)
}

// forwardLog hands the remote server's log messages to the host.
func (b *bridge) forwardLog(_ context.Context, p *mcp.LoggingMessageNotificationParams) {
	c := *p
	c.Meta = nil
	if err := b.notify(b.ctx, mcp.NotificationMessage, &c); err != nil {
		b.log.Debug("bridge: could not forward a log message", "err", err)
	}
}

// forwarded returns the context of a request forwarded for req: the host's
// cancellation (ctx), and, toward a 2026-07-28 server, the host's
// capabilities and log level; progress the remote server reports goes to
// the host under the host's own token.
func (b *bridge) forwarded(ctx context.Context, up *upstream, req *server.Request) context.Context {
	ro := &client.RequestOptions{}
	if !up.legacy {
		ro.Capabilities = withoutExtensions(req.ClientCapabilities())
		ro.LogLevel = req.LogLevel()
	}
	if token := req.Meta.ProgressToken; token.IsValid() {
		ro.OnProgress = func(_ context.Context, p *mcp.ProgressNotificationParams) {
			c := *p
			c.Meta = nil
			c.ProgressToken = token
			if err := req.Notify(ctx, mcp.NotificationProgress, &c); err != nil {
				b.log.Debug("bridge: could not forward progress", "err", err)
			}
		}
	}
	return client.WithRequestOptions(ctx, ro)
}

// register fills every handler slot of up.srv with one that forwards the
// request to the remote server.
func (b *bridge) register(up *upstream) {
	s, sess := up.srv, up.sess
	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		return sess.ListTools(b.forwarded(ctx, up, req), p.Cursor)
	})
	s.HandleListPrompts(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListPromptsResult, error) {
		return sess.ListPrompts(b.forwarded(ctx, up, req), p.Cursor)
	})
	s.HandleListResources(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListResourcesResult, error) {
		return sess.ListResources(b.forwarded(ctx, up, req), p.Cursor)
	})
	s.HandleListResourceTemplates(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListResourceTemplatesResult, error) {
		return sess.ListResourceTemplates(b.forwarded(ctx, up, req), p.Cursor)
	})
	s.HandleComplete(func(ctx context.Context, req *server.Request, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
		c := *p
		c.Meta = nil
		return sess.Complete(b.forwarded(ctx, up, req), &c)
	})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		c := *p
		c.Meta = nil
		return roundTrip(b, ctx, up, req, p, &c, (*client.Session).CallToolRound)
	})
	s.HandleGetPrompt(func(ctx context.Context, req *server.Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
		c := *p
		c.Meta = nil
		return roundTrip(b, ctx, up, req, p, &c, (*client.Session).GetPromptRound)
	})
	s.HandleReadResource(func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		c := *p
		c.Meta = nil
		return roundTrip(b, ctx, up, req, p, &c, (*client.Session).ReadResourceRound)
	})
	s.Use(b.listenMiddleware)
}

// roundTrip sends one round of a call that may ask for input: c, the
// host's params p without their _meta, as it is to a 2026-07-28 server, or,
// from a legacy host whose calls the bridge relays, without the round's
// answers and state (the relay keeps those) through relayed.
func roundTrip[PP mcp.RequestStateParams, O any](b *bridge, ctx context.Context, up *upstream, req *server.Request, p, c PP, round func(*client.Session, context.Context, PP) (O, error)) (O, error) {
	if !up.legacy {
		return round(up.sess, b.forwarded(ctx, up, req), c)
	}
	responses, _ := c.Continuation()
	*responses = nil
	c.SetRequestState("", false)
	res, err := b.relayed(ctx, up, req, p, func(ctx context.Context, sess *client.Session) (mcp.AnyResult, error) {
		return outcome[mcp.AnyResult](round(sess, ctx, c))
	})
	return outcome[O](res, err)
}

// outcome converts between a carrier's union and another interface its
// values implement; a typed nil becomes an untyped one.
func outcome[O any, I any](v I, err error) (O, error) {
	var zero O
	if err != nil {
		return zero, err
	}
	o, _ := any(v).(O)
	return o, nil
}
