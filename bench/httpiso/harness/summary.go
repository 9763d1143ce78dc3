package harness

import (
	"time"

	"github.com/knit-go/knit/bench/internal/stats"
)

// Summary is one configuration over its successful rounds: the median of
// every column, and the spread of the ones the report qualifies.
type Summary struct {
	Config    Config  `json:"-"`
	Name      string  `json:"config"`
	Rounds    int     `json:"rounds"` // successful rows (rounds × shapes) the medians are over
	IdleCores float64 `json:"idle_cores"`
	IdleThr   int     `json:"idle_os_threads"`
	Closed    *Shape  `json:"closed,omitempty"`
	Open      *Shape  `json:"open,omitempty"`

	// Spreads: (max - min) / median over the rounds, 0 with one round.
	ClosedRPSSpread float64 `json:"closed_rps_spread"`
	OpenPingSpread  float64 `json:"open_ping_p99_spread"`
}

// Summarize folds the rows into one Summary per configuration, in plan
// order.
func Summarize(cfgs []Config, rows []Row) []Summary {
	out := make([]Summary, 0, len(cfgs))
	for _, c := range cfgs {
		s := Summary{Config: c, Name: c.String()}
		var ok []Row
		for _, r := range rows {
			if r.Name == s.Name && r.Err == "" {
				ok = append(ok, r)
			}
		}
		s.Rounds = len(ok)
		var idle []Row
		for _, r := range ok {
			if r.Idle {
				idle = append(idle, r)
			}
		}
		if len(idle) > 0 {
			s.IdleCores = median(idle, func(r Row) float64 { return r.IdleCores })
			s.IdleThr = int(median(idle, func(r Row) float64 { return float64(r.IdleThr) }))
		}
		if len(ok) > 0 {
			s.Closed = medianShape(ok, func(r Row) *Shape { return r.Closed })
			s.Open = medianShape(ok, func(r Row) *Shape { return r.Open })
			s.ClosedRPSSpread = spread(withShape(ok, Closed), func(r Row) float64 { return r.Closed.TotalRPS })
			s.OpenPingSpread = spread(withShape(ok, Open), func(r Row) float64 { return r.Open.Routes["ping"].P99 })
		}
		out = append(out, s)
	}
	return out
}

// withShape is the rows that measured shape.
func withShape(rows []Row, shape string) []Row {
	var out []Row
	for _, r := range rows {
		if shape == Closed && r.Closed != nil || shape == Open && r.Open != nil {
			out = append(out, r)
		}
	}
	return out
}

// medianShape is the field-by-field median of one shape over rows.
func medianShape(rows []Row, get func(Row) *Shape) *Shape {
	var have []Row
	for _, r := range rows {
		if get(r) != nil {
			have = append(have, r)
		}
	}
	if len(have) == 0 {
		return nil
	}
	f := func(x func(*Shape) float64) float64 {
		return median(have, func(r Row) float64 { return x(get(r)) })
	}
	first := get(have[0])
	m := &Shape{
		Mode: first.Mode, Conns: first.Conns, Rate: first.Rate,
		Routes:     map[string]RouteResult{},
		Wall:       time.Duration(f(func(s *Shape) float64 { return float64(s.Wall) })),
		ServerCPU:  time.Duration(f(func(s *Shape) float64 { return float64(s.ServerCPU) })),
		Cores:      f(func(s *Shape) float64 { return s.Cores }),
		LoadCores:  f(func(s *Shape) float64 { return s.LoadCores }),
		OtherCores: f(func(s *Shape) float64 { return s.OtherCores }),
		Threads:    int(f(func(s *Shape) float64 { return float64(s.Threads) })),
		TotalRPS:   f(func(s *Shape) float64 { return s.TotalRPS }),
		CPUPerReq:  f(func(s *Shape) float64 { return s.CPUPerReq }),
		RPSPerCore: f(func(s *Shape) float64 { return s.RPSPerCore }),
	}
	for _, rt := range Routes {
		// Latency medians skip rounds in which the route completed nothing
		// (a starved server): their zero percentiles are no measurement.
		var served []Row
		for _, r := range have {
			if get(r).Routes[rt.Name].Requests > 0 {
				served = append(served, r)
			}
		}
		g := func(rows []Row, x func(RouteResult) float64) float64 {
			if len(rows) == 0 {
				return 0
			}
			return median(rows, func(r Row) float64 { return x(get(r).Routes[rt.Name]) })
		}
		m.Routes[rt.Name] = RouteResult{
			Requests: int(g(have, func(r RouteResult) float64 { return float64(r.Requests) })),
			OK:       int(g(have, func(r RouteResult) float64 { return float64(r.OK) })),
			RPS:      g(have, func(r RouteResult) float64 { return r.RPS }),
			P50:      g(served, func(r RouteResult) float64 { return r.P50 }),
			P99:      g(served, func(r RouteResult) float64 { return r.P99 }),
			// The worst round, not the median: one failed request is news,
			// and so is a round that completed none.
			Success: minOver(have, func(r Row) float64 { return get(r).Routes[rt.Name].Success }),
		}
	}
	return m
}

// values is f of every row, for the stats functions.
func values(rows []Row, f func(Row) float64) []float64 {
	v := make([]float64, len(rows))
	for i, r := range rows {
		v[i] = f(r)
	}
	return v
}

func median(rows []Row, f func(Row) float64) float64 {
	return stats.Median(values(rows, f))
}

func minOver(rows []Row, f func(Row) float64) float64 {
	lo, _ := stats.MinMax(values(rows, f))
	return lo
}

func spread(rows []Row, f func(Row) float64) float64 {
	if len(rows) < 2 {
		return 0
	}
	v := values(rows, f)
	lo, hi := stats.MinMax(v)
	if m := stats.Median(v); m > 0 {
		return (hi - lo) / m
	}
	return 0
}
