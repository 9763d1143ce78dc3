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
