// Package knitbench is the knitbench command as a library: the flags,
// the progress display, the verdict, the tables, the plots, results.json
// and the Go benchmark format, and -compare, for any list of suites.
// knit's own command (bench/cmd/knitbench) is Main with knit's suites
// and use cases; a module of one's own gets the same command for its
// suites:
//
//	func main() {
//		os.Exit(knitbench.Main(os.Args[1:], os.Stdout, os.Stderr, knitbench.Options{
//			Suites: []harness.Suite{mySuite},
//		}))
//	}
//
// See examples/outside in the bench module.
package knitbench

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/knit-go/knit/bench/harness"
	"github.com/knit-go/knit/bench/internal/stats"
	"github.com/knit-go/knit/bench/report"
)

// Options is what a command built on Main runs.
type Options struct {
	// Suites are every suite the command knows, in the order "all" runs
	// them. Names must be unique.
	Suites []harness.Suite
	// UseCases are the verdict's questions; none prints no verdict.
	UseCases []report.UseCase
	// Subject names the implementation under test, the rows of kind
	// harness.KindKnit: the verdict's column and the plots' legend. ""
	// is "knit".
	Subject string
	// ResultsDir is where a run goes without -out: a new directory named
	// by the time under it. "" is ./knitbench-results.
	ResultsDir string
}

// Defaults of a run, and of a -full run. The rounds are enough for a
// 95 % interval on every median (it needs 6; 10 gives the 2nd and 9th
// of ten); rounds × duration per row is what 5 rounds of 100 ms were
// before intervals, so the default run takes about as long as it did.
const (
	DefaultRounds       = 10
	DefaultDuration     = 50 * time.Millisecond
	FullRounds          = 20
	FullDuration        = 250 * time.Millisecond
	maxRounds           = 1000
	maxDuration         = time.Hour
	maxProcs            = 1 << 16
	shortWindow         = 10 * time.Millisecond
	exitFailed, exitBad = 1, 2
)

