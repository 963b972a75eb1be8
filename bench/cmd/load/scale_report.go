package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/parley-mcp/parley/bench/internal/targets"
)

// panel is one figure of a curve: one metric, one line per series.
type panel struct {
	metric string
	title  string  // the panel's title and the table's column
	div    float64 // the metric is divided by div for display (ns → µs: 1000)
	unit   string  // of the displayed figure
	logY   bool
	lower  bool // lower is better: the comparisons between SDKs read it
}

// figure is one image: a curve's panels over a common x axis.
type figure struct {
	name   string // file name, without extension
	curve  string
	title  string
	x      string // the x axis
	logX   bool
	xUnit  func(float64) string
	panels []panel
}

func count(x float64) string { return targets.Thousands(x) }

func bytesUnit(x float64) string {
	switch {
	case x >= 1<<20:
		return strconv.FormatFloat(x/(1<<20), 'f', -1, 64) + " MiB"
	case x >= 1<<10:
		return strconv.FormatFloat(x/(1<<10), 'f', -1, 64) + " KiB"
	}
	return strconv.FormatFloat(x, 'f', -1, 64) + " B"
}

var figures = []figure{
	{name: "tools", curve: curveTools, title: "Registered tools", x: "registered tools", logX: true, xUnit: count, panels: []panel{
		{metric: "tools.call.ns", title: "tools/call in memory", div: 1e3, unit: "µs", logY: true, lower: true},
		{metric: "tools.call.cpu", title: "CPU per call in memory", div: 1e3, unit: "µs", logY: true, lower: true},
		{metric: "tools.call.allocs", title: "allocations per call in memory", div: 1, unit: "allocs", lower: true},
		{metric: "tools.http.ns", title: "tools/call over HTTP", div: 1e3, unit: "µs", logY: true, lower: true},
		{metric: "tools.http.cpu", title: "CPU per call over HTTP", div: 1e3, unit: "µs", logY: true, lower: true},
		{metric: "tools.http.allocs", title: "allocations per call over HTTP", div: 1, unit: "allocs", lower: true},
		{metric: "tools.list.ns", title: "full tools/list in memory", div: 1e6, unit: "ms", logY: true, lower: true},
		{metric: "tools.list.bytes", title: "allocated per full tools/list", div: 1 << 10, unit: "KiB", logY: true, lower: true},
	}},
	{name: "sessions", curve: curveSessions, title: "Idle 2025-11-25 sessions on one HTTP server", x: "idle sessions", logX: true, xUnit: count, panels: []panel{
		{metric: "sessions.mem", title: "held per idle session", div: 1 << 10, unit: "KiB", lower: true},
		{metric: "sessions.goroutines", title: "goroutines per idle session", div: 1, unit: "goroutines", lower: true},
		{metric: "sessions.call.ns", title: "tools/call among them (median)", div: 1e3, unit: "µs", lower: true},
		{metric: "sessions.call.allocs", title: "server allocations per call", div: 1, unit: "allocs", lower: true},
	}},
	{name: "streams", curve: curveStreams, title: "Idle listen streams on one HTTP server", x: "idle listen streams", logX: true, xUnit: count, panels: []panel{
		{metric: "streams.mem", title: "held per idle stream", div: 1 << 10, unit: "KiB", lower: true},
		{metric: "streams.goroutines", title: "goroutines per idle stream", div: 1, unit: "goroutines", lower: true},
		{metric: "streams.publish.ns", title: "one publish matching one stream", div: 1e3, unit: "µs", logY: true, lower: true},
		{metric: "streams.publish.allocs", title: "allocations per publish", div: 1, unit: "allocs", lower: true},
	}},
	{name: "tasks", curve: curveTasks, title: "Tasks (Parley: neither other SDK serves the tasks extension)", x: "tasks", logX: true, xUnit: count, panels: []panel{
		{metric: "tasks.mem.flight", title: "held per task in flight (Go process)", div: 1 << 10, unit: "KiB", lower: true},
		{metric: "tasks.mem.stored", title: "held per finished, stored task (Go process)", div: 1 << 10, unit: "KiB", lower: true},
		{metric: "tasks.mem.redis", title: "redis-server memory per task", div: 1 << 10, unit: "KiB", lower: true},
		{metric: "tasks.get.ns", title: "tasks/get among them", div: 1e3, unit: "µs", lower: true},
		{metric: "tasks.cancel.ns", title: "tasks/cancel among them (median)", div: 1e3, unit: "µs", lower: true},
		{metric: "tasks.get.allocs", title: "allocations per tasks/get", div: 1, unit: "allocs", lower: true},
	}},
	{name: "payload-memory", curve: curvePayload, title: "Payload: bytes allocated per call ÷ payload", x: "payload", logX: true, xUnit: bytesUnit, panels: []panel{
		{metric: "payload.tool.mem.x", title: "tool text, in memory (both ends)", div: 1, unit: "× payload", logY: true, lower: true},
		{metric: "payload.tool.http.x", title: "tool text, over HTTP (server)", div: 1, unit: "× payload", logY: true, lower: true},
		{metric: "payload.blob.mem.x", title: "resource blob, in memory (both ends)", div: 1, unit: "× payload", logY: true, lower: true},
		{metric: "payload.blob.http.x", title: "resource blob, over HTTP (server)", div: 1, unit: "× payload", logY: true, lower: true},
	}},
	{name: "payload-throughput", curve: curvePayload, title: "Payload: throughput", x: "payload", logX: true, xUnit: bytesUnit, panels: []panel{
		{metric: "payload.tool.mem.mbps", title: "tool text, in memory", div: 1, unit: "MiB/s", logY: true},
		{metric: "payload.tool.http.mbps", title: "tool text, over HTTP", div: 1, unit: "MiB/s", logY: true},
		{metric: "payload.blob.mem.mbps", title: "resource blob, in memory", div: 1, unit: "MiB/s", logY: true},
		{metric: "payload.blob.http.mbps", title: "resource blob, over HTTP", div: 1, unit: "MiB/s", logY: true},
	}},
	{name: "cores", curve: curveCores, title: "Stateless HTTP server under a fixed load (16 connections)", x: "GOMAXPROCS of the server", xUnit: count, panels: []panel{
		{metric: "cores.rate", title: "calls per second", div: 1, unit: "calls/s"},
		{metric: "cores.cpu", title: "server CPU per call", div: 1, unit: "µs", lower: true},
	}},
}

