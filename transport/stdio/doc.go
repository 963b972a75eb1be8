// Package stdio implements the MCP stdio transport: JSON-RPC messages
// exchanged as newline-delimited lines over a byte stream, usually the
// standard input and output of a server process.
//
// # Framing
//
// Every message is one line: the UTF-8 JSON text of a single JSON-RPC message
// followed by "\n". A message never contains a raw newline (JSON encoders
// escape newlines inside strings, so encoding/json output is always safe).
// When reading, a trailing "\r" is stripped too, so peers that write "\r\n"
// interoperate, and lines that are empty or hold only JSON whitespace are
// skipped. The framing works over any reliable byte stream, so [NewConn] is
// just as useful for TCP or Unix-domain sockets as it is for pipes.
//
// Lines longer than the configured limit ([Options].MaxMessageSize, 4 MiB by
// default) are not fatal: Read reports a [*MessageTooLargeError], which wraps
// [transport.ErrMessageTooLarge], throws the rest of that line away without
// holding it in memory, and the next Read carries on with the following line.
//
// # Writing a server
//
// A server speaks MCP on its standard output and reads requests from its
// standard input. Nothing but MCP messages may go to stdout: send logs and
// diagnostics to stderr (the log package's default) and never use fmt.Print
// for debugging. [ServerConn] wraps os.Stdin and os.Stdout:
//
//	conn := stdio.ServerConn(nil)
//	defer conn.Close()
//	for {
//		msg, err := conn.Read(ctx)
//		if err == io.EOF {
//			return // the client closed our stdin: time to exit
//		}
//		...
//	}
//
// When Read returns io.EOF the client has closed the server's stdin, which
// is the client's way of asking it to exit; a server should finish up and
// return promptly rather than wait for a signal. A server built on
// server.ServeConn does: at that EOF the requests it is still serving,
// subscriptions/listen streams included, are cancelled, and ServeConn
// returns once their handlers have.
//
// # Launching a server
//
// A client starts a server as a subprocess with [CommandTransport]:
//
//	t := stdio.NewCommandTransport(exec.Command("my-server", "--flag"), nil)
//	conn, err := t.Connect(ctx)
//	if err != nil { ... }
//	defer conn.Close()
//
// The child's stderr is passed through to the client's stderr unless
// [CommandOptions].Stderr says otherwise. Closing the connection shuts the
// server down the way the MCP specification asks: it closes the server's
// stdin and waits up to CloseTimeout for it to exit, then sends SIGTERM and
// waits up to TerminateTimeout, then sends SIGKILL. Whatever happens, Close
// waits for the process and reaps it, so no zombie is left behind.
//
// Connect may be called again on the same transport. Each call after the
// first starts a fresh server process from a copy of the command's original
// settings (path, arguments, environment, directory, extra files, stderr,
// and the context of [exec.CommandContext], though not its Cancel function)
// and returns a connection of its own: closing one connection does not
// affect another. The client relies on this to fall back to a legacy server
// that exits when its first request is one it does not understand.
//
// Close reports how the server ended:
//
//   - nil if it exited with status 0, whether on its own or after its stdin
//     was closed;
//   - an error wrapping the [*exec.ExitError] (or other error) from
//     [exec.Cmd.Wait] if it exited unsuccessfully without being signalled by
//     us, for example a crash or a non-zero exit status after stdin closed;
//   - a [*TerminatedError] if it did not exit within CloseTimeout and Close
//     had to signal it. This tells you the server ignored the stdin close;
//     callers that do not care can test for it with errors.As and ignore it.
package stdio
