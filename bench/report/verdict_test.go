package report

import (
	"bufio"
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/knit-go/knit/bench/harness"
)

// samples makes one sample per value, rounds 1, 2, ..., one op each.
func samples(ns ...float64) []harness.Sample {
	out := make([]harness.Sample, len(ns))
	for i, v := range ns {
		out[i] = harness.Sample{Round: i + 1, Ops: 1, Wall: time.Duration(v), CPU: time.Duration(v)}
	}
	return out
}

func steady(v float64, n int) []harness.Sample {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = v * (1 + 0.01*float64(i%3))
	}
	return samples(xs...)
}

// verdictSuite is a table with a knit row, two rivals and two limits.
func verdictSuite(knitNs float64, n int) harness.SuiteResult {
	s := harness.SuiteResult{Name: "s", Ref: "chan", Unit: "op", Rows: []harness.RowResult{
		{Group: "g", Name: "chan", Samples: steady(1000, n)},
		{Group: "g", Name: "ants pool", Samples: steady(800, n)},
		{Group: "g", Name: "knit thing, spin", Samples: steady(10, n)},
		{Group: "g", Name: "knit thing", Samples: steady(knitNs, n)},
		{Group: "g", Name: "limit: bimodal", Samples: samples(50, 900, 50, 900, 50, 900, 50, 900, 50, 900)[:n]},
		{Group: "g", Name: "limit: steady", Samples: steady(300, n)},
	}}
	s.Summarize()
	return s
}

func TestVerdicts(t *testing.T) {
	uc := UseCase{Name: "a thing", Suite: "s", Subject: AllOf(Contains("knit thing"), Not(Contains("spin"))), API: "Thing()"}
	for _, tt := range []struct {
		knitNs float64
		n      int
		word   string
	}{
		{400, 10, Faster},
		{2000, 10, Slower},
		{800, 10, NoDifference},
		{400, 3, NoInterval},
	} {
		vs := Verdicts([]UseCase{uc, {Name: "not run", Suite: "other"}}, []harness.SuiteResult{verdictSuite(tt.knitNs, tt.n)})
		if len(vs) != 1 {
			t.Fatalf("%d verdicts, want 1 (a use case whose suite did not run is left out)", len(vs))
		}
		v := vs[0]
		if !strings.HasPrefix(v.Word, tt.word) {
			t.Errorf("knit at %v ns, %d rounds: %q, want %q", tt.knitNs, tt.n, v.Word, tt.word)
		}
		if v.Subject != "knit thing" || v.Rival != "ants pool" {
			t.Errorf("subject %q rival %q, want knit thing and ants pool (the fastest non-knit, non-limit row)", v.Subject, v.Rival)
		}
		if tt.n >= 6 && v.Floor != "limit: steady" {
			t.Errorf("floor %q, want the stable limit row over the faster bimodal one", v.Floor)
		}
	}
	// Rivals narrows the Go and peer rows; it never makes a knit or a
	// limit row a rival, whatever its name.
	narrow := uc
	narrow.Rivals = Contains("a")
	if v := Verdicts([]UseCase{narrow}, []harness.SuiteResult{verdictSuite(400, 10)})[0]; v.Rival != "ants pool" {
		t.Errorf("with Rivals matching knit and limit names too, the rival is %q, want ants pool", v.Rival)
	}
	r := Report{Verdicts: Verdicts([]UseCase{uc}, []harness.SuiteResult{verdictSuite(400, 10)})}
	md := squash(VerdictMarkdown(r))
	for _, want := range []string{"## Verdict", "| a thing | knit thing [Thing()] |", "| ants pool |", "| faster |", "| limit: steady |"} {
		if !strings.Contains(md, want) {
			t.Errorf("verdict lacks %q:\n%s", want, md)
		}
	}
}

// TestCompare: a run against itself changes nothing ("~"); a row twice
// as slow in every round is a significant +100%; the machines' and
// rows' differences are reported.
func TestCompare(t *testing.T) {
	old := Report{Machine: Machine{CPU: "a", GOOS: "linux"}, Suites: []harness.SuiteResult{{Name: "s", Rows: []harness.RowResult{
		{Name: "same", Samples: samples(100, 101, 99, 100, 102, 98, 100, 101)},
		{Name: "slower", Samples: samples(100, 101, 99, 100, 102, 98, 100, 101)},
		{Name: "gone", Samples: samples(1, 1)},
	}}}}
	cur := Report{Machine: Machine{CPU: "b", GOOS: "linux"}, Suites: []harness.SuiteResult{{Name: "s", Rows: []harness.RowResult{
		{Name: "same", Samples: samples(101, 100, 99, 101, 100, 98, 102, 100)},
		{Name: "slower", Samples: samples(200, 202, 198, 200, 204, 196, 200, 202)},
		{Name: "new", Samples: samples(1, 1)},
	}}}}
	for _, r := range []*Report{&old, &cur} {
		r.Suites[0].Summarize()
	}
	c := Compare(old, cur)
	if len(c.Changes) != 2 || c.Changes[0].Significant || !c.Changes[1].Significant {
		t.Fatalf("changes: %+v", c.Changes)
	}
	if d := c.Changes[1].Delta; d < 0.99 || d > 1.01 {
		t.Errorf("delta of a doubled row = %v, want 1", d)
	}
	var b strings.Builder
	c.WriteText(&b, "a.json", "b.json")
	text := squash(b.String())
	for _, want := range []string{
		"warning: the runs differ in CPU: a vs b", "s old new delta",
		"same 100 ns ±2% 100 ns ±2% ~ (p=", "slower 100 ns ±2% 200 ns ±2% +100.00% (p=0.001 n=8+8)",
		"geomean:", "2 rows compared: 0 faster, 1 slower, 1 ~", "only in old (1): s / gone", "only in new (1): s / new",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("compare output lacks %q:\n%s", want, b.String())
		}
	}
}

