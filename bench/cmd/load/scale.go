package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The scale subcommand (`make bench-scale`) measures how cost grows with
// the work: registered tools, idle 2025-11-25 sessions, idle listen
// streams, tasks in flight, payload size and cores, on Parley beside the
// official Go SDK and mcp-go where they have the feature and a bare
// net/http handler where a ceiling means something. Every point of every
// curve is measured once per round, the SDKs one after the other at each
// point, and each figure is the median of the rounds with their spread.
// It writes the tables and targets as Markdown and each curve as an image
// (design record 050).

// The curves, in the order they run.
const (
	curveTools    = "tools"
	curveSessions = "sessions"
	curveStreams  = "streams"
	curveTasks    = "tasks"
	curvePayload  = "payload"
	curveCores    = "cores"
)

var allCurves = []string{curveTools, curveSessions, curveStreams, curveTasks, curvePayload, curveCores}

// Series names beyond the SDKs.
const (
	seriesBare        = "bare net/http"
	seriesParleyRedis = "parley (Redis)"
)

// scaleConfig is what a run measures and where it writes.
type scaleConfig struct {
	curves   []string
	sdks     []string // parley, gosdk, mcpgo
	rounds   int
	smoke    bool // one point per curve, small
	figures  string
	out      string
	redis    string        // redis-server binary; "" skips the Redis series
	duration time.Duration // the time each latency figure is measured for
	coresDur time.Duration // each cell of the cores curve
	argv     []string      // how to start a server process
	env      []string
	progress io.Writer
}

// points of each curve (x values), full and smoke.
func (c *scaleConfig) toolCounts() []int {
	if c.smoke {
		return []int{10}
	}
	return []int{10, 100, 1000, 10000}
}

func (c *scaleConfig) sessionCounts() []int {
	if c.smoke {
		return []int{20}
	}
	return []int{100, 1000, 10000}
}

func (c *scaleConfig) streamCounts() []int {
	if c.smoke {
		return []int{20}
	}
	return []int{100, 1000, 10000}
}

func (c *scaleConfig) taskCounts() []int {
	if c.smoke {
		return []int{20}
	}
	return []int{100, 1000, 10000}
}

func (c *scaleConfig) payloadSizes() []int {
	if c.smoke {
		return []int{1 << 10}
	}
	return []int{1 << 10, 16 << 10, 256 << 10, 4 << 20, 16 << 20}
}

