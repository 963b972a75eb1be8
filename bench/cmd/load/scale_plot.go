package main

import (
	"fmt"
	"image"
	"image/color"
	stddraw "image/draw"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// seriesStyle is each series' colour and dashes, the same in every image.
func seriesStyle(s string) (color.Color, []vg.Length) {
	switch s {
	case sdkParley:
		return color.RGBA{R: 0x1f, G: 0x5f, B: 0xbf, A: 0xff}, nil
	case seriesParleyRedis:
		return color.RGBA{R: 0x7b, G: 0x3f, B: 0xbf, A: 0xff}, nil
	case sdkGosdk:
		return color.RGBA{R: 0xe0, G: 0x7b, B: 0x10, A: 0xff}, nil
	case sdkMcpgo:
		return color.RGBA{R: 0x2c, G: 0x9c, B: 0x3c, A: 0xff}, nil
	}
	return color.RGBA{R: 0x70, G: 0x70, B: 0x70, A: 0xff}, []vg.Length{vg.Points(4), vg.Points(3)}
}

// drawFigures writes one PNG per figure whose curve was measured.
func drawFigures(cfg *scaleConfig, sh *sheet) error {
	if err := os.MkdirAll(cfg.figures, 0o755); err != nil {
		return err
	}
	for _, f := range figures {
		if !slices.Contains(cfg.curves, f.curve) {
			continue
		}
		var plots []*plot.Plot
		for _, p := range f.panels {
			if len(sh.xs(p.metric)) == 0 {
				continue
			}
			pl, err := panelPlot(f, p, sh)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", f.name, p.metric, err)
			}
			plots = append(plots, pl)
		}
		if len(plots) == 0 {
			continue
		}
		if err := writeGrid(filepath.Join(cfg.figures, f.name+".png"), f.title, plots); err != nil {
			return err
		}
	}
	return nil
}

// panelPlot is one panel: a line with points per series, medians, and
// the spread of the rounds as error bars when there are several.
func panelPlot(f figure, p panel, sh *sheet) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.title
	pl.Title.TextStyle.Font.Size = vg.Points(9)
	pl.X.Label.Text = f.x
	pl.Y.Label.Text = p.unit
	for _, a := range []*plot.Axis{&pl.X, &pl.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(8)
		a.Tick.Label.Font.Size = vg.Points(7)
	}
	if f.logX {
		pl.X.Scale = plot.LogScale{}
		pl.X.Tick.Marker = logTicks{}
	} else {
		pl.X.Tick.Marker = integerTicks{}
	}
	if p.logY && !allPositive(sh, p.metric) {
		p.logY = false // a zero (no allocation, say) has no place on a log axis; it must still be seen
	}
	if p.logY {
		pl.Y.Scale = plot.LogScale{}
		pl.Y.Tick.Marker = logTicks{}
	} else {
		pl.Y.Min = 0
		pl.Y.Tick.Marker = plainTicks{}
	}
	pl.Legend.Top = true
	pl.Legend.Left = true
	pl.Legend.TextStyle.Font.Size = vg.Points(7)
	pl.Legend.ThumbnailWidth = vg.Points(14)
	ymax, ymin := 0.0, math.Inf(1)
	xmin, xmax := math.Inf(1), 0.0
	for _, s := range sh.seriesOf(p.metric) {
		var pts plotter.XYs
		var errs plotter.YErrors
		for _, x := range sh.xs(p.metric) {
			st, ok := sh.get(p.metric, s, x)
			if !ok {
				continue
			}
			y := st.med / p.div
			if (f.logX && x <= 0) || (p.logY && y <= 0) {
				continue // nothing to draw on a log axis
			}
			pts = append(pts, plotter.XY{X: x, Y: y})
			ymax = max(ymax, st.hi/p.div)
			ymin = min(ymin, st.lo/p.div)
			xmin, xmax = min(xmin, x), max(xmax, x)
			errs = append(errs, struct{ Low, High float64 }{y - st.lo/p.div, st.hi/p.div - y})
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		c, dashes := seriesStyle(s)
		line.Color, line.Dashes, line.Width = c, dashes, vg.Points(1.2)
		points.Color, points.Radius = c, vg.Points(2)
		pl.Add(line, points)
		if len(pts) > 0 && !p.logY {
			eb, err := plotter.NewYErrorBars(struct {
				plotter.XYer
				plotter.YErrorer
			}{pts, errs})
			if err == nil {
				eb.Color = c
				pl.Add(eb)
			}
		}
		pl.Legend.Add(s, line, points)
	}
	if !p.logY && ymax > 0 {
		pl.Y.Max = ymax * 1.35 // room above the highest point for the legend
	}
	// A log axis over a single value would be widened by one unit each
	// way, to zero or below: widen it by a factor instead.
	if p.logY && ymin == ymax && ymax > 0 {
		pl.Y.Min, pl.Y.Max = ymin/2, ymax*2
	} else if p.logY && ymax > 0 {
		// Room above the highest point for the legend, a third of the
		// span again (at least a factor of two) on a log axis.
		pl.Y.Max = ymax * max(2, math.Pow(ymax/ymin, 1.0/3))
	}
	if f.logX && xmin == xmax && xmax > 0 {
		pl.X.Min, pl.X.Max = xmin/2, xmax*2
	}
	return pl, nil
}

