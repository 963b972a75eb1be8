package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/server"
)

// TestListenStreamsPoolKeepsRoom: MaxListenStreams bounds the streams of
// all callers, and its last eighth is kept for callers holding none:
// callers each at their share fill only seven eighths of it, one more
// stream each is all the callers that come next get there, and a new
// caller still opens one. Over the pool, -32603 names the limit.
func TestListenStreamsPoolKeepsRoom(t *testing.T) {
	const size, share = 64, 8 // a reserve of 8, a reserve share of 1
	s := subscribingServer(&server.Options{MaxListenStreams: size, MaxListenStreamsPerCaller: share})
	var (
		cancels []context.CancelFunc
		dones   []<-chan error
	)
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	open := func(ctx context.Context) error {
		cancel, done, err := openListen(t, s, ctx)
		if err == nil {
			cancels, dones = append(cancels, cancel), append(dones, done)
		}
		return err
	}
	from := func(i int) context.Context {
		return auth.WithRemoteAddr(context.Background(), fmt.Sprintf("203.0.113.%d", i))
	}
	for i := range 7 { // seven callers at their share: 56, the reserve begins
		for j := range share {
			if err := open(from(i)); err != nil {
				t.Fatalf("caller %d, stream %d: %v", i, j, err)
			}
		}
	}
	var rpcErr *jsonrpc.Error
	if err := open(from(7)); err != nil {
		t.Fatalf("a new caller in the reserve: %v", err)
	}
	if err := open(from(7)); !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidRequest ||
		!strings.Contains(rpcErr.Message, "MaxListenStreams") || !strings.Contains(rpcErr.Message, "fewer than 1") {
		t.Fatalf("a caller holding its reserve share, in the reserve: %v", err)
	}
	for i := 8; i < 14; i++ { // the rest of the reserve but one, one stream a caller
		if err := open(from(i)); err != nil {
			t.Fatalf("new caller %d in the reserve: %v", i, err)
		}
	}
	// Stdio (no caller known) is not bounded per caller, and so not kept
	// out of the reserve either; only the pool bounds it.
	if err := open(context.Background()); err != nil {
		t.Fatalf("stdio in the reserve: %v", err)
	}
	if err := open(context.Background()); !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError ||
		!strings.Contains(rpcErr.Message, "limit of 64 open streams (Options.MaxListenStreams)") {
		t.Fatalf("over the pool: %v", err)
	}
	// A stream that ends gives its place in the pool back.
	cancels[0]()
	testwait.Recv(t, dones[0], "the end of a cancelled stream")
	if err := open(context.Background()); err != nil {
		t.Fatalf("after a stream ended: %v", err)
	}
}

// TestListenStreamsPoolUnbounded: a negative MaxListenStreams bounds
// nothing; a negative MaxListenStreamsPerCaller keeps no reserve.
func TestListenStreamsPoolUnbounded(t *testing.T) {
	for _, o := range []*server.Options{
		{MaxListenStreams: -1, MaxListenStreamsPerCaller: -1},
		{MaxListenStreams: 16, MaxListenStreamsPerCaller: -1},
	} {
		s := subscribingServer(o)
		ctx := auth.WithRemoteAddr(context.Background(), "192.0.2.7")
		for i := range 16 {
			cancel, _, err := openListen(t, s, ctx)
			if err != nil {
				t.Fatalf("%+v: stream %d of one caller: %v", *o, i, err)
			}
			defer cancel()
		}
	}
}

// TestListenStreamsNegativePerCallerMeansNoBound: a negative
// MaxListenStreamsPerCaller bounds nothing per caller: one caller opens
// more streams than the default share.
func TestListenStreamsNegativePerCallerMeansNoBound(t *testing.T) {
	s := subscribingServer(&server.Options{MaxListenStreamsPerCaller: -1})
	ctx := auth.WithRemoteAddr(context.Background(), "192.0.2.7")
	for i := range 2 * server.DefaultMaxListenStreamsPerCaller {
		cancel, _, err := openListen(t, s, ctx)
		if err != nil {
			t.Fatalf("stream %d of one caller with no bound per caller: %v", i, err)
		}
		defer cancel()
	}
}
