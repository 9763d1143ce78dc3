package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/knit-go/knit/bench/harness"
	"github.com/knit-go/knit/bench/internal/stats"
)

// KindColor is each kind's colour, the same in every plot (Okabe and
// Ito's palette, which reads for the colour-blind): knit blue, Go's own
// green, peers orange, limits grey.
var KindColor = map[harness.Kind]color.RGBA{
	harness.KindKnit:  {0x00, 0x72, 0xB2, 0xff},
	harness.KindGo:    {0x00, 0x9E, 0x73, 0xff},
	harness.KindPeer:  {0xE6, 0x9F, 0x00, 0xff},
	harness.KindLimit: {0x99, 0x99, 0x99, 0xff},
}

var kindLegend = []struct {
	kind  harness.Kind
	label string
}{
	{harness.KindKnit, "knit"},
	{harness.KindGo, "Go: channels, sync, runtime, stdlib"},
	{harness.KindPeer, "peer library"},
	{harness.KindLimit, "limit (floor)"},
}

// Plot geometry. The width is 17 in, 1632 px at vgimg's 96 dpi; the
// height grows with the rows, so that no label is ever squeezed.
const (
	plotWidth  = 17 * vg.Inch
	plotMargin = 0.25 * vg.Inch
	rowHeight  = 0.27 * vg.Inch
	panelHead  = 0.42 * vg.Inch // the group's title
	panelAxis  = 0.5 * vg.Inch  // tick labels under each panel
	panelGap   = 0.2 * vg.Inch
	headHeight = 1.25 * vg.Inch // title, caption, legend
	labelPad   = 0.12 * vg.Inch
)

func sans(size vg.Length) draw.TextStyle {
	return draw.TextStyle{
		Color:   color.Black,
		Font:    font.From(font.Font{Typeface: "Liberation", Variant: "Sans"}, size),
		Handler: plot.DefaultTextHandler,
	}
}

// bar is one row of a panel: its value relative to the group's
// reference and the whisker around it.
type bar struct {
	name      string
	kind      harness.Kind
	v, lo, hi float64 // lo, hi: 0 for no whisker
	ref       bool
	label     string // the value column: "1.93× (1.85–2.10), 12.3 µs"
	err       bool
}

type panel struct {
	title string
	bars  []bar
}

// metric is what a suite's plot compares: time per op, or (for a suite
// whose rows sleep through a fixed tick, whose times are all the tick)
// CPU per op.
type metric struct {
	name string
	per  func(harness.Sample) float64
	med  func(harness.RowResult) float64
}

var timeMetric = metric{"time", harness.Sample.NsPerOp, func(r harness.RowResult) float64 { return r.MedianNs }}

var cpuMetric = metric{"CPU", harness.Sample.CPUNsPerOp, func(r harness.RowResult) float64 { return r.CPUNsPerOp }}

func suiteMetric(s harness.SuiteResult) metric {
	if strings.Contains(strings.ToLower(s.Unit), "idle") {
		return cpuMetric
	}
	return timeMetric
}

// panels builds one panel per group: each row's median ratio to the
// group's reference over the rounds, with its 95 % interval (the range
// of the per-round ratios when there are too few rounds for one). A
// group with no reference is read against its fastest row.
func panels(s harness.SuiteResult, m metric) []panel {
	var out []panel
	for _, g := range s.Groups() {
		var rows []harness.RowResult
		for _, r := range s.Rows {
			if r.Group == g {
				rows = append(rows, r)
			}
		}
		ok := func(r harness.RowResult) bool { return r.Error == "" && m.med(r) > 0 && len(r.Samples) > 0 }
		refName := s.RefOf(g)
		var ref *harness.RowResult
		for i := range rows {
			if rows[i].Name == refName && ok(rows[i]) {
				ref = &rows[i]
			}
		}
		title := g
		if title == "" {
			title = s.Name
		}
		if ref != nil {
			title += "  —  reference: " + ref.Name
			if c, replaced := s.Refs[g]; replaced && c.Name != s.Ref {
				title += " (in place of " + s.Ref + ")"
			}
		} else {
			// Read against the fastest row.
			for i := range rows {
				if ok(rows[i]) && (ref == nil || m.med(rows[i]) < m.med(*ref)) {
					ref = &rows[i]
				}
			}
			if ref == nil {
				continue
			}
			title += "  —  no reference: against the fastest row, " + ref.Name
		}
		p := panel{title: title}
		for _, r := range rows {
			b := bar{name: r.Name, kind: harness.KindOf(r.Kind, r.Name), ref: r.Name == ref.Name}
			if !ok(r) {
				b.err = true
				b.label = "error"
				if r.Error == "" {
					b.label = "no figure"
				}
				p.bars = append(p.bars, b)
				continue
			}
			per := pairedBy(r, *ref, m.per)
			if b.ref {
				b.v = 1
			} else if len(per) > 0 {
				b.v = stats.Median(per)
				if lo, hi, ok := stats.MedianCI(per, stats.Confidence); ok {
					b.lo, b.hi = lo, hi
				} else if len(per) > 1 {
					b.lo, b.hi = stats.MinMax(per)
				}
			} else {
				b.v = m.med(r) / m.med(*ref)
			}
			b.label = FormatRatio(b.v)
			if b.lo > 0 {
				b.label += " (" + ratioCI(b.lo, b.hi) + ")"
			}
			if m.name == "CPU" {
				b.label += ", " + FormatNs(r.CPUNsPerOp) + " CPU"
			} else {
				b.label += ", " + FormatNs(r.MedianNs)
			}
			if r.Noise != "" {
				b.label += ", noisy: " + r.Noise
			}
			p.bars = append(p.bars, b)
		}
		out = append(out, p)
	}
	return out
}

