package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/knit-go/knit/bench/harness"
	"github.com/knit-go/knit/bench/internal/stats"
)

// Change is one row's comparison between two runs.
type Change struct {
	Suite, Group, Name string
	Old, New           harness.RowResult
	// Delta is new median / old median - 1; P the two-sided p-value of
	// the Mann-Whitney U test on the two runs' ns/op samples.
	Delta float64
	P     float64
	// Significant is P < stats.Alpha.
	Significant bool
	// Ref is the reference both runs read this row against in its table
	// ("" when they differ, or for the reference itself). RatioDelta is
	// the change of the row's median per-round ratio to it, RatioP the
	// Mann-Whitney p-value on the two runs' per-round ratios: a change
	// of the row's own, with whatever moved the whole machine between
	// the runs (a neighbour's load, a frequency) divided out, as far as
	// it moved the reference too.
	Ref              string
	RatioDelta       float64
	RatioP           float64
	RatioSignificant bool
}

// Comparison is two runs side by side: the rows both have, and what
// only one has.
type Comparison struct {
	Old, New         Report
	Changes          []Change
	OnlyOld, OnlyNew []string // "suite / group / row"
	// MachineDiffs says how the two machines or runs differ ("CPU: a vs
	// b"); a ratio across different machines means little.
	MachineDiffs []string
	// GeomeanOld, GeomeanNew are the geometric means of the medians of
	// the rows compared; GeomeanDelta is their ratio - 1.
	GeomeanOld, GeomeanNew, GeomeanDelta float64
}

// Compare matches the rows of two runs by suite, group and name.
func Compare(old, new Report) Comparison {
	c := Comparison{Old: old, New: new, MachineDiffs: machineDiffs(old, new)}
	key := func(s, g, n string) string {
		if g == "" {
			return s + " / " + n
		}
		return s + " / " + g + " / " + n
	}
	newRows := map[string]harness.RowResult{}
	newRefs := map[string]harness.RowResult{} // by the row's key: its table's reference
	var newOrder []string
	for _, s := range new.Suites {
		for _, r := range s.Rows {
			k := key(s.Name, r.Group, r.Name)
			newRows[k] = r
			newOrder = append(newOrder, k)
		}
		for _, r := range s.Rows {
			if ref := findRow(s, r.Group, s.RefOf(r.Group)); ref != nil {
				newRefs[key(s.Name, r.Group, r.Name)] = *ref
			}
		}
	}
	seen := map[string]bool{}
	var logOld, logNew []float64
	for _, s := range old.Suites {
		for _, o := range s.Rows {
			k := key(s.Name, o.Group, o.Name)
			n, ok := newRows[k]
			if !ok {
				c.OnlyOld = append(c.OnlyOld, k)
				continue
			}
			seen[k] = true
			ch := Change{Suite: s.Name, Group: o.Group, Name: o.Name, Old: o, New: n, P: 1}
			if o.Error == "" && n.Error == "" && o.MedianNs > 0 && n.MedianNs > 0 {
				ch.Delta = n.MedianNs/o.MedianNs - 1
				ch.P = stats.MannWhitneyU(o.NsPerOp(), n.NsPerOp())
				ch.Significant = ch.P < stats.Alpha
				logOld = append(logOld, o.MedianNs)
				logNew = append(logNew, n.MedianNs)
				oref := findRow(s, o.Group, s.RefOf(o.Group))
				nref, ok := newRefs[k]
				if oref != nil && ok && oref.Name == nref.Name && oref.Name != o.Name {
					a, b := harness.PairedRatios(o, *oref), harness.PairedRatios(n, nref)
					if len(a) > 0 && len(b) > 0 {
						ch.Ref = oref.Name
						ch.RatioDelta = stats.Median(b)/stats.Median(a) - 1
						ch.RatioP = stats.MannWhitneyU(a, b)
						ch.RatioSignificant = ch.RatioP < stats.Alpha
					}
				}
			}
			c.Changes = append(c.Changes, ch)
		}
	}
	for _, k := range newOrder {
		if !seen[k] {
			c.OnlyNew = append(c.OnlyNew, k)
		}
	}
	c.GeomeanOld, c.GeomeanNew = stats.Geomean(logOld), stats.Geomean(logNew)
	c.GeomeanDelta = c.GeomeanNew/c.GeomeanOld - 1
	return c
}

func findRow(s harness.SuiteResult, group, name string) *harness.RowResult {
	for i := range s.Rows {
		if s.Rows[i].Group == group && s.Rows[i].Name == name && s.Rows[i].Error == "" {
			return &s.Rows[i]
		}
	}
	return nil
}

// machineDiffs lists what differs between the runs' machines and
// settings.
func machineDiffs(a, b Report) []string {
	var d []string
	diff := func(what string, x, y any) {
		if fmt.Sprint(x) != fmt.Sprint(y) {
			d = append(d, fmt.Sprintf("%s: %v vs %v", what, x, y))
		}
	}
	ma, mb := a.Machine, b.Machine
	diff("CPU", ma.CPU, mb.CPU)
	diff("logical cores", ma.LogicalCores, mb.LogicalCores)
	diff("GOMAXPROCS", ma.GOMAXPROCS, mb.GOMAXPROCS)
	diff("OS/arch", ma.GOOS+"/"+ma.GOARCH, mb.GOOS+"/"+mb.GOARCH)
	diff("hypervisor", ma.Hypervisor, mb.Hypervisor)
	diff("kernel", ma.Kernel, mb.Kernel)
	diff("CPU governor", ma.Governor, mb.Governor)
	diff("Go", ma.GoVersion, mb.GoVersion)
	diff("knit hint", ma.Knit.Hint, mb.Knit.Hint)
	diff("scale", a.Run.Scale, b.Run.Scale)
	diff("window per row", a.Run.Duration, b.Run.Duration)
	diff("pin", a.Run.Pin, b.Run.Pin)
	return d
}

