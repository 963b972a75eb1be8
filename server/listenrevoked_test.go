package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/jsonrpc"
)

// TestListenStreamEndsWhenTokenRevoked: a listen stream whose context
// says its token was found no longer valid (auth.Revoked, closed by the
// middleware's re-check) ends then, with an error that says why
// (data.reason "token_revoked"), not before: changes published until then
// are delivered. The stream asks once it is open, which is what starts the
// middleware's checks.
func TestListenStreamEndsWhenTokenRevoked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := subscribingServer(nil)
		revoked := make(chan struct{})
		asked := make(chan struct{}, 4)
		ctx := auth.WithInfo(context.Background(), &auth.Info{Subject: "ann", Expiry: time.Now().Add(24 * time.Hour)})
		ctx = auth.WithRevocation(ctx, func() <-chan struct{} {
			asked <- struct{}{}
			return revoked
		})
		got := make(chan string, 8)
		ended := make(chan error, 1)
		go func() {
			_, err := s.Handle(ctx, listenWith(1), func(ctx context.Context, method string, params any) error {
				got <- method
				return nil
			})
			ended <- err
		}()
		time.Sleep(time.Hour)
		s.NotifyResourceUpdated("file:///0")
		synctest.Wait()
		if len(got) != 2 || len(ended) != 0 || len(asked) != 1 {
			t.Fatalf("before the revocation: %d notifications (want the acknowledgement and the update), ended: %v, asked %d times (want once)", len(got), len(ended) != 0, len(asked))
		}
		start := time.Now()
		close(revoked)
		err := <-ended
		if time.Since(start) != 0 {
			t.Errorf("the stream ended %v after the revocation, want at once", time.Since(start))
		}
		var rpcErr *jsonrpc.Error
		var data struct {
			Reason string `json:"reason"`
		}
		if !errors.As(err, &rpcErr) || rpcErr.Code != -32600 || !strings.Contains(rpcErr.Message, "no longer valid") ||
			json.Unmarshal(rpcErr.Data, &data) != nil || data.Reason != "token_revoked" {
			t.Fatalf("the stream ended with %v, want -32600 saying the token is no longer valid, reason token_revoked", err)
		}
	})
}
