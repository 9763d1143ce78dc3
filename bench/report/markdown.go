package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/knit-go/knit/bench/harness"
	"github.com/knit-go/knit/bench/internal/stats"
)

// Markdown renders the whole report: the verdict, the machine, then each
// suite's tables. Every row of a table was measured in the same
// interleaved rounds as its neighbours, so rows compare side by side;
// the ratio columns are the comparison to quote, not the absolute times.
func Markdown(r Report) string {
	var b strings.Builder
	b.WriteString("# knitbench\n\n")
	b.WriteString(VerdictMarkdown(r))
	b.WriteString(MachineMarkdown(r))
	for _, s := range r.Suites {
		b.WriteString(SuiteMarkdown(s))
	}
	return b.String()
}

// HeaderMarkdown is the title and the machine table.
func HeaderMarkdown(r Report) string {
	return "# knitbench\n\n" + MachineMarkdown(r)
}

// MachineMarkdown is the machine table: what the figures depend on.
func MachineMarkdown(r Report) string {
	var b strings.Builder
	writeMachine(&b, r)
	return b.String()
}

// SuiteMarkdown is one suite's section: its description and one table
// per group.
func SuiteMarkdown(s harness.SuiteResult) string {
	var b strings.Builder
	writeSuite(&b, s)
	return b.String()
}

func writeMachine(b *strings.Builder, r Report) {
	m := r.Machine
	cpu := m.CPU
	if cpu == "" {
		cpu = "(no brand string)"
	}
	kv := [][2]string{
		{"CPU", fmt.Sprintf("%s (%s)", cpu, m.Vendor)},
		{"logical cores", fmt.Sprintf("%d usable by this process (cpuid topology: %d physical, %d threads per core)",
			m.LogicalCores, m.PhysicalCores, m.ThreadsPerCore)},
		{"hypervisor", fmt.Sprint(m.Hypervisor)},
		{"GOMAXPROCS", fmt.Sprint(m.GOMAXPROCS)},
		{"Go", fmt.Sprintf("%s %s/%s", m.GoVersion, m.GOOS, m.GOARCH)},
	}
	if m.Kernel != "" {
		kv = append(kv, [2]string{"kernel", m.Kernel})
	}
	gov := m.Governor
	if gov == "" {
		gov = "n/a: " + m.GovernorWhy
	}
	if m.Boost != "" {
		gov += ", boost " + m.Boost
	}
	kv = append(kv,
		[2]string{"CPU governor", gov},
		[2]string{"knit hint", fmt.Sprintf("%s, %.1f ns/hint, asm %v, counter %.3f MHz", m.Knit.Hint, m.Knit.HintNs, m.Knit.Asm, float64(m.Knit.CounterHz)/1e6)},
		[2]string{"knit.CPU()", m.Knit.Summary},
		[2]string{"clock reads", clockReads(m)},
	)
	if m.Knit.Warning != "" {
		kv = append(kv, [2]string{"knit warning", m.Knit.Warning})
	}
	run := r.Run
	code := run.Code.Short()
	if run.Code.RevisionFrom != "" {
		code += " (from " + run.Code.RevisionFrom + ")"
	}
	if run.Code.KnitReplace != "" {
		code += ", replaced by " + run.Code.KnitReplace
	}
	kv = append(kv, [2]string{"knit revision", code})
	if run.Code.BuildFlags != "" {
		kv = append(kv, [2]string{"build", run.Code.BuildFlags})
	}
	desc := fmt.Sprintf("%s scale, %d rounds × %v per row, pin %v", run.Scale, run.Rounds, run.Duration, run.Pin)
	if run.Pin {
		desc += fmt.Sprintf(" (%d threads pinned", run.Pinned)
		if run.PinFailed > 0 {
			desc += fmt.Sprintf(", %d only locked: %s", run.PinFailed, run.PinError)
		}
		desc += ")"
	}
	if !run.Started.IsZero() {
		desc += ", started " + run.Started.Format("2006-01-02 15:04:05 MST")
	}
	if run.Elapsed > 0 {
		desc += fmt.Sprintf(", took %v", run.Elapsed.Round(1e6))
	}
	kv = append(kv,
		[2]string{"run", desc},
		[2]string{"command", "knitbench " + strings.Join(run.Args, " ")},
	)
	if len(run.Counters) > 0 {
		kv = append(kv, [2]string{"counters", describeCounters(run.Counters)})
	}
	for _, w := range run.Warnings {
		kv = append(kv, [2]string{"warning", w})
	}
	t := table{}
	t.col("machine", false)
	t.col("", false)
	for _, e := range kv {
		t.add(e[0], escape(e[1]))
	}
	b.WriteString("## Machine\n\n")
	b.WriteString(t.String())
	b.WriteString("\n")
}

