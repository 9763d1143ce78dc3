package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knit-go/knit/bench/harness"
	"github.com/knit-go/knit/bench/internal/perfcount"
)

// sampleReport runs two small synthetic suites through the real harness,
// one with a single table and one with several, plus a failing row, so
// the report is built from measured figures like a real run's.
func sampleReport(t *testing.T) Report {
	t.Helper()
	cfg := harness.Config{Scale: harness.Tiny, Rounds: 2, Duration: time.Millisecond}
	cfg.Counters = perfcount.Open(perfcount.All...)
	t.Cleanup(func() { cfg.Counters.Close() })
	spin := func(k int) func(harness.Config) (harness.Bench, error) {
		return func(harness.Config) (harness.Bench, error) {
			sink := 0
			return harness.Func(func(n int) error {
				for i := 0; i < n*k; i++ {
					sink += i
				}
				_ = sink
				return nil
			}), nil
		}
	}
	one := harness.Suite{
		Name: "one", Description: "one table", Unit: "spin", Ref: "a", Speedup: true,
		Rows: func(harness.Config) []harness.Row {
			return []harness.Row{
				{Name: "a", Start: spin(100)},
				{Name: "b", Start: spin(300)},
				{Name: "broken", Start: func(harness.Config) (harness.Bench, error) { return nil, os.ErrNotExist }},
			}
		},
	}
	many := harness.Suite{
		Name: "many", Description: "several tables", Reproduces: "a test table", Unit: "spin", Ref: "a",
		Rows: func(harness.Config) []harness.Row {
			var rows []harness.Row
			for _, g := range []string{"small", "large"} {
				k := 10
				if g == "large" {
					k = 1000
				}
				rows = append(rows,
					harness.Row{Group: g, Name: "a", Start: spin(k)},
					harness.Row{Group: g, Name: "b|c", Bytes: 64, Start: spin(2 * k)},
				)
			}
			return rows
		},
	}
	rows := many
	rows.Name, rows.PlotRowsOnX = "rows-on-x", true
	r := New(cfg, []string{"-suites", "one,many"})
	for _, s := range []harness.Suite{one, many, rows} {
		r.Suites = append(r.Suites, harness.Run(s, cfg))
	}
	r.Run.Elapsed = 1234 * time.Millisecond
	return r
}

func TestJSONRoundTrip(t *testing.T) {
	r := sampleReport(t)
	dir := t.TempDir()
	if _, err := WriteDir(dir, r, "svg"); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJSON(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, got); diff != "" {
		t.Errorf("results.json does not round-trip (-wrote +read):\n%s", diff)
	}
	if n := len(got.Suites[0].Rows[0].Samples); n != 2 {
		t.Errorf("read back %d raw samples for a row, want 2", n)
	}
}

func TestPlotsWritten(t *testing.T) {
	r := sampleReport(t)
	for format, magic := range map[string]string{"svg": "<svg", "png": "\x89PNG"} {
		dir := t.TempDir()
		paths, err := WriteDir(dir, r, format)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range r.Suites {
			p := filepath.Join(dir, s.Name+"."+format)
			if !contains(paths, p) {
				t.Errorf("WriteDir did not report %s", p)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < 1000 || !strings.Contains(string(b[:min(len(b), 512)]), magic) {
				t.Errorf("%s: %d bytes, does not look like a %s plot", p, len(b), format)
			}
		}
	}
}

// squash collapses the padding of aligned tables to one space, so tests
// can look for cells without counting columns.
func squash(s string) string {
	for strings.Contains(s, "  ") {
		s = strings.ReplaceAll(s, "  ", " ")
	}
	return s
}

func TestMarkdown(t *testing.T) {
	r := sampleReport(t)
	md := Markdown(r)
	flat := squash(md)
	for _, want := range []string{
		"| machine | |", "GOMAXPROCS", "knit.CPU()", "| knit revision |", "| CPU governor |",
		"## one", "| a (ref) |", "speedup", "error: ",
		"## many", "### many — small", "### many — large", "GB/s", `b\|c`,
		"Reproduces the shape of a test table", "| ± |", "| 95% CI |", "| note |",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// Every table line has as many cells as its header, and as many
	// characters: the columns line up in a terminal.
	var cols, wide int
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "| ") {
			cols = 0
			continue
		}
		n := strings.Count(strings.ReplaceAll(line, `\|`, "xx"), "|")
		w := width(line)
		if cols == 0 {
			cols, wide = n, w
		} else if n != cols || w != wide {
			t.Errorf("row %q: %d separators and %d characters, header has %d and %d", line, n, w, cols, wide)
		}
	}
}

