package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"time"

	"github.com/parley-mcp/parley/mcp"
)

// requestContext is the context a request's handlers run under: the
// caller's, which also answers RequestFromContext. It lives inside the
// Request, so binding the request to its context allocates nothing.
type requestContext struct {
	context.Context
	req *Request
}

// requestKey is the context key of the request being served.
type requestKey struct{}

func (c *requestContext) Value(key any) any {
	if key == (requestKey{}) {
		return c.req
	}
	return c.Context.Value(key)
}

// bind returns ctx carrying r, for RequestFromContext.
func (r *Request) bind(ctx context.Context) context.Context {
	r.ctx = requestContext{Context: ctx, req: r}
	return &r.ctx
}

// RequestFromContext returns the request being served under ctx, or nil.
// Serve puts it in the context every middleware and handler receives, so
// that code that gets only a context (a slog.Handler such as LogHandler,
// a library the handler calls) can still talk to the client.
func RequestFromContext(ctx context.Context) *Request {
	r, _ := ctx.Value(requestKey{}).(*Request)
	return r
}

// The MCP log levels slog lacks, for loggers that forward to a client
// through LogHandler: slog's Debug, Info, Warn and Error map to MCP's
// debug, info, warning and error, and these fill the rest of the
// syslog scale MCP uses.
const (
	LevelNotice    = slog.LevelInfo + 2
	LevelCritical  = slog.LevelError + 4
	LevelAlert     = slog.LevelError + 8
	LevelEmergency = slog.LevelError + 12
)

// MCPLevel returns the MCP log level of a slog level: the most severe MCP
// level at or below it (slog.LevelWarn+1 is warning, LevelCritical-1
// error).
func MCPLevel(l slog.Level) mcp.LoggingLevel {
	switch {
	case l >= LevelEmergency:
		return mcp.LevelEmergency
	case l >= LevelAlert:
		return mcp.LevelAlert
	case l >= LevelCritical:
		return mcp.LevelCritical
	case l >= slog.LevelError:
		return mcp.LevelError
	case l >= slog.LevelWarn:
		return mcp.LevelWarning
	case l >= LevelNotice:
		return mcp.LevelNotice
	case l >= slog.LevelInfo:
		return mcp.LevelInfo
	}
	return mcp.LevelDebug
}

// LogHandlerOptions configures a LogHandler. A nil *LogHandlerOptions means
// the defaults.
type LogHandlerOptions struct {
	// Logger is the name the client sees as the notification's logger.
	// Default: none.
	Logger string
	// Next also receives every record it is enabled for, whether or not
	// the client was sent it: the server's own log, which keeps lines no
	// client asked for and the ones logged outside any request. Default:
	// none, so those are dropped.
	Next slog.Handler
}

// LogHandler is a slog.Handler that sends log records to the client whose
// request is being served, as notifications/message: tool authors log with
// slog.InfoContext(ctx, ...) on a logger built from it, passing the
// handler's ctx, and the host sees the lines.
//
// A record reaches the client only when its context carries a request
// (RequestFromContext) that asked for log messages at the record's level
// or above: under 2026-07-28 the request's own _meta logLevel, on a legacy
// session the level the client set with logging/setLevel. A client that
// asked for none gets none. The notification's data is a JSON object of
// the message (under "msg") and the record's attributes, groups as nested
// objects; its level is MCPLevel of the record's.
//
// Records without a request in their context (logged with
// context.Background, or from code that has no ctx) go only to
// LogHandlerOptions.Next, or are dropped when there is none.
type LogHandler struct {
	logger string
	next   slog.Handler
	ops    []logOp // WithGroup and WithAttrs, in order
}

// logOp is one WithGroup (group set) or WithAttrs call.
type logOp struct {
	group string
	attrs []slog.Attr
}

// NewLogHandler returns a LogHandler configured by opts.
func NewLogHandler(opts *LogHandlerOptions) *LogHandler {
	h := &LogHandler{}
	if opts != nil {
		h.logger, h.next = opts.Logger, opts.Next
	}
	return h
}

// toClient reports whether a record of level logged under ctx goes to a
// client, and to which request.
func toClient(ctx context.Context, level slog.Level) (*Request, bool) {
	if ctx == nil {
		return nil, false
	}
	r := RequestFromContext(ctx)
	if r == nil {
		return nil, false
	}
	min := r.LogLevel()
	return r, min != "" && MCPLevel(level).Enabled(min)
}

