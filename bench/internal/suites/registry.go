// Package suites holds knitbench's suites, one file each, and the registry
// they enter at init.
//
// A suite file calls register with its harness.Suite. A file that adds
// rows to a suite another file owns (the knit rows beside the channel
// rows) calls extend with the suite's name and a row provider; order of
// init does not matter, providers are joined when the rows are asked for.
package suites

import (
	"fmt"
	"slices"
	"strings"

	"github.com/knit-go/knit/bench/internal/harness"
)

var (
	registry []harness.Suite
	extra    = map[string][]func(harness.Config) []harness.Row{}
)

// register adds a suite. Names are unique; a duplicate is a programming
// error caught by the first run of any test.
func register(s harness.Suite) {
	if s.Name == "" || s.Rows == nil || s.Ref == "" {
		panic("suites: suite needs Name, Ref and Rows")
	}
	for _, o := range registry {
		if o.Name == s.Name {
			panic("suites: duplicate suite " + s.Name)
		}
	}
	registry = append(registry, s)
}

// extend adds a row provider to the suite called name. Its rows come after
// the suite's own rows, in the same groups when they use the same group
// names.
func extend(name string, rows func(harness.Config) []harness.Row) {
	extra[name] = append(extra[name], rows)
}

// All returns every registered suite, in the order the command runs them
// (limits first: its rows are the floors the other suites are read
// against), each with its extensions joined in.
func All() []harness.Suite {
	out := make([]harness.Suite, 0, len(registry))
	for _, s := range registry {
		out = append(out, withExtensions(s))
	}
	slices.SortStableFunc(out, func(a, b harness.Suite) int {
		return order(a.Name) - order(b.Name)
	})
	return out
}

// Lookup returns the named suites (comma-separated, or "all").
func Lookup(names string) ([]harness.Suite, error) {
	all := All()
	if names == "" || names == "all" {
		return all, nil
	}
	var out []harness.Suite
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		i := slices.IndexFunc(all, func(s harness.Suite) bool { return s.Name == n })
		if i < 0 {
			return nil, fmt.Errorf("unknown suite %q (have %s)", n, strings.Join(names0(all), ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

func names0(ss []harness.Suite) []string {
	var ns []string
	for _, s := range ss {
		ns = append(ns, s.Name)
	}
	return ns
}

// runOrder fixes the order of the suites known here; suites added later
// and not listed run after these, in registration order. The floors come
// first, then the primitives (spin, park, rings), then the pool against
// its peers, then the shapes of Knitting's own benchmarks, and idle CPU
// last.
var runOrder = []string{
	"limits", "spin", "park", "rings", "spsc-rigtorp", "broadcast", "mailbox",
	"ipc-peers", "pool", "pool-call", "pool-submit", "pool-group", "pool-steal",
	"payload", "types", "heavy", "idle",
}

func order(name string) int {
	if i := slices.Index(runOrder, name); i >= 0 {
		return i
	}
	return len(runOrder)
}

func withExtensions(s harness.Suite) harness.Suite {
	own := s.Rows
	more := extra[s.Name]
	if len(more) == 0 {
		return s
	}
	s.Rows = func(cfg harness.Config) []harness.Row {
		rows := own(cfg)
		for _, f := range more {
			rows = append(rows, f(cfg)...)
		}
		return sortByGroup(rows)
	}
	return s
}

// sortByGroup keeps each group's rows together (own rows first, then
// extension rows) so a group's table reads as one block, and the rounds
// still visit every row.
func sortByGroup(rows []harness.Row) []harness.Row {
	var groups []string
	for _, r := range rows {
		if !slices.Contains(groups, r.Group) {
			groups = append(groups, r.Group)
		}
	}
	out := make([]harness.Row, 0, len(rows))
	for _, g := range groups {
		for _, r := range rows {
			if r.Group == g {
				out = append(out, r)
			}
		}
	}
	return out
}
