// Command logging shows a tool that logs with log/slog and a host that sees
// the lines: the server's logger is built on server.LogHandler, which
// sends each record logged with the request's context to the client as
// notifications/message, if the client asked for that level.
//
// The same server is called twice, over in-memory pipes: by a 2026-07-28
// client that asks for "info" and above (the level travels in each
// request's _meta), and by a 2025-11-25 client that asks for "warning"
// and above (logging/setLevel, once per session). The debug line reaches
// neither; every line at warning or above also goes to the server's own
// log (LogHandlerOptions.Next), here standard error.
//
//	go run ./examples/logging
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/server"
)

type importArgs struct {
	File string `json:"file" jsonschema:"the CSV file to import"`
}

// logger is what the tool logs with: to the client of the request in the
// record's context, and to the server's own log for warnings and worse.
var logger = slog.New(server.NewLogHandler(&server.LogHandlerOptions{
	Logger: "importer",
	Next: slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{} // keeps the example's output the same on every run
		}
		return a
	}}),
}))

// importRows stands in for real work, logging as it goes. ctx is the
// handler's: it is how the records find the client.
func importRows(ctx context.Context, _ *mcpserver.Call, in importArgs) (string, error) {
	log := logger.With("file", in.File)
	log.DebugContext(ctx, "opening")
	log.InfoContext(ctx, "importing", slog.Group("progress", "rows", 1200, "took", 350*time.Millisecond))
	log.WarnContext(ctx, "skipped rows with no id", "rows", []int{17, 301})
	return fmt.Sprintf("imported %s", in.File), nil
}

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "logging:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	s, err := mcpserver.New(mcp.Implementation{Name: "importer", Version: "1.0.0"}, nil)
	if err != nil {
		return err
	}
	if err := mcpserver.AddTool(s, &mcp.Tool{Name: "import", Description: "Import a CSV file."}, importRows); err != nil {
		return err
	}
	for _, host := range []struct {
		version mcp.ProtocolVersion // "" negotiates 2026-07-28
		level   mcp.LoggingLevel
	}{{"", mcp.LevelInfo}, {mcp.Version20251125, mcp.LevelWarning}} {
		if err := call(ctx, s, host.version, host.level); err != nil {
			return err
		}
	}
	return nil
}

// call connects a client that asks for level and above, calls the tool,
// and prints the log lines it received.
func call(ctx context.Context, s *mcpserver.Server, version mcp.ProtocolVersion, level mcp.LoggingLevel) error {
	c := client.New(mcp.Implementation{Name: "host", Version: "1.0.0"}, &client.Options{
		ProtocolVersion: version,
		LogLevel:        level,
		// Log lines arrive before the call returns.
		OnLog: func(_ context.Context, p *mcp.LoggingMessageNotificationParams) {
			data, _ := json.Marshal(p.Data)
			fmt.Printf("  [%s] %s: %s\n", p.Level, p.Logger, data)
		},
	})
	sess, err := c.Connect(ctx, s.InMemoryTransport())
	if err != nil {
		return err
	}
	defer sess.Close()
	fmt.Printf("client on %s, asking for %s and above:\n", sess.ProtocolVersion(), level)
	res, err := sess.CallTool(ctx, "import", map[string]any{"file": "customers.csv"})
	if err != nil {
		return err
	}
	if t, ok := res.Content[0].(*mcp.TextContent); ok {
		fmt.Println("  result:", t.Text)
	}
	return nil
}