func scaleMain(args []string) error {
	fs := flag.NewFlagSet("scale", flag.ExitOnError)
	curves := fs.String("curves", strings.Join(allCurves, ","), "curves to measure: "+strings.Join(allCurves, ", "))
	sdkList := fs.String("sdks", strings.Join([]string{sdkParley, sdkGosdk, sdkMcpgo}, ","), "SDKs beside the bare handler")
	rounds := fs.Int("rounds", 3, "rounds of every point; figures are their medians")
	smoke := fs.Bool("smoke", false, "one small point per curve, one round, short: checks that the command works")
	figures := fs.String("figures", "figures", "folder the images are written to; empty writes none")
	out := fs.String("o", "", "write the Markdown report here as well as to stdout")
	redis := fs.String("redis", "redis-server", "redis-server binary for the Redis task store; empty skips it")
	duration := fs.Duration("duration", 300*time.Millisecond, "how long each latency figure is measured")
	coresDur := fs.Duration("cores-duration", 2*time.Second, "measured time of each cell of the cores curve")
	raw := fs.String("raw", "", "also write every sample of the run to this file (JSON), for -from")
	from := fs.String("from", "", "read the samples of an earlier run (-raw) instead of measuring: its report and images again")
	fs.Parse(args)
	if *rounds < 1 {
		return fmt.Errorf("-rounds must be at least 1, not %d", *rounds)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cfg := &scaleConfig{
		curves: split(*curves), sdks: split(*sdkList), rounds: *rounds, smoke: *smoke,
		figures: *figures, out: *out, duration: *duration, coresDur: *coresDur,
		argv: []string{exe, "serve"}, progress: os.Stderr,
	}
	if *redis != "" {
		if p, err := exec.LookPath(*redis); err == nil {
			cfg.redis = p
		} else {
			fmt.Fprintf(os.Stderr, "scale: %s not found: the Redis task store is not measured\n", *redis)
		}
	}
	if cfg.smoke {
		cfg.rounds = 1
		cfg.duration = 20 * time.Millisecond
		cfg.coresDur = 200 * time.Millisecond
	}
	for _, c := range cfg.curves {
		if !slices.Contains(allCurves, c) {
			return fmt.Errorf("unknown curve %q (want some of %v)", c, allCurves)
		}
	}
	ctx, cancel := signalContext()
	defer cancel()
	sh := newSheet()
	cmdline := "cd bench && go run ./cmd/load scale " + strings.Join(args, " ")
	if *from != "" {
		if err := sh.load(*from); err != nil {
			return err
		}
	} else if err := runScale(ctx, cfg, sh); err != nil {
		return err
	}
	if *raw != "" {
		if err := sh.save(*raw); err != nil {
			return err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Date: %s. Machine: %s/%s, %d CPUs, %s, %s. Load average at the start and end: %s.\n\n",
		time.Now().UTC().Format(time.DateOnly), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel(), runtime.Version(), sh.loadRange())
	fmt.Fprintf(&b, "    %s\n\n", strings.TrimSpace(cmdline))
	met := writeScaleReport(&b, cfg, sh)
	os.Stdout.WriteString(b.String())
	if cfg.out != "" {
		if err := os.WriteFile(cfg.out, []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	if cfg.figures != "" {
		if err := drawFigures(cfg, sh); err != nil {
			return fmt.Errorf("drawing: %w", err)
		}
	}
	if len(sh.errs) > 0 {
		return fmt.Errorf("%d measurements failed; the first: %w", len(sh.errs), sh.errs[0])
	}
	_ = met
	return nil
}

// runScale measures every curve of cfg into sh, rounds times over.
func runScale(ctx context.Context, cfg *scaleConfig, sh *sheet) error {
	sh.markLoad()
	defer sh.markLoad()
	for round := range cfg.rounds {
		for _, c := range cfg.curves {
			if err := ctx.Err(); err != nil {
				return err
			}
			fmt.Fprintf(cfg.progress, "scale: round %d of %d: %s\n", round+1, cfg.rounds, c)
			var err error
			switch c {
			case curveTools:
				err = measureTools(ctx, cfg, sh)
			case curveSessions:
				err = measureSessions(ctx, cfg, sh)
			case curveStreams:
				err = measureStreams(ctx, cfg, sh)
			case curveTasks:
				err = measureTasks(ctx, cfg, sh)
			case curvePayload:
				err = measurePayload(ctx, cfg, sh)
			case curveCores:
				err = measureCores(ctx, cfg, sh)
			}
			if err != nil {
				sh.fail(fmt.Errorf("%s, round %d: %w", c, round+1, err))
				fmt.Fprintf(cfg.progress, "scale: %s: %v\n", c, err)
			}
		}
	}
	return nil
}

// sheet holds every sample of a run: for each metric and series, at each
// x, one sample per round.
type sheet struct {
	mu    sync.Mutex
	v     map[sampleKey][]float64
	errs  []error
	notes []string // what an SDK could not do, once each
	loads []string // /proc/loadavg's first figure, at the start and the end
}

type sampleKey struct {
	metric, series string
	x              float64
}

func newSheet() *sheet { return &sheet{v: map[sampleKey][]float64{}} }

// add records one sample.
func (s *sheet) add(metric, series string, x, v float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := sampleKey{metric, series, x}
	s.v[k] = append(s.v[k], v)
}

// rawSample is one point's samples in a -raw file.
type rawSample struct {
	Metric  string    `json:"metric"`
	Series  string    `json:"series"`
	X       float64   `json:"x"`
	Samples []float64 `json:"samples"`
}

// rawRun is a -raw file: every sample, what could not be done, and the
// load averages.
type rawRun struct {
	Samples []rawSample `json:"samples"`
	Notes   []string    `json:"notes,omitempty"`
	Loads   []string    `json:"loads,omitempty"`
}

func (s *sheet) save(path string) error {
	s.mu.Lock()
	var r rawRun
	for k, v := range s.v {
		r.Samples = append(r.Samples, rawSample{k.metric, k.series, k.x, v})
	}
	r.Notes, r.Loads = s.notes, s.loads
	s.mu.Unlock()
	slices.SortFunc(r.Samples, func(a, b rawSample) int {
		if c := strings.Compare(a.Metric, b.Metric); c != 0 {
			return c
		}
		if c := strings.Compare(a.Series, b.Series); c != 0 {
			return c
		}
		return cmpFloat(a.X, b.X)
	})
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func (s *sheet) load(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var r rawRun
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range r.Samples {
		s.v[sampleKey{x.Metric, x.Series, x.X}] = x.Samples
	}
	s.notes, s.loads = r.Notes, r.Loads
	return nil
}

// note records, once, something an SDK could not do: a finding, not a
// failure of the run.
func (s *sheet) note(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.notes, msg) {
		s.notes = append(s.notes, msg)
	}
}

// samples are the samples of a point, in the order of the rounds.
func (s *sheet) samples(metric, series string, x float64) []float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.v[sampleKey{metric, series, x}])
}

func (s *sheet) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, err)
}