// format writes a figure for a table: three significant digits at most,
// thousands separated.
func format(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 100:
		return targets.Thousands(v)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a == 0:
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

// cell is a table cell: the median and, when the rounds spread by more
// than 5 % of it, their range.
func cellText(st stat, div float64) string {
	m := st.med / div
	s := format(m)
	if st.n > 1 && st.med != 0 && (st.hi-st.lo)/math.Abs(st.med) > 0.05 {
		s += " (" + format(st.lo/div) + "–" + format(st.hi/div) + ")"
	}
	return s
}

// writeScaleReport writes one table per figure measured (rows: x and
// series; columns: the panels), then the targets; it reports whether every
// target was met.
func writeScaleReport(w io.Writer, cfg *scaleConfig, sh *sheet) bool {
	rounds := "median of " + strconv.Itoa(cfg.rounds) + " rounds"
	if cfg.rounds == 1 {
		rounds = "one round"
	}
	fmt.Fprintf(w, "Each figure is the %s (the SDKs measured one after the other at each point of each round); a range in parentheses is the spread of the rounds where it exceeds 5 %%.\n\n", rounds)
	for _, f := range figures {
		if !slices.Contains(cfg.curves, f.curve) {
			continue
		}
		var ps []panel
		for _, p := range f.panels {
			if len(sh.xs(p.metric)) > 0 {
				ps = append(ps, p)
			}
		}
		if len(ps) == 0 {
			continue
		}
		fmt.Fprintf(w, "**%s** (`figures/%s.png`)\n\n", f.title, f.name)
		fmt.Fprintf(w, "| %s | server |", f.x)
		for _, p := range ps {
			fmt.Fprintf(w, " %s (%s) |", p.title, p.unit)
		}
		fmt.Fprintf(w, "\n|---|---|%s\n", strings.Repeat("---|", len(ps)))
		var xs []float64
		var series []string
		for _, p := range ps {
			for _, x := range sh.xs(p.metric) {
				if !slices.Contains(xs, x) {
					xs = append(xs, x)
				}
			}
			for _, s := range sh.seriesOf(p.metric) {
				if !slices.Contains(series, s) {
					series = append(series, s)
				}
			}
		}
		slices.Sort(xs)
		slices.SortStableFunc(series, func(a, b string) int { return seriesRank(a) - seriesRank(b) })
		for _, x := range xs {
			for _, s := range series {
				var cells []string
				any := false
				for _, p := range ps {
					st, ok := sh.get(p.metric, s, x)
					if !ok {
						cells = append(cells, "—")
						continue
					}
					any = true
					cells = append(cells, cellText(st, p.div))
				}
				if any {
					fmt.Fprintf(w, "| %s | %s | %s |\n", f.xUnit(x), s, strings.Join(cells, " | "))
				}
			}
		}
		fmt.Fprintln(w)
	}
	if len(sh.notes) > 0 {
		fmt.Fprintln(w, "What an SDK could not do in this run:")
		fmt.Fprintln(w)
		for _, n := range sh.notes {
			fmt.Fprintf(w, "- %s\n", n)
		}
		fmt.Fprintln(w)
	}
	ts := scaleTargets(cfg, sh)
	fmt.Fprintln(w, "Targets (issue 35):")
	fmt.Fprintln(w)
	ok := targets.Write(w, "measured", ts)
	if behind := behindSDKs(cfg, sh); len(behind) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Where another SDK is ahead of Parley (at the largest point measured):")
		fmt.Fprintln(w)
		for _, b := range behind {
			fmt.Fprintf(w, "- %s\n", b)
		}
	}
	return ok
}

