// Command ratio runs the bench module's benchmarks, which pair each
// workload on Parley with the same workload on the official Go SDK and,
// where its API allows the workload, on mark3labs/mcp-go, and
// prints a Markdown table of the medians and their ratios, followed by the
// performance targets of the comparison and whether each is met.
//
// Run it from the bench module:
//
//	cd bench && go run ./cmd/ratio                # -count 5
//	cd bench && go run ./cmd/ratio -count 3 -o raw.txt
//	cd bench && go run ./cmd/ratio -in raw.txt    # the table of a saved run
//
// It makes two `go test -bench` runs: every benchmark except
// BenchmarkToolCallParallel at the default GOMAXPROCS, then
// BenchmarkToolCallParallel with -cpu 1,2, the two figures the parallel
// target compares. It makes them -count times, each with -count 1, so that
// the runs of the two SDKs alternate: on a shared machine a burst of load
// then lands on both sides of a pair rather than on all the runs of one.
// A target not met is reported, not an error, unless -strict is given.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parley-mcp/parley/bench/internal/targets"
)

// parallelBench is the benchmark run with -cpu 1,2.
const parallelBench = "BenchmarkToolCallParallel"

func main() {
	count := flag.Int("count", 5, "runs of each benchmark; the table shows their medians")
	benchtime := flag.String("benchtime", "", "go test -benchtime (default: go test's, 1s)")
	cpus := flag.String("cpu", "1,2", "GOMAXPROCS values of "+parallelBench+"; the parallel target compares 1 and 2")
	in := flag.String("in", "", "read `go test -bench` output from this file instead of running the benchmarks")
	out := flag.String("o", "", "also write the raw `go test -bench` output to this file")
	strict := flag.Bool("strict", false, "exit with status 1 when a target is not met")
	flag.Parse()
	if *count < 1 {
		fatalf("-count must be at least 1, not %d", *count)
	}

	var raw []byte
	var commands []string
	if *in != "" {
		b, err := os.ReadFile(*in)
		if err != nil {
			fatalf("%v", err)
		}
		raw = b
	} else {
		var err error
		raw, commands, err = runBenchmarks(*count, *benchtime, *cpus)
		if err != nil {
			fatalf("%v", err)
		}
	}
	if *out != "" {
		if err := os.WriteFile(*out, raw, 0o644); err != nil {
			fatalf("%v", err)
		}
	}
	res, err := parse(bytes.NewReader(raw))
	if err != nil {
		fatalf("%v", err)
	}
	report := newReport(res)
	fmt.Printf("Date: %s. %s\n\n", time.Now().UTC().Format(time.DateOnly), res.machine())
	for _, c := range commands {
		fmt.Printf("    %s\n", c)
	}
	if len(commands) > 0 {
		fmt.Println()
	}
	report.writeTable(os.Stdout)
	fmt.Println()
	met := report.writeTargets(os.Stdout)
	if !met && *strict {
		os.Exit(1)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "ratio: "+format+"\n", args...)
	os.Exit(2)
}

