package harness

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/knit-go/knit/bench/httpiso"
)

// Targets of the issue, checked per configuration against the inline
// reference of the same run (section "Targets").
const (
	targetPingP99  = 0.5 // open loop: /ping p99 ≤ 0.5 × inline
	targetTotalRPS = 1.0 // closed loop: total rps ≥ inline
	targetHeavyP99 = 1.0 // open loop: /ssr and /jwt p99 ≤ inline
)

// Markdown writes the report: the run's conditions, then tables shaped
// like the Knitting example's sections A (saturating), B (open loop) and C (the timer
// policy), the targets, and every round.
func Markdown(w io.Writer, res *Results, sums []Summary) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	m := res.Meta
	p("# HTTP isolation: Knitting's Hono server benchmark in net/http\n\n")
	p("- machine: %s, %d CPUs, %s/%s, %s; load average before the run: %s\n", m.CPU, m.NumCPU, m.GOOS, m.GOARCH, m.GoVersion, m.LoadAvg)
	switch {
	case m.Pinned:
		p("- server pinned to CPUs %s, load generator (and driver) to CPUs %s: same machine, disjoint CPUs\n", m.ServerCPUs, m.LoadCPUs)
	case m.ServerCPUs != "":
		p("- server on CPUs %s, load on CPUs %s: **not disjoint**, the load competes with the server for CPU\n", m.ServerCPUs, m.LoadCPUs)
	default:
		p("- **not pinned**: server and load share every CPU\n")
	}
	if m.Nice != 0 {
		p("- server and load run at nice %d, so that the rest of the machine disturbs them less\n", m.Nice)
	}
	p("- closed loop for every configuration, then open loop for every configuration (as the Knitting example's drive.py); %d round(s) each, configurations interleaved, medians; every row is a fresh server process whose identity is asserted before load\n", m.Rounds)
	p("- idle window %v (closed-loop phase); per shape %v warm-up then %v measured; closed loop %d connections per route; open loop %d req/s per route",
		m.Idle, m.Warmup, m.Window, m.Conns, res.Rate)
	if m.RateGiven {
		p(" (given)")
	} else if res.Ceiling > 0 {
		p(" (%.0f%% of the inline ceiling: its best closed-loop round, %.0f req/s total)", 100*m.RateFrac, res.Ceiling)
	}
	p("\n")
	if m.MaxOther > 0 {
		disturbed := 0
		for _, r := range res.Rows {
			if r.Disturbed {
				disturbed++
			}
		}
		p("- a row during which the rest of the machine used more than %.2f cores was measured again, up to %d more times: %d attempts were replaced, %d of %d rows were still disturbed in their last attempt (marked in the last table)\n",
			m.MaxOther, m.Retries, len(res.Retried), disturbed, len(res.Rows))
	}
	p("- G is the server's GOMAXPROCS, set explicitly; latencies in ms; `server cores` = server CPU / wall over the window; `idle cores` = server cores with no load at all; `other cores` = what the rest of the machine (other processes, the driver, the kernel) used during the window: the noise\n\n")

	r := ref(sums)
	if anyShape(sums, func(s Summary) *Shape { return s.Closed }) {
		sectionA(p, sums, r)
	}
	if anyShape(sums, func(s Summary) *Shape { return s.Open }) {
		sectionB(p, sums, r, res.Rate)
	}
	sectionC(p, sums)
	targets(p, sums, r)
	rounds(p, res.Rows)
}

func sectionA(p func(string, ...any), sums []Summary, r *Summary) {
	p("## A. Saturating load: throughput\n\n")
	p("| config | /ping | /ssr | /jwt | total rps | vs inline | spread | idle cores | server cores | rps/core | CPU-µs/req | load cores | other cores | OS threads |\n")
	p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range sums {
		c := s.Closed
		if c == nil {
			p("| %s | failed ||||||||||||\n", s.Name)
			continue
		}
		p("| %s | %.0f | %.0f | %.0f | %.0f | %s | %.0f%% | %.3f | %.2f | %.0f | %.0f | %.2f | %.2f | %d |\n",
			s.Name, c.Routes["ping"].RPS, c.Routes["ssr"].RPS, c.Routes["jwt"].RPS, c.TotalRPS,
			ratio(c.TotalRPS, refClosed(r, func(x *Shape) float64 { return x.TotalRPS })),
			100*s.ClosedRPSSpread, s.IdleCores, c.Cores, c.RPSPerCore, c.CPUPerReq, c.LoadCores, c.OtherCores, c.Threads)
	}
	p("\nLatency under the same saturating load (p50 / p99, ms):\n\n")
	p("| config | /ping | /ssr | /jwt | success |\n|---|---|---|---|---:|\n")
	for _, s := range sums {
		if c := s.Closed; c != nil {
			p("| %s | %s | %s | %s | %s |\n", s.Name, pp(c, "ping"), pp(c, "ssr"), pp(c, "jwt"), pct(c.Success()))
		}
	}
	p("\n")
}

