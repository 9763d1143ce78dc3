// Package stats is the one place the bench module's figures are
// reduced: medians, percentiles and ranges over samples, for knitbench's
// harness and for the HTTP isolation study alike.
package stats

import (
	"cmp"
	"math"
	"slices"
)

// Percentile returns the p-th percentile (0..100) of xs by linear
// interpolation between closest ranks (the definition used by numpy's
// default and by R's type 7), so small sample counts give stable values.
// It returns NaN for no samples; xs is not modified.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 || math.IsNaN(p) {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if p <= 0 {
		return s[0]
	}
	if p >= 100 {
		return s[len(s)-1]
	}
	pos := p / 100 * float64(len(s)-1)
	lo := int(pos)
	frac := pos - float64(lo)
	if lo+1 >= len(s) {
		return s[lo]
	}
	return s[lo] + frac*(s[lo+1]-s[lo])
}

// Median is the 50th percentile: the middle sample, or the mean of the two
// middle samples for an even count. Medians are what the reports compare,
// because a noisy neighbour inflates a few rounds, not most of them.
func Median(xs []float64) float64 { return Percentile(xs, 50) }

// MinMax returns the smallest and largest sample, or NaNs for none.
func MinMax(xs []float64) (lo, hi float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	return slices.Min(xs), slices.Max(xs)
}

// NearestRank returns the nearest-rank p-th percentile (0..100) of sorted,
// which must be in ascending order: the smallest sample that at least p
// percent of the samples do not exceed, always one of the samples (as load
// generators report latencies). It returns the zero value for no samples.
// Unlike Percentile it neither copies nor sorts, for the millions of
// latency samples of a load window.
func NearestRank[T cmp.Ordered](sorted []T, p float64) T {
	if len(sorted) == 0 {
		var zero T
		return zero
	}
	i := int(float64(len(sorted))*(p/100)+0.999999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