// runBenchmarks makes the two runs and returns their output, one after the
// other, with the commands it ran.
func runBenchmarks(count int, benchtime, cpus string) ([]byte, []string, error) {
	list, err := exec.Command("go", "test", "-list", "^Benchmark", ".").Output()
	if err != nil {
		return nil, nil, fmt.Errorf("listing the benchmarks: %w", err)
	}
	var names []string
	for _, l := range strings.Split(string(list), "\n") {
		if strings.HasPrefix(l, "Benchmark") && l != parallelBench {
			names = append(names, l)
		}
	}
	if len(names) == 0 {
		return nil, nil, errors.New("go test -list found no benchmarks: run ratio from the bench module")
	}
	common := []string{"test", "-run", "^$", "-benchmem", "-count", "1"}
	if benchtime != "" {
		common = append(common, "-benchtime", benchtime)
	}
	runs := [][]string{
		append(slices.Clone(common), "-bench", "^("+strings.Join(names, "|")+")$", "."),
		append(slices.Clone(common), "-bench", "^"+parallelBench+"$", "-cpu", cpus, "."),
	}
	var all bytes.Buffer
	var commands []string
	for _, args := range runs {
		commands = append(commands, fmt.Sprintf("go %s   # %d times, alternating", shellJoin(args), count))
	}
	for i := range count {
		for _, args := range runs {
			fmt.Fprintf(os.Stderr, "run %d of %d: go %s\n", i+1, count, shellJoin(args))
			var out bytes.Buffer
			cmd := exec.Command("go", args...)
			cmd.Stdout = &out
			cmd.Stderr = os.Stderr
			err := cmd.Run()
			all.Write(out.Bytes())
			if err != nil {
				// go test reports a failing benchmark on stdout, which is
				// kept for parsing: show its end, or the failure is silent.
				os.Stderr.Write(lastLines(out.Bytes(), 40))
				return all.Bytes(), commands, fmt.Errorf("go %s: %w", shellJoin(args), err)
			}
		}
	}
	return all.Bytes(), commands, nil
}

// lastLines returns the last n lines of b.
func lastLines(b []byte, n int) []byte {
	b = bytes.TrimRight(b, "\n")
	i := len(b)
	for ; n > 0 && i > 0; n-- {
		i = bytes.LastIndexByte(b[:i], '\n')
		if i < 0 {
			i = 0
			break
		}
	}
	if i > 0 {
		i++ // after the newline
	}
	return append(slices.Clone(b[i:]), '\n')
}

// shellJoin quotes the arguments that a shell would split or expand.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, "^$|()*? ") {
			a = "'" + a + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

// sample is one line of benchmark output.
type sample struct {
	ns, bytes, allocs float64
}

// key names a benchmark at one GOMAXPROCS: Top is the benchmark function,
// Sub its sub-benchmark (parley…, gosdk…).
type key struct {
	Top, Sub string
	CPU      int
}

// results are the samples of a run, by benchmark, in the order first seen.
type results struct {
	order   []key
	samples map[key][]sample
	goos    string
	goarch  string
	cpu     string
}

// lineRE matches a result line: the name with its optional -GOMAXPROCS
// suffix, the iterations, and the measurements.
var lineRE = regexp.MustCompile(`^(Benchmark[^\s/]+)/(\S+?)(?:-(\d+))?\s+\d+\s+([\d.]+) ns/op(?:\s+([\d.]+) B/op)?(?:\s+([\d.]+) allocs/op)?`)

// parse reads `go test -bench -benchmem` output. Lines it does not know
// are skipped; a run with no result line is an error.
func parse(r io.Reader) (*results, error) {
	res := &results{samples: map[key][]sample{}}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "goos: "):
			res.goos = strings.TrimPrefix(line, "goos: ")
		case strings.HasPrefix(line, "goarch: "):
			res.goarch = strings.TrimPrefix(line, "goarch: ")
		case strings.HasPrefix(line, "cpu: "):
			res.cpu = strings.TrimPrefix(line, "cpu: ")
		}
		m := lineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		k := key{Top: m[1], Sub: m[2], CPU: 1}
		if m[3] != "" {
			k.CPU, _ = strconv.Atoi(m[3])
		}
		var s sample
		s.ns, _ = strconv.ParseFloat(m[4], 64)
		if m[5] != "" {
			s.bytes, _ = strconv.ParseFloat(m[5], 64)
		}
		if m[6] != "" {
			s.allocs, _ = strconv.ParseFloat(m[6], 64)
		}
		if _, seen := res.samples[k]; !seen {
			res.order = append(res.order, k)
		}
		res.samples[k] = append(res.samples[k], s)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(res.order) == 0 {
		return nil, errors.New("no benchmark results in the output")
	}
	return res, nil
}

// machine describes where the run was, from the output's header.
func (r *results) machine() string {
	return fmt.Sprintf("Machine: %s/%s, %s.", r.goos, r.goarch, r.cpu)
}

