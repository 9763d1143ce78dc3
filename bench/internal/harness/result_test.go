package harness

import "testing"

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
