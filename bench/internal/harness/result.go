package harness

import (
	"math"
	"time"

	"github.com/knit-go/knit/bench/internal/perfcount"
	"github.com/knit-go/knit/bench/internal/stats"
)

// Sample is one row's timed window in one round: the raw figures every
// summary is derived from. Reports keep all of them.
type Sample struct {
	Round   int           `json:"round"`
	Ops     int           `json:"ops"` // ops completed in the window
	Wall    time.Duration `json:"wall_ns"`
	CPU     time.Duration `json:"cpu_ns"` // process user+sys over the window; 0 if unavailable
	Mallocs uint64        `json:"mallocs"`
	// Counters are the events of every thread of the process over the
	// window (perfcount), by name; only the available ones.
	Counters perfcount.Counts `json:"counters,omitempty"`
}

// NsPerOp is the wall time of one op in this sample.
func (s Sample) NsPerOp() float64 { return float64(s.Wall) / float64(s.Ops) }

// CPUusPerOp is process CPU microseconds per op in this sample.
func (s Sample) CPUusPerOp() float64 { return float64(s.CPU) / 1e3 / float64(s.Ops) }

// AllocsPerOp is heap allocations per op (whole process) in this sample.
func (s Sample) AllocsPerOp() float64 { return float64(s.Mallocs) / float64(s.Ops) }

// Cores is CPU time over wall time: how many cores the process kept busy
// during the window. A parked handoff reads near 1 (the caller alone), a
// spinning one near 2.
func (s Sample) Cores() float64 { return float64(s.CPU) / float64(s.Wall) }

// RowResult is one row's samples and the summary of them.
type RowResult struct {
	Group   string   `json:"group,omitempty"`
	Name    string   `json:"name"`
	Bytes   int64    `json:"bytes_per_op,omitempty"`
	Error   string   `json:"error,omitempty"`
	Samples []Sample `json:"samples"`

	// Summary across rounds; all medians except Min and Max.
	MedianNs    float64 `json:"median_ns_per_op"`
	MinNs       float64 `json:"min_ns_per_op"`
	MaxNs       float64 `json:"max_ns_per_op"`
	CPUusPerOp  float64 `json:"cpu_us_per_op"`
	AllocsPerOp float64 `json:"allocs_per_op"`
	Cores       float64 `json:"cores"`
	// Ratio is MedianNs over the reference row's MedianNs in the same
	// group: 2 means twice as slow as the reference. 0 when the group
	// has no usable reference.
	Ratio float64 `json:"ratio_vs_ref"`
	// Versus is Row.Versus; RoundRatio is the median, over the rounds
	// that both rows completed, of this row's time per op over Versus's
	// in the same round. 0 when there is no such row or round.
	Versus     string  `json:"versus,omitempty"`
	RoundRatio float64 `json:"round_ratio_vs,omitempty"`
	HasCPU     bool    `json:"has_cpu"`
	// CountersPerOp is each counter's median per op, by name: only the
	// counters every sample has.
	CountersPerOp map[string]float64 `json:"counters_per_op,omitempty"`
}

// GBps is payload gigabytes per second at the median (bytes per ns).
func (r RowResult) GBps() float64 {
	if r.Bytes == 0 || r.MedianNs <= 0 {
		return 0
	}
	return float64(r.Bytes) / r.MedianNs
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
	// Counters are the counters the run asked for, available or not:
	// the tables' counter columns, in order.
	Counters []perfcount.Info `json:"counters,omitempty"`
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

// summarize fills the summary fields from the samples.
func (r *RowResult) summarize() {
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
		cpu[i] = s.CPUusPerOp()
		allocs[i] = s.AllocsPerOp()
		cores[i] = s.Cores()
		if s.CPU == 0 {
			r.HasCPU = false
		}
	}
	r.MedianNs = stats.Median(ns)
	r.MinNs, r.MaxNs = stats.MinMax(ns)
	r.CPUusPerOp = stats.Median(cpu)
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

// setRatios fills Ratio for every row from its group's reference row.
func (s *SuiteResult) setRatios() {
	ref := map[string]float64{}
	for _, r := range s.Rows {
		if r.Name == s.Ref && r.Error == "" && r.MedianNs > 0 {
			ref[r.Group] = r.MedianNs
		}
	}
	for i := range s.Rows {
		r := &s.Rows[i]
		if d, ok := ref[r.Group]; ok && r.Error == "" && !math.IsNaN(r.MedianNs) {
			r.Ratio = r.MedianNs / d
		}
	}
	s.setRoundRatios()
}

// setRoundRatios fills RoundRatio for every row that names a Versus row.
func (s *SuiteResult) setRoundRatios() {
	type key struct{ group, name string }
	byName := map[key]*RowResult{}
	for i := range s.Rows {
		byName[key{s.Rows[i].Group, s.Rows[i].Name}] = &s.Rows[i]
	}
	for i := range s.Rows {
		r := &s.Rows[i]
		v, ok := byName[key{r.Group, r.Versus}]
		if r.Versus == "" || !ok || r.Error != "" || v.Error != "" {
			continue
		}
		theirs := map[int]float64{}
		for _, smp := range v.Samples {
			theirs[smp.Round] = smp.NsPerOp()
		}
		var per []float64
		for _, smp := range r.Samples {
			if d, ok := theirs[smp.Round]; ok && d > 0 {
				per = append(per, smp.NsPerOp()/d)
			}
		}
		if len(per) > 0 {
			r.RoundRatio = stats.Median(per)
		}
	}
}
