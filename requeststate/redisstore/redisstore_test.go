package redisstore_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-mcp/parley/internal/redistest"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/requeststate/redisstore"
	"github.com/parley-mcp/parley/server"
)

func id(n byte) requeststate.StateID {
	var i requeststate.StateID
	i[0], i[15] = n, 0xa5
	return i
}

// TestConsumeOnce: SET NX: the first Consume of an id records it with the
// expiry given (to the millisecond, under the prefix and the id's hex,
// holding nothing of the state), every later one is ErrReplayed.
func TestConsumeOnce(t *testing.T) {
	rs := redistest.Start(t)
	c := rs.Client(t)
	s := redisstore.New(c, nil)
	ctx := context.Background()
	expires := time.Now().Add(10 * time.Minute).Truncate(time.Millisecond).Add(123*time.Millisecond + 400*time.Microsecond)
	if err := s.Consume(ctx, id(1), expires); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.Consume(ctx, id(1), expires.Add(time.Hour)); !errors.Is(err, requeststate.ErrReplayed) {
			t.Fatalf("second Consume: %v, want ErrReplayed", err)
		}
	}
	if err := s.Consume(ctx, id(2), expires); err != nil {
		t.Fatalf("another id: %v", err)
	}
	key := redisstore.DefaultPrefix + id(1).String()
	if v, err := c.Get(ctx, key).Result(); err != nil || v != "1" {
		t.Fatalf("GET %s = %q, %v", key, v, err)
	}
	// Rounded up to the millisecond, never down; a replay did not move it.
	want := expires.Add(time.Millisecond).Truncate(time.Millisecond).UnixMilli()
	if got, err := c.Do(ctx, "PEXPIRETIME", key).Int64(); err != nil || got != want {
		t.Fatalf("PEXPIRETIME = %d, %v; want %d", got, err, want)
	}
	if n, err := c.DBSize(ctx).Result(); err != nil || n != 2 {
		t.Fatalf("DBSIZE = %d, %v; want 2", n, err)
	}
}

// TestExpiredKeyIsForgotten: Redis drops a key whose expiry has passed by
// its own clock; a state is not remembered past it.
func TestExpiredKeyIsForgotten(t *testing.T) {
	rs := redistest.Start(t)
	s := redisstore.New(rs.Client(t), nil)
	ctx := context.Background()
	past := time.Now().Add(-time.Minute)
	for range 2 {
		if err := s.Consume(ctx, id(1), past); err != nil {
			t.Fatalf("expiry in the past: %v, want nil (nothing held)", err)
		}
	}
	if err := s.Consume(ctx, id(2), time.Time{}); err == nil || !strings.Contains(err.Error(), "no expiry") {
		t.Fatalf("zero expiry: %v", err)
	}
}

func TestPrefix(t *testing.T) {
	rs := redistest.Start(t)
	c := rs.Client(t)
	ctx := context.Background()
	a := redisstore.New(c, &redisstore.Options{Prefix: "staging:"})
	b := redisstore.New(c, &redisstore.Options{Prefix: "prod:"})
	until := time.Now().Add(time.Minute)
	if err := a.Consume(ctx, id(1), until); err != nil {
		t.Fatal(err)
	}
	if err := b.Consume(ctx, id(1), until); err != nil {
		t.Fatalf("another prefix: %v", err)
	}
	if n, err := c.Exists(ctx, "staging:"+id(1).String(), "prod:"+id(1).String()).Result(); err != nil || n != 2 {
		t.Fatalf("EXISTS = %d, %v", n, err)
	}
}

