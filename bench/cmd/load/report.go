package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/parley-mcp/parley/bench/internal/targets"
)

// cell is one server at one concurrency in one mode, measured.
type cell struct {
	sdk, mode string
	conns     int
	round     int
	load      load
	peakRSS   int64         // the server's VmHWM at the end
	cpu       time.Duration // the server's CPU time in the measured period
	err       error         // the cell could not be measured
}

// cpuPer10k is the server's CPU milliseconds per 10,000 correct answers.
func (c cell) cpuPer10k() float64 {
	if c.load.requests == 0 {
		return 0
	}
	return float64(c.cpu.Milliseconds()) * 10000 / float64(c.load.requests)
}

// results are a whole run: its cells in the order measured (each the
// round of median calls/s), every round's cells, and the idle sessions
// measured by server.
type results struct {
	cells    []cell
	all      []cell // every round
	idle     map[string]idle
	idleErr  map[string]error
	sessions int // sessions opened per idle measurement
	rounds   int // rounds each cell is the median of
}

// rateOf and p99Of are the figures the ratios compare.
func rateOf(c cell) float64 { return c.load.rate() }
func p99Of(c cell) float64  { return float64(c.load.quantile(0.99)) }

// ratio is the median over the rounds of f(sdk's cell) / f(base's cell) of
// the same round, mode and concurrency: the two were measured seconds
// apart, so a burst of other work on a shared machine that slows both
// cancels out, where a ratio of two medians from different rounds would
// keep it. ok is false when no round measured both.
func (r *results) ratio(sdk, base, mode string, conns int, f func(cell) float64) (float64, bool) {
	type pair struct{ a, b *cell }
	rounds := map[int]*pair{}
	for i := range r.all {
		c := &r.all[i]
		if c.mode != mode || c.conns != conns || c.err != nil {
			continue
		}
		p := rounds[c.round]
		if p == nil {
			p = &pair{}
			rounds[c.round] = p
		}
		switch c.sdk {
		case sdk:
			p.a = c
		case base:
			p.b = c
		}
	}
	var xs []float64
	for _, p := range rounds {
		if p.a != nil && p.b != nil && f(*p.b) > 0 {
			xs = append(xs, f(*p.a)/f(*p.b))
		}
	}
	if len(xs) == 0 {
		return 0, false
	}
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2], true
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2, true
}

