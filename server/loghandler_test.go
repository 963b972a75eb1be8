package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// logLines collects the notifications/message a client receives.
type logLines struct {
	mu    sync.Mutex
	lines []mcp.LoggingMessageNotificationParams
}

func (l *logLines) add(_ context.Context, p *mcp.LoggingMessageNotificationParams) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, *p)
}

func (l *logLines) get() []mcp.LoggingMessageNotificationParams {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]mcp.LoggingMessageNotificationParams(nil), l.lines...)
}

// logServer is a server whose tool "log" runs body with a logger built on
// a LogHandler named "tools" (with next, when not nil, as its Next).
func logServer(next slog.Handler, body func(ctx context.Context, log *slog.Logger)) *server.Server {
	s := server.New(mcp.Implementation{Name: "log-server", Version: "1"}, &server.Options{Logger: slog.New(slog.DiscardHandler)})
	log := slog.New(server.NewLogHandler(&server.LogHandlerOptions{Logger: "tools", Next: next}))
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		body(ctx, log)
		return mcp.TextResult("ok"), nil
	})
	return s
}

// callLogTool connects a client of the given protocol version (""
// negotiates 2026-07-28) asking for level, calls the tool, and returns the
// log lines the client received, which arrive before the call returns.
func callLogTool(t *testing.T, s *server.Server, version mcp.ProtocolVersion, level mcp.LoggingLevel) []mcp.LoggingMessageNotificationParams {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	clientEnd, serverEnd := transport.NewMemoryPipe()
	served := make(chan error, 1)
	go func() { served <- s.ServeConn(ctx, serverEnd) }()
	var lines logLines
	c := client.New(mcp.Implementation{Name: "log-client", Version: "1"}, &client.Options{
		ProtocolVersion: version, LogLevel: level, OnLog: lines.add, Logger: slog.New(slog.DiscardHandler),
	})
	sess, err := c.Connect(ctx, transport.NewMemoryTransport(clientEnd))
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	if got := sess.ProtocolVersion(); version != "" && got != version || version == "" && got.Era() != mcp.EraModern {
		t.Fatalf("session speaks %s", got)
	}
	if _, err := sess.CallTool(ctx, "log", nil); err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	sess.Close()
	cancel()
	testwait.Recv(t, served, "the end of ServeConn")
	return lines.get()
}

// generations are the protocol versions the handler is tested with: ""
// for 2026-07-28 (logLevel in each request's _meta) and 2025-11-25
// (logging/setLevel once per session).
var generations = []mcp.ProtocolVersion{"", mcp.Version20251125}

func genName(v mcp.ProtocolVersion) string {
	if v == "" {
		return "2026-07-28"
	}
	return string(v)
}

// dataJSON returns a line's data as JSON text.
func dataJSON(t *testing.T, p mcp.LoggingMessageNotificationParams) string {
	t.Helper()
	b, err := json.Marshal(p.Data)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLogHandlerForwardsRecords(t *testing.T) {
	for _, v := range generations {
		t.Run(genName(v), func(t *testing.T) {
			s := logServer(nil, func(ctx context.Context, log *slog.Logger) {
				log = log.With("tool", "log").WithGroup("call")
				log.InfoContext(ctx, "starting", "n", 3, slog.Group("who", "name", "ada", "admin", true))
				log.DebugContext(ctx, "details", "n", 4)
				log.WarnContext(ctx, "slow", "took", 1500*time.Millisecond)
				log.Log(ctx, server.LevelCritical, "broken", "err", errors.New("disk full"))
			})
			lines := callLogTool(t, s, v, mcp.LevelInfo)
			want := []struct {
				level mcp.LoggingLevel
				data  string
			}{
				{mcp.LevelInfo, `{"call":{"n":3,"who":{"admin":true,"name":"ada"}},"msg":"starting","tool":"log"}`},
				{mcp.LevelWarning, `{"call":{"took":"1.5s"},"msg":"slow","tool":"log"}`},
				{mcp.LevelCritical, `{"call":{"err":"disk full"},"msg":"broken","tool":"log"}`},
			}
			if len(lines) != len(want) {
				t.Fatalf("%d lines %+v, want %d", len(lines), lines, len(want))
			}
			for i, w := range want {
				if lines[i].Level != w.level || lines[i].Logger != "tools" || dataJSON(t, lines[i]) != w.data {
					t.Errorf("line %d: %s %q %s, want %s %q %s", i, lines[i].Level, lines[i].Logger, dataJSON(t, lines[i]), w.level, "tools", w.data)
				}
			}
		})
	}
}

// The client's level decides what it is sent; a client that asked for none
// gets none.
func TestLogHandlerRespectsClientLevel(t *testing.T) {
	for _, v := range generations {
		for _, tc := range []struct {
			level mcp.LoggingLevel
			want  []string
		}{
			{mcp.LevelDebug, []string{"d", "i", "n", "w", "e"}},
			{mcp.LevelNotice, []string{"n", "w", "e"}},
			{mcp.LevelError, []string{"e"}},
			{"", nil},
		} {
			t.Run(genName(v)+"/"+string(tc.level), func(t *testing.T) {
				var enabled []string // what the handler says it wants, before any record is made
				s := logServer(nil, func(ctx context.Context, log *slog.Logger) {
					for _, l := range []struct {
						name  string
						level slog.Level
					}{{"d", slog.LevelDebug}, {"i", slog.LevelInfo}, {"n", server.LevelNotice}, {"w", slog.LevelWarn}, {"e", slog.LevelError}} {
						if log.Enabled(ctx, l.level) {
							enabled = append(enabled, l.name)
						}
					}
					log.DebugContext(ctx, "d")
					log.InfoContext(ctx, "i")
					log.Log(ctx, server.LevelNotice, "n")
					log.WarnContext(ctx, "w")
					log.ErrorContext(ctx, "e")
				})
				var got []string
				for _, l := range callLogTool(t, s, v, tc.level) {
					got = append(got, l.Data.(map[string]any)["msg"].(string))
				}
				if strings.Join(got, ",") != strings.Join(tc.want, ",") {
					t.Errorf("client got %v, want %v", got, tc.want)
				}
				if strings.Join(enabled, ",") != strings.Join(tc.want, ",") {
					t.Errorf("handler enabled for %v, want %v", enabled, tc.want)
				}
			})
		}
	}
}

// Records without a request in their context go to Next only, or nowhere;
// records with one go to the client and to Next.
func TestLogHandlerNext(t *testing.T) {
	for _, v := range generations {
		t.Run(genName(v), func(t *testing.T) {
			var buf bytes.Buffer
			next := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			}})
			s := logServer(next, func(ctx context.Context, log *slog.Logger) {
				log = log.With("svc", "x").WithGroup("g")
				log.WarnContext(context.Background(), "no request here", "k", 1)
				log.WarnContext(ctx, "both", "k", 2)
				log.InfoContext(ctx, "client only", "k", 3)
			})
			lines := callLogTool(t, s, v, mcp.LevelInfo)
			if len(lines) != 2 || dataJSON(t, lines[0]) != `{"g":{"k":2},"msg":"both","svc":"x"}` || dataJSON(t, lines[1]) != `{"g":{"k":3},"msg":"client only","svc":"x"}` {
				t.Errorf("client got %+v", lines)
			}
			want := "level=WARN msg=\"no request here\" svc=x g.k=1\nlevel=WARN msg=both svc=x g.k=2\n"
			if buf.String() != want {
				t.Errorf("Next got %q, want %q", buf.String(), want)
			}

			// Without Next, a record outside any request is dropped.
			h := server.NewLogHandler(nil)
			if h.Enabled(context.Background(), slog.LevelError) {
				t.Error("a handler without Next is enabled outside a request")
			}
			if err := h.Handle(context.Background(), slog.NewRecord(time.Time{}, slog.LevelError, "dropped", 0)); err != nil {
				t.Errorf("Handle outside a request: %v", err)
			}
		})
	}
}