// Main runs the command with its arguments and streams, and returns its
// exit status: 0, 1 when a row failed or the results could not be
// written after the run, 2 for a bad flag, a results directory that
// cannot be used, or an unreadable -compare input.
func Main(args []string, stdout, stderr io.Writer, opt Options) int {
	fs := flag.NewFlagSet("knitbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		names    = fs.String("suites", "all", "comma-separated suites to run (see -list), or all")
		list     = fs.Bool("list", false, "print the suites and exit")
		rounds   = fs.Int("rounds", DefaultRounds, fmt.Sprintf("timed rounds per row, 1 to %d (%d with -full); a 95%% interval needs %d", maxRounds, FullRounds, stats.MinCISamples))
		duration = fs.Duration("duration", DefaultDuration, fmt.Sprintf("timed window per row per round, above 0 and at most %v (%v with -full); under %v warns", maxDuration, FullDuration, shortWindow))
		procs    = fs.Int("gomaxprocs", 0, fmt.Sprintf("set GOMAXPROCS, 1 to %d (0 leaves the runtime's choice)", maxProcs))
		pin      = fs.Bool("pin", false, "bind every thread a row locks (the two ends of each limit ping-pong, a locked-thread row) to its own CPU (Linux); the runner and unlocked rows stay where the scheduler puts them")
		full     = fs.Bool("full", false, "scaled-up mode for large machines: wider sweeps, bigger problems, more rounds, longer windows")
		out      = fs.String("out", "", "results directory, new or empty (default: a new <time> directory under "+resultsDirName(opt)+")")
		plots    = fs.String("plot", "svg,png", "plot formats, comma-separated: svg, png, or none")
		quiet    = fs.Bool("q", false, "no progress on stderr (warnings still)")
		verbose  = fs.Bool("v", false, "log every row of every round on stderr instead of the progress line")
		counters = fs.Bool("counters", false, "read every counter: context switches, CPU migrations, and cycles, instructions, cache and branch misses where a PMU is (default: context switches)")
		compare  = fs.Bool("compare", false, "compare two runs: knitbench -compare old.json new.json (a results.json, or the directory holding it)")
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: knitbench [flags]\n       knitbench -compare old.json new.json\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitBad
	}
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(stderr, "knitbench: "+format+"\n", args...)
		return code
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	if *compare {
		if fs.NArg() != 2 {
			return fail(exitBad, "-compare takes two results: knitbench -compare old.json new.json")
		}
		return runCompare(fs.Arg(0), fs.Arg(1), stdout, stderr)
	}
	if fs.NArg() > 0 {
		return fail(exitBad, "unexpected arguments %q (flags go before; -compare takes two files)", fs.Args())
	}
	if *list {
		printList(stdout, opt.Suites)
		return 0
	}

	// Every flag is checked before anything runs.
	if set["rounds"] && (*rounds < 1 || *rounds > maxRounds) {
		return fail(exitBad, "-rounds %d: out of range; want 1 to %d", *rounds, maxRounds)
	}
	if set["duration"] && (*duration <= 0 || *duration > maxDuration) {
		return fail(exitBad, "-duration %v: out of range; want above 0 and at most %v", *duration, maxDuration)
	}
	if *procs < 0 || *procs > maxProcs {
		return fail(exitBad, "-gomaxprocs %d: out of range; want 1 to %d, or 0 for the runtime's choice", *procs, maxProcs)
	}
	if *quiet && *verbose {
		return fail(exitBad, "-q and -v: choose one")
	}
	formats, err := plotFormats(*plots)
	if err != nil {
		return fail(exitBad, "-plot %q: %v", *plots, err)
	}
	if strings.TrimSpace(strings.ReplaceAll(*names, ",", "")) == "" {
		return fail(exitBad, "-suites %q names no suite; name some (see -list) or all", *names)
	}
	chosen, err := lookup(opt.Suites, *names)
	if err != nil {
		return fail(exitBad, "-suites: %v", err)
	}

	cfg := harness.Config{Scale: harness.Quick, Rounds: DefaultRounds, Duration: DefaultDuration, Pin: *pin}
	if *full {
		cfg.Scale, cfg.Rounds, cfg.Duration = harness.Full, FullRounds, FullDuration
	}
	if set["rounds"] {
		cfg.Rounds = *rounds
	}
	if set["duration"] {
		cfg.Duration = *duration
	}
	var warnings []string
	warn := func(format string, args ...any) {
		w := fmt.Sprintf(format, args...)
		warnings = append(warnings, w)
		fmt.Fprintf(stderr, "knitbench: warning: %s\n", w)
	}
	if cfg.Duration < shortWindow {
		warn("-duration %v is under %v: a window that short holds a few ops of the slower rows "+
			"(a parked round trip takes tens of µs on a VM, a heavy op a hundred ms), so its figures are a smoke test, not a measurement", cfg.Duration, shortWindow)
	}
	if cfg.Rounds < stats.MinCISamples {
		warn("-rounds %d: a 95%% interval needs %d rounds; the tables print none and the verdict reads n/a", cfg.Rounds, stats.MinCISamples)
	}

	dir := *out
	if dir == "" {
		dir = filepath.Join(resultsDirName(opt), time.Now().Format("20060102-150405"))
	}
	if err := report.PrepareDir(dir); err != nil {
		return fail(exitBad, "-out: %v", err)
	}

	if *procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(*procs))
	}
	if n := runtime.GOMAXPROCS(0); n < 2 {
		warn("GOMAXPROCS is %d: the limit rows hand off between two threads that must run at once; "+
			"here they take turns, and rows that need two Ps read what one P does", n)
	}
	if cfg.Pin {
		if err := harness.CanPin(); err != nil {
			warn("-pin: %v; locked threads are only locked", err)
		}
	}
	if *verbose {
		cfg.Progress = stderr
	}
	// The counters open before any suite starts its threads, on every
	// thread there is, and count the threads started later through them.
	cfg.Counters = harness.OpenCounters(*counters)
	defer cfg.Counters.Close()

	rep := report.New(cfg, args)
	rep.Subject = opt.Subject
	var prog *progress
	if !*quiet && !*verbose {
		var names []string
		var units []float64
		for _, s := range chosen {
			names = append(names, s.Name)
			units = append(units, float64(len(s.Rows(cfg)))*(0.5+float64(cfg.Rounds)))
		}
		prog = newProgress(stderr, names, units)
		cfg.Observe = prog.observe
	}
	begin := time.Now()
	failed := 0
	checkpointErr := false
	for i, s := range chosen {
		if prog != nil {
			prog.startSuite(i)
		}
		res := harness.Run(s, cfg)
		rep.Suites = append(rep.Suites, res)
		bad := 0
		for _, r := range res.Rows {
			if r.Error != "" {
				bad++
			}
		}
		failed += bad
		if prog != nil {
			prog.endSuite(i, res.Elapsed, bad)
		}
		if err := report.Checkpoint(dir, rep); err != nil && !checkpointErr {
			checkpointErr = true
			if prog != nil {
				prog.clear()
			}
			fmt.Fprintf(stderr, "knitbench: warning: saving the suites done so far: %v\n", err)
		}
	}
	if prog != nil {
		prog.clear()
	}
	rep.Run.Elapsed = time.Since(begin)
	if cfg.Pin {
		ps := harness.Pins()
		rep.Run.Pinned, rep.Run.PinFailed = ps.Pinned, ps.Failed
		if ps.Err != nil {
			rep.Run.PinError = ps.Err.Error()
		}
	}
	rep.Run.Warnings = warnings
	rep.Verdicts = report.Verdicts(opt.UseCases, rep.Suites)
	fmt.Fprint(stdout, report.Markdown(rep))

	paths, err := report.WriteDir(dir, rep, formats...)
	if err != nil {
		return fail(exitFailed, "writing results: %v", err)
	}
	if !*quiet {
		fmt.Fprintf(stderr, "knitbench: %d suites in %v; wrote %s (%d files: results.md, results.json, results.txt for benchstat, plots)\n",
			len(chosen), rep.Run.Elapsed.Round(time.Millisecond), dir, len(paths))
	}
	if failed > 0 {
		return fail(exitFailed, "%d rows failed; see the tables", failed)
	}
	return 0
}