// TestMarkdownCounters: a counter column shows the figure per op where
// the counter counts, and says why not where it does not, never 0.
func TestMarkdownCounters(t *testing.T) {
	s := harness.SuiteResult{
		Name: "c", Unit: "op", Ref: "a",
		Counters: []perfcount.Info{
			{Name: "context-switches", Available: true},
			{Name: "cycles", Why: "no PMU", Detail: "perf_event_open: ENOENT: no hardware counter"},
		},
		Rows: []harness.RowResult{
			{Name: "a", MedianNs: 100, MinNs: 90, MaxNs: 110, Ratio: 1, HasCPU: true, CPUNsPerOp: 100, Cores: 1,
				CountersPerOp: map[string]float64{"context-switches": 0.5}},
			{Name: "b", MedianNs: 200, MinNs: 190, MaxNs: 210, Ratio: 2, HasCPU: true, CPUNsPerOp: 200, Cores: 1,
				CountersPerOp: map[string]float64{"context-switches": 0.00012}},
		},
	}
	md := squash(SuiteMarkdown(s))
	for _, want := range []string{
		"| CPU/op | ctx-sw/op | cycles/op | allocs/op |",
		"| 100 ns | 0.500 | n/a: no PMU |",
		"| 200 ns | 0.00012 | n/a: no PMU |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	head := describeCounters(s.Counters)
	if !strings.Contains(head, "context-switches: every thread") || !strings.Contains(head, "cycles n/a: perf_event_open: ENOENT") {
		t.Errorf("machine table's counters line: %q", head)
	}
	s.Counters = nil
	if md := SuiteMarkdown(s); strings.Contains(md, "ctx-sw") {
		t.Errorf("a run without counters has a counter column:\n%s", md)
	}
}

// TestMachineReadCosts: the machine description carries what one read of
// knit's cycle counter and one time.Now cost, as figures a reader can use
// (a read costs something, and no clock read on a working machine takes
// 10 µs), and prints them in the machine table.
func TestMachineReadCosts(t *testing.T) {
	m := DescribeMachine()
	plausible := func(name string, ns float64) {
		t.Helper()
		if !(ns > 0 && ns < 10_000) {
			t.Errorf("%s = %v ns, want in (0, 10 µs)", name, ns)
		}
	}
	plausible("time_now_ns", m.TimeNowNs)
	if m.Knit.Hint == "none" {
		// Under HintNone knit reads no counter, so there is nothing to time.
		if m.Knit.CounterReadNs != 0 {
			t.Errorf("counter_read_ns = %v under HintNone, want 0", m.Knit.CounterReadNs)
		}
	} else {
		plausible("counter_read_ns", m.Knit.CounterReadNs)
	}
	t.Logf("time_now_ns %.1f, counter_read_ns %.1f (hint %s, asm %v)", m.TimeNowNs, m.Knit.CounterReadNs, m.Knit.Hint, m.Knit.Asm)
	md := Markdown(Report{Machine: m})
	for _, want := range []string{"| clock reads | ", "ns per counter read", "ns per time.Now"} {
		if !strings.Contains(squash(md), want) {
			t.Errorf("machine table lacks %q:\n%s", want, md)
		}
	}
}

func TestFormatNs(t *testing.T) {
	for ns, want := range map[float64]string{
		12.34:   "12.3 ns",
		999:     "999 ns",
		1234:    "1.23 µs",
		56_780:  "56.8 µs",
		2.5e6:   "2.50 ms",
		3.21e9:  "3.21 s",
		0.25:    "0.250 ns",
		123_456: "123 µs",
	} {
		if got := FormatNs(ns); got != want {
			t.Errorf("FormatNs(%v) = %q, want %q", ns, got, want)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestMarkdownRoundRatio: a table whose rows name a Versus row carries a
// column with each such row's per-round ratio and the row it is read
// against; a table without has no such column.
func TestMarkdownRoundRatio(t *testing.T) {
	s := harness.SuiteResult{
		Name: "p", Unit: "op", Ref: "them",
		Rows: []harness.RowResult{
			{Name: "them", MedianNs: 100, MinNs: 90, MaxNs: 110, Ratio: 1},
			{Name: "us", MedianNs: 80, MinNs: 70, MaxNs: 90, Ratio: 0.8, Versus: "them", RoundRatio: 0.75},
		},
	}
	md := squash(SuiteMarkdown(s))
	for _, want := range []string{
		"| vs ref | 95% CI | vs pair, per round | CPU/op |",
		"| 1.00× | — | — | n/a |",
		"| 0.800× | — | 0.750× them | n/a |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	s.Rows[1].Versus = ""
	if md := SuiteMarkdown(s); strings.Contains(md, "per round") {
		t.Errorf("a table without Versus rows has the per-round column:\n%s", md)
	}
}

func TestFormatRatio(t *testing.T) {
	for r, want := range map[float64]string{
		1: "1.00×", 0.5: "0.500×", 12.34: "12.3×", 1650.4: "1650×", 0.00412: "0.00412×", 0: "—", 2e8: "2e+08×",
	} {
		if got := FormatRatio(r); got != want {
			t.Errorf("FormatRatio(%v) = %q, want %q", r, got, want)
		}
	}
}