// TestGoBench: every benchmark line is what the Go benchmark format
// wants (benchstat reads it): a name of Benchmark and an upper case
// letter with no space, the iterations, then value-unit pairs.
func TestGoBench(t *testing.T) {
	r := sampleReport(t)
	text := GoBench(r)
	lines := 0
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "Benchmark") {
			if k, _, ok := strings.Cut(line, ": "); !ok || strings.ContainsAny(k, " \t") {
				t.Errorf("neither a benchmark nor a config line: %q", line)
			}
			continue
		}
		lines++
		f := strings.Fields(line)
		if first, _ := utf8.DecodeRuneInString(f[0][len("Benchmark"):]); !unicode.IsUpper(first) {
			t.Errorf("%q: no upper case letter after Benchmark", f[0])
		}
		if len(f) < 4 || len(f)%2 != 0 || f[3] != "ns/op" {
			t.Errorf("malformed line %q", line)
		}
	}
	if lines == 0 {
		t.Errorf("no benchmark lines:\n%s", text)
	}
	if !strings.Contains(text, "BenchmarkMany/small/b|c-") && !strings.Contains(text, "BenchmarkMany/small/b|c") {
		t.Errorf("row names are not kept:\n%s", text)
	}
}

// TestPlotPNG: a PNG plot is at least 1600 px wide.
func TestPlotPNG(t *testing.T) {
	r := sampleReport(t)
	for _, s := range r.Suites {
		b, err := Plot(s, PNG)
		if err != nil || b == nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if w := img.Bounds().Dx(); w < 1600 {
			t.Errorf("%s.png is %d px wide, want at least 1600", s.Name, w)
		}
	}
}

// TestPrepareDir: a new or empty directory is fine; one with files, or
// a path under a file, is refused before any run.
func TestPrepareDir(t *testing.T) {
	tmp := t.TempDir()
	if err := PrepareDir(filepath.Join(tmp, "new", "deep")); err != nil {
		t.Errorf("a new directory: %v", err)
	}
	if err := PrepareDir(filepath.Join(tmp, "new", "deep")); err != nil {
		t.Errorf("an empty directory: %v", err)
	}
	os.WriteFile(filepath.Join(tmp, "new", "deep", "results.json"), []byte("{}"), 0o644)
	if err := PrepareDir(filepath.Join(tmp, "new", "deep")); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("a used directory: %v", err)
	}
	file := filepath.Join(tmp, "f")
	os.WriteFile(file, nil, 0o644)
	if err := PrepareDir(filepath.Join(file, "x")); err == nil {
		t.Error("a directory under a file was accepted")
	}
}

// TestReadJSONv1: a results.json written before schema_version is read,
// and its summaries are recomputed in this version's units.
func TestReadJSONv1(t *testing.T) {
	v1 := `{"machine": {"cpu": "x", "goos": "linux", "goarch": "amd64"}, "run": {"rounds": 2},
	  "suites": [{"name": "s", "ref": "a", "rows": [
	    {"name": "a", "samples": [{"round": 1, "ops": 10, "wall_ns": 1000, "cpu_ns": 2000}, {"round": 2, "ops": 10, "wall_ns": 1200, "cpu_ns": 2000}],
	     "median_ns_per_op": 110, "cpu_us_per_op": 0.2}]}]}`
	p := filepath.Join(t.TempDir(), "results.json")
	os.WriteFile(p, []byte(v1), 0o644)
	r, err := ReadJSON(p)
	if err != nil {
		t.Fatal(err)
	}
	row := r.Suites[0].Rows[0]
	if row.MedianNs != 110 || row.CPUNsPerOp != 200 || row.Ratio != 1 {
		t.Errorf("v1 row read as median %v, CPU %v ns, ratio %v; want 110, 200, 1", row.MedianNs, row.CPUNsPerOp, row.Ratio)
	}
	os.WriteFile(p, []byte(`{"schema_version": 99}`), 0o644)
	if _, err := ReadJSON(p); err == nil {
		t.Error("a newer schema was read")
	}
}