// modesAndConns are the modes and concurrencies of the run, in order.
func (r *results) modesAndConns() (modes []string, conns []int) {
	for _, c := range r.cells {
		if !contains(modes, c.mode) {
			modes = append(modes, c.mode)
		}
		if !contains(conns, c.conns) {
			conns = append(conns, c.conns)
		}
	}
	return modes, conns
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// modeTitle says what a mode's clients speak.
func modeTitle(mode string) string {
	if mode == modeSession {
		return "2025-11-25 sessions: each connection initializes once, then calls"
	}
	return "2026-07-28, stateless: every POST stands alone"
}

// writeTables writes one Markdown table per mode: every server at every
// concurrency, with its ratios to the ceiling at the same concurrency.
func (r *results) writeTables(w io.Writer) {
	modes, _ := r.modesAndConns()
	for _, mode := range modes {
		fmt.Fprintf(w, "%s. Each row is the round of median calls/s of %d; the ratios to the ceiling are medians of each round's ratio to the ceiling's cell of the same round; failures are those of every round.\n\n", modeTitle(mode), max(r.rounds, 1))
		fmt.Fprintln(w, "| connections | server | calls/s | of ceiling | p50 | p99 | p99 ÷ ceiling's | peak RSS | CPU ms / 10k calls | failed |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
		for _, c := range r.cells {
			if c.mode != mode {
				continue
			}
			if c.err != nil {
				fmt.Fprintf(w, "| %d | %s | — | — | — | — | — | — | — | not measured: %s |\n", c.conns, c.sdk, oneLine(c.err.Error()))
				continue
			}
			of, p99of := "—", "—"
			if x, ok := r.ratio(c.sdk, sdkCeiling, mode, c.conns, rateOf); ok && c.sdk != sdkCeiling {
				of = pct(x)
			}
			if y, ok := r.ratio(c.sdk, sdkCeiling, mode, c.conns, p99Of); ok && c.sdk != sdkCeiling {
				p99of = fmt.Sprintf("%.2f×", y)
			}
			failed := fmt.Sprint(c.load.failures)
			if c.load.failures > 0 {
				failed = fmt.Sprintf("**%d** (%s)", c.load.failures, oneLine(c.load.failure))
			}
			fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s | %.1f MiB | %.0f | %s |\n",
				c.conns, c.sdk, targets.Thousands(c.load.rate()), of,
				ms(c.load.quantile(0.50)), ms(c.load.quantile(0.99)), p99of,
				float64(c.peakRSS)/(1<<20), c.cpuPer10k(), failed)
		}
		fmt.Fprintln(w)
	}
	if len(r.idle)+len(r.idleErr) == 0 {
		return
	}
	fmt.Fprintf(w, "Idle 2025-11-25 sessions: %d opened (initialize, notifications/initialized, no GET stream) through 8 keep-alive connections and left open; the growth of the server's HeapInuse and StackInuse after a collection (held: their sum), and of its RSS, divided by their number.\n\n", r.sessions)
	fmt.Fprintln(w, "| server | held per session | of which heap | of which stacks | RSS per session | goroutines per session |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, sdk := range sdks {
		if err, ok := r.idleErr[sdk]; ok {
			fmt.Fprintf(w, "| %s | not measured: %s | | | | |\n", sdk, oneLine(err.Error()))
			continue
		}
		if id, ok := r.idle[sdk]; ok {
			fmt.Fprintf(w, "| %s | %.1f KiB | %.1f KiB | %.1f KiB | %.1f KiB | %.2f |\n", sdk, id.held()/1024, id.heapPer/1024, id.stackPer/1024, id.rssPer/1024, id.goroutines)
		}
	}
	fmt.Fprintln(w)
}

// targets reads the goals for Parley from the run, for each mode.
func (r *results) targets() []targets.Target {
	var ts []targets.Target
	modes, conns := r.modesAndConns()
	for _, mode := range modes {
		label := "2026-07-28 stateless"
		if mode == modeSession {
			label = "2025-11-25 sessions"
		}
		var thr, p99, ahead []string
		thrMet, p99Met, aheadMet, missing := true, true, true, false
		for _, n := range conns {
			x, okX := r.ratio(sdkParley, sdkCeiling, mode, n, rateOf)
			y, okY := r.ratio(sdkParley, sdkCeiling, mode, n, p99Of)
			if !okX || !okY {
				missing = true
				continue
			}
			thrMet = thrMet && x >= 0.9
			thr = append(thr, fmt.Sprintf("%d: %s", n, pct(x)))
			p99Met = p99Met && y <= 1.2
			p99 = append(p99, fmt.Sprintf("%d: %.2f×", n, y))
			var by []string
			for _, other := range []string{sdkGosdk, sdkMcpgo} {
				z, ok := r.ratio(sdkParley, other, mode, n, rateOf)
				if !ok {
					continue
				}
				aheadMet = aheadMet && z > 1
				by = append(by, fmt.Sprintf("%.1f× %s", z, other))
			}
			ahead = append(ahead, fmt.Sprintf("%d: %s", n, strings.Join(by, ", ")))
		}
		add := func(goal string, parts []string, met bool) {
			t := targets.Target{Goal: label + ": " + goal, Measured: strings.Join(parts, "; "), Met: met}
			if missing || len(parts) == 0 {
				t.Missing = true
				if len(parts) == 0 {
					t.Measured = "not measured"
				}
			}
			ts = append(ts, t)
		}
		add("Parley ≥ 90 % of the ceiling's calls/s at every concurrency", thr, thrMet)
		add("Parley's p99 ≤ 1.2× the ceiling's at every concurrency", p99, p99Met)
		add("Parley ahead of go-sdk and mcp-go at every concurrency (calls/s)", ahead, aheadMet)
	}
	const mem = "≤ 16 KiB held per idle 2025-11-25 session (Parley, heap and stacks)"
	if id, ok := r.idle[sdkParley]; ok {
		ts = append(ts, targets.Target{Goal: mem, Measured: fmt.Sprintf("%.1f KiB", id.held()/1024), Met: id.held() <= 16*1024})
	} else if len(r.idle)+len(r.idleErr) > 0 {
		ts = append(ts, targets.Target{Goal: mem, Measured: "not measured", Missing: true})
	}
	return ts
}

// writeTargets writes the targets' table and reports whether all were met.
func (r *results) writeTargets(w io.Writer) bool {
	return targets.Write(w, "measured (connections: figure)", r.targets())
}

// pct is a ratio as a whole percentage.
func pct(x float64) string { return fmt.Sprintf("%.0f %%", 100*x) }

// ms is a latency in milliseconds, to the microsecond.
func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond)) }

// oneLine keeps a message on one table row.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "|", "/")
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// held is what an idle session holds: its heap and its goroutines' stacks.
func (id idle) held() float64 { return id.heapPer + id.stackPer }
