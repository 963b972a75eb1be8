package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

// TestSheetMedianAndSpread: a point's figure is the median of its rounds
// (the mean of the middle two for an even count), with their range.
func TestSheetMedianAndSpread(t *testing.T) {
	sh := newSheet()
	for _, v := range []float64{30, 10, 20} {
		sh.add("m", sdkParley, 100, v)
	}
	for _, v := range []float64{4, 1, 3, 2} {
		sh.add("m", sdkGosdk, 100, v)
	}
	if st, ok := sh.get("m", sdkParley, 100); !ok || st.med != 20 || st.lo != 10 || st.hi != 30 || st.n != 3 {
		t.Errorf("odd count: %+v %v, want median 20 of 10–30", st, ok)
	}
	if st, _ := sh.get("m", sdkGosdk, 100); st.med != 2.5 {
		t.Errorf("even count: median %v, want 2.5", st.med)
	}
	if _, ok := sh.get("m", sdkMcpgo, 100); ok {
		t.Error("a series never measured has a figure")
	}
	if got := sh.seriesOf("m"); len(got) != 2 || got[0] != sdkParley {
		t.Errorf("series %v, Parley first", got)
	}
	if got := cellText(stat{med: 20, lo: 10, hi: 30, n: 3}, 1); got != "20.0 (10.0–30.0)" {
		t.Errorf("a spread cell reads %q", got)
	}
	if got := cellText(stat{med: 1000, lo: 990, hi: 1010, n: 3}, 1); got != "1,000" {
		t.Errorf("a steady cell reads %q", got)
	}
}

// scaleSheet is a made-up run that meets every target; each case of
// TestScaleTargets breaks one.
func scaleSheet() *sheet {
	sh := newSheet()
	for _, x := range []float64{10, 10000} {
		for _, v := range []float64{20e3, 19e3, 40e3} { // a noisy round does not count
			sh.add("tools.call.ns", sdkParley, x, v)
			sh.add("tools.http.ns", sdkParley, x, v*5)
			sh.add("tools.call.cpu", sdkParley, x, 15e3)
			sh.add("tools.http.cpu", sdkParley, x, 60e3)
		}
		sh.add("tools.call.allocs", sdkParley, x, 31)
		sh.add("tools.http.allocs", sdkParley, x, 147)
		sh.add("tools.call.allocs", sdkGosdk, x, 252)
	}
	for _, x := range []float64{100, 10000} {
		sh.add("streams.publish.ns", sdkParley, x, 200)
		sh.add("streams.publish.allocs", sdkParley, x, 0)
		sh.add("streams.mem", sdkParley, x, 27<<10)
		sh.add("streams.mem", seriesBare, x, 25<<10)
		sh.add("sessions.mem", sdkParley, x, 3<<10)
		sh.add("tasks.mem.stored", sdkParley, x, 1<<10)
	}
	sh.add("payload.tool.http.x", sdkParley, 16<<20, 1.0)
	sh.add("payload.blob.http.x", sdkParley, 16<<20, 1.4)
	for range 3 {
		sh.add("cores.rate", sdkParley, 1, 1000)
		sh.add("cores.rate", sdkParley, 2, 1500)
		sh.add("cores.rate", seriesBare, 1, 2000)
		sh.add("cores.rate", seriesBare, 2, 3100)
	}
	return sh
}

// TestScaleTargets: each of issue 35's targets is read from the run, and
// turns to not met when its figure does.
func TestScaleTargets(t *testing.T) {
	cfg := &scaleConfig{curves: allCurves, sdks: []string{sdkParley, sdkGosdk, sdkMcpgo}}
	var b bytes.Buffer
	if !writeScaleReport(&b, cfg, scaleSheet()) {
		t.Fatalf("a run that meets every target did not:\n%s", b.String())
	}
	cases := map[string]func(sh *sheet){
		"tools/call at the most tools within 1.2× of the fewest (Parley in memory": func(sh *sheet) {
			sh.v[sampleKey{"tools.call.allocs", sdkParley, 10000}] = []float64{40}
		},
		"(Parley over HTTP": func(sh *sheet) {
			sh.v[sampleKey{"tools.http.cpu", sdkParley, 10000}] = []float64{90e3}
		},
		"a published change costs": func(sh *sheet) {
			sh.v[sampleKey{"streams.publish.ns", sdkParley, 10000}] = []float64{2000}
		},
		"an idle listen stream": func(sh *sheet) {
			sh.v[sampleKey{"streams.mem", sdkParley, 10000}] = []float64{30 << 10}
		},
		"idle 2025-11-25 session": func(sh *sheet) {
			sh.v[sampleKey{"sessions.mem", sdkParley, 10000}] = []float64{17 << 10}
		},
		"stored task": func(sh *sheet) {
			sh.v[sampleKey{"tasks.mem.stored", sdkParley, 10000}] = []float64{5 << 10}
		},
		"a resource blob over HTTP": func(sh *sheet) {
			sh.v[sampleKey{"payload.blob.http.x", sdkParley, 16 << 20}] = []float64{4.0}
		},
		"scaling from 1 to 2 cores": func(sh *sheet) {
			sh.v[sampleKey{"cores.rate", sdkParley, 2}] = []float64{1100, 1100, 1100}
		},
		"ahead of both other SDKs": func(sh *sheet) {
			sh.add("tools.call.allocs", sdkMcpgo, 10000, 20)
		},
	}
	for goal, breakIt := range cases {
		sh := scaleSheet()
		breakIt(sh)
		found := false
		for _, tg := range scaleTargets(cfg, sh) {
			if !strings.Contains(tg.Goal, goal) {
				if !tg.Met && !strings.Contains(tg.Goal, "ahead of both") {
					t.Errorf("breaking %q also broke %q (%s)", goal, tg.Goal, tg.Measured)
				}
				continue
			}
			found = true
			if tg.Met || tg.Missing {
				t.Errorf("%s: met %v, missing %v after breaking it (%s)", tg.Goal, tg.Met, tg.Missing, tg.Measured)
			}
		}
		if !found {
			t.Errorf("no target %q", goal)
		}
	}
}

