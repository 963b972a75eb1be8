// Package redistest starts a redis-server of a test's own, for the tests
// of the Redis stores (requeststate/redisstore, tasks/redisstore): one
// helper, so that both find, start and require Redis the same way.
package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a redis-server of the test's own, on a free loopback port,
// with persistence off; it is stopped when the test ends.
type Server struct {
	// Addr is the server's host:port.
	Addr string
	cmd  *exec.Cmd
	done chan struct{}
}

// Start starts a redis-server for t. Without one on PATH the test
// fails when PARLEY_REQUIRE_REDIS=1 (make test sets it) and is skipped
// otherwise.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("PARLEY_REQUIRE_REDIS") == "1" {
			t.Fatal("redis-server is not on PATH and PARLEY_REQUIRE_REDIS=1: install it (Debian: apt-get install -y redis-server; or scripts/deps.sh)")
		}
		t.Skip("redis-server is not on PATH: install it (Debian: apt-get install -y redis-server) to run the Redis tests; PARLEY_REQUIRE_REDIS=1 makes this a failure")
	}
	var lastErr error
	for range 5 { // another process may take the free port first
		rs, err := try(t, bin)
		if err == nil {
			return rs
		}
		lastErr = err
	}
	t.Fatalf("redis-server did not start: %v", lastErr)
	return nil
}

func try(t testing.TB, bin string) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	rs := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), done: make(chan struct{})}
	rs.cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--loglevel", "warning")
	if err := rs.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { rs.cmd.Wait(); close(rs.done) }()
	c := redis.NewClient(&redis.Options{Addr: rs.Addr, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case <-rs.done:
			return nil, fmt.Errorf("redis-server on port %d exited: %v", port, rs.cmd.ProcessState)
		default:
		}
		err := c.Ping(context.Background()).Err()
		if err == nil {
			t.Cleanup(rs.Stop)
			return rs, nil
		}
		if time.Now().After(deadline) {
			rs.Stop()
			return nil, fmt.Errorf("redis-server on port %d does not answer PING: %w", port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server and waits for it to exit.
func (rs *Server) Stop() {
	rs.cmd.Process.Kill()
	<-rs.done
}

// Client returns a new client of rs, closed when the test ends.
func (rs *Server) Client(t testing.TB) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: rs.Addr, MaxRetries: -1, DialTimeout: 2 * time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}
