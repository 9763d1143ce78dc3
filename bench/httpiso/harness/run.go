package harness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"time"
)

// Options is one harness run.
type Options struct {
	Launcher
	// Ctx ends the run between rows: the row in flight finishes (its
	// server is stopped by PID as always), later rows are not started.
	// nil runs to the end.
	Ctx context.Context

	Configs []Config // Configs[0] is the inline reference
	Rounds  int      // each round visits every configuration in order

	Idle   time.Duration // idle CPU window, no load offered
	Settle time.Duration // before the idle window: workers park, spins run out
	Warmup time.Duration // per shape, not measured
	Window time.Duration // per shape, measured

	Closed, Open bool    // which shapes to run
	Conns        int     // closed loop: connections per route
	Rate         int     // open loop: requests/s per route; 0 derives it from the reference
	RateFrac     float64 // the derived rate is RateFrac × the reference's closed-loop total / routes
	MaxSamples   int     // per route per window

	ServerCPUs, LoadCPUs CPUList // empty: unpinned
	Nice                 int     // nice value of the server and the load (negative needs privilege)

	// MaxOther, when positive, is the most CPU (in cores) the rest of the
	// machine may take during a row's window before the row is measured
	// again, up to Retries more times. For shared machines: other work
	// only ever takes capacity away from the server, so a disturbed row
	// says little about the server. Every attempt is kept in the results.
	MaxOther float64
	Retries  int
	Port     int // 0 picks one free port for the whole run

	Progress io.Writer // nil: quiet
}

// Row is one server process: one configuration, one round, one shape.
type Row struct {
	Config    Config  `json:"-"`
	Name      string  `json:"config"`
	Round     int     `json:"round"`
	Shape     string  `json:"shape"`
	PID       int     `json:"pid"`
	Idle      bool    `json:"idle_measured"` // idle is measured in the first phase only
	IdleCores float64 `json:"idle_cores"`
	IdleThr   int     `json:"idle_os_threads"`
	Closed    *Shape  `json:"closed,omitempty"`
	Open      *Shape  `json:"open,omitempty"`
	Err       string  `json:"error,omitempty"`
	Attempt   int     `json:"attempt"`   // 1, or more when earlier attempts were disturbed
	Disturbed bool    `json:"disturbed"` // other cores above MaxOther in this attempt too
}

// other is the rest of the machine's CPU during the row's window.
func (r Row) other() float64 {
	if sh := cmp.Or(r.Closed, r.Open); sh != nil {
		return sh.OtherCores
	}
	return 0
}

// Results is a whole run.
type Results struct {
	Meta    Meta    `json:"meta"`
	Ceiling float64 `json:"inline_ceiling_rps"` // the reference's median closed-loop total
	Rate    int     `json:"rate_per_route"`     // the open loop's offered rate, per route
	Rows    []Row   `json:"rows"`               // every round of every configuration and shape
	Retried []Row   `json:"retried,omitempty"`  // attempts replaced because they were disturbed
}

// Meta describes the machine and the run for the report.
type Meta struct {
	CPU        string        `json:"cpu"`
	NumCPU     int           `json:"numcpu"`
	LoadAvg    string        `json:"loadavg_before"`
	GoVersion  string        `json:"go"`
	GOOS       string        `json:"goos"`
	GOARCH     string        `json:"goarch"`
	ServerCPUs string        `json:"server_cpus"`
	LoadCPUs   string        `json:"load_cpus"`
	Pinned     bool          `json:"pinned_apart"`
	Nice       int           `json:"nice"`
	Rounds     int           `json:"rounds"`
	Idle       time.Duration `json:"idle_ns"`
	Warmup     time.Duration `json:"warmup_ns"`
	Window     time.Duration `json:"window_ns"`
	Conns      int           `json:"conns_per_route"`
	RateFrac   float64       `json:"rate_frac"`
	RateGiven  bool          `json:"rate_given"`
	MaxOther   float64       `json:"max_other_cores"`
	Retries    int           `json:"retries"`
	Started    time.Time     `json:"started"`
	Elapsed    time.Duration `json:"elapsed_ns"`
}

