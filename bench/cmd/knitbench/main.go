// Command knitbench runs knit's benchmark suites side by side with Go
// channels, peer pools and the hardware limits, and writes the results.
//
//	knitbench                          # every suite, quick mode
//	knitbench -suites limits,ipc-peers -rounds 3
//	knitbench -full -pin -out run1
//	knitbench -suites limits -counters    # every perf counter the machine has
//	knitbench -list
//
// Tables go to stdout as each suite finishes; progress goes to stderr;
// results.md, results.json (every raw sample) and one plot per suite go
// to the -out directory.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/knit-go/knit/bench/internal/harness"
	"github.com/knit-go/knit/bench/internal/perfcount"
	"github.com/knit-go/knit/bench/internal/report"
	"github.com/knit-go/knit/bench/internal/suites"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command with its streams passed in, so a test can drive it.
// It returns the exit status: 2 for bad flags, 1 for a failed row or an
// unwritable results directory.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("knitbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		names    = fs.String("suites", "all", "comma-separated suites to run, or all")
		list     = fs.Bool("list", false, "print the suites and exit")
		rounds   = fs.Int("rounds", 0, "timed rounds per row (default 5, or 10 with -full)")
		duration = fs.Duration("duration", 0, "timed window per row per round (default 100ms, or 500ms with -full)")
		procs    = fs.Int("gomaxprocs", 0, "set GOMAXPROCS (0 leaves the runtime's choice)")
		pin      = fs.Bool("pin", false, "pin measuring threads to CPUs where the OS allows it")
		full     = fs.Bool("full", false, "scaled-up mode for large machines: more rounds, longer windows, wider sweeps")
		out      = fs.String("out", "", "results directory (default bench/results/<timestamp>)")
		plotFmt  = fs.String("plot", "svg", "plot format: svg or png")
		quiet    = fs.Bool("q", false, "no progress on stderr")
		counters = fs.Bool("counters", false, "read every counter: context switches, CPU migrations, and cycles, instructions, cache and branch misses where a PMU is (default: context switches)")
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: knitbench [flags]\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(stderr, "knitbench: "+format+"\n", args...)
		return code
	}
	if fs.NArg() > 0 {
		return fail(2, "unexpected arguments %q", fs.Args())
	}
	if *plotFmt != "svg" && *plotFmt != "png" {
		return fail(2, "-plot must be svg or png")
	}
	if *list {
		printList(stdout)
		return 0
	}
	chosen, err := suites.Lookup(*names)
	if err != nil {
		return fail(2, "%v", err)
	}
	if *procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(*procs))
	}

	cfg := harness.Config{Scale: harness.Quick, Rounds: 5, Duration: 100 * time.Millisecond, Pin: *pin}
	if *full {
		cfg.Scale, cfg.Rounds, cfg.Duration = harness.Full, 10, 500*time.Millisecond
	}
	if *rounds > 0 {
		cfg.Rounds = *rounds
	}
	if *duration > 0 {
		cfg.Duration = *duration
	}
	if !*quiet {
		cfg.Progress = stderr
	}
	// The counters open before any suite starts its threads, on every
	// thread there is, and count the threads started later through them.
	want := perfcount.Default
	if *counters {
		want = perfcount.All
	}
	cfg.Counters = perfcount.Open(want...)
	defer cfg.Counters.Close()
	dir := *out
	if dir == "" {
		dir = filepath.Join(resultsRoot(), time.Now().Format("20060102-150405"))
	}

	rep := report.Report{Machine: report.DescribeMachine(), Run: report.NewRunInfo(cfg, args)}
	fmt.Fprint(stdout, report.HeaderMarkdown(rep))
	begin := time.Now()
	failed := 0
	for _, s := range chosen {
		res := harness.Run(s, cfg)
		rep.Suites = append(rep.Suites, res)
		fmt.Fprint(stdout, report.SuiteMarkdown(res))
		for _, r := range res.Rows {
			if r.Error != "" {
				failed++
			}
		}
	}
	rep.Run.Elapsed = time.Since(begin)

	paths, err := report.WriteDir(dir, rep, *plotFmt)
	if err != nil {
		return fail(1, "writing results: %v", err)
	}
	fmt.Fprintf(stderr, "knitbench: %d suites in %v; wrote %s\n",
		len(chosen), rep.Run.Elapsed.Round(time.Millisecond), strings.Join(paths, ", "))
	if failed > 0 {
		return fail(1, "%d rows failed; see the tables", failed)
	}
	return 0
}

func printList(w io.Writer) {
	for _, s := range suites.All() {
		fmt.Fprintf(w, "%-10s %s\n", s.Name, s.Description)
		if s.Reproduces != "" {
			fmt.Fprintf(w, "%-10s reproduces %s\n", "", s.Reproduces)
		}
	}
}

// resultsRoot is bench/results of this checkout when the command runs
// from the repository root or from bench/, so runs land where .gitignore
// already ignores them; elsewhere ./knitbench-results.
func resultsRoot() string {
	for _, dir := range []string{".", "bench"} {
		mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(mod), "module github.com/knit-go/knit/bench\n") {
			return filepath.Join(dir, "results")
		}
	}
	return "knitbench-results"
}