func sectionB(p func(string, ...any), sums []Summary, r *Summary, rate int) {
	p("## B. Open loop, fixed rate: latency\n\n")
	p("%d req/s offered per route to every configuration (vegeta), so all do the same work and only latency and CPU vary. A row marked **over** served less than 95%% of the offered rate on some route: it was overloaded, and its latencies are queueing, not service.\n\n", rate)
	for _, rt := range Routes {
		p("**/%s**", rt.Name)
		if rt.Name == "ping" {
			p(" (never touches the pool)")
		}
		p("\n\n| config | rps | p50 | p99 | p99 vs inline | server cores | CPU-µs/req |")
		if rt.Name == "ping" {
			p(" idle cores | other cores | spread p99 |")
		}
		p(" success |\n|---|---:|---:|---:|---:|---:|---:|")
		if rt.Name == "ping" {
			p("---:|---:|---:|")
		}
		p("---:|\n")
		for _, s := range sums {
			o := s.Open
			if o == nil {
				continue
			}
			x := o.Routes[rt.Name]
			name := s.Name
			if overloaded(o, rate) {
				name += " **over**"
			}
			p("| %s | %.0f | %.2f | %.2f | %s | %.2f | %.0f |", name, x.RPS, x.P50, x.P99,
				ratio(x.P99, refOpenP99(r, rt.Name)), o.Cores, o.CPUPerReq)
			if rt.Name == "ping" {
				p(" %.3f | %.2f | %.0f%% |", s.IdleCores, o.OtherCores, 100*s.OpenPingSpread)
			}
			p(" %s |\n", pct(x.Success))
		}
		p("\n")
	}
}

// sectionC is the Knitting example's "full CPU picture": every knit pool size under
// every spin policy, CPU first.
func sectionC(p func(string, ...any), sums []Summary) {
	var knit []Summary
	for _, s := range sums {
		if s.Config.Variant.Name == httpiso.Knit {
			knit = append(knit, s)
		}
	}
	if len(knit) == 0 {
		return
	}
	p("## C. What the timer policy costs\n\n")
	p("knit rows only. `default` is the pool's own timer policy (pool.Config's Park.Spin = 0; see knit.DefaultSpin for when it spins); `0` never spins; `50us` spins 50 µs at every pool size.\n\n")
	p("| workers | spin | G | idle cores | closed: server cores | closed: rps/core | closed: CPU-µs/req | open: server cores | open: CPU-µs/req | open: /ssr p99 | open: /ping p99 |\n")
	p("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range knit {
		v := s.Config.Variant
		p("| %d | %s | %d | %.3f |", v.Workers, v.Spin, s.Config.GOMAXPROCS, s.IdleCores)
		if c := s.Closed; c != nil {
			p(" %.2f | %.0f | %.0f |", c.Cores, c.RPSPerCore, c.CPUPerReq)
		} else {
			p(" | | |")
		}
		if o := s.Open; o != nil {
			p(" %.2f | %.0f | %.2f | %.2f |\n", o.Cores, o.CPUPerReq, o.Routes["ssr"].P99, o.Routes["ping"].P99)
		} else {
			p(" | | | |\n")
		}
	}
	p("\n")
}

