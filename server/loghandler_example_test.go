package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// A tool logs with slog, and the client that asked for log messages sees
// the lines as notifications/message. Here the request, as a transport
// would hand it over, asks for "info" and above in its _meta, so the
// debug line stays on the server.
func ExampleLogHandler() {
	logger := slog.New(server.NewLogHandler(&server.LogHandlerOptions{Logger: "deploy"}))

	s := server.New(mcp.Implementation{Name: "deployer", Version: "1.0.0"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		logger.DebugContext(ctx, "resolving the target")
		logger.InfoContext(ctx, "deploying", "service", "billing", slog.Group("build", "id", 42))
		logger.WarnContext(ctx, "one replica is slow to start")
		return mcp.TextResult("deployed"), nil
	})

	msg, _, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/logLevel":"info"},"name":"deploy"}}`))
	if err != nil {
		log.Fatal(err)
	}
	notify := func(ctx context.Context, method string, params any) error {
		p := params.(*mcp.LoggingMessageNotificationParams)
		data, _ := json.Marshal(p.Data)
		fmt.Println(method, p.Level, p.Logger, string(data))
		return nil
	}
	if _, err := s.Handle(context.Background(), msg.(*jsonrpc.Request), notify); err != nil {
		log.Fatal(err)
	}
	// Output:
	// notifications/message info deploy {"build":{"id":42},"msg":"deploying","service":"billing"}
	// notifications/message warning deploy {"msg":"one replica is slow to start"}
}