// TestConcurrentConsume: many clients race for each id; exactly one wins.
func TestConcurrentConsume(t *testing.T) {
	rs := redistest.Start(t)
	const clients, ids = 8, 32
	until := time.Now().Add(time.Minute)
	var mu sync.Mutex
	wins := make([]int, ids)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range clients {
		s := redisstore.New(rs.Client(t), nil)
		wg.Go(func() {
			<-start
			for i := range ids {
				err := s.Consume(context.Background(), id(byte(i)), until)
				switch {
				case err == nil:
					mu.Lock()
					wins[i]++
					mu.Unlock()
				case !errors.Is(err, requeststate.ErrReplayed):
					t.Errorf("id %d: %v", i, err)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	for i, w := range wins {
		if w != 1 {
			t.Errorf("id %d consumed %d times, want once", i, w)
		}
	}
}

// instance is one server process of a fleet: a server protected with the
// fleet's keys and name, and its own connection to the shared Redis.
type instance struct {
	s        *server.Server
	ran      int
	rejected error // the Go error of the last refusal, from Policy.Rejected
}

// fleetKey is the key ring every instance of a test fleet shares.
var fleetKey = func() [][]byte {
	k := make([]byte, requeststate.MinKeyLen)
	rand.Read(k)
	return [][]byte{k}
}()

func newInstance(t *testing.T, store requeststate.SingleUseStore) *instance {
	t.Helper()
	in := &instance{s: server.New(mcp.Implementation{Name: "payments", Version: "1"}, &server.Options{Logger: slog.New(slog.DiscardHandler)})}
	in.s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if p.RequestState == "" {
			return &mcp.InputRequiredResult{RequestState: "pay order 42"}, nil
		}
		in.ran++
		return mcp.TextResult("paid"), nil
	})
	if err := requeststate.Protect(in.s, &requeststate.Policy{Keys: fleetKey, SingleUse: store,
		Rejected: func(_ context.Context, _ *server.Request, _ string, err error) { in.rejected = err }}); err != nil {
		t.Fatal(err)
	}
	return in
}

func (in *instance) call(state string) (string, error) {
	params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"pay"`
	if state != "" {
		b, _ := json.Marshal(state)
		params += `,"requestState":` + string(b)
	}
	res, err := in.s.Handle(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: mcp.MethodCallTool, Params: json.RawMessage(params + "}")}, nil)
	if err != nil {
		return "", err
	}
	if ir, ok := res.(*mcp.InputRequiredResult); ok {
		return ir.RequestState, nil
	}
	return "", nil
}

// TestReplayAcrossInstances: two instances sharing keys and one Redis; a
// state sealed by one and used on the other is refused on both after.
func TestReplayAcrossInstances(t *testing.T) {
	rs := redistest.Start(t)
	a := newInstance(t, redisstore.New(rs.Client(t), nil))
	b := newInstance(t, redisstore.New(rs.Client(t), nil))
	token, err := a.call("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.call(token); err != nil {
		t.Fatalf("first use on the sister instance: %v", err)
	}
	for name, in := range map[string]*instance{"sealing instance": a, "same instance": b} {
		_, err := in.call(token)
		if !mcp.IsInvalidRequestState(err) || !errors.Is(in.rejected, requeststate.ErrReplayed) {
			t.Errorf("replay on the %s: %v (refused for %v), want the fixed rejection for ErrReplayed", name, err, in.rejected)
		}
	}
	if a.ran+b.ran != 1 {
		t.Fatalf("the handler ran %d times, want once", a.ran+b.ran)
	}
}

// TestUnreachableFailsClosed: with Redis gone, a valid state is refused
// with ErrStoreUnavailable (as the fixed rejection) and the handler does
// not run.
func TestUnreachableFailsClosed(t *testing.T) {
	rs := redistest.Start(t)
	in := newInstance(t, redisstore.New(rs.Client(t), nil))
	token, err := in.call("")
	if err != nil {
		t.Fatal(err)
	}
	rs.Stop()
	_, err = in.call(token)
	if !mcp.IsInvalidRequestState(err) || !errors.Is(in.rejected, requeststate.ErrStoreUnavailable) || errors.Is(in.rejected, requeststate.ErrReplayed) {
		t.Fatalf("Redis down: %v (refused for %v), want the fixed rejection for ErrStoreUnavailable", err, in.rejected)
	}
	if !strings.Contains(in.rejected.Error(), "redisstore:") {
		t.Errorf("error %q does not name the store", in.rejected)
	}
	if strings.Contains(err.Error(), "redisstore") {
		t.Errorf("the client's error %q names the store", err)
	}
	if in.ran != 0 {
		t.Fatal("the handler ran with the store down")
	}
}

// BenchmarkConsume: one SET NX PXAT round trip to a redis-server on
// loopback, the cost single use adds to each verified round in a fleet.
func BenchmarkConsume(b *testing.B) {
	rs := redistest.Start(b)
	s := redisstore.New(rs.Client(b), nil)
	ctx := context.Background()
	until := time.Now().Add(time.Minute)
	var n uint64
	b.ReportAllocs()
	for b.Loop() {
		n++
		var i requeststate.StateID
		for k := range 8 {
			i[k] = byte(n >> (8 * k))
		}
		if err := s.Consume(ctx, i, until); err != nil {
			b.Fatal(err)
		}
	}
}