// Enabled reports whether the request in ctx asked for level, or Next is
// enabled for it.
func (h *LogHandler) Enabled(ctx context.Context, level slog.Level) bool {
	if _, ok := toClient(ctx, level); ok {
		return true
	}
	return h.next != nil && h.next.Enabled(ctx, level)
}

// Handle sends r to the client of the request in ctx, if it asked for r's
// level, and passes it to Next, if Next is enabled for it. It returns the
// errors of both.
func (h *LogHandler) Handle(ctx context.Context, r slog.Record) error {
	var errs []error
	if req, ok := toClient(ctx, r.Level); ok {
		if err := req.Log(ctx, MCPLevel(r.Level), h.logger, h.data(r)); err != nil {
			errs = append(errs, fmt.Errorf("server: sending a log record to the client: %w", err))
		}
	}
	if h.next != nil && h.next.Enabled(ctx, r.Level) {
		if err := h.next.Handle(ctx, r); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// WithAttrs returns a handler whose records carry attrs too.
func (h *LogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	c := h.with(logOp{attrs: slices.Clone(attrs)})
	if h.next != nil {
		c.next = h.next.WithAttrs(attrs)
	}
	return c
}

// WithGroup returns a handler whose later attributes sit in group name.
func (h *LogHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := h.with(logOp{group: name})
	if h.next != nil {
		c.next = h.next.WithGroup(name)
	}
	return c
}

func (h *LogHandler) with(op logOp) *LogHandler {
	c := *h
	c.ops = append(slices.Clip(h.ops), op)
	return &c
}

// data builds the notification's data: the message and every attribute,
// with groups as nested objects. Empty groups are left out, as slog's
// own handlers do.
func (h *LogHandler) data(r slog.Record) map[string]any {
	root := make(map[string]any, r.NumAttrs()+1)
	cur := root
	var path []map[string]any // the groups' objects, to drop empty ones
	var names []string
	for _, op := range h.ops {
		if op.group != "" {
			m := make(map[string]any)
			cur[op.group] = m
			path, names = append(path, cur), append(names, op.group)
			cur = m
			continue
		}
		for _, a := range op.attrs {
			addAttr(cur, a)
		}
	}
	r.Attrs(func(a slog.Attr) bool {
		addAttr(cur, a)
		return true
	})
	for i := len(path) - 1; i >= 0; i-- {
		if m := path[i][names[i]].(map[string]any); len(m) == 0 {
			delete(path[i], names[i])
		}
	}
	root[slog.MessageKey] = r.Message
	return root
}

// addAttr puts a into m, the way slog's handlers read attributes: values
// resolved, empty attributes ignored, a group without a key inlined.
func addAttr(m map[string]any, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		attrs := a.Value.Group()
		if len(attrs) == 0 {
			return
		}
		dst := m
		if a.Key != "" {
			dst = make(map[string]any, len(attrs))
		}
		for _, g := range attrs {
			addAttr(dst, g)
		}
		if a.Key != "" && len(dst) > 0 {
			m[a.Key] = dst
		}
		return
	}
	m[a.Key] = jsonValue(a.Value)
}

// jsonValue turns a resolved slog value into something encoding/json
// writes as the value means: durations and times as strings, errors as
// their text, floats JSON cannot hold as strings, and anything that does
// not encode as its %+v text.
func jsonValue(v slog.Value) any {
	switch v.Kind() {
	case slog.KindString:
		return v.String()
	case slog.KindInt64:
		return v.Int64()
	case slog.KindUint64:
		return v.Uint64()
	case slog.KindFloat64:
		f := v.Float64()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return v.String()
		}
		return f
	case slog.KindBool:
		return v.Bool()
	case slog.KindDuration:
		return v.Duration().String()
	case slog.KindTime:
		return v.Time().Format(time.RFC3339Nano)
	}
	x := v.Any()
	if err, ok := x.(error); ok {
		if _, marshals := x.(json.Marshaler); !marshals {
			return err.Error()
		}
	}
	raw, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprintf("%+v", x)
	}
	return json.RawMessage(raw)
}
