package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/knit-go/knit/bench/internal/harness"
	"github.com/knit-go/knit/bench/internal/perfcount"
)

// Markdown renders the whole report: the machine, then each suite's
// tables. Every row of a table was measured in the same interleaved
// rounds as its neighbours, so rows compare side by side; the ratio
// column is the comparison to quote, not the absolute times.
func Markdown(r Report) string {
	var b strings.Builder
	b.WriteString(HeaderMarkdown(r))
	for _, s := range r.Suites {
		b.WriteString(SuiteMarkdown(s))
	}
	return b.String()
}

// HeaderMarkdown is the title and the machine table, printed before any
// suite runs so a reader of a long run's output knows what it is on.
func HeaderMarkdown(r Report) string {
	var b strings.Builder
	b.WriteString("# knitbench\n\n")
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
		{"knit hint", fmt.Sprintf("%s, %.1f ns/hint, asm %v, counter %.3f MHz", m.Knit.Hint, m.Knit.HintNs, m.Knit.Asm, float64(m.Knit.CounterHz)/1e6)},
		{"knit.CPU()", m.Knit.Summary},
		{"clock reads", clockReads(m)},
	}
	if m.Knit.Warning != "" {
		kv = append(kv, [2]string{"knit warning", m.Knit.Warning})
	}
	run := r.Run
	desc := fmt.Sprintf("%s scale, %d rounds x %v per row, pin %v, started %s",
		run.Scale, run.Rounds, run.Duration, run.Pin, run.Started.Format("2006-01-02 15:04:05 MST"))
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
	b.WriteString("| machine | |\n|---|---|\n")
	for _, e := range kv {
		fmt.Fprintf(b, "| %s | %s |\n", e[0], escape(e[1]))
	}
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
func describeCounters(cs []perfcount.Info) string {
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
	fmt.Fprintf(b, "One op = %s. Times are per op: median, min and max over the rounds. "+
		"\"vs ref\" = median / median of `%s` in the same table.", s.Unit, s.Ref)
	if s.Speedup {
		fmt.Fprintf(b, " \"speedup\" = median of `%s` / median.", s.Ref)
	}
	if len(s.Counters) > 0 {
		b.WriteString(" Counter columns (ctx-sw/op, ...) are events of every thread of the process per op, median over the rounds.")
	}
	fmt.Fprintf(b, " Suite took %v.\n\n", s.Elapsed.Round(1e6))
	for _, g := range s.Groups() {
		if g != "" {
			fmt.Fprintf(b, "### %s — %s\n\n", s.Name, g)
		}
		writeTable(b, s, g)
		b.WriteString("\n")
	}
}

func writeTable(b *strings.Builder, s harness.SuiteResult, group string) {
	var rows []harness.RowResult
	bytes := false
	for _, r := range s.Rows {
		if r.Group == group {
			rows = append(rows, r)
			bytes = bytes || r.Bytes > 0
		}
	}
	head := []string{"row", "median", "min", "max", "vs ref"}
	align := []string{"---", "---:", "---:", "---:", "---:"}
	paired := false
	for _, r := range rows {
		paired = paired || r.Versus != ""
	}
	if paired {
		// Each row over the row it names, round by round.
		head, align = append(head, "vs pair, per round"), append(align, "---")
	}
	head, align = append(head, "CPU-µs/op"), append(align, "---:")
	for _, c := range s.Counters {
		head, align = append(head, counterColumn(c.Name)), append(align, "---:")
	}
	head, align = append(head, "allocs/op", "cores"), append(align, "---:", "---:")
	if bytes {
		head, align = append(head, "GB/s"), append(align, "---:")
	}
	if s.Speedup {
		head, align = append(head, "speedup"), append(align, "---:")
	}
	fmt.Fprintf(b, "| %s |\n|%s|\n", strings.Join(head, " | "), strings.Join(align, "|"))
	for _, r := range rows {
		name := r.Name
		if name == s.Ref {
			name += " (ref)"
		}
		cells := []string{escape(name)}
		if r.Error != "" {
			cells = append(cells, "error: "+escape(r.Error))
			for len(cells) < len(head) {
				cells = append(cells, "")
			}
			fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
			continue
		}
		cpu := "n/a"
		cores := "n/a"
		if r.HasCPU {
			cpu = sig3(r.CPUusPerOp)
			cores = fmt.Sprintf("%.2f", r.Cores)
		}
		cells = append(cells, FormatNs(r.MedianNs), FormatNs(r.MinNs), FormatNs(r.MaxNs), ratio(r.Ratio))
		if paired {
			pair := "—"
			if r.Versus != "" {
				pair = ratio(r.RoundRatio) + " " + escape(r.Versus)
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
				sp = fmt.Sprintf("%.2f×", 1/r.Ratio)
			}
			cells = append(cells, sp)
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
	}
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
func counterCell(c perfcount.Info, r harness.RowResult) string {
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

func ratio(r float64) string {
	if r <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", r)
}

// escape keeps a cell from breaking the table.
func escape(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
