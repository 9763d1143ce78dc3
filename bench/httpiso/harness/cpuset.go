package harness

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// CPUList is a set of CPU numbers, ascending, as taskset and
// /proc/PID/status write them ("0-3,8").
type CPUList []int

// ParseCPUList reads "0-3,8". The empty string is the empty list.
func ParseCPUList(s string) (CPUList, error) {
	var out CPUList
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("cpu list %q: bad cpu %q", s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("cpu list %q: bad range %q", s, part)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// String writes the list with ranges, so it compares equal to
// Cpus_allowed_list.
func (l CPUList) String() string {
	var b strings.Builder
	for i := 0; i < len(l); {
		j := i
		for j+1 < len(l) && l[j+1] == l[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(l[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(l[j]))
		}
		i = j + 1
	}
	return b.String()
}

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
