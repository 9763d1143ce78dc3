package stats

import (
	"math"
	"testing"
	"time"
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

func TestNearestRank(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	if p := NearestRank(d, 50); p != 50 {
		t.Errorf("p50 of 1..100 = %v", p)
	}
	if p := NearestRank(d, 99); p != 99 {
		t.Errorf("p99 of 1..100 = %v", p)
	}
	if p := NearestRank(d[:1], 99); p != 1 {
		t.Errorf("p99 of one = %v", p)
	}
	if p := NearestRank([]time.Duration(nil), 50); p != 0 {
		t.Errorf("p50 of none = %v", p)
	}
}

// TestMedianCI: the ranks of the interval match the binomial table
// (n = 6: min and max, 96.9 %; n = 10: the 2nd and 9th, 97.9 %), and
// fewer than six samples give no 95 % interval.
func TestMedianCI(t *testing.T) {
	seq := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[n-1-i] = float64(i + 1) // descending: MedianCI must sort
		}
		return xs
	}
	for _, tt := range []struct {
		n      int
		lo, hi float64
		ok     bool
	}{
		{1, 1, 1, false},
		{5, 1, 5, false},
		{6, 1, 6, true},
		{10, 2, 9, true},
		{20, 6, 15, true},
	} {
		lo, hi, ok := MedianCI(seq(tt.n), Confidence)
		if lo != tt.lo || hi != tt.hi || ok != tt.ok {
			t.Errorf("n=%d: MedianCI = %v, %v, %v; want %v, %v, %v", tt.n, lo, hi, ok, tt.lo, tt.hi, tt.ok)
		}
	}
	if _, _, ok := MedianCI(nil, Confidence); ok {
		t.Error("MedianCI(nil) ok")
	}
}

// TestMannWhitneyU checks p-values against R's wilcox.test (exact when
// there are no ties, normal approximation with correction otherwise).
func TestMannWhitneyU(t *testing.T) {
	for _, tt := range []struct {
		a, b []float64
		want float64
	}{
		// wilcox.test(c(1,2,3,4,5), c(6,7,8,9,10))$p.value = 0.007937
		{[]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0.007937},
		// wilcox.test(c(1,3,5,7,9), c(2,4,6,8,10))$p.value = 0.6905
		{[]float64{1, 3, 5, 7, 9}, []float64{2, 4, 6, 8, 10}, 0.6905},
		// wilcox.test(c(1,2,2,3), c(2,3,4,4))$p.value = 0.1341 (ties: normal
		// approximation, tie and continuity corrections)
		{[]float64{1, 2, 2, 3}, []float64{2, 3, 4, 4}, 0.1341},
		// identical samples: no difference
		{[]float64{5, 5, 5}, []float64{5, 5, 5}, 1},
	} {
		if got := MannWhitneyU(tt.a, tt.b); math.Abs(got-tt.want) > 5e-4 {
			t.Errorf("MannWhitneyU(%v, %v) = %.5f, want %.5f", tt.a, tt.b, got, tt.want)
		}
	}
	// Ten against ten, all apart: the smallest exact p, 2/C(20,10).
	a := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	b := []float64{11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	if got, want := MannWhitneyU(a, b), 2/184756.0; math.Abs(got-want) > 1e-12 {
		t.Errorf("10 vs 10 apart: p = %g, want %g", got, want)
	}
	if MannWhitneyU(nil, a) != 1 {
		t.Error("an empty side must give p = 1")
	}
}

func TestGeomean(t *testing.T) {
	if g := Geomean([]float64{1, 4}); math.Abs(g-2) > 1e-12 {
		t.Errorf("Geomean(1, 4) = %v", g)
	}
	if !math.IsNaN(Geomean(nil)) || !math.IsNaN(Geomean([]float64{1, 0})) {
		t.Error("Geomean of nothing or of a zero is not NaN")
	}
}