// Run measures every configuration as the Knitting example's drive.py does: first
// the closed loop for every configuration, Rounds times, interleaved (A B
// C, A B C); then the open loop the same way, at RateFrac of the inline
// reference's median closed-loop ceiling. Every row is its own server
// process: start, assert identity, (idle CPU, in the first phase), load,
// stop. A row that fails is recorded with its error and the run goes on;
// Run's error joins them.
func Run(opt Options) (*Results, error) {
	if len(opt.Configs) == 0 {
		return nil, errors.New("no configurations")
	}
	if opt.Rounds < 1 {
		opt.Rounds = 1
	}
	if opt.Open && opt.Rate <= 0 && !opt.Closed {
		return nil, errors.New("the open loop alone needs an explicit rate: there is no closed-loop ceiling to take 73% of")
	}
	port := opt.Port
	if port == 0 {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		port = p
	}
	start := time.Now()
	res := &Results{
		Meta: Meta{
			CPU: cpuModel(), NumCPU: runtime.NumCPU(), LoadAvg: loadAverage(),
			GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
			ServerCPUs: opt.ServerCPUs.String(), LoadCPUs: opt.LoadCPUs.String(),
			Pinned: len(opt.ServerCPUs) > 0 && len(opt.LoadCPUs) > 0 && !opt.ServerCPUs.Overlaps(opt.LoadCPUs),
			Nice:   opt.Nice, Rounds: opt.Rounds, Idle: opt.Idle, Warmup: opt.Warmup, Window: opt.Window,
			Conns: opt.Conns, RateFrac: opt.RateFrac, RateGiven: opt.Rate > 0, Started: start,
			MaxOther: opt.MaxOther, Retries: opt.Retries,
		},
		Rate: opt.Rate,
	}
	// One secret for the run, random, in the children's environment only.
	secret := newSecret()
	var errs []error
	var shapes []string
	if opt.Closed {
		shapes = append(shapes, Closed)
	}
	if opt.Open {
		shapes = append(shapes, Open)
	}
	for phase, shape := range shapes {
		if shape == Open && res.Rate == 0 {
			// The Knitting example's matched load: about 73% of the inline ceiling
			// measured in this run, the same for every configuration.
			res.Ceiling = refCeiling(res.Rows, maxOf)
			if res.Ceiling == 0 {
				errs = append(errs, errors.New("no inline closed-loop ceiling: open loop skipped"))
				break
			}
			res.Rate = max(1, int(math.Round(opt.RateFrac*res.Ceiling/float64(len(Routes)))))
			opt.progress("open-loop rate: %d req/s per route (%.0f%% of the inline ceiling, best round %.0f req/s)\n",
				res.Rate, 100*opt.RateFrac, res.Ceiling)
		}
		for round := range opt.Rounds {
			for _, cfg := range opt.Configs {
				if opt.Ctx != nil && opt.Ctx.Err() != nil {
					res.Meta.Elapsed = time.Since(start)
					return res, errors.Join(append(errs, errors.New("interrupted: the rows after this point were not measured"))...)
				}
				row := opt.measure(res, cfg, round, shape, phase == 0, port, secret)
				if row.Err != "" {
					errs = append(errs, fmt.Errorf("%s %s round %d: %s", cfg, shape, round+1, row.Err))
					opt.progress("  FAILED: %s\n", firstLine(row.Err))
				} else {
					opt.progress("  %s\n", row.brief())
				}
				res.Rows = append(res.Rows, row)
			}
		}
	}
	if res.Ceiling == 0 {
		res.Ceiling = refCeiling(res.Rows, maxOf)
	}
	res.Meta.Elapsed = time.Since(start)
	return res, errors.Join(errs...)
}

// measure runs one row, again while it is disturbed and retries are left.
func (opt *Options) measure(res *Results, cfg Config, round int, shape string, idle bool, port int, secret string) Row {
	for attempt := 1; ; attempt++ {
		opt.progress("%-6s round %d/%d  %-30s", shape, round+1, opt.Rounds, cfg)
		row := opt.runConfig(cfg, round, shape, idle, port, secret, res.Rate)
		row.Attempt = attempt
		row.Disturbed = opt.MaxOther > 0 && row.Err == "" && row.other() > opt.MaxOther
		if !row.Disturbed || attempt > opt.Retries {
			return row
		}
		opt.progress("  disturbed: other cores %.2f > %.2f, again\n", row.other(), opt.MaxOther)
		res.Retried = append(res.Retried, row)
	}
}

