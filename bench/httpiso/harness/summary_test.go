package harness

import (
	"math"
	"testing"
)

func shapeOf(mode string, total, pingP99 float64, pingReqs int) *Shape {
	return &Shape{Mode: mode, TotalRPS: total, Routes: map[string]RouteResult{
		"ping": {Requests: pingReqs, OK: pingReqs, P99: pingP99, RPS: float64(pingReqs), Success: ok(pingReqs)},
		"ssr":  {Requests: 10, OK: 10, P99: 1, Success: 1},
		"jwt":  {Requests: 10, OK: 10, P99: 1, Success: 1},
	}}
}

func ok(n int) float64 {
	if n == 0 {
		return 0
	}
	return 1
}

func TestSummarize(t *testing.T) {
	cfgs, _ := ParseConfigs("inline,knit:1", 1)
	in, kn := cfgs[0].String(), cfgs[1].String()
	rows := []Row{
		{Name: in, Shape: Closed, Idle: true, IdleCores: 0.01, Closed: shapeOf(Closed, 100, 5, 10)},
		{Name: in, Shape: Closed, Idle: true, IdleCores: 0.03, Closed: shapeOf(Closed, 300, 7, 10)},
		{Name: in, Shape: Closed, Idle: true, IdleCores: 0.02, Closed: shapeOf(Closed, 200, 6, 10)},
		{Name: in, Shape: Closed, Err: "boom", Closed: shapeOf(Closed, 1e9, 1e9, 10)},
		{Name: in, Shape: Open, Open: shapeOf(Open, 60, 2, 10)},
		{Name: in, Shape: Open, Open: shapeOf(Open, 60, 4, 10)},
		{Name: in, Shape: Open, Open: shapeOf(Open, 30, 0, 0)}, // a starved round: no /ping done
		{Name: kn, Shape: Open, Open: shapeOf(Open, 60, 1, 10)},
	}
	sums := Summarize(cfgs, rows)
	s := sums[0]
	if s.Rounds != 6 {
		t.Errorf("rows used: %d, want 6 (the failed one left out)", s.Rounds)
	}
	if s.IdleCores != 0.02 {
		t.Errorf("idle median %v, want 0.02 (idle rows only)", s.IdleCores)
	}
	if s.Closed.TotalRPS != 200 || s.Closed.Routes["ping"].P99 != 6 {
		t.Errorf("closed medians: %v rps, p99 %v", s.Closed.TotalRPS, s.Closed.Routes["ping"].P99)
	}
	if math.Abs(s.ClosedRPSSpread-1) > 1e-9 {
		t.Errorf("closed spread %v, want (300-100)/200 = 1", s.ClosedRPSSpread)
	}
	if p := s.Open.Routes["ping"]; p.P99 != 3 || p.Success != 0 {
		t.Errorf("open /ping: p99 %v (want 3: the starved round's 0 is no latency), success %v (want 0: the worst round)", p.P99, p.Success)
	}
	if sums[1].Closed != nil || sums[1].Open == nil || sums[1].IdleCores != 0 {
		t.Errorf("knit summary: %+v", sums[1])
	}
	if c := refCeiling(rows, maxOf); c != 300 {
		t.Errorf("ceiling %v, want the best successful inline round, 300", c)
	}
}
