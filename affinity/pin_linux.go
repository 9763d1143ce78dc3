package affinity

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pins counts Pin calls not yet released. While it is zero, no thread
// that runs goroutines has had its mask changed by this package, so the
// calling thread's mask is the process's.
var pins atomic.Int64

// Available returns the CPUs this process may run on: its affinity mask,
// as narrowed by taskset or a cpuset cgroup (docker --cpuset-cpus). A CPU
// quota (docker --cpus) is not a mask and does not show here. Pins made
// with this package do not narrow it, even seen from a pinned thread.
func Available() (CPUSet, error) {
	var set CPUSet
	var err error
	onUnpinnedThread(func() {
		var mask unix.CPUSetDynamic
		if mask, err = getMask(); err == nil {
			set = fromMask(mask)
		}
	})
	return set, err
}

// Pin locks the calling goroutine to its OS thread and restricts that
// thread to cpu. The release function undoes both: the thread gets back
// the CPU mask it had before the pin, and the goroutine is unlocked.
//
// release must be called on the goroutine that called Pin (it panics on
// another), and calls after the first do nothing. A goroutine that exits
// while pinned takes its thread with it: the runtime ends a thread whose
// goroutine exits locked, so a pinned thread never runs other goroutines.
// Pins nest, and may be released in any order: while pins are held the
// thread keeps the mask of the latest one still held, and it returns to
// the scheduler, with the mask it had before the first, only when the
// last is released.
//
// cpu must be in Available(); otherwise the error wraps ErrNotAvailable
// and names the available set, and nothing has changed: the goroutine is
// not locked. A negative cpu, or one above 65535, is ErrInvalidCPU.
//
// On darwin and other systems the error wraps errors.ErrUnsupported.
func Pin(cpu int) (release func(), err error) {
	if cpu < 0 || cpu >= cpuLimit {
		return nil, fmt.Errorf("%w: %d", ErrInvalidCPU, cpu)
	}
	var set CPUSet
	set.Add(cpu)
	return PinSet(set)
}

// PinSet is Pin for a set of CPUs: the thread may run on any of them. An
// empty set is ErrEmptySet; a set with CPUs outside Available() is
// ErrNotAvailable.
func PinSet(set CPUSet) (release func(), err error) {
	if set.Len() == 0 {
		return nil, ErrEmptySet
	}
	avail, err := Available()
	if err != nil {
		return nil, err
	}
	if err := checkAvailable(set, avail); err != nil {
		return nil, err
	}
	return pinSet(set)
}

// checkAvailable returns an error naming the CPUs of set that are not in
// avail, and avail itself.
func checkAvailable(set, avail CPUSet) error {
	if out := without(set, avail); out.Len() > 0 {
		return fmt.Errorf("%w: CPU %v (available: %v)", ErrNotAvailable, out, avail)
	}
	return nil
}

