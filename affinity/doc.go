// Package affinity pins the calling goroutine's OS thread to CPUs and
// describes the CPUs: SMT siblings, last-level-cache groups, cache sizes,
// and performance or efficiency cores on hybrid parts.
//
// A CPUSet is a set of CPU ids in the kernel's numbering, written and
// parsed in the kernel's list format ("0-3,8,10-11"). Available reports
// the CPUs the process may run on; Pin and PinSet lock the goroutine to
// its thread and restrict the thread, and the release function they
// return undoes both. Topology describes the CPUs, and its Layout offers
// what a pool needs for placement: PhysicalCores (one CPU per core, cores
// sharing a last-level cache together), Sibling and LLCNeighbor.
//
// What each system supports:
//
//   - Linux: everything. Available is sched_getaffinity, so taskset,
//     cpuset cgroups and container CPU lists are respected; Pin is
//     runtime.LockOSThread then sched_setaffinity on the thread; Current is
//     getcpu. Topology reads /sys/devices/system/cpu; where a virtual
//     machine's sysfs has no cache directories, cache sizes come from the
//     CPUID instruction (Source "sysfs+cpuid").
//   - darwin: Topology (from sysctl: performance levels, cache sizes, L2
//     clusters; CPU ids are synthetic) and Available (every CPU). There is
//     no thread affinity to set on Apple silicon, where
//     THREAD_AFFINITY_POLICY fails with KERN_NOT_SUPPORTED, so Pin, PinSet
//     and Current return errors wrapping errors.ErrUnsupported; SetQoS sets
//     the thread's QoS class instead, through libSystem without cgo.
//   - Other systems: every call returns an error wrapping
//     errors.ErrUnsupported. SetQoS does so everywhere but darwin.
//
// ParseTopology, which reads a sysfs tree from any fs.FS, and CPUSet
// work on every system.
package affinity