// pairedBy is a's figure over b's in each round both completed.
func pairedBy(a, b harness.RowResult, per func(harness.Sample) float64) []float64 {
	theirs := map[int]float64{}
	for _, smp := range b.Samples {
		if d := per(smp); d > 0 {
			theirs[smp.Round] = d
		}
	}
	var out []float64
	for _, smp := range a.Samples {
		if d, ok := theirs[smp.Round]; ok {
			if v := per(smp); v > 0 {
				out = append(out, v/d)
			}
		}
	}
	return out
}

// Plot draws a suite as small multiples, one panel per group (table),
// in format ("svg" or "png"), or returns nil when no row has a figure.
// Each panel is a horizontal bar per row, from 1 (the group's
// reference, a dashed line) to the row's median ratio to it over the
// rounds, with its 95 % interval as a whisker: a bar left of the line is
// faster than the reference, right of it slower. Bars are coloured by
// kind (KindColor), the same in every plot. The axis, shared by the
// panels, is logarithmic where the ratios span more than 8×. Row names
// sit in a column of their own left of the panels and the figures in one
// right of them, so no label overlaps a bar or another label.
func Plot(s harness.SuiteResult, format string) ([]byte, error) {
	return PlotSubject(s, format, "")
}

// PlotSubject is Plot with the legend's name for KindKnit rows: the
// implementation under test in a suite of one's own ("" is knit).
func PlotSubject(s harness.SuiteResult, format, subject string) ([]byte, error) {
	if subject == "" {
		subject = "knit"
	}
	m := suiteMetric(s)
	ps := panels(s, m)
	if len(ps) == 0 {
		return nil, nil
	}
	nameStyle, valStyle := sans(11), sans(10)
	var nameW, valW vg.Length
	lo, hi := 1.0, 1.0
	rows := 0
	for _, p := range ps {
		rows += len(p.bars)
		for _, b := range p.bars {
			nameW = max(nameW, nameStyle.Width(b.name+" (ref)"))
			valW = max(valW, valStyle.Width(b.label))
			for _, x := range []float64{b.v, b.lo, b.hi} {
				if x > 0 {
					lo, hi = min(lo, x), max(hi, x)
				}
			}
		}
	}
	nameW += 2 * labelPad
	valW += 2 * labelPad
	// A plot area under 6 in would crowd the ticks: give the name column
	// what is left, and wrap nothing (names are one line each).
	if avail := plotWidth - 2*plotMargin - nameW - valW; avail < 6*vg.Inch {
		nameW = max(plotWidth-2*plotMargin-valW-6*vg.Inch, 2*vg.Inch)
	}
	logScale := hi/lo > 8
	if logScale {
		lo, hi = lo/1.25, hi*1.25
	} else {
		pad := (hi - lo) * 0.08
		if pad == 0 {
			pad = 0.05
		}
		lo, hi = max(lo-pad, 0), hi+pad
	}
	height := 2*plotMargin + headHeight + vg.Length(rows)*rowHeight +
		vg.Length(len(ps))*(panelHead+panelAxis+panelGap)

	var cw vg.CanvasWriterTo
	switch format {
	case SVG:
		cw = vgsvg.New(plotWidth, height)
	case PNG:
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(plotWidth, height), vgimg.UseDPI(vgimg.DefaultDPI))}
	default:
		return nil, fmt.Errorf("plot format %q: want svg or png", format)
	}
	dc := draw.New(cw)
	fillRect(dc, dc.Rectangle, color.White)
	inner := draw.Crop(dc, plotMargin, -plotMargin, plotMargin, -plotMargin)

	// Head: title, caption, legend.
	y := inner.Max.Y
	title := sans(15)
	title.YAlign = draw.YTop
	inner.FillText(title, vg.Point{X: inner.Min.X, Y: y}, fmt.Sprintf("%s: %s per op relative to each table's reference (op = %s)", s.Name, m.name, s.Unit))
	y -= 0.36 * vg.Inch
	capt := sans(10)
	capt.YAlign = draw.YTop
	how := "bar: median over the rounds of the row's " + m.name + " / the reference's in the same round, from 1 (dashed line);" +
		" left of the line is " + map[string]string{"time": "faster", "CPU": "less CPU"}[m.name] + ". Whisker: its 95% interval (the range of the rounds when there are fewer than " +
		strconv.Itoa(stats.MinCISamples) + ")."
	if logScale {
		how += " Log axis."
	}
	inner.FillText(capt, vg.Point{X: inner.Min.X, Y: y}, how)
	y -= 0.38 * vg.Inch
	x := inner.Min.X
	leg := sans(11)
	leg.YAlign = draw.YCenter
	sw := 0.22 * vg.Inch
	for _, k := range kindLegend {
		label := k.label
		if k.kind == harness.KindKnit {
			label = subject
		}
		fillRect(inner, vg.Rectangle{Min: vg.Point{X: x, Y: y - sw/2}, Max: vg.Point{X: x + sw, Y: y + sw/2}}, KindColor[k.kind])
		x += sw + 0.08*vg.Inch
		inner.FillText(leg, vg.Point{X: x, Y: y}, label)
		x += leg.Width(label) + 0.35*vg.Inch
	}
	top := inner.Max.Y - headHeight

	for _, p := range ps {
		ph := panelHead + vg.Length(len(p.bars))*rowHeight + panelAxis
		area := draw.Canvas{Canvas: inner.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: inner.Min.X, Y: top - ph},
			Max: vg.Point{X: inner.Max.X, Y: top},
		}}
		if err := drawPanel(area, p, nameW, valW, lo, hi, logScale, nameStyle, valStyle); err != nil {
			return nil, err
		}
		top -= ph + panelGap
	}
	var buf bytes.Buffer
	if _, err := cw.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func fillRect(c draw.Canvas, r vg.Rectangle, clr color.Color) {
	c.FillPolygon(clr, []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}})
}

