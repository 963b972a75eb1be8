package transport

// CallError is an error a transport's Read may return for one request that
// got no answer from the peer because the transport itself failed to
// deliver it (on Streamable HTTP: the POST failed, say because an
// http.RoundTripper refused to send it), or whose answer came with a
// transport-level refusal (on Streamable HTTP: an HTTP status other than
// 2xx, with Err a *HTTPStatusError). It is not fatal: the connection goes
// on, and the next Read returns the next message.
//
// Response is the error response for the request: the peer's own when it
// sent one, else the one the transport stands in with; a whole JSON-RPC
// response message with the request's id and an error object, which is
// what a reader that does not know CallError would have read in its place.
// Err is why the request failed, kept so that the caller of the request
// can match it with errors.Is and errors.As; jsonrpc.Conn fails the request
// with an error that matches both the response's error object and Err.
type CallError struct {
	Response []byte
	Err      error
}

// Error returns the cause's message.
func (e *CallError) Error() string {
	if e.Err == nil {
		return "transport: request failed"
	}
	return "transport: request failed: " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *CallError) Unwrap() error { return e.Err }
