package bench_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkHTTPFloor is what net/http alone costs for the exchanges the
// HTTP benchmarks make, on loopback with the same client and server
// settings and no MCP at all: the floor under Parley's, go-sdk's and
// mcp-go's figures on the machine at hand (BENCHMARKS.md, issue 24).
//
//   - post: one POST answered with a fixed JSON body, as a stateless
//     tools/call is (BenchmarkToolCallHTTP);
//   - backchannel: the shape of a 2025-11-25 back-channel call
//     (BenchmarkTwoRoundsHTTPBackChannel): a POST answered with an event
//     stream whose first event is written and flushed, a second POST
//     (the answer) answered 202, then the stream's last event.
func BenchmarkHTTPFloor(b *testing.B) {
	request := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
	answer := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}`)
	b.Run("post", func(b *testing.B) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(answer)
		}))
		b.Cleanup(srv.Close)
		c := srv.Client()
		b.ReportAllocs()
		for b.Loop() {
			resp, err := c.Post(srv.URL, "application/json", bytes.NewReader(request))
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	b.Run("backchannel", func(b *testing.B) {
		answered := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			if r.URL.Path == "/answer" {
				select {
				case answered <- struct{}{}:
					w.WriteHeader(http.StatusAccepted)
				case <-r.Context().Done():
				}
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(append(append([]byte("event: message\ndata: "), request...), "\n\n"...))
			http.NewResponseController(w).Flush()
			select {
			case <-answered:
			case <-r.Context().Done():
				return
			}
			_, _ = w.Write(append(append([]byte("event: message\ndata: "), answer...), "\n\n"...))
		}))
		b.Cleanup(srv.Close)
		c := srv.Client()
		first := make([]byte, 4096)
		b.ReportAllocs()
		for b.Loop() {
			resp, err := c.Post(srv.URL, "application/json", bytes.NewReader(request))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := resp.Body.Read(first); err != nil {
				b.Fatal(err)
			}
			r2, err := c.Post(srv.URL+"/answer", "application/json", bytes.NewReader(answer))
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, r2.Body)
			r2.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}