// median is the median of each measurement of k's samples, and whether
// there were any.
func (r *results) median(k key) (sample, bool) {
	ss := r.samples[k]
	if len(ss) == 0 {
		return sample{}, false
	}
	pick := func(f func(sample) float64) float64 {
		v := make([]float64, len(ss))
		for i, s := range ss {
			v[i] = f(s)
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return sample{
		ns:     pick(func(s sample) float64 { return s.ns }),
		bytes:  pick(func(s sample) float64 { return s.bytes }),
		allocs: pick(func(s sample) float64 { return s.allocs }),
	}, true
}

// row is one line of the table: a Parley variant of a workload beside
// go-sdk's and mark3labs/mcp-go's, at one GOMAXPROCS.
type row struct {
	top, parleySub       string
	cpu                  int
	parley, gosdk, mcpgo sample
	hasGosdk, hasMcpgo   bool
}

// ratio is go-sdk's ns/op over Parley's: how many times faster Parley is.
func (r row) ratio() float64 { return r.gosdk.ns / r.parley.ns }

// ratioMcpgo is mcp-go's ns/op over Parley's.
func (r row) ratioMcpgo() float64 { return r.mcpgo.ns / r.parley.ns }

// report is the table of a run and what the targets read from it.
type report struct {
	res  *results
	rows []row
}

// newReport pairs every parley… sub-benchmark with the gosdk and mcpgo
// ones of the same benchmark and GOMAXPROCS.
func newReport(res *results) *report {
	rep := &report{res: res}
	for _, k := range res.order {
		if !strings.HasPrefix(k.Sub, "parley") {
			continue
		}
		p, _ := res.median(k)
		g, ok := res.median(key{Top: k.Top, Sub: "gosdk", CPU: k.CPU})
		m, okM := res.median(key{Top: k.Top, Sub: "mcpgo", CPU: k.CPU})
		rep.rows = append(rep.rows, row{top: k.Top, parleySub: k.Sub, cpu: k.CPU, parley: p, gosdk: g, hasGosdk: ok, mcpgo: m, hasMcpgo: okM})
	}
	return rep
}

// find is the row of top/sub at cpu.
func (rep *report) find(top, sub string, cpu int) (row, bool) {
	for _, r := range rep.rows {
		if r.top == top && r.parleySub == sub && r.cpu == cpu {
			return r, true
		}
	}
	return row{}, false
}

// findAnyCPU is the row of top/sub at the first GOMAXPROCS it ran at.
func (rep *report) findAnyCPU(top, sub string) (row, bool) {
	for _, r := range rep.rows {
		if r.top == top && r.parleySub == sub {
			return r, true
		}
	}
	return row{}, false
}

func (rep *report) writeTable(w io.Writer) {
	fmt.Fprintln(w, "| workload (`Benchmark…/parley…` vs `…/gosdk`, `…/mcpgo`) | GOMAXPROCS | Parley ns/op | Parley B/op | Parley allocs/op | go-sdk ns/op | go-sdk B/op | go-sdk allocs/op | Parley faster than go-sdk by | mcp-go ns/op | mcp-go B/op | mcp-go allocs/op | Parley faster than mcp-go by |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rep.rows {
		name := strings.TrimPrefix(r.top, "Benchmark") + "/" + r.parleySub
		fmt.Fprintf(w, "| `%s` | %d | %s | %s | %s | %s | %s |\n", name, r.cpu,
			targets.Thousands(r.parley.ns), targets.Thousands(r.parley.bytes), targets.Thousands(r.parley.allocs),
			other(r.hasGosdk, r.gosdk, r.ratio()), other(r.hasMcpgo, r.mcpgo, r.ratioMcpgo()))
	}
}

// other is the four cells of another SDK's side of a row: its ns/op, B/op
// and allocs/op and Parley's ratio to it, or dashes where it has no such
// benchmark.
func other(has bool, s sample, ratio float64) string {
	if !has {
		return "— | — | — | —"
	}
	return fmt.Sprintf("%s | %s | %s | %.1f×", targets.Thousands(s.ns), targets.Thousands(s.bytes), targets.Thousands(s.allocs), ratio)
}

// targets reads the goals of the comparison from the run.
func (rep *report) targets() []targets.Target {
	var ts []targets.Target
	missing := func(goal, what string) targets.Target {
		return targets.Target{Goal: goal, Measured: "not measured: no " + what + " in this run", Missing: true}
	}

	const call = "in-memory typed tools/call ≥ 20× go-sdk's rate"
	tc, okTC := rep.findAnyCPU("BenchmarkToolCall", "parley")
	if okTC && tc.hasGosdk {
		ts = append(ts, targets.Target{Goal: call, Measured: fmt.Sprintf("%.1f×", tc.ratio()), Met: tc.ratio() >= 20})
	} else {
		ts = append(ts, missing(call, "BenchmarkToolCall pair"))
	}

	const floor = "in-memory typed tools/call ≤ 2× the bare jsonrpc round trip"
	jr, okJR := rep.findAnyCPU("BenchmarkJSONRPCRoundTrip", "parley")
	if okTC && okJR {
		x := tc.parley.ns / jr.parley.ns
		ts = append(ts, targets.Target{Goal: floor, Measured: fmt.Sprintf("%.1f× (%s vs %s ns/op)", x, targets.Thousands(tc.parley.ns), targets.Thousands(jr.parley.ns)), Met: x <= 2})
	} else {
		ts = append(ts, missing(floor, "BenchmarkToolCall/parley or BenchmarkJSONRPCRoundTrip/parley"))
	}

	const sealed = "two-round sealed ≥ 10× go-sdk"
	const sealedAllocs = "two-round sealed ≤ 150 allocs/op"
	tr, okTR := rep.findAnyCPU("BenchmarkTwoRounds", "parley-sealed")
	if okTR && tr.hasGosdk {
		ts = append(ts, targets.Target{Goal: sealed, Measured: fmt.Sprintf("%.1f×", tr.ratio()), Met: tr.ratio() >= 10})
	} else {
		ts = append(ts, missing(sealed, "BenchmarkTwoRounds parley-sealed/gosdk pair"))
	}
	if okTR {
		ts = append(ts, targets.Target{Goal: sealedAllocs, Measured: targets.Thousands(tr.parley.allocs) + " allocs/op", Met: tr.parley.allocs <= 150})
	} else {
		ts = append(ts, missing(sealedAllocs, "BenchmarkTwoRounds/parley-sealed"))
	}

	const httpGoal = "stateless HTTP tools/call ≥ 8× go-sdk"
	h, okH := rep.findAnyCPU("BenchmarkToolCallHTTP", "parley")
	if okH && h.hasGosdk {
		ts = append(ts, targets.Target{Goal: httpGoal, Measured: fmt.Sprintf("%.1f×", h.ratio()), Met: h.ratio() >= 8})
	} else {
		ts = append(ts, missing(httpGoal, "BenchmarkToolCallHTTP pair"))
	}

	const par = "parallel calls on one session: GOMAXPROCS=2 ≥ 1.6× the throughput of GOMAXPROCS=1"
	p1, ok1 := rep.find(parallelBench, "parley", 1)
	p2, ok2 := rep.find(parallelBench, "parley", 2)
	if ok1 && ok2 {
		x := p1.parley.ns / p2.parley.ns
		m := fmt.Sprintf("%.2f× (%s → %s ns/op)", x, targets.Thousands(p1.parley.ns), targets.Thousands(p2.parley.ns))
		if p1.hasGosdk && p2.hasGosdk {
			m += fmt.Sprintf("; go-sdk %.2f×", p1.gosdk.ns/p2.gosdk.ns)
		}
		ts = append(ts, targets.Target{Goal: par, Measured: m, Met: x >= 1.6})
	} else {
		ts = append(ts, missing(par, parallelBench+"/parley at both -cpu 1 and -cpu 2"))
	}
	return ts
}

// writeTargets writes the targets' table and reports whether all were met.
func (rep *report) writeTargets(w io.Writer) bool {
	return targets.Write(w, "measured", rep.targets())
}