// Counts counts the significant improvements, the significant
// regressions and the rest, of the times (ratio false) or of the ratios
// to each table's reference (ratio true, rows that have one).
func (c Comparison) Counts(ratio bool) (faster, slower, same int) {
	for _, ch := range c.Changes {
		sig, d := ch.Significant, ch.Delta
		if ratio {
			if ch.Ref == "" {
				continue
			}
			sig, d = ch.RatioSignificant, ch.RatioDelta
		}
		switch {
		case !sig:
			same++
		case d < 0:
			faster++
		default:
			slower++
		}
	}
	return
}

// WriteText prints the comparison as benchstat does: per table, each
// row's old and new median ± the half-width of its 95 % interval, the
// change, and "~" where the Mann-Whitney U test finds none at p < 0.05;
// then the same test on the row's per-round ratio to its table's
// reference ("vs ref"), which a drift of the whole machine between the
// runs does not move; then the geomean and the counts. oldName and
// newName label the runs.
func (c Comparison) WriteText(w io.Writer, oldName, newName string) {
	describe := func(r Report) string {
		return fmt.Sprintf("%s, knit %s, %d rounds × %v", r.Run.Started.Format("2006-01-02 15:04"), r.Run.Code.Short(), r.Run.Rounds, r.Run.Duration)
	}
	fmt.Fprintf(w, "old: %s (%s)\nnew: %s (%s)\n", oldName, describe(c.Old), newName, describe(c.New))
	fmt.Fprintf(w, "machine: %s, %d logical cores, GOMAXPROCS %d, %s/%s\n",
		orNone(c.New.Machine.CPU), c.New.Machine.LogicalCores, c.New.Machine.GOMAXPROCS, c.New.Machine.GOOS, c.New.Machine.GOARCH)
	if len(c.MachineDiffs) > 0 {
		fmt.Fprintf(w, "warning: the runs differ in %s: a change below may be the machine's, not the code's\n",
			strings.Join(c.MachineDiffs, "; "))
	}
	fmt.Fprintln(w)
	var t *table
	flush := func() {
		if t != nil {
			io.WriteString(w, t.plain())
			fmt.Fprintln(w)
		}
	}
	cur := ""
	for _, ch := range c.Changes {
		if k := ch.Suite + "\x00" + ch.Group; k != cur {
			flush()
			cur = k
			title := ch.Suite
			if ch.Group != "" {
				title += " — " + ch.Group
			}
			t = &table{}
			t.col(title, false)
			t.col("old", true)
			t.col("new", true)
			t.col("delta", true)
			t.col("", false)
			t.col("vs ref", true)
			t.col("", false)
		}
		t.add(ch.Name, medianCell(ch.Old), medianCell(ch.New), deltaCell(ch), testCell(ch), ratioDeltaCell(ch), ratioTestCell(ch))
	}
	flush()
	faster, slower, same := c.Counts(false)
	if !math.IsNaN(c.GeomeanDelta) {
		fmt.Fprintf(w, "geomean: %s → %s, %+.2f%%\n", FormatNs(c.GeomeanOld), FormatNs(c.GeomeanNew), 100*c.GeomeanDelta)
	}
	fmt.Fprintf(w, "%d rows compared: %d faster, %d slower, %d ~ (no significant change; Mann-Whitney U, p < %.2g)\n",
		len(c.Changes), faster, slower, same, stats.Alpha)
	rf, rs, rsame := c.Counts(true)
	fmt.Fprintf(w, "relative to each table's reference (\"vs ref\": the per-round ratio, which divides out what moved the whole machine): %d faster, %d slower, %d ~\n",
		rf, rs, rsame)
	if len(c.OnlyOld) > 0 {
		fmt.Fprintf(w, "only in old (%d): %s\n", len(c.OnlyOld), strings.Join(c.OnlyOld, "; "))
	}
	if len(c.OnlyNew) > 0 {
		fmt.Fprintf(w, "only in new (%d): %s\n", len(c.OnlyNew), strings.Join(c.OnlyNew, "; "))
	}
}

func orNone(s string) string {
	if s == "" {
		return "(no brand string)"
	}
	return s
}

func medianCell(r harness.RowResult) string {
	if r.Error != "" {
		return "error"
	}
	if !(r.MedianNs > 0) {
		return "—"
	}
	return FormatNs(r.MedianNs) + " " + plusMinus(r)
}

func deltaCell(ch Change) string {
	switch {
	case ch.Old.Error != "" || ch.New.Error != "" || !(ch.Old.MedianNs > 0) || !(ch.New.MedianNs > 0):
		return "—"
	case !ch.Significant:
		return "~"
	}
	return fmt.Sprintf("%+.2f%%", 100*ch.Delta)
}

func ratioDeltaCell(ch Change) string {
	switch {
	case ch.Ref == "":
		return ""
	case !ch.RatioSignificant:
		return "~"
	}
	return fmt.Sprintf("%+.2f%%", 100*ch.RatioDelta)
}

func ratioTestCell(ch Change) string {
	if ch.Ref == "" {
		return ""
	}
	return fmt.Sprintf("(p=%.3f)", ch.RatioP)
}

func testCell(ch Change) string {
	if ch.Old.Error != "" || ch.New.Error != "" {
		return ""
	}
	return fmt.Sprintf("(p=%.3f n=%d+%d)", ch.P, len(ch.Old.Samples), len(ch.New.Samples))
}
