package stats

import (
	"math"
	"slices"
)

// Confidence is the level of every interval the bench module prints, and
// Alpha the significance level of every test: 95 % and 5 %, as benchstat.
const (
	Confidence = 0.95
	Alpha      = 1 - Confidence
)

// MinCISamples is the fewest samples from which MedianCI can give a 95 %
// interval: with five, even the widest interval (min to max) covers the
// median with probability 1 - 2/2⁵ = 0.9375 only.
const MinCISamples = 6

// MedianCI returns a distribution-free confidence interval for the
// median of the population xs was drawn from, at level conf (0.95 for
// 95 %): the order statistics x(k) and x(n+1-k) for the largest k whose
// coverage, 1 - 2·P(Binomial(n, ½) < k), is at least conf. It assumes
// nothing about the shape of the distribution (a bimodal row is fine),
// only that the samples are independent, as benchstat's intervals do.
// ok is false when there are too few samples for any interval at that
// level (fewer than MinCISamples at 95 %); lo and hi are then the range.
func MedianCI(xs []float64, conf float64) (lo, hi float64, ok bool) {
	n := len(xs)
	if n == 0 {
		return math.NaN(), math.NaN(), false
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	k := ciRank(n, conf)
	if k == 0 {
		return s[0], s[n-1], false
	}
	return s[k-1], s[n-k], true
}

// ciRank is the 1-based rank k of MedianCI's lower bound, or 0 when even
// k = 1 does not reach conf.
func ciRank(n int, conf float64) int {
	k := 0
	// cdf accumulates P(B < j) for j = 1, 2, ... where B ~ Binomial(n, ½).
	cdf := 0.0
	for j := 1; j <= (n+1)/2; j++ {
		cdf += binomHalf(n, j-1)
		if 1-2*cdf >= conf-1e-12 {
			k = j
		} else {
			break
		}
	}
	return k
}

// binomHalf is P(B = i) for B ~ Binomial(n, ½), in logs so that large n
// does not overflow.
func binomHalf(n, i int) float64 {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	return math.Exp(lg(n) - lg(i) - lg(n-i) - float64(n)*math.Ln2)
}

// Geomean is the geometric mean of xs, which must be positive; NaN for
// none or for a non-positive value.
func Geomean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, x := range xs {
		if !(x > 0) {
			return math.NaN()
		}
		sum += math.Log(x)
	}
	return math.Exp(sum / float64(len(xs)))
}

// MannWhitneyU is the two-sided p-value of the Mann-Whitney U test (the
// Wilcoxon rank-sum test) that a and b come from the same distribution,
// the test benchstat applies to two runs. With no ties and at most 50
// samples on each side the p-value is exact (the distribution of U by
// counting); otherwise it is the normal approximation with the tie
// correction and a continuity correction. It returns 1 when either side
// is empty, as no difference can be shown.
func MannWhitneyU(a, b []float64) float64 {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return 1
	}
	type obs struct {
		v     float64
		first bool
	}
	all := make([]obs, 0, n1+n2)
	for _, v := range a {
		all = append(all, obs{v, true})
	}
	for _, v := range b {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(x, y obs) int {
		switch {
		case x.v < y.v:
			return -1
		case x.v > y.v:
			return 1
		}
		return 0
	})
	// Midranks, and the tie term Σ(t³ - t).
	r1 := 0.0
	ties := 0.0
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // ranks i+1 .. j, averaged
		for k := i; k < j; k++ {
			if all[k].first {
				r1 += rank
			}
		}
		if t := float64(j - i); t > 1 {
			ties += t*t*t - t
		}
		i = j
	}
	u1 := r1 - float64(n1*(n1+1))/2
	u := math.Min(u1, float64(n1*n2)-u1)
	if ties == 0 && n1 <= 50 && n2 <= 50 {
		return math.Min(1, 2*uCDF(n1, n2, int(math.Round(u))))
	}
	n := float64(n1 + n2)
	mean := float64(n1*n2) / 2
	sd := math.Sqrt(float64(n1*n2) / 12 * ((n + 1) - ties/(n*(n-1))))
	if sd == 0 {
		return 1
	}
	z := (math.Abs(u-mean) - 0.5) / sd
	if z < 0 {
		z = 0
	}
	return math.Min(1, math.Erfc(z/math.Sqrt2))
}

// uCDF is P(U ≤ u) for the Mann-Whitney statistic of samples of n1 and
// n2 with no ties: the count of arrangements with that U over all
// C(n1+n2, n1), by the recurrence f(n1, n2, u) = f(n1-1, n2, u-n2) +
// f(n1, n2-1, u), in float64 (the counts reach C(100, 50) ≈ 1e29, well
// inside float64's range; the ratio is what matters).
func uCDF(n1, n2, u int) float64 {
	if u < 0 {
		return 0
	}
	// f[j][v]: arrangements of i items of the first sample and j of the
	// second with U = v, for the current i.
	maxU := n1 * n2
	f := make([][]float64, n2+1)
	for j := range f {
		f[j] = make([]float64, maxU+1)
		f[j][0] = 1 // i = 0: U is 0 whatever j
	}
	for i := 1; i <= n1; i++ {
		g := make([][]float64, n2+1)
		for j := range g {
			g[j] = make([]float64, maxU+1)
		}
		g[0][0] = 1 // j = 0: U is 0
		for j := 1; j <= n2; j++ {
			for v := 0; v <= i*j; v++ {
				// The largest item is from the first sample (it beats all
				// j of the second) or from the second (it beats none).
				x := g[j-1][v]
				if v >= j {
					x += f[j][v-j]
				}
				g[j][v] = x
			}
		}
		f = g
	}
	total, below := 0.0, 0.0
	for v, c := range f[n2] {
		total += c
		if v <= u {
			below += c
		}
	}
	return below / total
}
