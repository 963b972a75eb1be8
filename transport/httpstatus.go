package transport

import "strconv"

// HTTPStatusError is the cause an HTTP transport gives, in a [CallError],
// for a request whose POST was answered with a status other than 2xx, by
// the server or by something in front of it (a proxy, an authorization
// layer). The call then fails with an error that matches both this and the
// error response: the server's own JSON-RPC error when the body carried
// one (such as a -32022 with HTTP 400), the transport's -32603 stand-in
// otherwise.
//
// It lets a caller act on the status without reading messages: a client
// that probes a server's protocol generation, for one, must tell a 401 or
// 403 (authorization) and a 5xx (an outage) from the 400, 404 or 405 of a
// server that predates the request it sent.
type HTTPStatusError struct {
	StatusCode int    // such as 404
	Status     string // such as "404 Not Found", as net/http reports it; may be empty
}

// Error returns "HTTP " and the status.
func (e *HTTPStatusError) Error() string {
	if e.Status != "" {
		return "HTTP " + e.Status
	}
	return "HTTP " + strconv.Itoa(e.StatusCode)
}
