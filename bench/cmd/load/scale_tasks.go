package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/tasks"
	"github.com/parley-mcp/parley/tasks/redisstore"
)

// measureTasks: Parley's tasks extension with its memory store and, when
// redis-server is at hand, its Redis store. For each count, that many
// tasks are started (their bodies wait) and held in flight: what the
// process holds per task (the body's goroutine, the run, the record, and
// the driver's copy of the id), the latency and allocations of a tasks/get
// of one among them, and of a tasks/cancel; then every body is let finish
// and what each stored, finished task holds is measured. With Redis, the
// records live in redis-server, whose used_memory per task is a series of
// its own. Neither go-sdk v1.8.0 nor mcp-go v1.2.1 serves the tasks
// extension (io.modelcontextprotocol/tasks).
func measureTasks(ctx context.Context, cfg *scaleConfig, sh *sheet) error {
	if !slices.Contains(cfg.sdks, sdkParley) {
		return nil
	}
	for _, n := range cfg.taskCounts() {
		if err := tasksOnce(ctx, cfg, sh, n, nil); err != nil {
			return fmt.Errorf("memory store, %d tasks: %w", n, err)
		}
		if cfg.redis == "" {
			continue
		}
		rs, err := startRedis(cfg.redis)
		if err != nil {
			return err
		}
		err = tasksOnce(ctx, cfg, sh, n, rs)
		rs.stop()
		if err != nil {
			return fmt.Errorf("the Redis store, %d tasks: %w", n, err)
		}
	}
	return nil
}

