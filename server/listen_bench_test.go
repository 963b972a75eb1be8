package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// BenchmarkPublishResourceUpdated: the cost of one resource update with
// 40 listen streams of 100,000 subscriptions each open (issue 23's
// attacker: about 490 MiB held, every publish scanning every list), for a
// URI no stream subscribed to and for one that one stream did. Its figures
// before and after the subscription index are in BENCHMARKS.md.
func BenchmarkPublishResourceUpdated(b *testing.B) {
	const streams, perStream = 40, 100_000
	s := server.New(mcp.Implementation{Name: "bench", Version: "1"}, &server.Options{MaxStreamSubscriptions: perStream, Logger: slog.New(slog.DiscardHandler)})
	s.HandleReadResource(func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	acked := make(chan struct{}, streams)
	ended := make(chan struct{}, streams)
	for k := range streams {
		uris := make([]string, perStream)
		for i := range uris {
			uris[i] = fmt.Sprintf("file:///%d/%d", k, i)
		}
		raw, _ := json.Marshal(uris)
		params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},` +
			`"notifications":{"resourceSubscriptions":` + string(raw) + `}}`
		req := &jsonrpc.Request{ID: jsonrpc.Int64ID(int64(k)), Method: mcp.MethodSubscriptionsListen, Params: json.RawMessage(params)}
		go func() {
			defer func() { ended <- struct{}{} }()
			s.Handle(ctx, req, func(ctx context.Context, method string, params any) error {
				if method == mcp.NotificationSubscriptionsAcknowledged {
					acked <- struct{}{}
				}
				return nil
			})
		}()
	}
	for range streams {
		<-acked
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.Logf("heap in use with %d streams of %d subscriptions: %d MiB", streams, perStream, ms.HeapInuse>>20)
	b.Run("no-match", func(b *testing.B) {
		for b.Loop() {
			s.NotifyResourceUpdated("file:///none")
		}
	})
	b.Run("one-match", func(b *testing.B) {
		for b.Loop() {
			s.NotifyResourceUpdated("file:///7/99999")
		}
	})
	b.Run("tool-list-changed", func(b *testing.B) {
		for b.Loop() {
			s.NotifyToolListChanged()
		}
	})
	cancel()
	for range streams {
		<-ended
	}
}
