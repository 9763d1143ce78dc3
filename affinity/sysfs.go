package affinity

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// cpuDir is where Linux describes CPUs, relative to the sysfs mount.
const cpuDir = "devices/system/cpu"

// ParseTopology reads the CPU topology from a Linux sysfs tree. fsys is
// rooted where sysfs is mounted: Topology on Linux reads
// os.DirFS("/sys"). Other roots hold fixtures or a copy taken from another
// machine.
//
// It reads, for each CPU in devices/system/cpu/online: topology/core_id,
// physical_package_id, thread_siblings_list (required), die_id and
// cluster_id (optional), the nodeN link, cpu_capacity, and
// cache/index*/{level,type,size,shared_cpu_list}. Core types come from
// Intel's hybrid PMU lists devices/cpu_core/cpus and devices/cpu_atom/cpus,
// else from cpu_capacity where CPUs differ (Arm big.LITTLE): the highest
// capacity is CorePerformance, anything lower CoreEfficiency.
//
// Where a CPU has no cache directory, as in many virtual machines, its
// cache sizes are 0 and its LLC is taken to be its die. ParseTopology
// never executes CPUID: Source is "sysfs".
func ParseTopology(fsys fs.FS) (Layout, error) {
	l, _, err := parseSysfs(fsys)
	return l, err
}

// parseSysfs is ParseTopology, also returning the CPUs for which sysfs
// had no cache information, for Topology to fill from CPUID.
func parseSysfs(fsys fs.FS) (l Layout, noCache CPUSet, err error) {
	online, err := readCPUList(fsys, cpuDir+"/online")
	if errors.Is(err, fs.ErrNotExist) {
		online, err = listCPUDirs(fsys)
	}
	if err != nil {
		return Layout{}, CPUSet{}, err
	}
	if online.Len() == 0 {
		return Layout{}, CPUSet{}, fmt.Errorf("affinity: %s lists no CPU online", cpuDir)
	}
	var missing []int
	capacity := make([]int, 0, online.Len())
	for id := range online.All() {
		c, capa, hasCache, err := parseCPU(fsys, id)
		if err != nil {
			return Layout{}, CPUSet{}, err
		}
		// Offline CPUs may still appear in sibling and cache lists on some
		// kernels; keep the invariant that every CPU named has an entry.
		c.Siblings = intersect(c.Siblings, online)
		c.Siblings.Add(id)
		c.LLC = intersect(c.LLC, online)
		if !hasCache {
			missing = append(missing, id)
		}
		l.CPUs = append(l.CPUs, c)
		capacity = append(capacity, capa)
	}
	noCache.Add(missing...)
	for i := range l.CPUs {
		if noCache.Has(l.CPUs[i].ID) {
			l.CPUs[i].LLC = dieOf(l.CPUs, l.CPUs[i])
		}
	}
	if err := coreTypes(fsys, l.CPUs, capacity); err != nil {
		return Layout{}, CPUSet{}, err
	}
	l.Source = "sysfs"
	return l, noCache, nil
}

// listCPUDirs is the online set for a tree without an online file: every
// cpuN directory.
func listCPUDirs(fsys fs.FS) (CPUSet, error) {
	ents, err := fs.ReadDir(fsys, cpuDir)
	if err != nil {
		return CPUSet{}, fmt.Errorf("affinity: %w", err)
	}
	var s CPUSet
	for _, e := range ents {
		if n, ok := numbered(e.Name(), "cpu"); ok && e.IsDir() {
			s.Add(n)
		}
	}
	return s, nil
}

// parseCPU reads one CPU's directory. capacity is 0 where the kernel
// does not report it.
func parseCPU(fsys fs.FS, id int) (c CPU, capacity int, hasCache bool, err error) {
	dir := fmt.Sprintf("%s/cpu%d", cpuDir, id)
	c = CPU{ID: id, Die: -1, Cluster: -1, Node: -1}
	if c.Core, err = readInt(fsys, dir+"/topology/core_id"); err != nil {
		return c, 0, false, err
	}
	if c.Package, err = readInt(fsys, dir+"/topology/physical_package_id"); err != nil {
		return c, 0, false, err
	}
	if c.Siblings, err = readCPUList(fsys, dir+"/topology/thread_siblings_list"); err != nil {
		return c, 0, false, err
	}
	if c.Die, err = readOptionalID(fsys, dir+"/topology/die_id"); err != nil {
		return c, 0, false, err
	}
	if c.Cluster, err = readOptionalID(fsys, dir+"/topology/cluster_id"); err != nil {
		return c, 0, false, err
	}
	if capacity, err = readInt(fsys, dir+"/cpu_capacity"); errors.Is(err, fs.ErrNotExist) {
		capacity, err = 0, nil
	} else if err != nil {
		return c, 0, false, err
	}
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return c, 0, false, fmt.Errorf("affinity: %w", err)
	}
	for _, e := range ents {
		if n, ok := numbered(e.Name(), "node"); ok {
			c.Node = n
		}
	}
	hasCache, err = parseCaches(fsys, dir+"/cache", &c)
	return c, capacity, hasCache, err
}