// refCeiling is the closed-loop ceiling of the reference (the first
// configuration): the best of its rounds. Other work on the machine only
// ever takes capacity away, so the best round is the nearest to what the
// server itself can do; the tables still report medians.
func refCeiling(rows []Row, pick func([]Row, func(Row) float64) float64) float64 {
	var ref []Row
	for _, r := range rows {
		if r.Closed != nil && r.Err == "" && (len(ref) == 0 || r.Name == ref[0].Name) {
			ref = append(ref, r)
		}
	}
	if len(ref) == 0 {
		return 0
	}
	return pick(ref, func(r Row) float64 { return r.Closed.TotalRPS })
}

func maxOf(rows []Row, f func(Row) float64) float64 {
	hi := f(rows[0])
	for _, r := range rows[1:] {
		hi = max(hi, f(r))
	}
	return hi
}

// runConfig is one server process's life.
func (opt *Options) runConfig(cfg Config, round int, shape string, idle bool, port int, secret string, rate int) (row Row) {
	row = Row{Config: cfg, Name: cfg.String(), Round: round + 1, Shape: shape, Idle: idle}
	srv, err := opt.startServer(cfg, port, opt.ServerCPUs, opt.Nice, secret)
	if err != nil {
		row.Err = err.Error()
		return row
	}
	row.PID = srv.pid
	defer func() {
		if err := srv.stop(10 * time.Second); err != nil && row.Err == "" {
			row.Err = err.Error()
		}
	}()

	if idle {
		if row.IdleCores, row.IdleThr, err = idleCores(srv.pid, opt.Settle, opt.Idle); err != nil {
			row.Err = err.Error()
			return row
		}
	}
	spec := LoadSpec{
		Addr:       srv.addr(),
		Mode:       shape,
		Conns:      opt.Conns,
		Warmup:     opt.Warmup,
		Window:     opt.Window,
		MaxSamples: opt.MaxSamples,
		GOMAXPROCS: len(opt.LoadCPUs),
	}
	var sh *Shape
	if shape == Open {
		spec.Rate = rate
	}
	if sh, err = opt.runShape(spec, srv.pid, opt.LoadCPUs, opt.Nice); err != nil {
		row.Err = err.Error()
		return row
	}
	if shape == Open {
		row.Open = sh
	} else {
		row.Closed = sh
	}
	return row
}

// idleCores is the server's CPU over window with no load offered at all,
// after settle: the column that exposed Knitting's spin policy.
func idleCores(pid int, settle, window time.Duration) (float64, int, error) {
	time.Sleep(settle)
	c0, err := procCPU(pid)
	if err != nil {
		return 0, 0, err
	}
	t0 := time.Now()
	time.Sleep(window)
	c1, err := procCPU(pid)
	if err != nil {
		return 0, 0, err
	}
	thr, err := procThreads(pid)
	return (c1 - c0).Seconds() / time.Since(t0).Seconds(), thr, err
}

func (opt *Options) progress(format string, a ...any) {
	if opt.Progress != nil {
		fmt.Fprintf(opt.Progress, format, a...)
	}
}

// brief is a row's progress line.
func (r Row) brief() string {
	s := fmt.Sprintf("pid %d", r.PID)
	if r.Attempt > 1 {
		s += fmt.Sprintf(" (attempt %d)", r.Attempt)
	}
	if r.Idle {
		s += fmt.Sprintf(" idle %.3f", r.IdleCores)
	}
	if c := r.Closed; c != nil {
		s += fmt.Sprintf("  %.0f rps  %.2f cores  other %.2f", c.TotalRPS, c.Cores, c.OtherCores)
	}
	if o := r.Open; o != nil {
		s += fmt.Sprintf("  %.0f rps  ping p99 %.2fms  %.2f cores  other %.2f", o.TotalRPS, o.Routes["ping"].P99, o.Cores, o.OtherCores)
	}
	return s
}
