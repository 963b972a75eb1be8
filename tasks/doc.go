// Package tasks implements the server side of the MCP tasks extension
// (io.modelcontextprotocol/tasks, SEP-2663): a tools/call that would take
// long is answered at once with a task, which the client polls with
// tasks/get, answers with tasks/update when the task asks something, and
// may cancel with tasks/cancel.
//
// It is built only on the extension surface every extension has
// (server.HandleMethod, server.DeclareExtension, design record 026), so
// the next extension can be written the same way.
//
//	m, err := tasks.Enable(s, nil) // declares the extension, serves tasks/*
//	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
//		if !tasks.Declared(req) {
//			return mcp.TextResult(work(ctx)), nil // a client without tasks: run it now
//		}
//		return m.Start(ctx, req, func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
//			return mcp.TextResult(work(ctx)), nil // ctx ends with tasks/cancel
//		})
//	})
//
// A task is stored before its tools/call is answered, bound to the
// principal that created it (another principal's tasks/get is answered as
// an unknown id is), readable for Options.TTL after its creation, and
// never changes once completed, failed or cancelled (its statuses are
// mcp.TaskWorking, mcp.TaskInputRequired, mcp.TaskCompleted,
// mcp.TaskFailed and mcp.TaskCancelled). A body asks the person at the
// host with Run.Ask: the task shows input_required with the questions
// until tasks/update has answered every one.
//
// A task created without authentication is bound to no principal: its id,
// 128 random bits, is all that protects it, and whoever has the id reads,
// answers and cancels it, from any address. What one caller (the
// principal, else the client's address) can make a store hold is bounded:
// its open tasks, its finished tasks, and the answers its waiting tasks
// hold (MemoryStoreOptions); one answer and one task's answers are bounded
// by Options. Design record 037 says why an unauthenticated task is not
// bound to its client's address.
//
// Package mcpserver runs its task tools through this package
// (mcpserver.AddTaskTool).
package tasks
