package harness

import (
	"slices"

	"github.com/knit-go/knit/affinity"
)

// CPUList is a set of CPU numbers, ascending, as taskset and
// /proc/PID/status write them ("0-3,8"): an affinity.CPUSet as a slice,
// for the split and the GOMAXPROCS count.
type CPUList []int

// ParseCPUList reads "0-3,8" with affinity.ParseCPUSet. The empty string
// is the empty list.
func ParseCPUList(s string) (CPUList, error) {
	set, err := affinity.ParseCPUSet(s)
	if err != nil || set.Len() == 0 {
		return nil, err
	}
	return slices.Collect(set.All()), nil
}

// set is l as an affinity.CPUSet.
func (l CPUList) set() affinity.CPUSet {
	var s affinity.CPUSet
	s.Add(l...)
	return s
}

// String writes the list with ranges, so it compares equal to
// Cpus_allowed_list.
func (l CPUList) String() string { return l.set().String() }

// Overlaps reports whether l and m share a CPU.
func (l CPUList) Overlaps(m CPUList) bool {
	for _, c := range l {
		if slices.Contains(m, c) {
			return true
		}
	}
	return false
}

// SplitCPUs divides the CPUs the harness may use between the server and
// the load generator. The load gets the top quarter (at least one CPU),
// the server the rest: on 2 CPUs that is one each, on 16 it is 12 for the
// server and 4 for the load. With one CPU there is nothing to split and
// both get it, which the report says.
func SplitCPUs(avail CPUList) (server, load CPUList) {
	if len(avail) < 2 {
		return avail, avail
	}
	nload := max(1, len(avail)/4)
	return avail[:len(avail)-nload], avail[len(avail)-nload:]
}
