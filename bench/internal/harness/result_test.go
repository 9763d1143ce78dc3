package harness

import (
	"testing"
	"time"
)

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

// TestRoundRatios: a row with a Versus row is divided by it round by
// round, and the median of those ratios is kept; rounds only one of the
// two completed are left out.
func TestRoundRatios(t *testing.T) {
	smp := func(round int, ns time.Duration) Sample { return Sample{Round: round, Ops: 1, Wall: ns} }
	s := SuiteResult{Rows: []RowResult{
		{Group: "a", Name: "them", Samples: []Sample{smp(1, 10), smp(2, 40), smp(3, 10), smp(4, 10)}},
		// Per round: 0.5, 0.5, 3, and round 5 has no counterpart.
		{Group: "a", Name: "us", Versus: "them", Samples: []Sample{smp(1, 5), smp(2, 20), smp(3, 30), smp(5, 1)}},
		{Group: "b", Name: "us", Versus: "them"}, // no such row in group b
		{Group: "a", Name: "solo"},
	}}
	s.setRatios()
	if got := s.Rows[1].RoundRatio; got != 0.5 {
		t.Errorf("RoundRatio = %v, want 0.5 (the median of 0.5, 0.5, 3)", got)
	}
	for _, i := range []int{0, 2, 3} {
		if got := s.Rows[i].RoundRatio; got != 0 {
			t.Errorf("row %d (%s/%s): RoundRatio = %v, want 0", i, s.Rows[i].Group, s.Rows[i].Name, got)
		}
	}
}
