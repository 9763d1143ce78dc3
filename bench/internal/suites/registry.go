// Package suites holds knitbench's suites, one file each, and the list
// that orders them.
//
// A suite file defines its harness.Suite and the list names it. A file
// that adds rows to a suite another file owns (the knit rows beside the
// channel rows) defines a row provider, which the list joins to that
// suite with withRows.
package suites

import (
	"fmt"
	"slices"
	"strings"

	"github.com/knit-go/knit/bench/internal/harness"
)

// registry is every suite, in the order the command runs them. The
// floors come first (limits: its rows are what the other suites are read
// against), then the primitives (spin, park, rings), then the pool
// against its peers, then the shapes of Knitting's own benchmarks, and
// idle CPU last. Names are unique (TestRegistry checks).
var registry = []harness.Suite{
	limitsSuite,
	spinSuite,
	parkSuite,
	ringsSuite,
	rigtorpSuite,
	peersSuite,
	broadcastSuite,
	mailboxSuite,
	withRows(ipcPeersSuite, ipcKnitRows),
	poolSuite,
	poolCallSuite,
	poolSubmitSuite,
	poolGroupSuite,
	poolStealSuite,
	handoffSuite,
	withRows(payloadSuite, payloadKnitRows),
	withRows(typesSuite, typesKnitRows),
	withRows(heavySuite, heavyKnitRows),
	withRows(idleSuite, idlePoolRows),
}

// All returns every suite, in the order the command runs them.
func All() []harness.Suite { return slices.Clone(registry) }

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

// withRows adds the rows of more to s's own. They come after s's rows,
// in the same groups when they use the same group names.
func withRows(s harness.Suite, more func(harness.Config) []harness.Row) harness.Suite {
	own := s.Rows
	s.Rows = func(cfg harness.Config) []harness.Row {
		return sortByGroup(append(own(cfg), more(cfg)...))
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
