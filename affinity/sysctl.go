package affinity

import (
	"fmt"
)

// layoutFromSysctl builds a Layout from darwin's hw.* sysctl values, read
// through get, which fails for a name the kernel lacks. It is built on
// every system so that tests run everywhere.
//
// darwin reports counts and sizes, not which CPU is which, and offers no
// way to pin a thread, so the ids are synthetic: performance level 0
// (hw.perflevel0, the fastest) first, then level 1, and so on; within a
// level, the CPUs of an L2 cluster, and the threads of a core, are
// consecutive.
func layoutFromSysctl(get func(name string) (int, error)) (Layout, error) {
	m, err := readSysctl(get)
	if err != nil {
		return Layout{}, err
	}
	return m.layout(), nil
}

// sysctlMachine is what sysctl says about the CPUs: counts and sizes per
// performance level, no ids.
type sysctlMachine struct {
	logical    int // hw.logicalcpu
	perPackage int // CPUs per package (hw.packages splits them evenly)
	levels     []sysctlLevel
}

// sysctlLevel is one performance level, or the whole machine where sysctl
// describes no levels.
type sysctlLevel struct {
	logical, physical int
	l1d, l2, l3       int // cache sizes, bytes
	perL2, perL3      int // CPUs sharing one L2, one L3; 0 if not reported
	typ               CoreType
}

// readSysctl reads the hw.* values through get. Only hw.logicalcpu is
// required; a value get fails on, or a negative one, reads as 0.
func readSysctl(get func(name string) (int, error)) (sysctlMachine, error) {
	logical, err := get("hw.logicalcpu")
	if err != nil {
		return sysctlMachine{}, fmt.Errorf("affinity: sysctl hw.logicalcpu: %w", err)
	}
	if logical < 1 || logical > cpuLimit {
		return sysctlMachine{}, fmt.Errorf("affinity: sysctl hw.logicalcpu is %d", logical)
	}
	opt := func(name string) int {
		n, err := get(name)
		if err != nil || n < 0 {
			return 0
		}
		return n
	}
	packages := max(opt("hw.packages"), 1)
	m := sysctlMachine{logical: logical, perPackage: max(logical/packages, 1)}

	// Apple silicon, since macOS 12, describes each performance level.
	total := 0
	nlevels := opt("hw.nperflevels")
	for i := range nlevels {
		p := fmt.Sprintf("hw.perflevel%d.", i)
		lv := sysctlLevel{
			logical: opt(p + "logicalcpu"), physical: opt(p + "physicalcpu"),
			l1d: opt(p + "l1dcachesize"), l2: opt(p + "l2cachesize"), l3: opt(p + "l3cachesize"),
			perL2: opt(p + "cpusperl2"), perL3: opt(p + "cpusperl3"),
		}
		if nlevels > 1 {
			lv.typ = CoreEfficiency
			if i == 0 {
				lv.typ = CorePerformance
			}
		}
		total += lv.logical
		m.levels = append(m.levels, lv)
	}
	if total != logical {
		// Intel Macs and older systems: whole-machine figures only. The L3
		// of an Intel part spans its package.
		m.levels = []sysctlLevel{{
			logical: logical, physical: opt("hw.physicalcpu"),
			l1d: opt("hw.l1dcachesize"), l2: opt("hw.l2cachesize"), l3: opt("hw.l3cachesize"),
			perL3: m.perPackage,
		}}
	}
	return m, nil
}

// layout numbers the CPUs of m: level by level, and within a level core
// by core and L2 cluster by cluster.
func (m sysctlMachine) layout() Layout {
	l := Layout{Source: "sysctl", CPUs: make([]CPU, 0, m.logical)}
	id, core, cluster := 0, 0, 0
	for _, lv := range m.levels {
		threads := 1
		if lv.physical > 0 && lv.logical%lv.physical == 0 {
			threads = lv.logical / lv.physical
		}
		// The last level that says how many CPUs share it groups the LLC;
		// Apple silicon has no L3 that sysctl reports, so its L2 cluster.
		group := lv.logical
		switch {
		case lv.l3 > 0 && lv.perL3 > 0:
			group = lv.perL3
		case lv.l3 == 0 && lv.perL2 > 0:
			group = lv.perL2
		}
		first := id
		for i := range lv.logical {
			c := CPU{
				ID: id, Core: core + i/threads, Package: id / m.perPackage,
				Die: -1, Cluster: -1, Node: -1,
				L1D: lv.l1d, L2: lv.l2, L3: lv.l3, Type: lv.typ,
			}
			if lv.perL2 > 0 {
				c.Cluster = cluster + i/lv.perL2
			}
			c.Siblings = spanFrom(first+i/threads*threads, min(threads, lv.logical-i/threads*threads))
			g := i / group * group
			c.LLC = spanFrom(first+g, min(group, lv.logical-g))
			l.CPUs = append(l.CPUs, c)
			id++
		}
		core += (lv.logical + threads - 1) / threads
		if lv.perL2 > 0 {
			cluster += (lv.logical + lv.perL2 - 1) / lv.perL2
		}
	}
	return l
}

// spanFrom returns the n CPUs from first on.
func spanFrom(first, n int) CPUSet {
	cpus := make([]int, n)
	for i := range cpus {
		cpus[i] = first + i
	}
	var s CPUSet
	s.Add(cpus...)
	return s
}