func resultsDirName(opt Options) string {
	if opt.ResultsDir != "" {
		return opt.ResultsDir
	}
	return "knitbench-results"
}

// plotFormats parses -plot.
func plotFormats(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		switch f = strings.TrimSpace(strings.ToLower(f)); f {
		case report.SVG, report.PNG:
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		case "none":
			if len(strings.Split(s, ",")) > 1 {
				return nil, errors.New("none goes alone")
			}
			return nil, nil
		case "":
		default:
			return nil, fmt.Errorf("unknown format %q; want svg, png, both comma-separated, or none", f)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no format; want svg, png, both comma-separated, or none")
	}
	return out, nil
}

// lookup returns the named suites (comma-separated, or "all"), in the
// order named.
func lookup(all []harness.Suite, names string) ([]harness.Suite, error) {
	if strings.TrimSpace(names) == "all" {
		return slices.Clone(all), nil
	}
	var out []harness.Suite
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		i := slices.IndexFunc(all, func(s harness.Suite) bool { return s.Name == n })
		if i < 0 {
			var have []string
			for _, s := range all {
				have = append(have, s.Name)
			}
			return nil, fmt.Errorf("unknown suite %q (have %s)", n, strings.Join(have, ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

func printList(w io.Writer, suites []harness.Suite) {
	width := 0
	for _, s := range suites {
		width = max(width, len(s.Name))
	}
	for _, s := range suites {
		fmt.Fprintf(w, "%-*s  %s\n", width, s.Name, s.Description)
		fmt.Fprintf(w, "%-*s  reference: %s\n", width, "", s.Ref)
		if s.Reproduces != "" {
			fmt.Fprintf(w, "%-*s  reproduces %s\n", width, "", s.Reproduces)
		}
	}
}

// runCompare is -compare.
func runCompare(oldPath, newPath string, stdout, stderr io.Writer) int {
	read := func(p string) (report.Report, error) {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			p = filepath.Join(p, "results.json")
		}
		return report.ReadJSON(p)
	}
	old, err := read(oldPath)
	if err != nil {
		fmt.Fprintf(stderr, "knitbench: -compare: %v\n", err)
		return exitBad
	}
	cur, err := read(newPath)
	if err != nil {
		fmt.Fprintf(stderr, "knitbench: -compare: %v\n", err)
		return exitBad
	}
	report.Compare(old, cur).WriteText(stdout, oldPath, newPath)
	return 0
}
