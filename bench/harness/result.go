package harness

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/knit-go/knit/bench/internal/stats"
)

// Sample is one row's timed window in one round: the raw figures every
// summary is derived from. Reports keep all of them. Every time is in
// nanoseconds, in JSON as in Go.
type Sample struct {
	Round   int           `json:"round"`
	Ops     int           `json:"ops"` // ops completed in the window
	Wall    time.Duration `json:"wall_ns"`
	CPU     time.Duration `json:"cpu_ns"` // process user+sys over the window; 0 if unavailable
	Mallocs uint64        `json:"mallocs"`
	// Counters are the events of every thread of the process over the
	// window, by name; only the available ones.
	Counters Counts `json:"counters,omitempty"`
}

// NsPerOp is the wall time of one op in this sample.
func (s Sample) NsPerOp() float64 { return float64(s.Wall) / float64(s.Ops) }

// CPUNsPerOp is process CPU nanoseconds per op in this sample.
func (s Sample) CPUNsPerOp() float64 { return float64(s.CPU) / float64(s.Ops) }

// AllocsPerOp is heap allocations per op (whole process) in this sample.
func (s Sample) AllocsPerOp() float64 { return float64(s.Mallocs) / float64(s.Ops) }

// Cores is CPU time over wall time: how many cores the process kept busy
// during the window. A parked handoff reads near 1 (the caller alone), a
// spinning one near 2.
func (s Sample) Cores() float64 { return float64(s.CPU) / float64(s.Wall) }

// Noise thresholds: a median whose 95 % interval reaches further than
// NoisyCI from it, or whose rounds span a range of WideRange or more
// (max/min: two modes), is flagged.
const (
	NoisyCI   = 0.10
	WideRange = 3.0
)

// RowResult is one row's samples and the summary of them. Every time is
// in ns per op.
type RowResult struct {
	Group   string   `json:"group,omitempty"`
	Name    string   `json:"name"`
	Kind    Kind     `json:"kind"`
	Bytes   int64    `json:"bytes_per_op,omitempty"`
	Error   string   `json:"error,omitempty"`
	Samples []Sample `json:"samples"`

	// Summary across rounds; all medians except Min, Max and the
	// interval.
	MedianNs float64 `json:"median_ns_per_op"`
	// CILowNs and CIHighNs bound a 95 % confidence interval of the
	// median (order statistics, stats.MedianCI); both 0 when there are
	// too few rounds for one (fewer than 6).
	CILowNs     float64 `json:"ci_low_ns_per_op,omitempty"`
	CIHighNs    float64 `json:"ci_high_ns_per_op,omitempty"`
	MinNs       float64 `json:"min_ns_per_op"`
	MaxNs       float64 `json:"max_ns_per_op"`
	CPUNsPerOp  float64 `json:"cpu_ns_per_op"`
	AllocsPerOp float64 `json:"allocs_per_op"`
	Cores       float64 `json:"cores"`
	// Noise says why the row's figure is not to be trusted as it stands:
	// "±23%" (a wide interval), "range 178×" (two modes), "spread 40%"
	// (few rounds, far apart); "" for a stable row.
	Noise string `json:"noise,omitempty"`
	// Ratio is the median, over the rounds this row and its group's
	// reference (SuiteResult.Refs) both completed, of this row's time
	// over the reference's in the same round: 2 means twice as slow. 0
	// when the group has no usable reference. RatioCILow and RatioCIHigh
	// are its 95 % interval, 0 when there is none.
	Ratio       float64 `json:"ratio_vs_ref"`
	RatioCILow  float64 `json:"ratio_ci_low,omitempty"`
	RatioCIHigh float64 `json:"ratio_ci_high,omitempty"`
	// Versus is Row.Versus; RoundRatio is the median, over the rounds
	// that both rows completed, of this row's time per op over Versus's
	// in the same round. 0 when there is no such row or round.
	Versus     string  `json:"versus,omitempty"`
	RoundRatio float64 `json:"round_ratio_vs,omitempty"`
	HasCPU     bool    `json:"has_cpu"`
	// AllocsWithSetup: the row's goroutines hold off a stop-the-world
	// (they spin where the runtime cannot preempt them), so its
	// allocations are counted from before Start to after Close, its
	// setup with its window (see Run).
	AllocsWithSetup bool `json:"allocs_with_setup,omitempty"`
	// CountersPerOp is each counter's median per op, by name: only the
	// counters every sample has.
	CountersPerOp map[string]float64 `json:"counters_per_op,omitempty"`
}

