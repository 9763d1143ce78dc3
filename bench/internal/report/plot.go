package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/knit-go/knit/bench/internal/harness"
)

// Plot draws a suite's medians in format ("svg" or "png"), or returns nil
// when no row has a figure. A suite with one table is a horizontal bar
// chart, one bar per row, whiskers from min to max. A suite with several
// tables draws one line per series over a log time axis (a sweep spans
// orders of magnitude): by default the tables are on x and the rows are
// the series; with PlotRowsOnX it is the other way round.
func Plot(s harness.SuiteResult, format string) ([]byte, error) {
	var ok []harness.RowResult
	for _, r := range s.Rows {
		if r.Error == "" && r.MedianNs > 0 && !math.IsInf(r.MedianNs, 0) {
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 {
		return nil, nil
	}
	c, err := draw.NewFormattedCanvas(11*vg.Inch, 6*vg.Inch, format)
	if err != nil {
		return nil, err
	}
	dc := draw.New(c)
	if len(s.Groups()) == 1 {
		p, err := barPlot(s, ok)
		if err != nil {
			return nil, err
		}
		p.Draw(dc)
	} else {
		p, legend, names, err := linePlot(s, ok)
		if err != nil {
			return nil, err
		}
		// The legend gets its own strip on the right: drawn over the plot
		// it would hide the points a sweep is read by.
		var lw vg.Length
		for _, n := range names {
			lw = max(lw, legend.TextStyle.Width(n))
		}
		lw += legend.ThumbnailWidth + 2*legend.Padding + vg.Points(24)
		p.Draw(draw.Crop(dc, 0, -lw, 0, 0))
		legend.Draw(draw.Crop(dc, dc.Max.X-dc.Min.X-lw, 0, 0, 0))
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func title(s harness.SuiteResult) string {
	return fmt.Sprintf("%s: median µs per op (op = %s)", s.Name, s.Unit)
}

func barPlot(s harness.SuiteResult, rows []harness.RowResult) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title(s)
	if g := rows[0].Group; g != "" {
		p.Title.Text += "\n" + g
	}
	p.X.Label.Text = "µs per op (median; whiskers: min–max)"
	vals := make(plotter.Values, len(rows))
	names := make([]string, len(rows))
	pts := make(plotter.XYs, len(rows))
	errs := make(plotter.XErrors, len(rows))
	// Bars go bottom-up; reverse so the table's first row is on top.
	for i, r := range rows {
		j := len(rows) - 1 - i
		vals[j] = r.MedianNs / 1e3
		names[j] = r.Name
		pts[j] = plotter.XY{X: r.MedianNs / 1e3, Y: float64(j)}
		errs[j].Low = (r.MedianNs - r.MinNs) / 1e3
		errs[j].High = (r.MaxNs - r.MedianNs) / 1e3
	}
	bars, err := plotter.NewBarChart(vals, vg.Points(14))
	if err != nil {
		return nil, err
	}
	bars.Horizontal = true
	bars.Color = plotutil.Color(0)
	bars.LineStyle.Width = 0
	p.Add(bars)
	eb, err := plotter.NewXErrorBars(struct {
		plotter.XYer
		plotter.XErrorer
	}{pts, errs})
	if err != nil {
		return nil, err
	}
	eb.Color = color.Black
	p.Add(eb)
	p.NominalY(names...)
	p.X.Min = 0
	return p, nil
}

func linePlot(s harness.SuiteResult, rows []harness.RowResult) (*plot.Plot, plot.Legend, []string, error) {
	groups := s.Groups()
	var names []string
	for _, r := range rows {
		if !slices.Contains(names, r.Name) {
			names = append(names, r.Name)
		}
	}
	xs, series := groups, names
	x := func(r harness.RowResult) int { return slices.Index(groups, r.Group) }
	key := func(r harness.RowResult) string { return r.Name }
	if s.PlotRowsOnX {
		xs, series = names, groups
		x = func(r harness.RowResult) int { return slices.Index(names, r.Name) }
		key = func(r harness.RowResult) string { return r.Group }
	}
	p := plot.New()
	p.Title.Text = title(s)
	p.Y.Label.Text = "µs per op (median, log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	legend := plot.NewLegend()
	legend.Top = true
	legend.Left = true
	for i, name := range series {
		var pts plotter.XYs
		for _, r := range rows {
			if key(r) == name {
				pts = append(pts, plotter.XY{X: float64(x(r)), Y: r.MedianNs / 1e3})
			}
		}
		slices.SortFunc(pts, func(a, b plotter.XY) int { return int(a.X - b.X) })
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, legend, nil, err
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i / 7)
		sc.Color = plotutil.Color(i)
		sc.Shape = plotutil.Shape(i)
		p.Add(l, sc)
		legend.Add(name, l, sc)
	}
	p.NominalX(xs...)
	if s.PlotRowsOnX {
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}
	return p, legend, series, nil
}

// logTicks marks 1..9 × 10^k and labels 1, 2 and 5 × 10^k; when the data
// span less than that shows, it labels every mark, and when no mark falls
// inside the range at all, the range's ends. gonum's LogTicks labels only
// powers of ten, which leaves a narrow sweep with no numbers at all.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	in := func(v float64) bool { return v >= lo*(1-1e-9) && v <= hi*(1+1e-9) }
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for m := 1; m <= 9; m++ {
			if v := float64(m) * math.Pow(10, e); in(v) {
				t := plot.Tick{Value: v}
				if m == 1 || m == 2 || m == 5 {
					t.Label = tickLabel(v)
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
			ticks[i].Label = tickLabel(ticks[i].Value)
		}
	}
	if len(ticks) < 2 {
		ticks = append(ticks, plot.Tick{Value: lo, Label: tickLabel(lo)}, plot.Tick{Value: hi, Label: tickLabel(hi)})
	}
	return ticks
}

// tickLabel prints v plainly ("0.5", "2000"), rounded to three
// significant digits so 3×0.1 does not print as 0.30000000000000004.
func tickLabel(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}
