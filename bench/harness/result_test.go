package harness

import (
	"strings"
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
	if r.CPUNsPerOp != 400 || r.AllocsPerOp != 2 || r.Cores != 20 || !r.HasCPU {
		t.Errorf("cpu %v allocs %v cores %v hasCPU %v, want 400 2 20 true", r.CPUNsPerOp, r.AllocsPerOp, r.Cores, r.HasCPU)
	}
	if r.HasCI() {
		t.Errorf("three rounds give an interval: [%v, %v]", r.CILowNs, r.CIHighNs)
	}
	if r.Noise == "" || !strings.Contains(r.Noise, "spread") {
		t.Errorf("rounds of 10, 20 and 30 ns are not flagged: %q", r.Noise)
	}
}

// rounds makes one sample per value, rounds 1, 2, ..., one op each.
func rounds(ns ...float64) []Sample {
	out := make([]Sample, len(ns))
	for i, v := range ns {
		out[i] = Sample{Round: i + 1, Ops: 1, Wall: time.Duration(v)}
	}
	return out
}

// TestIntervalAndNoise: ten steady rounds give an interval from the
// 2nd to the 9th smallest and no flag; a bimodal row is flagged with its
// range.
func TestIntervalAndNoise(t *testing.T) {
	r := RowResult{Samples: rounds(100, 101, 99, 102, 98, 100, 103, 97, 100, 101)}
	r.summarize()
	if r.CILowNs != 98 || r.CIHighNs != 102 || r.Noisy() {
		t.Errorf("steady row: CI [%v, %v], noise %q; want [98, 102], none", r.CILowNs, r.CIHighNs, r.Noise)
	}
	b := RowResult{Samples: rounds(5, 960, 6, 900, 5, 950, 7, 6, 940, 5)}
	b.summarize()
	if !strings.Contains(b.Noise, "range 192×") {
		t.Errorf("bimodal row's noise = %q, want its range", b.Noise)
	}
}

// TestRatios: each row's ratio is the median of its per-round ratios to
// the group's reference; a group without its reference falls back to a
// Go row and says why.
func TestRatios(t *testing.T) {
	s := SuiteResult{Ref: "ref", Rows: []RowResult{
		{Group: "a", Name: "ref", Samples: rounds(10, 20, 10)},
		{Group: "a", Name: "x", Samples: rounds(25, 40, 30)}, // 2.5, 2, 3
		{Group: "b", Name: "limit: y", Samples: rounds(7, 7, 7)},
		{Group: "b", Name: "chan z", Samples: rounds(14, 14, 14)},
	}}
	s.Summarize()
	if s.Rows[0].Ratio != 1 || s.Rows[1].Ratio != 2.5 {
		t.Errorf("group a ratios = %v %v, want 1 2.5", s.Rows[0].Ratio, s.Rows[1].Ratio)
	}
	if got := s.RefOf("b"); got != "chan z" || s.Rows[2].Ratio != 0.5 {
		t.Errorf("group b: ref %q, ratio %v; want chan z, 0.5", got, s.Rows[2].Ratio)
	}
	if s.RefOf("a") != "ref" || s.Refs["b"].Why == "" {
		t.Errorf("refs = %+v", s.Refs)
	}
}