// targets checks each configuration against the targets.
func targets(p func(string, ...any), sums []Summary, r *Summary) {
	if r == nil || r.Closed == nil && r.Open == nil {
		return
	}
	p("## Targets, against inline in this run\n\n")
	p("| config | /ping p99, open (≤ %.2f×) | total rps, closed (≥ %.2f×) | /ssr p99, open (≤ %.2f×) | /jwt p99, open (≤ %.2f×) |\n",
		targetPingP99, targetTotalRPS, targetHeavyP99, targetHeavyP99)
	p("|---|---|---|---|---|\n")
	for _, s := range sums[1:] {
		p("| %s | %s | %s | %s | %s |\n", s.Name,
			check(s.Open, r.Open, func(x *Shape) float64 { return x.Routes["ping"].P99 }, targetPingP99, false),
			check(s.Closed, r.Closed, func(x *Shape) float64 { return x.TotalRPS }, targetTotalRPS, true),
			check(s.Open, r.Open, func(x *Shape) float64 { return x.Routes["ssr"].P99 }, targetHeavyP99, false),
			check(s.Open, r.Open, func(x *Shape) float64 { return x.Routes["jwt"].P99 }, targetHeavyP99, false))
	}
	p("\n")
}

// overloaded reports whether an open-loop shape fell short of the offered
// rate on any route.
func overloaded(o *Shape, rate int) bool {
	for _, r := range o.Routes {
		if r.RPS < 0.95*float64(rate) {
			return true
		}
	}
	return false
}

func check(s, ref *Shape, f func(*Shape) float64, target float64, atLeast bool) string {
	if s == nil || ref == nil || f(ref) == 0 {
		return "–"
	}
	x := f(s) / f(ref)
	met := x <= target
	if atLeast {
		met = x >= target
	}
	if met {
		return fmt.Sprintf("%.2f× met", x)
	}
	return fmt.Sprintf("%.2f× missed", x)
}

// rounds lists every round of every configuration, the raw rows behind
// the medians.
func rounds(p func(string, ...any), rows []Row) {
	p("## Every round\n\n")
	p("| shape | round | config | pid | idle cores | closed rps | closed cores | closed /ping p99 | open rps | open cores | open /ping p99 | open /ssr p99 | open /jwt p99 | other cores | note |\n")
	p("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range rows {
		idle := ""
		if r.Idle {
			idle = fmt.Sprintf("%.3f", r.IdleCores)
		}
		p("| %s | %d | %s | %d | %s |", r.Shape, r.Round, r.Name, r.PID, idle)
		if c := r.Closed; c != nil {
			p(" %.0f | %.2f | %.2f |", c.TotalRPS, c.Cores, c.Routes["ping"].P99)
		} else {
			p(" | | |")
		}
		if o := r.Open; o != nil {
			p(" %.0f | %.2f | %.2f | %.2f | %.2f |", o.TotalRPS, o.Cores, o.Routes["ping"].P99, o.Routes["ssr"].P99, o.Routes["jwt"].P99)
		} else {
			p(" | | | | |")
		}
		other := ""
		if sh := cmp.Or(r.Closed, r.Open); sh != nil {
			other = fmt.Sprintf("%.2f", sh.OtherCores)
		}
		note := firstLine(r.Err)
		if r.Disturbed {
			note = strings.TrimSpace("disturbed " + note)
		}
		if r.Attempt > 1 {
			note = strings.TrimSpace(fmt.Sprintf("attempt %d %s", r.Attempt, note))
		}
		p(" %s | %s |\n", other, note)
	}
	p("\n")
}

func ref(sums []Summary) *Summary {
	if len(sums) == 0 || sums[0].Rounds == 0 {
		return nil
	}
	return &sums[0]
}

func refClosed(r *Summary, f func(*Shape) float64) float64 {
	if r == nil || r.Closed == nil {
		return 0
	}
	return f(r.Closed)
}

func refOpenP99(r *Summary, route string) float64 {
	if r == nil || r.Open == nil {
		return 0
	}
	return r.Open.Routes[route].P99
}

func anyShape(sums []Summary, f func(Summary) *Shape) bool {
	for _, s := range sums {
		if f(s) != nil {
			return true
		}
	}
	return false
}

func ratio(x, ref float64) string {
	if ref == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", x/ref)
}

func pp(s *Shape, route string) string {
	x := s.Routes[route]
	return fmt.Sprintf("%.2f / %.2f", x.P50, x.P99)
}

func pct(f float64) string {
	if f == 1 {
		return "100%"
	}
	return fmt.Sprintf("%.2f%%", 100*f)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.ReplaceAll(s, "|", "/")
}
