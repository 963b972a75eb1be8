// Command load serves the same echo tool over Streamable HTTP from Parley,
// the official Go SDK and mark3labs/mcp-go, and from a bare net/http
// handler that writes a fixed answer (the ceiling), each in a process of
// its own, drives each with the same Go load generator at several
// concurrencies, and prints Markdown tables of calls per second, latency,
// peak memory and CPU per call, with the ratios to the ceiling and the
// targets of the performance issue, each met or not met.
//
// Run it from the bench module:
//
//	cd bench && go run ./cmd/load                          # a few minutes
//	cd bench && go run ./cmd/load -rounds 1 -duration 1s -warmup 300ms -conns 1,16
//	cd bench && go run ./cmd/load serve -sdk parley -addr 127.0.0.1:8080
//
// The serve subcommand is one server; the harness starts one per
// measured cell (so each cell's peak RSS is its own), reads its CPU time
// and peak RSS from /proc, and kills it. Every answer is checked to be the
// correct tools/call result; failures are counted and shown. See
// README.md, "Serving under load".
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		if err := serveMain(os.Args[2:]); err != nil {
			fatalf("%v", err)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "scale" {
		if err := scaleMain(os.Args[2:]); err != nil {
			fatalf("scale: %v", err)
		}
		return
	}
	duration := flag.Duration("duration", 2*time.Second, "measured time of each cell in each round")
	warmup := flag.Duration("warmup", 500*time.Millisecond, "time each cell runs before it is measured")
	rounds := flag.Int("rounds", 3, "rounds of every cell; the tables show the round of median calls/s")
	connsFlag := flag.String("conns", "1,16,64,256", "concurrencies: connections, each with one call in flight")
	sdkFlag := flag.String("sdks", strings.Join(sdks, ","), "servers to measure; the ratios need ceiling")
	modeFlag := flag.String("modes", modeStateless+","+modeSession, "client modes: stateless (2026-07-28), session (2025-11-25)")
	sessions := flag.Int("sessions", 1000, "idle 2025-11-25 sessions to open per server for the memory figure (Parley's default limit is 1000); 0 skips it")
	strict := flag.Bool("strict", false, "exit with status 1 when a target is not met")
	flag.Parse()

	if *rounds < 1 {
		fatalf("-rounds must be at least 1, not %d", *rounds)
	}
	conns, err := parseInts(*connsFlag)
	if err != nil {
		fatalf("-conns: %v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		fatalf("%v", err)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	h := harness{argv: []string{exe, "serve"}, warmup: *warmup, duration: *duration, progress: os.Stderr}
	res := h.run(ctx, split(*sdkFlag), split(*modeFlag), conns, *rounds, *sessions)
	if ctx.Err() != nil {
		fatalf("interrupted")
	}

	fmt.Printf("Date: %s. Machine: %s/%s, %d CPUs, %s. Server and driver share the machine.\n\n",
		time.Now().UTC().Format(time.DateOnly), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel())
	fmt.Printf("    cd bench && go run ./cmd/load %s\n\n", strings.Join(os.Args[1:], " "))
	res.writeTables(os.Stdout)
	if !res.writeTargets(os.Stdout) && *strict {
		os.Exit(1)
	}
}

// serveMain is the serve subcommand with its flags.
func serveMain(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	sdk := fs.String("sdk", sdkParley, "server: "+strings.Join(sdks, ", "))
	mode := fs.String("mode", modeStateless, "what the server is configured for: stateless or session")
	addr := fs.String("addr", "127.0.0.1:0", "listening address")
	fs.Parse(args)
	return serve(*sdk, *mode, *addr)
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "load: "+format+"\n", args...)
	os.Exit(2)
}

// split is a comma-separated list without empty items.
func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parseInts is a comma-separated list of positive integers.
func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range split(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// cpuModel is the first "model name" of /proc/cpuinfo, or "".
func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for l := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
