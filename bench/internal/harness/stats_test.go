package harness

import (
	"math"
	"testing"
)

func TestPercentileKnownSamples(t *testing.T) {
	// Expected values follow the closest-ranks linear interpolation
	// (numpy.percentile's default), worked by hand.
	tests := []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{[]float64{5}, 50, 5},
		{[]float64{1, 2, 3}, 50, 2},
		{[]float64{3, 1, 2}, 50, 2}, // order does not matter
		{[]float64{1, 2, 3, 4}, 50, 2.5},
		{[]float64{1, 2, 3, 4}, 25, 1.75},
		{[]float64{1, 2, 3, 4}, 75, 3.25},
		{[]float64{1, 2, 3, 4}, 0, 1},
		{[]float64{1, 2, 3, 4}, 100, 4},
		{[]float64{10, 20, 30, 40, 50}, 90, 46},
		{[]float64{10, 20, 30, 40, 50}, 99, 49.6},
		{[]float64{7, 7, 7, 7}, 63, 7},
		{[]float64{-2, 4}, 50, 1},
	}
	for _, tt := range tests {
		got := Percentile(tt.xs, tt.p)
		if math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Percentile(%v, %v) = %v, want %v", tt.xs, tt.p, got, tt.want)
		}
	}
}

func TestMedianDoesNotModifyInput(t *testing.T) {
	xs := []float64{9, 1, 5, 3}
	if got := Median(xs); got != 4 {
		t.Errorf("Median = %v, want 4", got)
	}
	if xs[0] != 9 || xs[1] != 1 || xs[2] != 5 || xs[3] != 3 {
		t.Errorf("Median reordered its input: %v", xs)
	}
}

func TestEmptySamples(t *testing.T) {
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
	lo, hi := MinMax(nil)
	if !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Error("MinMax(nil) is not NaN")
	}
	lo, hi = MinMax([]float64{3, -1, 8, 2})
	if lo != -1 || hi != 8 {
		t.Errorf("MinMax = %v, %v, want -1, 8", lo, hi)
	}
}

func TestSummarize(t *testing.T) {
	r := RowResult{Samples: []Sample{
		{Ops: 10, Wall: 100, CPU: 2000, Mallocs: 10},
		{Ops: 10, Wall: 300, CPU: 6000, Mallocs: 30},
		{Ops: 10, Wall: 200, CPU: 4000, Mallocs: 20},
	}}
	r.summarize()
	if r.MedianNs != 20 || r.MinNs != 10 || r.MaxNs != 30 {
		t.Errorf("ns/op median/min/max = %v/%v/%v, want 20/10/30", r.MedianNs, r.MinNs, r.MaxNs)
	}
	if r.CPUusPerOp != 0.4 || r.AllocsPerOp != 2 || r.Cores != 20 || !r.HasCPU {
		t.Errorf("cpu %v allocs %v cores %v hasCPU %v, want 0.4 2 20 true", r.CPUusPerOp, r.AllocsPerOp, r.Cores, r.HasCPU)
	}
}

func TestRatios(t *testing.T) {
	s := SuiteResult{Ref: "ref", Rows: []RowResult{
		{Group: "a", Name: "ref", MedianNs: 10},
		{Group: "a", Name: "x", MedianNs: 25},
		{Group: "b", Name: "x", MedianNs: 7}, // no reference in group b
	}}
	s.setRatios()
	if s.Rows[0].Ratio != 1 || s.Rows[1].Ratio != 2.5 || s.Rows[2].Ratio != 0 {
		t.Errorf("ratios = %v %v %v, want 1 2.5 0", s.Rows[0].Ratio, s.Rows[1].Ratio, s.Rows[2].Ratio)
	}
}
