package main

import (
	"strings"
	"testing"
)

// sampleOutput is `go test -bench` output in the shape the two runs make:
// the main run at GOMAXPROCS 2, then the parallel benchmark at 1 and 2.
const sampleOutput = `goos: linux
goarch: amd64
pkg: github.com/parley-mcp/parley/bench
cpu: AMD EPYC
BenchmarkToolCall/parley-2         	   50000	     20000 ns/op	    3300 B/op	      36 allocs/op
BenchmarkToolCall/parley-2         	   50000	     30000 ns/op	    3400 B/op	      37 allocs/op
BenchmarkToolCall/parley-2         	   50000	     25000 ns/op	    3350 B/op	      36 allocs/op
BenchmarkToolCall/gosdk-2          	    5000	    250000 ns/op	  450000 B/op	     262 allocs/op
BenchmarkToolCall/gosdk-2          	    5000	    260000 ns/op	  450000 B/op	     262 allocs/op
BenchmarkToolCall/gosdk-2          	    5000	    270000 ns/op	  450000 B/op	     262 allocs/op
BenchmarkTwoRounds/parley-sealed-2 	   10000	    100000 ns/op	   14000 B/op	     125 allocs/op
BenchmarkTwoRounds/parley-unsealed-2	   10000	     60000 ns/op	   11000 B/op	      90 allocs/op
BenchmarkTwoRounds/gosdk-2         	    1000	   1200000 ns/op	 1400000 B/op	    1500 allocs/op
BenchmarkToolCallHTTP/parley-2     	    1000	    100000 ns/op	   13000 B/op	     150 allocs/op
BenchmarkToolCallHTTP/gosdk-2      	    1000	    500000 ns/op	  700000 B/op	     700 allocs/op
BenchmarkJSONRPCRoundTrip/parley-2 	  200000	     10000 ns/op	     543 B/op	      13 allocs/op
PASS
ok  	github.com/parley-mcp/parley/bench	30.1s
goos: linux
goarch: amd64
pkg: github.com/parley-mcp/parley/bench
cpu: AMD EPYC
BenchmarkToolCallParallel/parley   	   50000	     20000 ns/op	    3300 B/op	      36 allocs/op
BenchmarkToolCallParallel/parley-2 	   50000	     15000 ns/op	    3300 B/op	      36 allocs/op
BenchmarkToolCallParallel/gosdk    	    5000	    250000 ns/op	  450000 B/op	     262 allocs/op
BenchmarkToolCallParallel/gosdk-2  	    5000	    125000 ns/op	  450000 B/op	     262 allocs/op
PASS
`

func TestParseMediansAndPairs(t *testing.T) {
	res, err := parse(strings.NewReader(sampleOutput))
	if err != nil {
		t.Fatal(err)
	}
	rep := newReport(res)
	tc, ok := rep.find("BenchmarkToolCall", "parley", 2)
	if !ok || !tc.hasGosdk {
		t.Fatalf("BenchmarkToolCall/parley at 2 not paired: %+v", tc)
	}
	if tc.parley.ns != 25000 || tc.parley.allocs != 36 || tc.gosdk.ns != 260000 {
		t.Errorf("medians: parley %v ns %v allocs, gosdk %v ns; want 25000, 36, 260000", tc.parley.ns, tc.parley.allocs, tc.gosdk.ns)
	}
	if r := tc.ratio(); r < 10.39 || r > 10.41 {
		t.Errorf("ratio %v, want 10.4", r)
	}
	if _, ok := rep.find(parallelBench, "parley", 1); !ok {
		t.Error("the parallel benchmark without a -N suffix was not read as GOMAXPROCS 1")
	}
	unsealed, ok := rep.find("BenchmarkTwoRounds", "parley-unsealed", 2)
	if !ok || unsealed.gosdk.ns != 1200000 {
		t.Errorf("parley-unsealed not paired with gosdk: %+v", unsealed)
	}
	jr, ok := rep.find("BenchmarkJSONRPCRoundTrip", "parley", 2)
	if !ok || jr.hasGosdk {
		t.Errorf("the jsonrpc floor has no go-sdk side: %+v", jr)
	}
}

