//go:build linux

package perfcount

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Set is a group of counters open on the whole process, from Open.
type Set struct {
	counters []Counter
	info     []Info
	// fds holds, per counter, one descriptor per thread found at Open;
	// nil for a counter that is not available.
	fds [][]int
}

// Open opens cs on every thread of the process, with inherit, so that
// threads started later count too (see the package doc). A counter the
// kernel refuses is reported unavailable in Info, with the reason; the
// others still count. Close the set when done.
func Open(cs ...Counter) *Set {
	s := &Set{counters: slices.Clone(cs), info: make([]Info, len(cs)), fds: make([][]int, len(cs))}
	for attempt := 0; ; attempt++ {
		tids, err := threads()
		if err != nil {
			for i, c := range cs {
				s.info[i] = Info{Name: c.String(), Why: "no /proc", Detail: err.Error()}
			}
			return s
		}
		for i, c := range cs {
			s.info[i], s.fds[i] = open(c, tids)
		}
		// A thread started during the opens is either counted twice
		// (inherited from a thread already open, then opened itself) or
		// not at all (started by a thread not yet open): start over
		// until the set of threads held still. Go starts threads
		// only now and then, so once is the rule.
		after, err := threads()
		if err == nil && !hasNew(after, tids) || attempt == 9 {
			return s
		}
		s.closeFDs()
	}
}

// open opens c on each thread of tids, with inherit: first counting
// kernel and user space, then, for a hardware counter that is refused
// for lack of privilege, user space only.
func open(c Counter, tids []int) (Info, []int) {
	in := Info{Name: c.String()}
	fds, err := openOn(c, tids, false)
	if err != nil && c.Hardware() && (errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)) {
		if fds, err = openOn(c, tids, true); err == nil {
			in.UserOnly = true
		}
	}
	if err != nil {
		in.Why, in.Detail = explain(c, err)
		return in, nil
	}
	in.Available = true
	return in, fds
}

func openOn(c Counter, tids []int, userOnly bool) ([]int, error) {
	attr := attrFor(c, userOnly)
	var fds []int
	for _, tid := range tids {
		fd, err := unix.PerfEventOpen(&attr, tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if errors.Is(err, unix.ESRCH) {
			continue // the thread exited after the listing: its count is gone with it
		}
		if err != nil {
			closeAll(fds)
			return nil, err
		}
		fds = append(fds, fd)
	}
	if len(fds) == 0 {
		return nil, unix.ESRCH
	}
	return fds, nil
}

func attrFor(c Counter, userOnly bool) unix.PerfEventAttr {
	attr := unix.PerfEventAttr{
		Size:        uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Read_format: unix.PERF_FORMAT_TOTAL_TIME_ENABLED | unix.PERF_FORMAT_TOTAL_TIME_RUNNING,
		Bits:        unix.PerfBitInherit,
	}
	if userOnly {
		attr.Bits |= unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv
	}
	switch c {
	case ContextSwitches:
		attr.Type, attr.Config = unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_CONTEXT_SWITCHES
	case CPUMigrations:
		attr.Type, attr.Config = unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_CPU_MIGRATIONS
	case Cycles:
		attr.Type, attr.Config = unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CPU_CYCLES
	case Instructions:
		attr.Type, attr.Config = unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_INSTRUCTIONS
	case CacheMisses:
		attr.Type, attr.Config = unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CACHE_MISSES
	case BranchMisses:
		attr.Type, attr.Config = unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_BRANCH_MISSES
	}
	return attr
}

// explain turns perf_event_open's error into a table cell's reason and
// the whole story.
func explain(c Counter, err error) (why, detail string) {
	const what = "perf_event_open"
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return "error", what + ": " + err.Error()
	}
	name := unix.ErrnoName(errno)
	switch {
	case c.Hardware() && (errno == unix.ENOENT || errno == unix.EOPNOTSUPP || errno == unix.ENODEV):
		return "no PMU", fmt.Sprintf("%s: %s: the kernel has no hardware counter for the event (a VM without a virtual PMU has none)", what, name)
	case errno == unix.EACCES || errno == unix.EPERM:
		return "not permitted", fmt.Sprintf("%s: %s: kernel.perf_event_paranoid is %s; counting a process's kernel events needs 1 or less, or CAP_PERFMON (a seccomp filter gives this too)",
			what, name, paranoid())
	case errno == unix.ENOSYS:
		return "no perf_event_open", fmt.Sprintf("%s: %s: the kernel has no perf events, a seccomp filter refuses them, or an emulator (qemu-user) does not pass the call through", what, name)
	}
	return name, what + ": " + name + ": " + errno.Error()
}

func paranoid() string {
	b, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
	if err != nil {
		return "unreadable"
	}
	return strings.TrimSpace(string(b))
}

// threads lists the thread ids of this process.
func threads() ([]int, error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

// hasNew reports a thread in after that is not in before.
func hasNew(after, before []int) bool {
	for _, t := range after {
		if !slices.Contains(before, t) {
			return true
		}
	}
	return false
}

// Read returns each available counter's total since Open, over every
// thread. A hardware counter that the PMU multiplexed with others is
// scaled by the time it was enabled over the time it ran, as perf stat
// does.
func (s *Set) Read() Counts {
	if s == nil {
		return nil
	}
	var out Counts
	var buf [24]byte
	for i, fds := range s.fds {
		if fds == nil {
			continue
		}
		var total uint64
		for _, fd := range fds {
			n, err := unix.Read(fd, buf[:])
			if err != nil || n != len(buf) {
				continue
			}
			v := binary.NativeEndian.Uint64(buf[0:])
			enabled := binary.NativeEndian.Uint64(buf[8:])
			running := binary.NativeEndian.Uint64(buf[16:])
			if running > 0 && running < enabled {
				v = uint64(float64(v) * float64(enabled) / float64(running))
			}
			total += v
		}
		if out == nil {
			out = make(Counts, len(s.fds))
		}
		out[s.counters[i].String()] = total
	}
	return out
}

// Close closes every counter. The set reads nothing after.
func (s *Set) Close() error {
	if s == nil {
		return nil
	}
	s.closeFDs()
	return nil
}

func (s *Set) closeFDs() {
	for i, fds := range s.fds {
		closeAll(fds)
		s.fds[i] = nil
	}
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