// ends are the first and last x of metric for series, with their stats.
func ends(sh *sheet, metric, series string) (x0, x1 float64, a, b stat, ok bool) {
	var xs []float64
	for _, x := range sh.xs(metric) {
		if _, ok := sh.get(metric, series, x); ok {
			xs = append(xs, x)
		}
	}
	if len(xs) < 2 {
		return 0, 0, stat{}, stat{}, false
	}
	x0, x1 = xs[0], xs[len(xs)-1]
	a, _ = sh.get(metric, series, x0)
	b, _ = sh.get(metric, series, x1)
	return x0, x1, a, b, true
}

// last is metric's figure for series at the largest x measured.
func last(sh *sheet, metric, series string) (float64, stat, bool) {
	xs := sh.xs(metric)
	for i := len(xs) - 1; i >= 0; i-- {
		if st, ok := sh.get(metric, series, xs[i]); ok {
			return xs[i], st, true
		}
	}
	return 0, stat{}, false
}

// scaleTargets are issue 35's targets, read from the run.
func scaleTargets(cfg *scaleConfig, sh *sheet) []targets.Target {
	var ts []targets.Target
	has := func(c string) bool { return slices.Contains(cfg.curves, c) }
	if has(curveTools) {
		for _, k := range []struct{ prefix, where string }{{"tools.call", "in memory"}, {"tools.http", "over HTTP"}} {
			t := targets.Target{Goal: "tools/call at the most tools within 1.2× of the fewest (Parley " + k.where + ": allocations and CPU time per call; wall time for information)"}
			x0, x1, a, b, ok := ends(sh, k.prefix+".allocs", sdkParley)
			_, _, ac, bc, okc := ends(sh, k.prefix+".cpu", sdkParley)
			_, _, an, bn, okn := ends(sh, k.prefix+".ns", sdkParley)
			if ok && okc && okn {
				ra, rc := b.med/a.med, bc.med/ac.med
				t.Measured = fmt.Sprintf("%s → %s tools: allocations %s → %s (%.2f×), CPU %s → %s µs (%.2f×); wall, fastest round, %s → %s µs (%.2f×)", count(x0), count(x1), format(a.med), format(b.med), ra, format(ac.med/1e3), format(bc.med/1e3), rc, format(an.lo/1e3), format(bn.lo/1e3), bn.lo/an.lo)
				t.Met = ra <= 1.2 && rc <= 1.2
			} else {
				t.Missing = true
			}
			ts = append(ts, t)
		}
	}
	if has(curveStreams) {
		t := targets.Target{Goal: "a published change costs what its matches cost, not all streams (Parley: one match among the fewest and the most streams; allocations equal, the fastest round's time within 2×)"}
		x0, x1, a, b, ok := ends(sh, "streams.publish.allocs", sdkParley)
		_, _, an, bn, okn := ends(sh, "streams.publish.ns", sdkParley)
		if ok && okn {
			t.Measured = fmt.Sprintf("%s → %s streams: %s → %s allocations, fastest round %s → %s µs", count(x0), count(x1), format(a.med), format(b.med), format(an.lo/1e3), format(bn.lo/1e3))
			t.Met = b.med <= a.med+0.5 && bn.lo <= 2*an.lo
		} else {
			t.Missing = true
		}
		ts = append(ts, t)
		t = targets.Target{Goal: "an idle listen stream at most 4 KiB more than a bare net/http streaming response (same run)"}
		x, p, ok1 := last(sh, "streams.mem", sdkParley)
		_, bare, ok2 := last(sh, "streams.mem", seriesBare)
		if ok1 && ok2 {
			d := (p.med - bare.med) / 1024
			t.Measured = fmt.Sprintf("at %s streams: Parley %s KiB, bare %s KiB (+%s KiB)", count(x), format(p.med/1024), format(bare.med/1024), format(d))
			t.Met = d <= 4
		} else {
			t.Missing = true
		}
		ts = append(ts, t)
	}
	if has(curveSessions) {
		t := targets.Target{Goal: "≤ 16 KiB held per idle 2025-11-25 session (Parley)"}
		if x, st, ok := last(sh, "sessions.mem", sdkParley); ok {
			t.Measured = fmt.Sprintf("%s KiB at %s sessions", format(st.med/1024), count(x))
			t.Met = st.med <= 16*1024
		} else {
			t.Missing = true
		}
		ts = append(ts, t)
	}
	if has(curveTasks) {
		t := targets.Target{Goal: "≤ 4 KiB per stored task in memory (Parley, memory store)"}
		if x, st, ok := last(sh, "tasks.mem.stored", sdkParley); ok {
			t.Measured = fmt.Sprintf("%s KiB at %s tasks", format(st.med/1024), count(x))
			t.Met = st.med <= 4*1024
		} else {
			t.Missing = true
		}
		ts = append(ts, t)
	}
	if has(curvePayload) {
		for _, k := range []struct{ metric, what string }{
			{"payload.tool.http.x", "a tool's text result over HTTP"},
			{"payload.blob.http.x", "a resource blob over HTTP"},
		} {
			t := targets.Target{Goal: "peak memory ≤ 3× the payload for the largest result: " + k.what + " (Parley's server, bytes allocated per call)"}
			if x, st, ok := last(sh, k.metric, sdkParley); ok {
				t.Measured = fmt.Sprintf("%.2f× at %s", st.med, bytesUnit(x))
				t.Met = st.med <= 3
			} else {
				t.Missing = true
			}
			ts = append(ts, t)
		}
	}
	if has(curveCores) {
		t := targets.Target{Goal: "scaling from 1 to 2 cores within 10 % of the bare handler's (stateless HTTP, calls/s; medians of each round's ratios)"}
		rp, okp := scaling(sh, sdkParley)
		rb, okb := scaling(sh, seriesBare)
		if okp && okb {
			t.Measured = fmt.Sprintf("Parley %.2f×, bare %.2f× (Parley's is %.0f %% of the bare handler's)", rp, rb, 100*rp/rb)
			t.Met = rp >= 0.9*rb
		} else {
			t.Missing = true
		}
		ts = append(ts, t)
	}
	if len(cfg.sdks) > 1 {
		behind := behindSDKs(cfg, sh)
		t := targets.Target{Goal: "ahead of both other SDKs on every curve they share (at the largest point)"}
		if len(behind) == 0 {
			t.Measured = "ahead on every panel measured"
			t.Met = true
		} else {
			t.Measured = fmt.Sprintf("behind on %d panels (listed below)", len(behind))
		}
		ts = append(ts, t)
	}
	return ts
}