// clockReads is the machine table's line on what one read of knit's
// cycle counter and of time.Now cost.
func clockReads(m Machine) string {
	counter := "no counter read (hint none)"
	if m.Knit.Hint != "none" {
		counter = fmt.Sprintf("%.1f ns per counter read (knit's Backoff deadline check)", m.Knit.CounterReadNs)
	}
	return fmt.Sprintf("%s, %.1f ns per time.Now", counter, m.TimeNowNs)
}

// describeCounters is the machine table's line on the counters: which
// count, over what, and for those that do not, why (once per reason).
func describeCounters(cs []harness.CounterInfo) string {
	var ok []string
	var reasons []string
	missing := map[string][]string{}
	for _, c := range cs {
		switch {
		case c.Available && c.UserOnly:
			ok = append(ok, c.Name+" (user space only)")
		case c.Available:
			ok = append(ok, c.Name)
		default:
			if _, seen := missing[c.Detail]; !seen {
				reasons = append(reasons, c.Detail)
			}
			missing[c.Detail] = append(missing[c.Detail], c.Name)
		}
	}
	var parts []string
	if len(ok) > 0 {
		parts = append(parts, strings.Join(ok, ", ")+": every thread of the process (perf_event_open, inherit)")
	}
	for _, d := range reasons {
		parts = append(parts, strings.Join(missing[d], ", ")+" n/a: "+d)
	}
	return strings.Join(parts, "; ")
}

func writeSuite(b *strings.Builder, s harness.SuiteResult) {
	fmt.Fprintf(b, "## %s\n\n%s\n\n", s.Name, s.Description)
	if s.Reproduces != "" {
		fmt.Fprintf(b, "Reproduces the shape of %s.\n\n", s.Reproduces)
	}
	fmt.Fprintf(b, "One op = %s. Times are per op over the rounds: the median, ± the half-width of its 95%% interval "+
		"(order statistics; it needs %d rounds), min and max. "+
		"\"vs ref\" = the median over the rounds of the row's time / the reference's in the same round, "+
		"the reference being `%s` unless the table says otherwise, with its 95%% interval.", s.Unit, stats.MinCISamples, s.Ref)
	if s.Speedup {
		b.WriteString(" \"speedup\" = 1 / vs ref.")
	}
	if len(s.Counters) > 0 {
		b.WriteString(" Counter columns (ctx-sw/op, ...) are events of every thread of the process per op, median over the rounds.")
	}
	fmt.Fprintf(b, " \"note\" flags a noisy row: an interval wider than ±%.0f%%, rounds spanning %.0f× or more (two modes). Suite took %v.\n\n",
		100*harness.NoisyCI, harness.WideRange, s.Elapsed.Round(1e6))
	for _, g := range s.Groups() {
		if g != "" {
			fmt.Fprintf(b, "### %s — %s\n\n", s.Name, g)
		}
		if c, ok := s.Refs[g]; ok {
			if c.Name == "" {
				fmt.Fprintf(b, "No reference: the declared one is %s.\n\n", c.Why)
			} else if c.Name != s.Ref {
				fmt.Fprintf(b, "Reference: `%s`, in place of %s.\n\n", c.Name, c.Why)
			} else {
				fmt.Fprintf(b, "Reference: `%s`, though it %s.\n\n", c.Name, c.Why)
			}
		}
		writeTable(b, s, g)
		b.WriteString("\n")
	}
}

func writeTable(b *strings.Builder, s harness.SuiteResult, group string) {
	var rows []harness.RowResult
	bytes, paired := false, false
	for _, r := range s.Rows {
		if r.Group == group {
			rows = append(rows, r)
			bytes = bytes || r.Bytes > 0
			paired = paired || r.Versus != ""
		}
	}
	t := table{}
	t.col("row", false)
	for _, c := range []string{"median", "±", "min", "max", "vs ref", "95% CI"} {
		t.col(c, true)
	}
	if paired {
		// Each row over the row it names, round by round.
		t.col("vs pair, per round", false)
	}
	t.col("CPU/op", true)
	for _, c := range s.Counters {
		t.col(counterColumn(c.Name), true)
	}
	t.col("allocs/op", true)
	t.col("cores", true)
	if bytes {
		t.col("GB/s", true)
	}
	if s.Speedup {
		t.col("speedup", true)
	}
	t.col("note", false)
	ref := s.RefOf(group)
	for _, r := range rows {
		name := r.Name
		if name == ref {
			name += " (ref)"
		}
		cells := []string{escape(name)}
		if r.Error != "" {
			cells = append(cells, "error: "+escape(r.Error))
			t.add(cells...)
			continue
		}
		cpu, cores := "n/a", "n/a"
		if r.HasCPU {
			cpu = FormatNs(r.CPUNsPerOp)
			cores = fmt.Sprintf("%.2f", r.Cores)
		}
		cells = append(cells, FormatNs(r.MedianNs), plusMinus(r), FormatNs(r.MinNs), FormatNs(r.MaxNs),
			FormatRatio(r.Ratio), ratioCI(r.RatioCILow, r.RatioCIHigh))
		if paired {
			pair := "—"
			if r.Versus != "" {
				pair = FormatRatio(r.RoundRatio) + " " + escape(r.Versus)
			}
			cells = append(cells, pair)
		}
		cells = append(cells, cpu)
		for _, c := range s.Counters {
			cells = append(cells, counterCell(c, r))
		}
		cells = append(cells, sig3(r.AllocsPerOp), cores)
		if bytes {
			cells = append(cells, sig3(r.GBps()))
		}
		if s.Speedup {
			sp := "—"
			if r.Ratio > 0 {
				sp = FormatRatio(1 / r.Ratio)
			}
			cells = append(cells, sp)
		}
		cells = append(cells, noteCell(r))
		t.add(cells...)
	}
	b.WriteString(t.String())
}

