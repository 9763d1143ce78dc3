package affinity

import (
	"cmp"
	"slices"
)

// Layout describes CPUs: which share a core, a cache, a package, and
// what kind of core each is. Topology() returns the CPUs this process may
// run on; ParseTopology, every CPU online in the tree it reads.
type Layout struct {
	// CPUs has one entry per CPU. Invariant: sorted by ID, IDs unique,
	// and every CPU named in a Siblings or LLC set has an entry.
	CPUs []CPU

	// Source says where the facts came from: "sysfs" (Linux),
	// "sysfs+cpuid" (Linux, with cache sizes or core types that sysfs
	// lacked taken from the CPUID instruction), or "sysctl" (darwin).
	Source string
}

// A CPU is one logical CPU: a hardware thread.
type CPU struct {
	ID      int // the id Pin takes
	Core    int // core id as the OS reports it; unique within a package and die only
	Package int // socket
	Die     int // die within the package, or -1 if not reported
	Cluster int // cluster (cores sharing an L2, as Intel E-core modules or Apple clusters), or -1 if not reported
	Node    int // NUMA node, or -1 if not reported

	// Siblings are the SMT threads of this CPU's core, ID included. The
	// set is the same for every CPU of the core.
	Siblings CPUSet

	// LLC are the CPUs sharing this CPU's last-level cache, ID included.
	// The LLC sets partition the CPUs. Where the OS does not describe
	// caches, a die (or package) is taken to share one.
	LLC CPUSet

	// Sizes in bytes of the caches serving this CPU; 0 if absent or not
	// reported. L1D is the level-1 data cache.
	L1D, L2, L3 int

	Type CoreType
}

// CoreType is the kind of core on a hybrid part, one with performance and
// efficiency cores.
type CoreType uint8

const (
	// CoreUnknown: no source said, or all cores of the part are alike.
	CoreUnknown CoreType = iota
	// CorePerformance: an Intel P-core, the big cores of an Arm
	// big.LITTLE part, Apple's performance cores.
	CorePerformance
	// CoreEfficiency: an Intel E-core, the little cores, Apple's
	// efficiency cores.
	CoreEfficiency
)

func (t CoreType) String() string {
	switch t {
	case CorePerformance:
		return "performance"
	case CoreEfficiency:
		return "efficiency"
	}
	return "unknown"
}

// cpu returns the entry for id.
func (l Layout) cpu(id int) (*CPU, bool) {
	i, ok := slices.BinarySearchFunc(l.CPUs, id, func(c CPU, id int) int { return cmp.Compare(c.ID, id) })
	if !ok {
		return nil, false
	}
	return &l.CPUs[i], true
}

// PhysicalCores returns one CPU per physical core, its lowest-numbered SMT
// thread, for placing one thread per core. Cores that share a last-level
// cache are adjacent, so the first n entries span as few LLCs as n cores
// allow: LLC groups in order of their lowest CPU, cores within a group in
// order of their lowest CPU.
func (l Layout) PhysicalCores() []int {
	type core struct{ llc, cpu int }
	var cores []core
	for _, c := range l.CPUs {
		if lowest(c.Siblings, c.ID) == c.ID {
			cores = append(cores, core{llc: lowest(c.LLC, c.ID), cpu: c.ID})
		}
	}
	slices.SortStableFunc(cores, func(a, b core) int { return cmp.Compare(a.llc, b.llc) })
	out := make([]int, len(cores))
	for i, c := range cores {
		out[i] = c.cpu
	}
	return out
}

// Sibling returns an SMT sibling of cpu: another hardware thread of the
// same core, the next one after cpu in cyclic order, so that on parts with
// more than two threads per core successive calls walk the core. ok is
// false if cpu's core has no other thread here, or cpu is not in l.
func (l Layout) Sibling(cpu int) (sibling int, ok bool) {
	c, ok := l.cpu(cpu)
	if !ok {
		return -1, false
	}
	return c.Siblings.next(cpu)
}

// LLCNeighbor returns a CPU on another physical core that shares cpu's
// last-level cache, the next such CPU after cpu in cyclic order, to place
// a partner thread one cache-line transfer away without sharing a core.
// ok is false if no other core shares the cache, or cpu is not in l.
func (l Layout) LLCNeighbor(cpu int) (neighbor int, ok bool) {
	c, ok := l.cpu(cpu)
	if !ok {
		return -1, false
	}
	return without(c.LLC, c.Siblings).next(cpu)
}

// restrict returns l limited to the CPUs in set, with Siblings and LLC
// limited likewise so that l's invariants hold.
func (l Layout) restrict(set CPUSet) Layout {
	out := Layout{Source: l.Source}
	for _, c := range l.CPUs {
		if set.Has(c.ID) {
			c.Siblings = intersect(c.Siblings, set)
			c.LLC = intersect(c.LLC, set)
			out.CPUs = append(out.CPUs, c)
		}
	}
	return out
}

// lowest returns the lowest CPU of s, or def if s is empty.
func lowest(s CPUSet, def int) int {
	if c := s.first(); c >= 0 {
		return c
	}
	return def
}
