package main

import (
	"testing"
	"time"

	"github.com/knit-go/knit/bench/harness"
	"github.com/knit-go/knit/bench/report"
)

// TestIPCUseCase: the ipc-peers use case reads the CallBatch row against
// the fastest Go or peer row and shows the rings' floor, even where the
// atomic limit is faster and steady.
func TestIPCUseCase(t *testing.T) {
	steady := func(ns float64) []harness.Sample {
		var out []harness.Sample
		for i := range 10 {
			v := ns * (1 + 0.01*float64(i%3))
			out = append(out, harness.Sample{Round: i + 1, Ops: 1, Wall: time.Duration(v), CPU: time.Duration(v)})
		}
		return out
	}
	const g = "100 messages"
	floor := "limit: bare knit SPSC rings there and back, batches"
	s := harness.SuiteResult{Name: "ipc-peers", Ref: "limit: atomic ping-pong", Unit: "op", Rows: []harness.RowResult{
		{Group: g, Name: "limit: atomic ping-pong", Kind: harness.KindLimit, Samples: steady(300)},
		{Group: g, Name: floor, Kind: harness.KindLimit, Samples: steady(900)},
		{Group: g, Name: "chan worker", Kind: harness.KindGo, Samples: steady(10000)},
		{Group: g, Name: "knit pool (1 worker, CallBatch)", Kind: harness.KindKnit, Samples: steady(2000)},
		{Group: g, Name: "knit pool (1 worker, CallBatch, parked)", Kind: harness.KindKnit, Samples: steady(1900)},
		{Group: g, Name: "knit pool (1 worker, Call per message)", Kind: harness.KindKnit, Samples: steady(9000)},
	}}
	s.Summarize()
	var uc []report.UseCase
	for _, u := range useCases {
		if u.Suite == "ipc-peers" {
			uc = append(uc, u)
		}
	}
	vs := report.Verdicts(uc, []harness.SuiteResult{s})
	if len(vs) != 1 {
		t.Fatalf("%d verdicts for ipc-peers, want 1", len(vs))
	}
	v := vs[0]
	if v.Subject != "knit pool (1 worker, CallBatch)" || v.Rival != "chan worker" || v.Floor != floor {
		t.Errorf("subject %q, rival %q, floor %q; want the CallBatch row, chan worker and %q", v.Subject, v.Rival, v.Floor, floor)
	}
}