// scaling is the median over the rounds of a server's calls/s at
// GOMAXPROCS 2 over its calls/s at 1, the two measured seconds apart.
func scaling(sh *sheet, series string) (float64, bool) {
	one, two := sh.samples("cores.rate", series, 1), sh.samples("cores.rate", series, 2)
	var rs []float64
	for i := range min(len(one), len(two)) {
		if one[i] > 0 {
			rs = append(rs, two[i]/one[i])
		}
	}
	if len(rs) == 0 {
		return 0, false
	}
	slices.Sort(rs)
	if len(rs)%2 == 0 {
		return (rs[len(rs)/2-1] + rs[len(rs)/2]) / 2, true
	}
	return rs[len(rs)/2], true
}

// behindSDKs lists the panels where another SDK's figure at the largest
// point is better than Parley's.
func behindSDKs(cfg *scaleConfig, sh *sheet) []string {
	var out []string
	for _, f := range figures {
		if !slices.Contains(cfg.curves, f.curve) {
			continue
		}
		for _, p := range f.panels {
			x, mine, ok := last(sh, p.metric, sdkParley)
			if !ok {
				continue
			}
			for _, other := range []string{sdkGosdk, sdkMcpgo} {
				st, ok := sh.get(p.metric, other, x)
				if !ok {
					continue
				}
				worse := mine.med > st.med
				if !p.lower {
					worse = mine.med < st.med
				}
				if worse {
					out = append(out, fmt.Sprintf("%s, %s at %s: Parley %s %s, %s %s %s", f.title, p.title, f.xUnit(x), format(mine.med/p.div), p.unit, other, format(st.med/p.div), p.unit))
				}
			}
		}
	}
	return out
}