// allPositive reports whether every median of metric is above zero.
func allPositive(sh *sheet, metric string) bool {
	for _, s := range sh.seriesOf(metric) {
		for _, x := range sh.xs(metric) {
			if st, ok := sh.get(metric, s, x); ok && st.med <= 0 {
				return false
			}
		}
	}
	return true
}

// chartPalette is black, white and the series' colours, each blended
// with white in steps.
func chartPalette() color.Palette {
	var p color.Palette
	bases := []color.Color{color.Black}
	for _, series := range []string{sdkParley, seriesParleyRedis, sdkGosdk, sdkMcpgo, seriesBare} {
		c, _ := seriesStyle(series)
		bases = append(bases, c)
	}
	for _, c := range bases {
		r, g, b, _ := c.RGBA()
		for k := 0; k < 16; k++ {
			mix := func(v uint32) uint8 { return uint8((v>>8)*uint32(16-k)/16 + 255*uint32(k)/16) }
			p = append(p, color.RGBA{R: mix(r), G: mix(g), B: mix(b), A: 0xff})
		}
	}
	return append(p, color.White)
}

// logTicks marks a log axis at each power of ten and, when the axis spans
// fewer than three decades (where powers of ten alone would leave two
// labels, or one), at 2× and 5× each power too; the other multiples get
// an unlabelled mark.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if min <= 0 || max <= min {
		return nil
	}
	dense := max/min < 1000
	var ts []plot.Tick
	for e := math.Floor(math.Log10(min)); math.Pow(10, e) <= max; e++ {
		for m := 1.0; m < 10; m++ {
			v := tidy(m * math.Pow(10, e))
			if v < min || v > max {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || (dense && (m == 2 || m == 5)) {
				t.Label = strconv.FormatFloat(v, 'f', -1, 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// plainTicks is gonum's default marking of a linear axis with its labels
// written without trailing zeros ("250", not "250.00").
type plainTicks struct{}

func (plainTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i, t := range ts {
		if t.Label != "" {
			ts[i].Label = strconv.FormatFloat(tidy(t.Value), 'f', -1, 64)
		}
	}
	return ts
}

// tidy rounds v to three significant digits, which takes away the binary
// noise of a product such as 3 × 0.1.
func tidy(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return r
}

// integerTicks marks the whole numbers of a short linear axis (GOMAXPROCS).
type integerTicks struct{}

func (integerTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for v := float64(int(min)); v <= max; v++ {
		if v >= min {
			ts = append(ts, plot.Tick{Value: v, Label: fmt.Sprintf("%.0f", v)})
		}
	}
	return ts
}

// writeGrid lays the panels out two to a row, under a title, and writes
// them as a PNG.
func writeGrid(path, title string, plots []*plot.Plot) error {
	const cols = 2
	rows := (len(plots) + cols - 1) / cols
	w := vg.Points(300) * cols
	h := vg.Points(210)*vg.Length(rows) + vg.Points(20)
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(96))
	dc := draw.New(img)
	// The title in the top 20 points, the panels below.
	head := plot.New()
	head.Title.Text = title
	head.Title.TextStyle.Font.Size = vg.Points(11)
	head.HideAxes()
	head.Draw(draw.Crop(dc, 0, 0, h-vg.Points(20), 0))
	top := draw.Crop(dc, 0, 0, 0, -vg.Points(20))
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
		for j := range cols {
			if k := i*cols + j; k < len(plots) {
				grid[i][j] = plots[k]
			}
		}
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(12), PadY: vg.Points(12), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	canvases := plot.Align(grid, tiles, top)
	for i := range grid {
		for j := range grid[i] {
			if grid[i][j] != nil {
				grid[i][j].Draw(canvases[i][j])
			}
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	// The images are committed: a palette of the few colours a chart has
	// (each series' colour and grey, each blended with the white ground,
	// for the anti-aliased edges) keeps them a third of their size.
	src := img.Image()
	pal := image.NewPaletted(src.Bounds(), chartPalette())
	stddraw.Draw(pal, pal.Rect, src, src.Bounds().Min, stddraw.Src)
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(f, pal); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