// TestScalingPerRound: the scaling from 1 to 2 cores is the median of each
// round's ratio, so that a round in which the machine got busier does not
// mix with another's.
func TestScalingPerRound(t *testing.T) {
	sh := newSheet()
	for _, p := range [][2]float64{{1000, 1500}, {500, 800}, {1000, 1200}} { // 1.5, 1.6, 1.2
		sh.add("cores.rate", sdkParley, 1, p[0])
		sh.add("cores.rate", sdkParley, 2, p[1])
	}
	if r, ok := scaling(sh, sdkParley); !ok || r < 1.4999 || r > 1.5001 {
		t.Errorf("scaling %v (%v), want 1.5, the median of 1.5, 1.6 and 1.2", r, ok)
	}
	if _, ok := scaling(sh, seriesBare); ok {
		t.Error("a scaling for a server never measured")
	}
}

// TestDrawFigures: every curve of a run is drawn as a PNG.
func TestDrawFigures(t *testing.T) {
	dir := t.TempDir()
	cfg := &scaleConfig{curves: allCurves, figures: dir}
	sh := scaleSheet()
	sh.add("tasks.get.ns", sdkParley, 100, 50e3)
	if err := drawFigures(cfg, sh); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tools", "streams", "sessions", "tasks", "payload-memory", "cores"} {
		b, err := os.ReadFile(filepath.Join(dir, name+".png"))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Errorf("%s.png is not a PNG", name)
		}
	}
}

// TestTickLabels: an axis spanning less than three decades is labelled at
// 1, 2 and 5 times each power of ten, a wider one at the powers only;
// linear labels carry no trailing zeros.
func TestTickLabels(t *testing.T) {
	labels := func(ts []plot.Tick) []string {
		var out []string
		for _, t := range ts {
			if t.Label != "" {
				out = append(out, t.Label)
			}
		}
		return out
	}
	if got, want := labels(logTicks{}.Ticks(13, 300)), []string{"20", "50", "100", "200"}; !slices.Equal(got, want) {
		t.Errorf("13..300: %q, want %q", got, want)
	}
	if got, want := labels(logTicks{}.Ticks(0.09, 500)), []string{"0.1", "1", "10", "100"}; !slices.Equal(got, want) {
		t.Errorf("0.09..500: %q, want %q", got, want)
	}
	if got := labels(logTicks{}.Ticks(0, 10)); got != nil {
		t.Errorf("0..10 on a log axis: %q, want nothing", got)
	}
	for _, l := range labels(plainTicks{}.Ticks(0, 500)) {
		if strings.Contains(l, ".") {
			t.Errorf("linear label %q has a fraction", l)
		}
	}
}

// TestRawRoundTrip: a run's samples written with -raw read back with
// -from as they were.
func TestRawRoundTrip(t *testing.T) {
	sh := scaleSheet()
	sh.note("gosdk could not")
	sh.loads = []string{"1.0", "2.0"}
	path := filepath.Join(t.TempDir(), "raw.json")
	if err := sh.save(path); err != nil {
		t.Fatal(err)
	}
	back := newSheet()
	if err := back.load(path); err != nil {
		t.Fatal(err)
	}
	if len(back.v) != len(sh.v) || back.loadRange() != "1.0 and 2.0" || len(back.notes) != 1 {
		t.Fatalf("read back %d points, loads %q, notes %v; wrote %d", len(back.v), back.loadRange(), back.notes, len(sh.v))
	}
	for k, v := range sh.v {
		if got := back.v[k]; len(got) != len(v) || got[0] != v[0] {
			t.Errorf("%v: read %v, wrote %v", k, got, v)
		}
	}
}