// HasCI reports whether the median has a 95 % interval.
func (r RowResult) HasCI() bool { return r.CIHighNs > 0 }

// Noisy reports whether the row is flagged (see Noise).
func (r RowResult) Noisy() bool { return r.Noise != "" }

// Label is "group / name", or the name alone.
func (r RowResult) Label() string {
	if r.Group == "" {
		return r.Name
	}
	return r.Group + " / " + r.Name
}

// GBps is payload gigabytes per second at the median (bytes per ns).
func (r RowResult) GBps() float64 {
	if r.Bytes == 0 || r.MedianNs <= 0 {
		return 0
	}
	return float64(r.Bytes) / r.MedianNs
}

// NsPerOp is every sample's ns per op, in round order.
func (r RowResult) NsPerOp() []float64 {
	xs := make([]float64, len(r.Samples))
	for i, s := range r.Samples {
		xs[i] = s.NsPerOp()
	}
	return xs
}

// SuiteResult is one suite's run.
type SuiteResult struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Reproduces  string        `json:"reproduces,omitempty"`
	Unit        string        `json:"unit"`
	Ref         string        `json:"ref"`
	Speedup     bool          `json:"speedup,omitempty"`
	PlotRowsOnX bool          `json:"plot_rows_on_x,omitempty"`
	Rows        []RowResult   `json:"rows"`
	Elapsed     time.Duration `json:"elapsed_ns"`
	// Refs is the reference each group's ratios were taken against, by
	// group, where it is not Ref: Ref was missing, failed, unstable or
	// far from the rows (RefChoice.Why).
	Refs map[string]RefChoice `json:"refs,omitempty"`
	// Counters are the counters the run asked for, available or not:
	// the tables' counter columns, in order.
	Counters []CounterInfo `json:"counters,omitempty"`
}

// RefChoice is the reference a group's ratios use, when it is not the
// suite's declared Ref, and why.
type RefChoice struct {
	Name string `json:"name"` // "" when the group has no usable reference
	Why  string `json:"why"`
}

// RefOf is the name of the row group's ratios were taken against ("" for
// none).
func (s SuiteResult) RefOf(group string) string {
	if c, ok := s.Refs[group]; ok {
		return c.Name
	}
	return s.Ref
}

// Groups returns the suite's group names in first-seen order.
func (s SuiteResult) Groups() []string {
	var gs []string
	seen := map[string]bool{}
	for _, r := range s.Rows {
		if !seen[r.Group] {
			seen[r.Group] = true
			gs = append(gs, r.Group)
		}
	}
	return gs
}

// Summarize recomputes every summary field of every row from the raw
// samples: what Run does at the end of a suite, and what a reader of an
// older results.json calls to bring its figures to this version's
// definitions.
func (s *SuiteResult) Summarize() {
	for i := range s.Rows {
		s.Rows[i].Kind = KindOf(s.Rows[i].Kind, s.Rows[i].Name)
		s.Rows[i].summarize()
	}
	s.setRatios()
}

// summarize fills the summary fields from the samples.
func (r *RowResult) summarize() {
	keep := r.Samples
	*r = RowResult{
		Group: r.Group, Name: r.Name, Kind: r.Kind, Bytes: r.Bytes, Error: r.Error,
		Samples: keep, Versus: r.Versus, AllocsWithSetup: r.AllocsWithSetup,
	}
	if len(r.Samples) == 0 {
		return
	}
	ns := make([]float64, len(r.Samples))
	cpu := make([]float64, len(r.Samples))
	allocs := make([]float64, len(r.Samples))
	cores := make([]float64, len(r.Samples))
	r.HasCPU = true
	for i, s := range r.Samples {
		ns[i] = s.NsPerOp()
		cpu[i] = s.CPUNsPerOp()
		allocs[i] = s.AllocsPerOp()
		cores[i] = s.Cores()
		if s.CPU == 0 {
			r.HasCPU = false
		}
	}
	r.MedianNs = stats.Median(ns)
	r.MinNs, r.MaxNs = stats.MinMax(ns)
	if lo, hi, ok := stats.MedianCI(ns, stats.Confidence); ok {
		r.CILowNs, r.CIHighNs = lo, hi
	}
	r.Noise = noise(r.MedianNs, r.MinNs, r.MaxNs, r.CILowNs, r.CIHighNs, len(ns))
	r.CPUNsPerOp = stats.Median(cpu)
	r.AllocsPerOp = stats.Median(allocs)
	r.Cores = stats.Median(cores)
	for name := range r.Samples[0].Counters {
		per := make([]float64, 0, len(r.Samples))
		for _, s := range r.Samples {
			if v, ok := s.Counters[name]; ok {
				per = append(per, float64(v)/float64(s.Ops))
			}
		}
		if len(per) == len(r.Samples) {
			if r.CountersPerOp == nil {
				r.CountersPerOp = map[string]float64{}
			}
			r.CountersPerOp[name] = stats.Median(per)
		}
	}
}