type secret string

func (secret) LogValue() slog.Value { return slog.StringValue("***") }

// Attribute values become JSON the way they read.
func TestLogHandlerValues(t *testing.T) {
	s := logServer(nil, func(ctx context.Context, log *slog.Logger) {
		log.WithGroup("vals").InfoContext(ctx, "a",
			"dur", time.Second,
			"at", time.Date(2026, 7, 28, 1, 2, 3, 0, time.UTC),
			"nan", math.NaN(),
			"f", 1.5,
			"u", uint64(7),
			"pw", secret("hunter2"),
			"obj", map[string]int{"x": 1},
			"bad", func() {},
			slog.Group("", "inline", 1),
			slog.Group("none"),
			slog.Attr{},
		)
		log.WithGroup("g").InfoContext(ctx, "b")
	})
	lines := callLogTool(t, s, "", mcp.LevelDebug)
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	got := dataJSON(t, lines[0])
	for _, part := range []string{`"dur":"1s"`, `"at":"2026-07-28T01:02:03Z"`, `"nan":"NaN"`, `"f":1.5`, `"u":7`,
		`"pw":"***"`, `"obj":{"x":1}`, `"bad":"0x`, `"inline":1`} {
		if !strings.Contains(got, part) {
			t.Errorf("data %s lacks %s", got, part)
		}
	}
	if strings.Contains(got, "none") || strings.Contains(got, `"":`) || strings.Contains(got, "hunter2") {
		t.Errorf("data %s holds what it should not", got)
	}
	if got := dataJSON(t, lines[1]); got != `{"msg":"b"}` {
		t.Errorf("a group with no attributes: %s", got)
	}
}

func TestMCPLevel(t *testing.T) {
	for _, tc := range []struct {
		in   slog.Level
		want mcp.LoggingLevel
	}{
		{slog.LevelDebug - 4, mcp.LevelDebug},
		{slog.LevelDebug, mcp.LevelDebug},
		{slog.LevelInfo - 1, mcp.LevelDebug},
		{slog.LevelInfo, mcp.LevelInfo},
		{server.LevelNotice - 1, mcp.LevelInfo},
		{server.LevelNotice, mcp.LevelNotice},
		{slog.LevelWarn, mcp.LevelWarning},
		{slog.LevelError - 1, mcp.LevelWarning},
		{slog.LevelError, mcp.LevelError},
		{server.LevelCritical, mcp.LevelCritical},
		{server.LevelAlert, mcp.LevelAlert},
		{server.LevelEmergency, mcp.LevelEmergency},
		{server.LevelEmergency + 100, mcp.LevelEmergency},
	} {
		if got := server.MCPLevel(tc.in); got != tc.want {
			t.Errorf("MCPLevel(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// RequestFromContext finds the request in the context of every
// middleware and handler, and nothing elsewhere.
func TestRequestFromContext(t *testing.T) {
	if server.RequestFromContext(context.Background()) != nil {
		t.Error("a request in the background context")
	}
	var seen []*server.Request
	s := logServer(nil, func(ctx context.Context, _ *slog.Logger) {
		seen = append(seen, server.RequestFromContext(ctx))
	})
	s.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			if req.Method == mcp.MethodCallTool {
				seen = append(seen, server.RequestFromContext(ctx))
				seen = append(seen, req)
			}
			return next(ctx, req)
		}
	})
	callLogTool(t, s, "", "")
	if len(seen) != 3 || seen[0] == nil || seen[0] != seen[1] || seen[2] != seen[1] {
		t.Errorf("requests seen: %v", seen)
	}
}