func TestTargets(t *testing.T) {
	res, err := parse(strings.NewReader(sampleOutput))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, tg := range newReport(res).targets() {
		if tg.Missing {
			t.Errorf("%s: %s", tg.Goal, tg.Measured)
		}
		got[tg.Goal] = tg.Met
	}
	want := map[string]bool{
		"in-memory typed tools/call ≥ 20× go-sdk's rate":                                    false, // 10.4×
		"in-memory typed tools/call ≤ 2× the bare jsonrpc round trip":                       false, // 2.5×
		"two-round sealed ≥ 10× go-sdk":                                                     true,  // 12×
		"two-round sealed ≤ 150 allocs/op":                                                  true,  // 125
		"stateless HTTP tools/call ≥ 8× go-sdk":                                             false, // 5×
		"parallel calls on one session: GOMAXPROCS=2 ≥ 1.6× the throughput of GOMAXPROCS=1": false, // 1.33×
	}
	for goal, met := range want {
		if g, ok := got[goal]; !ok || g != met {
			t.Errorf("%s: met=%v (reported: %v), want %v", goal, g, ok, met)
		}
	}
}

func TestTargetsNotMeasured(t *testing.T) {
	res, err := parse(strings.NewReader("BenchmarkToolCall/parley-2 \t 1 \t 100 ns/op \t 1 B/op \t 1 allocs/op\n"))
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if newReport(res).writeTargets(&sb) {
		t.Error("targets reported met with most benchmarks missing")
	}
	if !strings.Contains(sb.String(), "not measured") {
		t.Errorf("missing benchmarks not reported:\n%s", sb.String())
	}
}

func TestParseRejectsEmptyRun(t *testing.T) {
	if _, err := parse(strings.NewReader("PASS\nok x 0.1s\n")); err == nil {
		t.Error("a run without results parsed without error")
	}
}

func TestMedianOfEvenCount(t *testing.T) {
	res, err := parse(strings.NewReader("BenchmarkToolCall/parley-2 \t 1 \t 100 ns/op \t 10 B/op \t 1 allocs/op\n" +
		"BenchmarkToolCall/parley-2 \t 1 \t 300 ns/op \t 30 B/op \t 3 allocs/op\n"))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := res.median(key{Top: "BenchmarkToolCall", Sub: "parley", CPU: 2})
	if !ok || m.ns != 200 || m.bytes != 20 || m.allocs != 2 {
		t.Errorf("median of two runs %+v, want the means 200 ns, 20 B, 2 allocs", m)
	}
}

// TestMcpgoColumn: an mcpgo sub-benchmark is paired with the parley… ones
// of its benchmark, and a benchmark without one shows dashes in its place.
func TestMcpgoColumn(t *testing.T) {
	out := "BenchmarkToolCall/parley-2 \t 1 \t 100 ns/op \t 10 B/op \t 1 allocs/op\n" +
		"BenchmarkToolCall/gosdk-2 \t 1 \t 1000 ns/op \t 100 B/op \t 10 allocs/op\n" +
		"BenchmarkToolCall/mcpgo-2 \t 1 \t 400 ns/op \t 40 B/op \t 4 allocs/op\n" +
		"BenchmarkJSONRPCRoundTrip/parley-2 \t 1 \t 50 ns/op \t 5 B/op \t 1 allocs/op\n"
	res, err := parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	rep := newReport(res)
	tc, ok := rep.find("BenchmarkToolCall", "parley", 2)
	if !ok || !tc.hasMcpgo || tc.mcpgo.ns != 400 || tc.ratioMcpgo() != 4 {
		t.Fatalf("BenchmarkToolCall/parley not paired with mcpgo: %+v", tc)
	}
	var sb strings.Builder
	rep.writeTable(&sb)
	table := sb.String()
	for _, want := range []string{
		"| `ToolCall/parley` | 2 | 100 | 10 | 1 | 1,000 | 100 | 10 | 10.0× | 400 | 40 | 4 | 4.0× |",
		"| `JSONRPCRoundTrip/parley` | 2 | 50 | 5 | 1 | — | — | — | — | — | — | — | — |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

// TestLastLines: a failed run shows the end of its output, whole lines.
func TestLastLines(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc\n"},
		{"a\nb\nc", 5, "a\nb\nc\n"},
		{"--- FAIL: X\npanic\n", 1, "panic\n"},
		{"", 3, "\n"},
	} {
		if got := string(lastLines([]byte(c.in), c.n)); got != c.want {
			t.Errorf("lastLines(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