// noise is a row's flag (RowResult.Noise) from its median, range and
// interval over n rounds.
func noise(med, lo, hi, ciLo, ciHi float64, n int) string {
	if n < 2 || !(med > 0) {
		return ""
	}
	var why []string
	if ciHi > 0 {
		if w := max(ciHi/med-1, 1-ciLo/med); w > NoisyCI {
			why = append(why, fmt.Sprintf("±%.0f%%", 100*w))
		}
	} else if sp := (hi - lo) / med; sp > 2*NoisyCI {
		why = append(why, fmt.Sprintf("spread %.0f%%", 100*sp))
	}
	if lo > 0 && hi/lo >= WideRange {
		why = append(why, fmt.Sprintf("range %.3g×", hi/lo))
	}
	return strings.Join(why, ", ")
}

// FarRef is how far (either way) a reference's median may sit from the
// median of its group's other rows before it is replaced.
const FarRef = 20.0

// setRatios picks each group's reference and fills Ratio for every row.
// A declared reference replaced in one table for being unstable or far
// from its rows is replaced in every table that has a Go row, so that
// the panels of one run share one yardstick.
func (s *SuiteResult) setRatios() {
	s.Refs = nil
	groups := s.Groups()
	names, whys := make([]string, len(groups)), make([]string, len(groups))
	suiteWide := ""
	for i, g := range groups {
		names[i], whys[i] = s.pickRef(g)
		if d := s.row(g, s.Ref); suiteWide == "" && whys[i] != "" && names[i] != s.Ref && usable(d) {
			suiteWide = fmt.Sprintf("%q, replaced in every table since in %q it was %s", s.Ref, g,
				strings.TrimPrefix(whys[i], fmt.Sprintf("%q, which is ", s.Ref)))
		}
	}
	for i, g := range groups {
		if suiteWide != "" && names[i] == s.Ref {
			if r := s.firstOf(g, KindGo); r != nil {
				names[i], whys[i] = r.Name, suiteWide
			}
		}
		if names[i] != s.Ref || whys[i] != "" {
			if s.Refs == nil {
				s.Refs = map[string]RefChoice{}
			}
			s.Refs[g] = RefChoice{Name: names[i], Why: whys[i]}
		}
		ref := s.row(g, names[i])
		for j := range s.Rows {
			r := &s.Rows[j]
			if r.Group != g || ref == nil || r.Error != "" {
				continue
			}
			if r == ref {
				r.Ratio = 1
				continue
			}
			r.Ratio, r.RatioCILow, r.RatioCIHigh = pairedRatio(r, ref)
		}
	}
	s.setRoundRatios()
}

// firstOf is the first usable row of kind k in group g, or nil.
func (s *SuiteResult) firstOf(g string, k Kind) *RowResult {
	for i := range s.Rows {
		r := &s.Rows[i]
		if r.Group == g && r.Kind == k && usable(r) {
			return r
		}
	}
	return nil
}

func (s *SuiteResult) row(group, name string) *RowResult {
	if name == "" {
		return nil
	}
	for i := range s.Rows {
		if s.Rows[i].Group == group && s.Rows[i].Name == name {
			return &s.Rows[i]
		}
	}
	return nil
}

func usable(r *RowResult) bool { return r != nil && r.Error == "" && r.MedianNs > 0 }

// unstable reports whether r's rounds spread over WideRange or more.
func unstable(r *RowResult) bool { return spread(r) >= WideRange }

