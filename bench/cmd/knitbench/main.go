// Command knitbench runs knit's benchmark suites side by side with Go
// channels, peer libraries and the hardware limits, and writes the
// results.
//
//	knitbench                          # every suite, quick mode
//	knitbench -suites limits,ipc-peers -rounds 6
//	knitbench -full -pin -out run1
//	knitbench -suites limits -counters    # every perf counter the machine has
//	knitbench -compare run1 run2          # old, new, delta, ~ where nothing changed
//	knitbench -list
//
// After the run stdout gets the verdict (knit against the best Go or
// peer row, by use case), the machine and every table; stderr shows
// progress. results.md, results.json (every raw sample, schema
// versioned), results.txt (the Go benchmark format, for benchstat) and
// one plot per suite (SVG and PNG) go to the -out directory.
//
// The command is package knitbench's Main with knit's suites and use
// cases; a module of one's own can run its suites the same way.
package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/knit-go/knit/bench/internal/suites"
	"github.com/knit-go/knit/bench/knitbench"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command with its streams passed in, so a test can drive it.
func run(args []string, stdout, stderr io.Writer) int {
	return knitbench.Main(args, stdout, stderr, knitbench.Options{
		Suites:     suites.All(),
		UseCases:   useCases,
		ResultsDir: resultsRoot(),
	})
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
