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
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// openListen opens a listen stream (one subscription) as ctx's caller
// and waits for its acknowledgement or its refusal. The stream lasts until
// the returned cancel; done reports how it ended.
func openListen(t *testing.T, s *server.Server, ctx context.Context) (cancel context.CancelFunc, done <-chan error, err error) {
	t.Helper()
	ctx, cancel = context.WithCancel(ctx)
	acked := make(chan struct{}, 1)
	ended := make(chan error, 1)
	go func() {
		_, err := s.Handle(ctx, listenWith(1), func(ctx context.Context, method string, params any) error {
			if method == mcp.NotificationSubscriptionsAcknowledged {
				acked <- struct{}{}
			}
			return nil
		})
		ended <- err
	}()
	wait, stop := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer stop()
	select {
	case <-acked:
		return cancel, ended, nil
	case err := <-ended:
		cancel()
		return cancel, ended, err
	case <-wait.Done():
		t.Fatal("a listen stream neither opened nor was refused within the deadline")
	}
	return cancel, ended, nil
}

func subscribingServer(o *server.Options) *server.Server {
	s := server.New(mcp.Implementation{Name: "l", Version: "1"}, o)
	s.HandleReadResource(func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	return s
}

// TestListenStreamsPerCaller: one caller holds at most
// DefaultMaxListenStreamsPerCaller listen streams; one more is refused
// with an error naming the limit, while another caller (by principal or
// by address) still opens its own, and closing one makes room again.
func TestListenStreamsPerCaller(t *testing.T) {
	s := subscribingServer(nil)
	burner := auth.WithInfo(context.Background(), &auth.Info{ClientID: "c", Issuer: "https://as", Subject: "burner"})
	var cancels []context.CancelFunc
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	var first <-chan error
	for i := range server.DefaultMaxListenStreamsPerCaller {
		cancel, done, err := openListen(t, s, burner)
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		cancels = append(cancels, cancel)
		if i == 0 {
			first = done
		}
	}
	_, _, err := openListen(t, s, burner)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(rpcErr.Message, "MaxListenStreamsPerCaller") ||
		!strings.Contains(rpcErr.Message, "16 open") {
		t.Fatalf("one stream over the limit: %v", err)
	}
	for _, other := range []context.Context{
		auth.WithInfo(context.Background(), &auth.Info{ClientID: "c", Issuer: "https://as", Subject: "alice"}),
		auth.WithRemoteAddr(context.Background(), "198.51.100.1"),
		context.Background(), // stdio: not bounded per caller
	} {
		cancel, _, err := openListen(t, s, other)
		if err != nil {
			t.Fatalf("another caller: %v", err)
		}
		cancels = append(cancels, cancel)
	}
	// A stream that ended makes room for another.
	cancels[0]()
	testwait.Recv(t, first, "the end of the cancelled stream")
	cancel, _, err := openListen(t, s, burner)
	if err != nil {
		t.Fatalf("after one of its streams ended: %v", err)
	}
	cancels = append(cancels, cancel)
}

// TestListenStreamEndsAtTokenExpiry: a listen stream opened with a bearer
// token ends when the token expires (the Expiry the verifier reported),
// with an error that says why (data.reason "token_expired"), and not
// before: changes published until then are delivered.
func TestListenStreamEndsAtTokenExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := subscribingServer(nil)
		expiry := time.Now().Add(time.Hour)
		ctx := auth.WithInfo(context.Background(), &auth.Info{Subject: "ann", Expiry: expiry})
		got := make(chan string, 8)
		ended := make(chan error, 1)
		go func() {
			_, err := s.Handle(ctx, listenWith(1), func(ctx context.Context, method string, params any) error {
				got <- method
				return nil
			})
			ended <- err
		}()
		synctest.Wait()
		s.NotifyResourceUpdated("file:///0")
		synctest.Wait()
		if len(got) != 2 || len(ended) != 0 {
			t.Fatalf("before the expiry: %d notifications (want the acknowledgement and the update), ended: %v", len(got), len(ended) != 0)
		}
		err := <-ended // all goroutines blocked: the fake clock runs to the expiry
		if now := time.Now(); !now.Equal(expiry) {
			t.Errorf("the stream ended at %v, want the token's expiry %v", now, expiry)
		}
		var rpcErr *jsonrpc.Error
		var data struct {
			Reason string `json:"reason"`
		}
		if !errors.As(err, &rpcErr) || !strings.Contains(rpcErr.Message, "expired") ||
			json.Unmarshal(rpcErr.Data, &data) != nil || data.Reason != "token_expired" {
			t.Fatalf("the stream ended with %v, want an error saying the token expired", err)
		}
	})
}

// TestListenStreamWithoutExpiry: a token that states no expiry, and no
// token at all, do not end a stream.
func TestListenStreamWithoutExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := subscribingServer(nil)
		for _, ctx := range []context.Context{context.Background(), auth.WithInfo(context.Background(), &auth.Info{Subject: "ann"})} {
			ctx, cancel := context.WithCancel(ctx)
			ended := make(chan error, 1)
			go func() {
				_, err := s.Handle(ctx, listenWith(1), func(context.Context, string, any) error { return nil })
				ended <- err
			}()
			select {
			case err := <-ended:
				t.Fatalf("a stream without an expiry ended: %v", err)
			case <-time.After(1000 * time.Hour): // virtual time
			}
			cancel()
			<-ended
		}
	})
}