// pickRef is the reference of group g: the suite's Ref when it is usable,
// stable and, for a limit, near the rows it judges (a floor 20× below
// them says more about the machine than about them). Otherwise its
// replacement is the group's first Go row (KindGo: a channel, the
// standard library), so a table's yardstick stays the thing a Go
// programmer would write, the same from run to run; when there is none,
// its first peer row. Never a knit row: the thing under test is not its
// own yardstick. A replacement must itself be steadier than an
// unstable Ref (a narrower range of rounds), or the Ref stays, with the
// reason.
func (s *SuiteResult) pickRef(g string) (string, string) {
	declared := s.row(g, s.Ref)
	var why string
	switch {
	case declared == nil:
		why = fmt.Sprintf("%q, which is not in this table", s.Ref)
	case !usable(declared):
		why = fmt.Sprintf("%q, which failed", s.Ref)
	case unstable(declared):
		why = fmt.Sprintf("%q, which is unstable this run (its rounds span %.3g×)", s.Ref, spread(declared))
	case declared.Kind != KindLimit:
		// A Go or peer reference is the yardstick a user compares with,
		// however far the rows around it are.
		return s.Ref, ""
	default:
		var others []float64
		for i := range s.Rows {
			r := &s.Rows[i]
			if r.Group == g && r != declared && usable(r) {
				others = append(others, r.MedianNs)
			}
		}
		if len(others) == 0 {
			return s.Ref, ""
		}
		m := stats.Median(others)
		if f := max(m/declared.MedianNs, declared.MedianNs/m); f > FarRef {
			why = fmt.Sprintf("%q, which is %.3g× from the median of the rows it judges", s.Ref, f)
		} else {
			return s.Ref, ""
		}
	}
	steadier := func(r *RowResult) bool {
		return !usable(declared) || !unstable(declared) || spread(r) < spread(declared)
	}
	for _, want := range []func(*RowResult) bool{
		func(r *RowResult) bool { return r.Kind == KindGo },
		func(r *RowResult) bool { return r.Kind == KindPeer },
	} {
		for i := range s.Rows {
			r := &s.Rows[i]
			if r.Group == g && r != declared && usable(r) && want(r) {
				if steadier(r) {
					return r.Name, why
				}
				break // the first of this kind is the candidate; it is not steadier
			}
		}
	}
	if usable(declared) {
		return s.Ref, strings.TrimPrefix(why, fmt.Sprintf("%q, which ", s.Ref)) + ", and no steadier row can replace it"
	}
	return "", why
}

// spread is a row's max/min over its rounds.
func spread(r *RowResult) float64 {
	if !(r.MinNs > 0) {
		return math.Inf(1)
	}
	return r.MaxNs / r.MinNs
}

// pairedRatio is the median over the rounds both rows completed of r's
// time over ref's in the same round, with its 95 % interval (0, 0 where
// there are too few rounds).
func pairedRatio(r, ref *RowResult) (med, lo, hi float64) {
	per := PairedRatios(*r, *ref)
	if len(per) == 0 {
		return 0, 0, 0
	}
	med = stats.Median(per)
	if l, h, ok := stats.MedianCI(per, stats.Confidence); ok {
		lo, hi = l, h
	}
	return med, lo, hi
}

// PairedRatios is a's time per op over b's in each round both completed,
// in round order: the per-round ratios that Ratio, RoundRatio and the
// verdict take the median of. Rows measured in the same rounds drift
// together on a noisy machine, and the ratio of a round cancels the
// drift both saw.
func PairedRatios(a, b RowResult) []float64 {
	theirs := map[int]float64{}
	for _, smp := range b.Samples {
		if d := smp.NsPerOp(); d > 0 {
			theirs[smp.Round] = d
		}
	}
	var per []float64
	for _, smp := range a.Samples {
		if d, ok := theirs[smp.Round]; ok {
			per = append(per, smp.NsPerOp()/d)
		}
	}
	return per
}

// setRoundRatios fills RoundRatio for every row that names a Versus row.
func (s *SuiteResult) setRoundRatios() {
	for i := range s.Rows {
		r := &s.Rows[i]
		if r.Versus == "" || r.Error != "" {
			continue
		}
		v := s.row(r.Group, r.Versus)
		if v == nil || v.Error != "" {
			continue
		}
		if per := PairedRatios(*r, *v); len(per) > 0 {
			r.RoundRatio = stats.Median(per)
		}
	}
}