// TestRefReplaced: a reference whose rounds span two modes, or that sits
// far from the rows it judges, is replaced by the group's Go row.
func TestRefReplaced(t *testing.T) {
	for name, ref := range map[string][]Sample{
		"bimodal": rounds(600, 4800, 650, 4700, 640, 4900),
		"far":     rounds(1, 1, 1, 1, 1, 1),
	} {
		s := SuiteResult{Ref: "limit: atomic", Rows: []RowResult{
			{Name: "limit: atomic", Samples: ref},
			{Name: "ants pool", Samples: rounds(3000, 3000, 3000, 3000, 3000, 3000)},
			{Name: "chan worker", Samples: rounds(2000, 2100, 2000, 2050, 2000, 2000)},
		}}
		s.Summarize()
		if got := s.RefOf(""); got != "chan worker" {
			t.Errorf("%s: reference %q, want chan worker (%+v)", name, got, s.Refs)
		}
		if s.Rows[2].Ratio != 1 || s.Rows[1].Ratio < 1.4 || s.Rows[1].Ratio > 1.5 {
			t.Errorf("%s: ratios %v, %v", name, s.Rows[2].Ratio, s.Rows[1].Ratio)
		}
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
	s.Summarize()
	if got := s.Rows[1].RoundRatio; got != 0.5 {
		t.Errorf("RoundRatio = %v, want 0.5 (the median of 0.5, 0.5, 3)", got)
	}
	for _, i := range []int{0, 2, 3} {
		if got := s.Rows[i].RoundRatio; got != 0 {
			t.Errorf("row %d (%s/%s): RoundRatio = %v, want 0", i, s.Rows[i].Group, s.Rows[i].Name, got)
		}
	}
}

func TestKindOf(t *testing.T) {
	for name, want := range map[string]Kind{
		"limit: atomic ping-pong":                     KindLimit,
		"ideal: W goroutines, total work / W each":    KindLimit,
		"knit pool (1 worker)":                        KindKnit,
		"examples/inboxpool on knit MPSC inboxes":     KindKnit,
		"examples/inboxpool on channel inboxes":       KindGo,
		"chan worker":                                 KindGo,
		"go f() + WaitGroup":                          KindGo,
		"xsync MPMCQueue, yield every miss":           KindPeer,
		"ants pool (1 worker)":                        KindPeer,
		"conc pool":                                   KindPeer,
		"errgroup.SetLimit":                           KindPeer,
		"loopback HTTP":                               KindPeer,
		"sync.Cond ping-pong":                         KindGo,
		"bytedance lscq (unbounded MPMC), try loop":   KindPeer,
		"runtime semaphore ping-pong (handoff)":       KindGo,
		"Workiva RingBuffer (Put/Get)":                KindPeer,
		"pond/v2 ResultPool":                          KindPeer,
		"gammazero/workerpool":                        KindPeer,
		"caller + 4 chan workers":                     KindGo,
		"knit Call+Wait, default policy":              KindKnit,
		"limit: SPSC indices, all assembly, spinning": KindLimit,
	} {
		if got := KindOf(KindAuto, name); got != want {
			t.Errorf("KindOf(%q) = %s, want %s", name, got, want)
		}
	}
	if KindOf(KindPeer, "knit x") != KindPeer {
		t.Error("an explicit kind is not kept")
	}
}

// TestRefReplacedSuiteWide: once the declared reference is replaced in
// one table for its instability, every table with a Go row uses that
// row, so the tables of a run share a yardstick.
func TestRefReplacedSuiteWide(t *testing.T) {
	steady := rounds(100, 100, 100, 100, 100, 100)
	s := SuiteResult{Ref: "limit", Rows: []RowResult{
		{Group: "1", Name: "limit", Samples: rounds(600, 4800, 650, 4700, 640, 4900)},
		{Group: "1", Name: "chan", Samples: steady},
		{Group: "2", Name: "limit", Samples: steady},
		{Group: "2", Name: "chan", Samples: rounds(200, 200, 200, 200, 200, 200)},
		{Group: "3", Name: "limit", Samples: steady},
		{Group: "3", Name: "ants", Samples: steady},
	}}
	s.Summarize()
	if s.RefOf("1") != "chan" || s.RefOf("2") != "chan" || s.RefOf("3") != "limit" {
		t.Errorf("refs: %q %q %q, want chan chan limit (%+v)", s.RefOf("1"), s.RefOf("2"), s.RefOf("3"), s.Refs)
	}
	if !strings.Contains(s.Refs["2"].Why, `in "1"`) {
		t.Errorf("table 2 does not say why: %q", s.Refs["2"].Why)
	}
}
