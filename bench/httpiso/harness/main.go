package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/knit-go/knit/bench/httpiso"
)

// Main is the harness's command line (cmd/httpiso-bench). With "serve" as
// its first argument it is the server (httpiso.Main), with "load" the
// load generator (RunLoad); the driver re-executes its own binary in
// those roles, so one build holds all three and the server's PID is the
// child's PID. Otherwise it is the driver. It returns the exit status: 2
// for bad flags, 1 for a failed configuration.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "serve":
			return httpiso.Main(args[1:], os.Getenv, stdout, stderr)
		case "load":
			if err := RunLoad(stdin, stdout); err != nil {
				fmt.Fprintf(stderr, "httpiso-bench load: %v\n", err)
				return 1
			}
			return 0
		}
	}
	return drive(args, stdout, stderr)
}

func drive(args []string, stdout, stderr io.Writer) int {
	d, code := parseDrive(args, stderr)
	if d == nil {
		return code
	}
	return d.run(stdout, stderr)
}

// driver is the driver's command line, parsed and checked: the options
// of the run, and where its results go.
type driver struct {
	opt Options
	out string // results directory; "" for the default under bench/results
}

// fail writes the command's error line and returns code.
func fail(stderr io.Writer, code int, format string, a ...any) int {
	fmt.Fprintf(stderr, "httpiso-bench: "+format+"\n", a...)
	return code
}

// parseDrive parses and checks the driver's flags and fills in their
// defaults: the quick or full plan, the CPU split, this binary as the
// launcher. It returns nil and the exit status when there is nothing to
// run: 2 for bad flags, 1 when the CPUs or the executable cannot be read.
func parseDrive(args []string, stderr io.Writer) (*driver, int) {
	fs := flag.NewFlagSet("httpiso-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		full       = fs.Bool("full", false, "the Knitting example's full sweep (pool sizes 1-15, every spin policy, longer windows, 3 rounds): for a 16-core machine")
		configs    = fs.String("configs", "", "comma-separated plan, first item inline: inline, knit:W[:SPIN], semaphore:W, ants:W, each with optional @G (default: the quick or full plan)")
		rounds     = fs.Int("rounds", 3, "rounds per shape, configurations interleaved")
		idle       = fs.Duration("idle", 0, "idle CPU window with no load (default 1s, or 5s with -full)")
		settle     = fs.Duration("settle", 300*time.Millisecond, "wait after start before the idle window")
		warmup     = fs.Duration("warmup", 0, "warm-up per load shape (default 500ms, or 6s with -full)")
		window     = fs.Duration("window", 0, "measured window per load shape (default 2s, or 15s with -full)")
		conns      = fs.Int("conns", 0, "closed loop: connections per route (default 32, or 100 with -full)")
		rate       = fs.Int("rate", 0, "open loop: req/s per route (default: -rate-frac of the inline ceiling measured in this run)")
		rateFrac   = fs.Float64("rate-frac", 0.73, "open-loop rate as a fraction of the inline closed-loop ceiling (the Knitting example's 73%)")
		shapes     = fs.String("shapes", "closed,open", "load shapes: closed, open or both")
		procs      = fs.Int("gomaxprocs", 0, "server GOMAXPROCS for configurations without @G (default: the number of server CPUs)")
		serverCPUs = fs.String("server-cpus", "", "CPUs for the server, e.g. 0-11 (default: all but the top quarter)")
		loadCPUs   = fs.String("load-cpus", "", "CPUs for the load generator and the driver (default: the top quarter, at least one)")
		noPin      = fs.Bool("no-pin", false, "do not pin the server and the load apart")
		maxOther   = fs.Float64("max-other", 0, "measure a row again when the rest of the machine used more than this many cores during its window (0: never)")
		retries    = fs.Int("retries", 2, "with -max-other: how many times a disturbed row is measured again")
		nice       = fs.Int("nice", 0, "nice value for the server and the load, -20..19; negative (needs privilege) makes other work on a shared machine disturb them less")
		port       = fs.Int("port", 0, "server port on 127.0.0.1 (default: one free port, reused for every configuration)")
		serverExe  = fs.String("server", "", "a separate httpiso-server binary to measure (default: this binary's serve mode)")
		maxSamples = fs.Int("max-samples", 1<<21, "latency samples per route per window: bounds memory and requests")
		out        = fs.String("out", "", "results directory (default bench/results/httpiso-<timestamp>)")
		quiet      = fs.Bool("q", false, "no progress on stderr")
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: httpiso-bench [flags]\n       httpiso-bench serve [server flags]\n       httpiso-bench load < spec.json\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, 2
	}
	if fs.NArg() > 0 {
		return nil, fail(stderr, 2, "unexpected arguments %q", fs.Args())
	}
	pick := func(v *time.Duration, quick, long time.Duration) {
		if *v == 0 {
			*v = quick
			if *full {
				*v = long
			}
		}
	}
	pick(idle, time.Second, 5*time.Second)
	pick(warmup, 500*time.Millisecond, 6*time.Second)
	pick(window, 2*time.Second, 15*time.Second)
	if *conns == 0 {
		*conns = 32
		if *full {
			*conns = 100
		}
	}
	if *conns < 1 || *rate < 0 || *rateFrac <= 0 || *rateFrac > 1 || *procs < 0 || *rounds < 1 || *nice < -20 || *nice > 19 || *maxOther < 0 || *retries < 0 {
		return nil, fail(stderr, 2, "bad -conns, -rate, -rate-frac, -gomaxprocs, -rounds, -nice, -max-other or -retries")
	}

	opt := Options{
		Rounds: *rounds, Idle: *idle, Settle: *settle, Warmup: *warmup, Window: *window,
		Conns: *conns, Rate: *rate, RateFrac: *rateFrac, MaxSamples: *maxSamples, Port: *port, Nice: *nice,
		MaxOther: *maxOther, Retries: *retries,
	}
	for _, s := range strings.Split(*shapes, ",") {
		switch strings.TrimSpace(s) {
		case Closed:
			opt.Closed = true
		case Open:
			opt.Open = true
		default:
			return nil, fail(stderr, 2, "-shapes: unknown shape %q (closed, open)", s)
		}
	}

	avail, err := availableCPUs()
	if err != nil {
		return nil, fail(stderr, 1, "%v", err)
	}
	opt.ServerCPUs, opt.LoadCPUs = SplitCPUs(avail)
	for _, f := range []struct {
		s   string
		dst *CPUList
	}{{*serverCPUs, &opt.ServerCPUs}, {*loadCPUs, &opt.LoadCPUs}} {
		if f.s != "" {
			if *f.dst, err = ParseCPUList(f.s); err != nil {
				return nil, fail(stderr, 2, "%v", err)
			}
		}
	}
	if *noPin {
		opt.ServerCPUs, opt.LoadCPUs = nil, nil
	}
	g := *procs
	if g == 0 {
		g = len(opt.ServerCPUs)
		if g == 0 {
			g = len(avail)
		}
	}
	plan := *configs
	if plan == "" {
		plan = QuickPlan
		if *full {
			plan = FullPlan()
		}
	}
	if opt.Configs, err = ParseConfigs(plan, g); err != nil {
		return nil, fail(stderr, 2, "%v", err)
	}

	exe, err := os.Executable()
	if err != nil {
		return nil, fail(stderr, 1, "%v", err)
	}
	opt.Launcher = Launcher{Exe: exe, ServerExe: *serverExe}
	if !*quiet {
		opt.Progress = stderr
	}
	return &driver{opt: opt, out: *out}, 0
}