func drawPanel(area draw.Canvas, p panel, nameW, valW vg.Length, lo, hi float64, logScale bool, nameStyle, valStyle draw.TextStyle) error {
	head := sans(12)
	head.YAlign = draw.YTop
	area.FillText(head, vg.Point{X: area.Min.X, Y: area.Max.Y}, p.title)

	pl := plot.New()
	pl.HideY()
	pl.X.Min, pl.X.Max = lo, hi
	pl.Y.Min, pl.Y.Max = -0.6, float64(len(p.bars))-0.4
	pl.X.Tick.Label.Font = font.From(font.Font{Typeface: "Liberation", Variant: "Sans"}, 10)
	if logScale {
		pl.X.Scale = plot.LogScale{}
		pl.X.Tick.Marker = logTicks{}
	} else {
		pl.X.Tick.Marker = ratioTicks{}
	}
	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil
	grid.Vertical.Color = color.Gray{Y: 0xdd}
	pl.Add(grid, &barPlotter{bars: p.bars})

	c := draw.Crop(area, nameW, -valW, 0, -panelHead)
	pl.Draw(c)
	dc := pl.DataCanvas(c)
	_, trY := pl.Transforms(&dc)
	nameStyle.XAlign, nameStyle.YAlign = draw.XRight, draw.YCenter
	valStyle.XAlign, valStyle.YAlign = draw.XLeft, draw.YCenter
	for i, b := range p.bars {
		yy := trY(float64(len(p.bars) - 1 - i))
		name := b.name
		if b.ref {
			name += " (ref)"
		}
		area.FillText(nameStyle, vg.Point{X: dc.Min.X - labelPad, Y: yy}, name)
		area.FillText(valStyle, vg.Point{X: dc.Max.X + labelPad, Y: yy}, b.label)
	}
	return nil
}