// onUnpinnedThread runs f on a thread whose mask this package has not
// changed. If the caller may be pinned, f runs on a new goroutine: that
// cannot run on the caller's locked thread, and every other thread has
// the process mask, since release restores it before unlocking and the
// runtime creates threads for locked goroutines from a template thread
// instead of cloning them (with their mask).
func onUnpinnedThread(f func()) {
	if pins.Load() == 0 {
		f()
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

// The pins held on each thread, so that releases in any order leave the
// thread with the right mask. A pin saves no mask of its own to restore:
// releasing the outer of two pins first would otherwise put back the mask
// from before both while the inner still holds, and the inner's release
// would then hand the thread to the scheduler narrowed to the outer CPU.
//
// threads is keyed by thread id. A goroutine that exits pinned ends its
// thread and leaves its entry behind; the kernel may give the id to a new
// thread, so an entry is trusted only while the thread's mask is still
// the one its latest pin set (a new thread starts with the process mask
// and a fresh entry replaces the stale one). What is left behind is one
// small entry per thread id that ended pinned.
var (
	threadsMu sync.Mutex
	threads   = map[int]*threadPins{}
)

type threadPins struct {
	base unix.CPUSetDynamic // the mask before the first pin
	held []*pin             // the pins not yet released, oldest first
}

type pin struct {
	mask unix.CPUSetDynamic // the mask this pin set
	old  unix.CPUSetDynamic // the mask before it, used only if its entry was lost
}

// pinSet pins to a non-empty set of available CPUs.
func pinSet(set CPUSet) (release func(), err error) {
	runtime.LockOSThread()
	tid := unix.Gettid()
	cur, err := getMask()
	mask := toMask(set)
	if err == nil {
		err = unix.SchedSetaffinityDynamic(0, mask)
		if err != nil {
			err = fmt.Errorf("affinity: sched_setaffinity %v: %w", set, err)
		}
	}
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	p := &pin{mask: mask, old: cur}
	threadsMu.Lock()
	tp := threads[tid]
	if tp == nil || len(tp.held) == 0 || !sameMask(tp.held[len(tp.held)-1].mask, cur) {
		tp = &threadPins{base: cur}
		threads[tid] = tp
	}
	tp.held = append(tp.held, p)
	threadsMu.Unlock()
	pins.Add(1)
	var released atomic.Bool
	return func() {
		if released.Load() {
			return
		}
		if unix.Gettid() != tid {
			// Another goroutine: its thread is not the pinned one, and
			// unlocking would unlock the wrong goroutine.
			panic("affinity: release called on a goroutine other than the one that pinned")
		}
		released.Store(true)
		if unpin(tid, p) != nil {
			// The mask to restore names CPUs that went offline. Stay
			// locked rather than hand the runtime a thread with a stray
			// mask: the thread ends when this goroutine does. The pin
			// stays counted, as this goroutine's thread is still not
			// the process's.
			return
		}
		pins.Add(-1)
		runtime.UnlockOSThread()
	}, nil
}

// unpin drops p from the calling thread's pins and gives the thread the
// mask of the latest pin still held, or the one from before the first.
func unpin(tid int, p *pin) error {
	threadsMu.Lock()
	defer threadsMu.Unlock()
	tp := threads[tid]
	i := -1
	if tp != nil {
		for j, q := range tp.held {
			if q == p {
				i = j
			}
		}
	}
	if i < 0 {
		// The entry was replaced: something else set this thread's mask
		// after the pin. Restore what the pin found.
		return unix.SchedSetaffinityDynamic(0, p.old)
	}
	top := i == len(tp.held)-1
	tp.held = append(tp.held[:i], tp.held[i+1:]...)
	if !top {
		return nil // a later pin still holds, and its mask stays
	}
	want := tp.base
	if n := len(tp.held); n > 0 {
		want = tp.held[n-1].mask
	} else {
		delete(threads, tid)
	}
	return unix.SchedSetaffinityDynamic(0, want)
}

// sameMask compares two masks over the CPUs either can name.
func sameMask(a, b unix.CPUSetDynamic) bool {
	return fromMask(a) == fromMask(b)
}

// Current returns the CPU the calling thread is running on. Unless the
// thread is pinned to one CPU, it may have moved by the time the caller
// looks.
func Current() (int, error) {
	// getcpu(2) as a system call, not through the vDSO: this is for tests
	// and diagnostics, where a system call's extra cost does not matter
	// (BENCHMARKS.md, "Affinity").
	var cpu uint32
	if _, _, e := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0); e != 0 {
		return -1, fmt.Errorf("affinity: getcpu: %w", e)
	}
	return int(cpu), nil
}

// getMask returns the calling thread's affinity mask, growing the buffer
// past 1024 CPUs as the kernel asks (EINVAL when it is smaller than the
// kernel's mask).
func getMask() (unix.CPUSetDynamic, error) {
	for n := 1024; ; n *= 2 {
		mask := unix.NewCPUSet(n)
		err := unix.SchedGetaffinityDynamic(0, mask)
		if err == nil {
			return mask, nil
		}
		if err != unix.EINVAL || n >= cpuLimit {
			return nil, fmt.Errorf("affinity: sched_getaffinity: %w", err)
		}
	}
}

func fromMask(mask unix.CPUSetDynamic) CPUSet {
	var cpus []int
	n := min(len(mask)*int(unsafe.Sizeof(mask[0]))*8, cpuLimit)
	for c := range n {
		if mask.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	var s CPUSet
	s.Add(cpus...)
	return s
}

// toMask converts a non-empty set.
func toMask(s CPUSet) unix.CPUSetDynamic {
	cpus := slices.Collect(s.All())
	mask := unix.NewCPUSet(cpus[len(cpus)-1] + 1)
	for _, c := range cpus {
		mask.Set(c)
	}
	return mask
}
