package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// server is a serve subcommand running in a process of its own, so that
// its memory and CPU time are its alone.
type server struct {
	cmd *exec.Cmd
	url string // the MCP endpoint
}

// startServer runs argv (the harness binary and "serve", or a test binary
// that acts as one) for sdk and mode on a free loopback port, and waits
// for the URL it prints.
func startServer(ctx context.Context, argv []string, env []string, sdk, mode string) (*server, error) {
	args := append(argv[1:len(argv):len(argv)], "-sdk", sdk, "-mode", mode, "-addr", "127.0.0.1:0")
	cmd := exec.Command(argv[0], args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd}
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(l)
		io.Copy(io.Discard, out)
	}()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case s.url = <-line:
	case <-ctx.Done():
	}
	if !strings.HasPrefix(s.url, "http://") {
		s.stop()
		return nil, fmt.Errorf("server %s (%s) did not print its URL: %q", sdk, mode, s.url)
	}
	return s, nil
}

// stop kills the server and waits for it.
func (s *server) stop() {
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

// usage is what /proc says of a process at one moment.
type usage struct {
	peakRSS int64         // VmHWM, bytes
	rss     int64         // VmRSS, bytes
	cpu     time.Duration // user and system time
}

// clockTick is the unit of /proc/<pid>/stat's times: USER_HZ, 100 on
// Linux whatever the kernel's HZ.
const clockTick = 10 * time.Millisecond

// readUsage reads pid's peak and current RSS from /proc/<pid>/status and
// its CPU time (utime + stime) from /proc/<pid>/stat.
func readUsage(pid int) (usage, error) {
	var u usage
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	for l := range strings.Lines(string(status)) {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmHWM:":
			u.peakRSS = kb << 10
		case "VmRSS:":
			u.rss = kb << 10
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, err
	}
	// The command name, in parentheses, may hold spaces: the fields that
	// follow it start at the third, state.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return u, errors.New("unreadable /proc/<pid>/stat")
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return u, errors.New("short /proc/<pid>/stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err := errors.Join(err1, err2); err != nil {
		return u, err
	}
	u.cpu = time.Duration(utime+stime) * clockTick
	return u, nil
}

// heapInuse asks the server's debug endpoint for its live heap.
func heapInuse(ctx context.Context, url string) (heapReport, error) {
	var h heapReport
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(url, endpoint)+heapPath, nil)
	if err != nil {
		return h, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return h, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&h)
	return h, err
}

// idle is what k idle sessions cost a server.
type idle struct {
	sessions   int
	heapPer    float64 // bytes of HeapInuse per session
	stackPer   float64 // bytes of StackInuse per session
	rssPer     float64 // bytes of RSS per session
	goroutines float64 // goroutines per session
}

// idleSessions opens k 2025-11-25 sessions on the server at url (through
// a handful of keep-alive connections, so that what grows is the
// sessions' state, not connections'), leaves them open and idle, and
// divides the growth of the server's heap and goroutine stacks (after a
// collection) and RSS by k.
func idleSessions(ctx context.Context, s *server, k int) (idle, error) {
	before, err := heapInuse(ctx, s.url)
	if err != nil {
		return idle{}, err
	}
	u0, err := readUsage(s.cmd.Process.Pid)
	if err != nil {
		return idle{}, err
	}
	const workers = 8
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var openErr error
	conns := make([]*conn, workers)
	for w := range workers {
		conns[w] = newConn(s.url, modeSession)
		defer conns[w].close()
		wg.Go(func() {
			for range jobs {
				c := conns[w]
				c.session = "" // a new session on the same connection
				if err := c.open(ctx); err != nil {
					mu.Lock()
					openErr = cmp(openErr, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range k {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if openErr != nil {
		return idle{}, openErr
	}
	after, err := heapInuse(ctx, s.url)
	if err != nil {
		return idle{}, err
	}
	u1, err := readUsage(s.cmd.Process.Pid)
	if err != nil {
		return idle{}, err
	}
	n := float64(k)
	return idle{
		sessions:   k,
		heapPer:    (float64(after.HeapInuse) - float64(before.HeapInuse)) / n,
		stackPer:   (float64(after.StackInuse) - float64(before.StackInuse)) / n,
		rssPer:     float64(u1.rss-u0.rss) / n,
		goroutines: float64(after.Goroutines-before.Goroutines) / n,
	}, nil
}