// barPlotter draws a panel's bars, whiskers and reference line.
type barPlotter struct{ bars []bar }

func (bp *barPlotter) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	n := len(bp.bars)
	one := trX(1)
	c.StrokeLine2(draw.LineStyle{Color: color.Black, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}},
		one, c.Min.Y, one, c.Max.Y)
	half := (trY(1) - trY(0)) * 0.34
	whisk := draw.LineStyle{Color: color.Black, Width: vg.Points(1.2)}
	for i, b := range bp.bars {
		y := trY(float64(n - 1 - i))
		if b.err {
			continue
		}
		if b.ref {
			// The reference: a diamond on the line.
			d := half * 0.8
			c.FillPolygon(KindColor[b.kind], []vg.Point{{X: one - d, Y: y}, {X: one, Y: y + d}, {X: one + d, Y: y}, {X: one, Y: y - d}})
			c.StrokeLines(draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)},
				[]vg.Point{{X: one - d, Y: y}, {X: one, Y: y + d}, {X: one + d, Y: y}, {X: one, Y: y - d}, {X: one - d, Y: y}})
			continue
		}
		x := trX(b.v)
		x0, x1 := min(one, x), max(one, x)
		if x1-x0 < vg.Points(1.5) {
			x0, x1 = x-vg.Points(0.75), x+vg.Points(0.75)
		}
		fillRect(c, vg.Rectangle{Min: vg.Point{X: x0, Y: y - half}, Max: vg.Point{X: x1, Y: y + half}}, KindColor[b.kind])
		if b.lo > 0 && b.hi > 0 {
			l, h := trX(b.lo), trX(b.hi)
			c.StrokeLine2(whisk, l, y, h, y)
			cap := half * 0.6
			c.StrokeLine2(whisk, l, y-cap, l, y+cap)
			c.StrokeLine2(whisk, h, y-cap, h, y+cap)
		}
	}
}

// ratioTicks marks a linear ratio axis at a round step (0.05, 0.1, 0.2,
// 0.5, 1, 2, ...) chosen for about eight labels, always including 1.
type ratioTicks struct{}

func (ratioTicks) Ticks(lo, hi float64) []plot.Tick {
	span := hi - lo
	step := math.Pow(10, math.Floor(math.Log10(span/8)))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(step*m) <= 10 {
			step *= m
			break
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: tickLabel(v) + "×"})
	}
	if !slices.ContainsFunc(ticks, func(t plot.Tick) bool { return math.Abs(t.Value-1) < step*1e-6 }) && lo <= 1 && hi >= 1 {
		ticks = append(ticks, plot.Tick{Value: 1, Label: "1×"})
	}
	return ticks
}

// logTicks marks 1..9 × 10^k and labels 1, 2 and 5 × 10^k (only the
// powers of ten when the axis spans more than five decades, so labels
// never crowd); when the data span less than that shows, it labels every
// mark, and when no mark falls inside the range at all, the range's
// ends. gonum's LogTicks labels only powers of ten, which leaves a
// narrow sweep with no numbers at all.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	in := func(v float64) bool { return v >= lo*(1-1e-9) && v <= hi*(1+1e-9) }
	wide := math.Log10(hi/lo) > 5
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for m := 1; m <= 9; m++ {
			if v := float64(m) * math.Pow(10, e); in(v) {
				t := plot.Tick{Value: v}
				if m == 1 || (!wide && (m == 2 || m == 5)) {
					t.Label = tickLabel(v) + "×"
				}
				ticks = append(ticks, t)
			}
		}
	}
	labelled := 0
	for _, t := range ticks {
		if t.Label != "" {
			labelled++
		}
	}
	if labelled < 2 {
		for i := range ticks {
			ticks[i].Label = tickLabel(ticks[i].Value) + "×"
		}
	}
	if len(ticks) < 2 {
		ticks = append(ticks, plot.Tick{Value: lo, Label: tickLabel(lo) + "×"}, plot.Tick{Value: hi, Label: tickLabel(hi) + "×"})
	}
	return ticks
}

// tickLabel prints v plainly ("0.5", "2000"), rounded to three
// significant digits so 3×0.1 does not print as 0.30000000000000004.
func tickLabel(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}