// noteCell is a row's flag in a table: "noisy", with the range of its
// rounds when they span two modes; the ± column already has the width.
func noteCell(r harness.RowResult) string {
	var notes []string
	if r.Noisy() {
		notes = append(notes, "noisy")
		for _, part := range strings.Split(r.Noise, ", ") {
			if strings.HasPrefix(part, "range") {
				notes = append(notes, part)
			}
		}
	}
	if r.AllocsWithSetup {
		notes = append(notes, "allocs incl. setup")
	}
	return strings.Join(notes, ", ")
}

// plusMinus is the half-width of the median's 95 % interval, as a
// percentage of the median (the larger side): "±3%"; "—" without one.
func plusMinus(r harness.RowResult) string {
	if !r.HasCI() || !(r.MedianNs > 0) {
		return "—"
	}
	return pct(max(r.CIHighNs-r.MedianNs, r.MedianNs-r.CILowNs) / r.MedianNs)
}

func pct(f float64) string {
	switch p := 100 * f; {
	case p < 1:
		return "±" + strconv.FormatFloat(p, 'f', 1, 64) + "%"
	default:
		return "±" + strconv.FormatFloat(p, 'f', 0, 64) + "%"
	}
}

// ratioCI is a ratio's interval, "1.85–2.10", or "—".
func ratioCI(lo, hi float64) string {
	if !(lo > 0) || !(hi > 0) {
		return "—"
	}
	return ratioNum(lo) + "–" + ratioNum(hi)
}

// counterColumns are the counter columns' headers, by counter name.
var counterColumns = map[string]string{
	"context-switches": "ctx-sw/op",
	"cpu-migrations":   "migrations/op",
	"cycles":           "cycles/op",
	"instructions":     "instr/op",
	"cache-misses":     "cache-miss/op",
	"branch-misses":    "branch-miss/op",
}

func counterColumn(name string) string {
	if h, ok := counterColumns[name]; ok {
		return h
	}
	return name + "/op"
}

// counterCell is a row's figure for counter c: per op, or why there is
// none. A counter that is not available reads "n/a: <why>", never 0.
func counterCell(c harness.CounterInfo, r harness.RowResult) string {
	if !c.Available {
		return "n/a: " + escape(c.Why)
	}
	v, ok := r.CountersPerOp[c.Name]
	if !ok {
		return "n/a"
	}
	return perOp(v)
}

// perOp prints a per-op count: three significant digits, and two in
// exponent form below 0.001, where a count of one event in thousands of
// ops is still worth reading.
func perOp(v float64) string {
	if v != 0 && math.Abs(v) < 0.001 {
		return strconv.FormatFloat(v, 'g', 2, 64)
	}
	return sig3(v)
}

// FormatNs prints a duration given in ns with three significant digits in
// the unit that keeps it between 1 and 1000.
func FormatNs(ns float64) string {
	switch {
	case math.IsNaN(ns):
		return "n/a"
	case ns < 1e3:
		return sig3(ns) + " ns"
	case ns < 1e6:
		return sig3(ns/1e3) + " µs"
	case ns < 1e9:
		return sig3(ns/1e6) + " ms"
	}
	return sig3(ns/1e9) + " s"
}

// sig3 prints v with three significant digits, without exponent notation.
func sig3(v float64) string {
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	case a >= 0.001:
		return fmt.Sprintf("%.3f", v)
	}
	// Background allocations of the runtime land here (a few per
	// million ops): not worth digits.
	return "<0.001"
}

// FormatRatio prints a ratio with three significant digits and a ×:
// "1.93×", "0.00412×" (a ratio is never rounded to 0.00×); "—" for none.
func FormatRatio(r float64) string {
	if !(r > 0) || math.IsInf(r, 0) {
		return "—"
	}
	return ratioNum(r) + "×"
}

func ratioNum(r float64) string {
	switch {
	case r >= 0.1 && r < 1000:
		return sig3(r)
	case r >= 1000 && r < 1e7:
		// Three significant digits, no exponent: 1650, not 1.65e+03.
		v, _ := strconv.ParseFloat(strconv.FormatFloat(r, 'g', 3, 64), 64)
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(r, 'g', 3, 64)
}

// escape keeps a cell from breaking the table.
func escape(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