func tasksOnce(ctx context.Context, cfg *scaleConfig, sh *sheet, n int, rs *redisServer) error {
	series := sdkParley
	var store tasks.Store = tasks.NewMemoryStore(&tasks.MemoryStoreOptions{MaxOpenPerCaller: 1 << 30, MaxFinishedPerCaller: 1 << 30})
	if rs != nil {
		series = seriesParleyRedis
		store = redisstore.New(rs.client, &redisstore.Options{MaxOpenPerCaller: 1 << 30, MaxFinishedPerCaller: 1 << 30})
	}
	release := make(chan struct{})
	var running sync.WaitGroup
	s := mcpserver.MustNew(mcp.Implementation{Name: "scale", Version: "1.0.0"}, &mcpserver.Options{
		Logger: quiet,
		Tasks:  &tasks.Options{Store: store, Logger: quiet},
	})
	err := mcpserver.AddTaskTool(s, &mcp.Tool{Name: "wait"}, mcpserver.TaskRequired, func(ctx context.Context, c *mcpserver.Call, a echoArgs) (string, error) {
		running.Add(1)
		defer running.Done()
		select {
		case <-release:
			return a.Name, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	if err != nil {
		return err
	}
	sess, err := client.New(mcp.Implementation{Name: "scale-client", Version: "1.0.0"}, &client.Options{
		Extensions: map[string]json.RawMessage{mcp.ExtensionTasks: nil},
	}).Connect(ctx, s.InMemoryTransport())
	if err != nil {
		return err
	}
	defer sess.Close()
	// Warm up: one task started and finished before the baseline.
	if err := startTasks(ctx, sess, 1, nil); err != nil {
		return err
	}
	ids := make([]string, 0, n)
	heap0, stack0, _ := heldNow()
	used0, err := rs.used(ctx)
	if err != nil {
		return err
	}
	if err := startTasks(ctx, sess, n, &ids); err != nil {
		return err
	}
	heap1, stack1, _ := heldNow()
	used1, err := rs.used(ctx)
	if err != nil {
		return err
	}
	x := float64(n)
	sh.add("tasks.mem.flight", series, x, (heap1+stack1-heap0-stack0)/x)
	if rs != nil {
		sh.add("tasks.mem.redis", series, x, (used1-used0)/x)
	}

	mid := sess.Task(ids[len(ids)/2])
	get, err := measureOp(cfg.duration, func() error {
		g, err := mid.Status(ctx)
		if err == nil && g.Status != mcp.TaskWorking {
			err = fmt.Errorf("status %q", g.Status)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("tasks/get: %w", err)
	}
	sh.add("tasks.get.ns", series, x, get.ns)
	sh.add("tasks.get.allocs", series, x, get.allocs)

	// Cancels: each a different task, from the end of the list.
	k := min(max(n/10, 1), 100)
	next := len(ids)
	cancel, err := measureOpN(k, func() error {
		next--
		return sess.Task(ids[next]).Cancel(ctx)
	})
	if err != nil {
		return fmt.Errorf("tasks/cancel: %w", err)
	}
	sh.add("tasks.cancel.ns", series, x, cancel.ns)
	sh.add("tasks.cancel.allocs", series, x, cancel.allocs)

	// Every body finishes; the records stay, finished, until their TTL.
	close(release)
	deadline := time.Now().Add(time.Minute)
	for !allDone(ctx, sess, ids[:next]) {
		if time.Now().After(deadline) {
			return fmt.Errorf("the tasks did not finish within a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
	running.Wait()
	heap2, stack2, _ := heldNow()
	sh.add("tasks.mem.stored", series, x, (heap2+stack2-heap0-stack0)/x)
	return nil
}

// allDone reports whether the last of ids has finished; bodies finish in
// no particular order, so it is asked of a few.
func allDone(ctx context.Context, sess *client.Session, ids []string) bool {
	for _, i := range []int{0, len(ids) / 2, len(ids) - 1} {
		if i < 0 || i >= len(ids) {
			continue
		}
		g, err := sess.Task(ids[i]).Status(ctx)
		if err != nil || !g.Status.Terminal() {
			return false
		}
	}
	return true
}

// startTasks starts n tasks of the "wait" tool, 16 at a time, and
// appends their ids to ids (when not nil).
func startTasks(ctx context.Context, sess *client.Session, n int, ids *[]string) error {
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			_, t, err := sess.StartTool(ctx, "wait", scaleArgs)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				first = cmp(first, err)
			case t == nil:
				first = cmp(first, fmt.Errorf("the call was not answered with a task"))
			case ids != nil:
				*ids = append(*ids, t.ID)
			}
		})
	}
	wg.Wait()
	return first
}

// measureOpN runs op exactly n times (each run may differ, such as a
// cancel of another task) and returns its cost per run.
func measureOpN(n int, op func() error) (opStats, error) {
	var lat []float64
	var st opStats
	err := allocsOf(func() error {
		for range n {
			start := time.Now()
			if err := op(); err != nil {
				return err
			}
			lat = append(lat, float64(time.Since(start).Nanoseconds()))
		}
		return nil
	}, &st)
	if err != nil {
		return st, err
	}
	slices.Sort(lat)
	st.ns = lat[len(lat)/2]
	st.allocs /= float64(n)
	st.bytes /= float64(n)
	st.n = n
	return st, nil
}

// redisServer is a redis-server of the run's own on a free port, its data
// kept nowhere.
type redisServer struct {
	cmd    *exec.Cmd
	client *redis.Client
}

func startRedis(bin string) (*redisServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	rs := &redisServer{cmd: cmd, client: redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port)})}
	deadline := time.Now().Add(10 * time.Second)
	for rs.client.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			rs.stop()
			return nil, fmt.Errorf("redis-server did not answer on port %d", port)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return rs, nil
}

func (rs *redisServer) stop() {
	rs.client.Close()
	rs.cmd.Process.Kill()
	rs.cmd.Wait()
}

// used is redis-server's used_memory (INFO memory), in bytes; 0 without
// a server.
func (rs *redisServer) used(ctx context.Context) (float64, error) {
	if rs == nil {
		return 0, nil
	}
	info, err := rs.client.Info(ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	for l := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "used_memory:"); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, fmt.Errorf("INFO memory has no used_memory")
}
