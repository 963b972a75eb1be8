package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// The curves measured in this process: tools and payload.

// measureTools: for each count of registered tools and each SDK, the
// latency and allocations of a tools/call of the last tool registered, in
// memory and over HTTP, and a full paginated tools/list in memory.
func measureTools(ctx context.Context, cfg *scaleConfig, sh *sheet) error {
	for _, n := range cfg.toolCounts() {
		x := float64(n)
		for _, sdk := range cfg.sdks {
			for _, http := range []bool{false, true} {
				r, err := newRig(sdk, rigSpec{tools: n, http: http})
				if err != nil {
					return fmt.Errorf("%s, %d tools: %w", sdk, n, err)
				}
				call, err := measureOp(cfg.duration, func() error { return r.call(ctx) })
				if err != nil {
					r.close()
					return fmt.Errorf("%s, %d tools, call: %w", sdk, n, err)
				}
				prefix := "tools.call"
				if http {
					prefix = "tools.http"
				}
				sh.add(prefix+".ns", sdk, x, call.ns)
				sh.add(prefix+".cpu", sdk, x, call.cpu)
				sh.add(prefix+".allocs", sdk, x, call.allocs)
				if !http {
					var tools, pages int
					list, err := measureOp(cfg.duration, func() error {
						var err error
						tools, pages, err = r.list(ctx)
						if err == nil && tools != n {
							err = fmt.Errorf("listed %d tools of %d", tools, n)
						}
						return err
					})
					if err != nil {
						r.close()
						return fmt.Errorf("%s, %d tools, list: %w", sdk, n, err)
					}
					sh.add("tools.list.ns", sdk, x, list.ns)
					sh.add("tools.list.bytes", sdk, x, list.bytes)
					sh.add("tools.list.pages", sdk, x, float64(pages))
				}
				r.close()
			}
		}
	}
	return nil
}

// measurePayload: for each payload size and each SDK, a tool whose text
// result is that large and a resource whose blob is, read in memory with
// the SDK's own client (both ends' allocations) and over HTTP by a client
// that reads the answer into nothing (the server's allocations, plus a
// constant few KiB of the client's): throughput and bytes allocated per
// call as a multiple of the payload.
func measurePayload(ctx context.Context, cfg *scaleConfig, sh *sheet) error {
	for _, size := range cfg.payloadSizes() {
		x := float64(size)
		// A large payload's op takes long: a few runs are enough, and the
		// figure is allocations, not time.
		d := cfg.duration
		for _, sdk := range cfg.sdks {
			for _, http := range []bool{false, true} {
				r, err := newRig(sdk, rigSpec{tools: 1, payload: size, http: http})
				if err != nil {
					return fmt.Errorf("%s, %d bytes: %w", sdk, size, err)
				}
				// An SDK that cannot carry a payload is a finding, noted
				// once; the curve goes on.
				where := "mem"
				big, read := r.big, r.read
				if http {
					where = "http"
					big = func(ctx context.Context) error { return rawLarge(ctx, r.url, "tools/call", "big", size) }
					read = func(ctx context.Context) error { return rawLarge(ctx, r.url, "resources/read", blobURI, size) }
				}
				for _, k := range []struct {
					kind string
					op   func(context.Context) error
				}{{"tool", big}, {"blob", read}} {
					st, err := measureOp(d, func() error { return k.op(ctx) })
					if err != nil {
						sh.note(fmt.Sprintf("%s could not answer a %s %s over %s: %v", sdk, bytesUnit(x), map[string]string{"tool": "tool text result", "blob": "resource blob"}[k.kind], map[string]string{"mem": "memory", "http": "HTTP"}[where], err))
						continue
					}
					metric := fmt.Sprintf("payload.%s.%s", k.kind, where)
					sh.add(metric+".mbps", sdk, x, float64(size)/(st.ns/1e9)/(1<<20))
					sh.add(metric+".x", sdk, x, st.bytes/float64(size))
				}
				r.close()
			}
		}
	}
	return nil
}

// rawClient is the client of the payload curve over HTTP: one
// keep-alive connection, the answer read into nothing.
var rawClient = &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 1}}

// rawLarge makes one 2026-07-28 request of method for name (a tool's name,
// or a resource's URI) and reads the answer into nothing, a buffer at a
// time: the answer must be a result (not an error) at least size bytes
// long (a blob is longer, in base64).
func rawLarge(ctx context.Context, url, method, name string, size int) error {
	var body []byte
	switch method {
	case "tools/call":
		body = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":%s,"name":%q,"arguments":{"name":"x"}}}`, clientMeta, name)
	default:
		body = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":%q,"params":{"_meta":%s,"uri":%q}}`, method, clientMeta, name)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	h := req.Header
	h["Content-Type"] = []string{"application/json"}
	h["Accept"] = []string{"application/json, text/event-stream"}
	h["Mcp-Protocol-Version"] = []string{versionStateless}
	h["Mcp-Method"] = []string{method}
	h["Mcp-Name"] = []string{name}
	resp, err := rawClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf := rawBuf.Get().(*[]byte)
	defer rawBuf.Put(buf)
	n, err := io.ReadFull(resp.Body, (*buf)[:256])
	if err != nil && err != io.ErrUnexpectedEOF {
		return err
	}
	head := (*buf)[:n]
	if resp.StatusCode != http.StatusOK || !bytes.Contains(head, []byte(`"result"`)) {
		return fmt.Errorf("%s %s: status %d: %.200q", method, name, resp.StatusCode, head)
	}
	rest, err := io.CopyBuffer(io.Discard, resp.Body, *buf)
	if err != nil {
		return err
	}
	if got := int64(n) + rest; got < int64(size) {
		return fmt.Errorf("%s %s: %d bytes of answer, want at least %d", method, name, got, size)
	}
	return nil
}

// rawBuf holds the read buffers of rawLarge, so that reading costs the
// client nothing per call.
var rawBuf = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}
