package transport

import "errors"

// ErrSessionEnded is the cause a transport gives, in a [CallError], for a
// request it could not deliver because the server no longer knows the
// session the transport carries: on Streamable HTTP, a 2025-11-25 (legacy)
// session whose Mcp-Session-Id the server answered with HTTP 404 (it
// restarted, expired the session, or another instance behind a load
// balancer took the request). The server did not act on such a request.
// The call fails with an error that matches it with errors.Is, beside the
// error response (and the *HTTPStatusError when a status refused it).
//
// The client package renews the session and repeats what is safe to
// repeat (see client.Options.DisableRecovery); client.ErrSessionEnded
// is the same value.
var ErrSessionEnded = errors.New("transport: the server ended the session")