// markLoad records the machine's one-minute load average.
func (s *sheet) markLoad() {
	b, err := os.ReadFile("/proc/loadavg")
	l := "?"
	if err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			l = f[0]
		}
	}
	s.mu.Lock()
	s.loads = append(s.loads, l)
	s.mu.Unlock()
}

func (s *sheet) loadRange() string { return strings.Join(s.loads, " and ") }

// stat is the median of a point's samples and their spread.
type stat struct {
	med, lo, hi float64
	n           int
}

// get is the median of metric for series at x; ok is false when it was
// never measured.
func (s *sheet) get(metric, series string, x float64) (stat, bool) {
	s.mu.Lock()
	vs := slices.Clone(s.v[sampleKey{metric, series, x}])
	s.mu.Unlock()
	if len(vs) == 0 {
		return stat{}, false
	}
	slices.Sort(vs)
	m := vs[len(vs)/2]
	if len(vs)%2 == 0 {
		m = (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
	}
	return stat{med: m, lo: vs[0], hi: vs[len(vs)-1], n: len(vs)}, true
}

// xs are the x values at which metric was measured for any series, in
// order.
func (s *sheet) xs(metric string) []float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []float64
	for k := range s.v {
		if k.metric == metric && !slices.Contains(out, k.x) {
			out = append(out, k.x)
		}
	}
	slices.Sort(out)
	return out
}

// seriesOf are the series measured for metric, in the order of order and
// then by name.
func (s *sheet) seriesOf(metric string) []string {
	s.mu.Lock()
	var out []string
	for k := range s.v {
		if k.metric == metric && !slices.Contains(out, k.series) {
			out = append(out, k.series)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b string) int {
		ia, ib := seriesRank(a), seriesRank(b)
		if ia != ib {
			return ia - ib
		}
		return strings.Compare(a, b)
	})
	return out
}

// seriesRank orders series: Parley's first, then the other SDKs, then the
// bare handler.
func seriesRank(s string) int {
	switch {
	case strings.HasPrefix(s, sdkParley):
		return 0
	case strings.HasPrefix(s, sdkGosdk):
		return 1
	case strings.HasPrefix(s, sdkMcpgo):
		return 2
	}
	return 3
}

// opStats is what a run of one operation cost, per operation.
type opStats struct {
	ns, allocs, bytes float64
	cpu               float64 // ns of the process's CPU time (user and system)
	n                 int
}

// cpuTime is the CPU time this process has used, user and system: on a
// loaded machine a figure that waiting for a processor does not inflate.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measureOp runs op repeatedly for about d (at least twice, after one
// warm-up run) and returns its cost per run: wall time, and the
// allocations of the whole process (both ends of an in-process exchange)
// from runtime.MemStats.
func measureOp(d time.Duration, op func() error) (opStats, error) {
	if err := op(); err != nil { // warm-up: caches, pools, grown stacks
		return opStats{}, err
	}
	start := time.Now()
	if err := op(); err != nil {
		return opStats{}, err
	}
	one := max(time.Since(start), time.Microsecond)
	n := int(min(max(int64(d/one), 2), 1_000_000))
	runtime.GC()
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	cpu0 := cpuTime()
	start = time.Now()
	for range n {
		if err := op(); err != nil {
			return opStats{}, err
		}
	}
	el := time.Since(start)
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&b)
	return opStats{
		ns:     float64(el.Nanoseconds()) / float64(n),
		cpu:    float64(cpu.Nanoseconds()) / float64(n),
		allocs: float64(b.Mallocs-a.Mallocs) / float64(n),
		bytes:  float64(b.TotalAlloc-a.TotalAlloc) / float64(n),
		n:      n,
	}, nil
}

// heldNow is this process's heap in use and goroutine stacks, after two
// collections (the second frees what the first's finalizers released), and
// its goroutines.
func heldNow() (heap, stack float64, goroutines int) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapInuse), float64(ms.StackInuse), runtime.NumGoroutine()
}

// allocsOf runs f and records what the whole process allocated meanwhile
// in st (allocs and bytes, in all).
func allocsOf(f func() error, st *opStats) error {
	runtime.GC()
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	err := f()
	runtime.ReadMemStats(&b)
	st.allocs = float64(b.Mallocs - a.Mallocs)
	st.bytes = float64(b.TotalAlloc - a.TotalAlloc)
	return err
}

// signalContext ends on an interrupt.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt)
}