// run pins the driver beside the load, runs every configuration until
// done or interrupted, and writes the report to stdout and the results
// directory. It returns the exit status: 1 for a failed configuration.
func (d *driver) run(stdout, stderr io.Writer) int {
	opt := d.opt
	if len(opt.LoadCPUs) > 0 && !opt.ServerCPUs.Overlaps(opt.LoadCPUs) {
		// The driver wakes only at the window's edges, but it is kept off
		// the server's CPUs all the same.
		restore, err := pinSelf(opt.LoadCPUs)
		if err != nil {
			return fail(stderr, 1, "%v", err)
		}
		defer restore()
	}

	// SIGINT or SIGTERM ends the run after the row in flight, so that no
	// server or load is left behind (the Knitting example's third pitfall: a driver
	// assumed dead that was not); a second signal kills at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
		fmt.Fprintf(stderr, "httpiso-bench: interrupted: finishing the row in flight\n")
	}()
	opt.Ctx = ctx
	res, runErr := Run(opt)
	if res == nil {
		return fail(stderr, 1, "%v", runErr)
	}
	sums := Summarize(opt.Configs, res.Rows)
	var md bytes.Buffer
	Markdown(&md, res, sums)
	stdout.Write(md.Bytes())

	dir := d.out
	if dir == "" {
		dir = filepath.Join(resultsRoot(), "httpiso-"+res.Meta.Started.Format("20060102-150405"))
	}
	if err := writeResults(dir, md.Bytes(), res, sums); err != nil {
		return fail(stderr, 1, "writing results: %v", err)
	}
	fmt.Fprintf(stderr, "httpiso-bench: results in %s (%v)\n", dir, res.Meta.Elapsed.Round(time.Second))
	if runErr != nil {
		return fail(stderr, 1, "%v", runErr)
	}
	return 0
}

func writeResults(dir string, md []byte, res *Results, sums []Summary) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.md"), md, 0o644); err != nil {
		return err
	}
	b, err := json.MarshalIndent(struct {
		*Results
		Summary []Summary `json:"summary"`
	}{res, sums}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644)
}

// resultsRoot is bench/results of this checkout when the command runs
// from the repository root or from bench/, where .gitignore already
// ignores it; elsewhere ./httpiso-results.
func resultsRoot() string {
	for _, dir := range []string{".", "bench"} {
		mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(mod), "module github.com/knit-go/knit/bench\n") {
			return filepath.Join(dir, "results")
		}
	}
	return "httpiso-results"
}