// parseCaches fills c's cache sizes and LLC from dir, reporting whether
// dir described any data cache.
func parseCaches(fsys fs.FS, dir string, c *CPU) (bool, error) {
	ents, err := fs.ReadDir(fsys, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("affinity: %w", err)
	}
	llcLevel := 0
	for _, e := range ents {
		if _, ok := numbered(e.Name(), "index"); !ok {
			continue
		}
		idx := dir + "/" + e.Name()
		typ, err := readString(fsys, idx+"/type")
		if err != nil {
			return false, err
		}
		if typ == "Instruction" {
			continue
		}
		level, err := readInt(fsys, idx+"/level")
		if err != nil {
			return false, err
		}
		size, err := readSize(fsys, idx+"/size")
		if err != nil {
			return false, err
		}
		switch level {
		case 1:
			c.L1D = size
		case 2:
			c.L2 = size
		case 3:
			c.L3 = size
		}
		if level > llcLevel {
			if c.LLC, err = readCPUList(fsys, idx+"/shared_cpu_list"); err != nil {
				return false, err
			}
			llcLevel = level
		}
	}
	if llcLevel == 0 {
		return false, nil
	}
	// The kernel's list includes the CPU itself; make sure of it, since
	// t's invariants promise it.
	c.LLC.Add(c.ID)
	return true, nil
}

// dieOf returns the CPUs on c's die, or package where dies are not
// reported: the stand-in for an LLC group where sysfs describes no cache.
func dieOf(cpus []CPU, c CPU) CPUSet {
	var ids []int
	for _, o := range cpus {
		if o.Package == c.Package && o.Die == c.Die {
			ids = append(ids, o.ID)
		}
	}
	var s CPUSet
	s.Add(ids...)
	return s
}

// hybridPMUs are the perf PMUs Linux registers on Intel hybrid parts, each
// listing the CPUs of one core type.
var hybridPMUs = []struct {
	file string
	typ  CoreType
}{
	{"devices/cpu_core/cpus", CorePerformance},
	{"devices/cpu_atom/cpus", CoreEfficiency},
	{"devices/cpu_lowpower/cpus", CoreEfficiency},
}

// coreTypes sets the Type of cpus from the hybrid PMU lists, else from
// capacity (parallel to cpus) where CPUs differ.
func coreTypes(fsys fs.FS, cpus []CPU, capacity []int) error {
	found := false
	for _, pmu := range hybridPMUs {
		set, err := readCPUList(fsys, pmu.file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		found = true
		for i := range cpus {
			if set.Has(cpus[i].ID) {
				cpus[i].Type = pmu.typ
			}
		}
	}
	if found {
		return nil
	}
	top := slices.Max(capacity)
	if slices.Min(capacity) == top || slices.Contains(capacity, 0) {
		return nil // all alike, or some not reported: no basis to tell
	}
	for i := range cpus {
		cpus[i].Type = CoreEfficiency
		if capacity[i] == top {
			cpus[i].Type = CorePerformance
		}
	}
	return nil
}

// numbered reports whether name is prefix followed by a decimal number,
// as in "cpu12" or "index3", and returns the number.
func numbered(name, prefix string) (int, bool) {
	digits, ok := strings.CutPrefix(name, prefix)
	if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil && n < cpuLimit
}

func readString(fsys fs.FS, name string) (string, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return "", fmt.Errorf("affinity: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func readInt(fsys fs.FS, name string) (int, error) {
	s, err := readString(fsys, name)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("affinity: %s: %q is not a number", name, s)
	}
	return n, nil
}

// readOptionalID reads a topology id that older kernels or some
// architectures lack, as -1 when absent or unknown. x86 reports an
// unknown cluster as 65535 (its BAD_APICID truncated to 16 bits), arm64
// as -1.
func readOptionalID(fsys fs.FS, name string) (int, error) {
	n, err := readInt(fsys, name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return -1, nil
	case err != nil:
		return 0, err
	case n < 0 || n == 0xffff:
		return -1, nil
	}
	return n, nil
}

func readCPUList(fsys fs.FS, name string) (CPUSet, error) {
	s, err := readString(fsys, name)
	if err != nil {
		return CPUSet{}, err
	}
	set, err := ParseCPUSet(s)
	if err != nil {
		return CPUSet{}, fmt.Errorf("%w (in %s)", err, name)
	}
	return set, nil
}

// readSize reads a cache size; the kernel writes kibibytes as "48K".
func readSize(fsys fs.FS, name string) (int, error) {
	s, err := readString(fsys, name)
	if err != nil {
		return 0, err
	}
	num, shift := s, 0
	switch {
	case strings.HasSuffix(s, "K"):
		num, shift = s[:len(s)-1], 10
	case strings.HasSuffix(s, "M"):
		num, shift = s[:len(s)-1], 20
	case strings.HasSuffix(s, "G"):
		num, shift = s[:len(s)-1], 30
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("affinity: %s: %q is not a cache size", name, s)
	}
	return n << shift, nil
}
