package affinity

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit/internal/testutil"
	"golang.org/x/sys/unix"
)

// threadMask returns the calling thread's mask; call it with the goroutine
// locked, or it may describe some other thread.
func threadMask(t *testing.T) CPUSet {
	t.Helper()
	m, err := getMask()
	if err != nil {
		t.Fatal(err)
	}
	return fromMask(m)
}

func available(t *testing.T) CPUSet {
	t.Helper()
	avail, err := Available()
	if err != nil {
		t.Fatal(err)
	}
	if avail.Len() == 0 {
		t.Fatal("Available() is empty")
	}
	return avail
}

// twoCPUs returns two distinct available CPUs, skipping the test when
// there are not two.
func twoCPUs(t *testing.T) (a, b int) {
	t.Helper()
	cpus := slices.Collect(available(t).All())
	if len(cpus) < 2 {
		t.Skip("needs two available CPUs")
	}
	return cpus[0], cpus[len(cpus)-1]
}

func TestPinEveryCPU(t *testing.T) {
	for cpu := range available(t).All() {
		release, err := Pin(cpu)
		if err != nil {
			t.Fatalf("Pin(%d): %v", cpu, err)
		}
		if m := threadMask(t); m.String() != strconv.Itoa(cpu) {
			t.Errorf("after Pin(%d) the thread's mask is %v", cpu, m)
		}
		// The kernel migrates the thread before sched_setaffinity returns;
		// look a few times in case a preemption moved it since (it cannot).
		for range 3 {
			if got, err := Current(); err != nil || got != cpu {
				t.Errorf("Pin(%d), then Current() = %d, %v", cpu, got, err)
			}
			runtime.Gosched()
		}
		release()
	}
}

func TestPinSet(t *testing.T) {
	avail := available(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := threadMask(t)
	release, err := PinSet(avail)
	if err != nil {
		t.Fatal(err)
	}
	if m := threadMask(t); m != avail {
		t.Errorf("PinSet(%v) left mask %v", avail, m)
	}
	if c, err := Current(); err != nil || !avail.Has(c) {
		t.Errorf("Current() = %d, %v; want a CPU of %v", c, err, avail)
	}
	release()
	if m := threadMask(t); m != before {
		t.Errorf("after release the mask is %v, want %v", m, before)
	}
}

func TestReleaseRestoresMask(t *testing.T) {
	a, b := twoCPUs(t)
	runtime.LockOSThread() // so that the checks below look at the pinned thread
	defer runtime.UnlockOSThread()
	before, tid := threadMask(t), unix.Gettid()

	outer, err := Pin(a)
	if err != nil {
		t.Fatal(err)
	}
	// Available is the process's set even from a pinned thread.
	if got := available(t); got != before {
		t.Errorf("Available() while pinned to %d = %v, want %v", a, got, before)
	}
	inner, err := Pin(b)
	if err != nil {
		t.Fatalf("nested Pin(%d): %v", b, err)
	}
	if got, _ := Current(); got != b {
		t.Errorf("nested Pin(%d): running on %d", b, got)
	}
	inner()
	if m := threadMask(t); m.String() != strconv.Itoa(a) {
		t.Errorf("inner release left mask %v, want the outer pin's %d", m, a)
	}
	inner() // idempotent: must not restore or unlock again
	if m := threadMask(t); m.String() != strconv.Itoa(a) {
		t.Errorf("second inner release changed the mask to %v", m)
	}
	outer()
	outer()
	if m := threadMask(t); m != before {
		t.Errorf("after release the mask is %v, want %v", m, before)
	}
	if unix.Gettid() != tid {
		t.Error("the goroutine changed threads while locked")
	}
}

// threadEnds runs f on a new goroutine and reports whether f left that
// goroutine locked to its thread, which is observable: the runtime ends a
// thread whose goroutine exits locked to it.
//
// The goroutine holds a lock of its own around f, so that the thread is
// known and is not the main thread, which the runtime parks instead of
// ending. Lock counts nest: after f and the goroutine's own unlock, the
// goroutine is locked only if f locked more than it unlocked.
//
// A thread's end can only be seen, not its staying: threadEnds watches
// for wait. Where a test expects the end, wait is long (endWait), so a
// loaded machine that is slow to reap the thread does not fail it; where
// it expects no end, a short wait (stayWait) is enough, since slowness
// can only make the thread look as if it stayed.
func threadEnds(t *testing.T, wait time.Duration, f func()) bool {
	t.Helper()
	tids := make(chan int)
	hold := make(chan struct{})
	defer close(hold)
	for tid := -1; tid < 0; {
		go func() {
			runtime.LockOSThread()
			if unix.Gettid() == unix.Getpid() {
				// The main thread: keep it busy so that the next try
				// (with GOMAXPROCS=1, the only other goroutine) runs on
				// another thread.
				tids <- -1
				<-hold
				runtime.UnlockOSThread()
				return
			}
			tid := unix.Gettid()
			f()
			runtime.UnlockOSThread()
			tids <- tid
		}()
		tid = <-tids
		if tid < 0 {
			continue
		}
		task := fmt.Sprintf("/proc/self/task/%d", tid)
		// A thread left locked exits within microseconds of its goroutine;
		// an unlocked one stays in the runtime's idle list for good.
		for deadline := time.Now().Add(wait); time.Now().Before(deadline); {
			if _, err := os.Stat(task); errors.Is(err, fs.ErrNotExist) {
				return true
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return false
}

const (
	endWait  = 20 * time.Second
	stayWait = 300 * time.Millisecond
)

func TestReleaseUnlocks(t *testing.T) {
	cpu := slices.Collect(available(t).All())[0]
	pin := func() func() {
		release, err := Pin(cpu)
		if err != nil {
			t.Error(err)
			return func() {}
		}
		return release
	}
	if threadEnds(t, stayWait, func() { pin()() }) {
		t.Error("Pin then release left the goroutine locked: its thread ended with it")
	}
	// Control, so that the check above can fail: a goroutine that exits
	// pinned takes its thread with it.
	if !threadEnds(t, endWait, func() { pin() }) {
		t.Error("a goroutine exited pinned and its thread lived on")
	}
	// Two releases unlock once: the caller's own lock still holds.
	if !threadEnds(t, endWait, func() {
		runtime.LockOSThread()
		release := pin()
		release()
		release()
	}) {
		t.Error("a second release undid the caller's own LockOSThread")
	}
	// A failed Pin leaves the goroutine unlocked.
	if threadEnds(t, stayWait, func() {
		if _, err := Pin(cpuLimit - 1); err == nil {
			t.Error("Pin of an unavailable CPU succeeded")
		}
	}) {
		t.Error("a failed Pin left the goroutine locked")
	}
}

func TestPinErrors(t *testing.T) {
	avail := available(t)
	last := slices.Collect(avail.All())[avail.Len()-1]
	var withBad CPUSet
	withBad.Add(slices.Collect(avail.All())[0], last+1)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := threadMask(t)
	for _, tc := range []struct {
		name  string
		pin   func() (func(), error)
		is    error
		wants string
	}{
		{"negative", func() (func(), error) { return Pin(-1) }, ErrInvalidCPU, "-1"},
		{"too large", func() (func(), error) { return Pin(cpuLimit) }, ErrInvalidCPU, strconv.Itoa(cpuLimit)},
		{"unavailable", func() (func(), error) { return Pin(last + 1) }, ErrNotAvailable,
			fmt.Sprintf("CPU %d (available: %v)", last+1, avail)},
		{"empty set", func() (func(), error) { return PinSet(CPUSet{}) }, ErrEmptySet, "empty"},
		{"set partly unavailable", func() (func(), error) { return PinSet(withBad) }, ErrNotAvailable,
			fmt.Sprintf("CPU %d (available: %v)", last+1, avail)},
	} {
		release, err := tc.pin()
		if err == nil {
			release()
			t.Errorf("%s: succeeded", tc.name)
			continue
		}
		if release != nil {
			t.Errorf("%s: non-nil release with error", tc.name)
		}
		if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.wants) {
			t.Errorf("%s: error %q, want %v naming %q", tc.name, err, tc.is, tc.wants)
		}
		if m := threadMask(t); m != before {
			t.Errorf("%s: mask changed to %v from %v", tc.name, m, before)
		}
	}
}

func TestReleaseOnOtherGoroutinePanics(t *testing.T) {
	cpu := slices.Collect(available(t).All())[0]
	releases := make(chan func())
	done := make(chan struct{})
	go func() {
		defer close(done)
		release, err := Pin(cpu)
		if err != nil {
			t.Error(err)
			releases <- func() {}
			return
		}
		releases <- release
		<-releases // the test goroutine has tried; now release properly
		release()
		if m, _ := getMask(); fromMask(m).String() == strconv.Itoa(cpu) && available(t).Len() > 1 {
			t.Error("release on the pinning goroutine after a misuse did not restore the mask")
		}
	}()
	release := <-releases
	func() {
		defer func() {
			if r := recover(); r == nil {
				t.Error("release on another goroutine did not panic")
			}
		}()
		release()
	}()
	releases <- nil
	<-done
}

func TestCurrent(t *testing.T) {
	avail := available(t)
	c, err := Current()
	if err != nil || !avail.Has(c) {
		t.Fatalf("Current() = %d, %v; want a CPU of %v", c, err, avail)
	}
}

// TestAvailableUnderTaskset runs this test binary with its affinity
// narrowed to one CPU, as taskset would, and checks there (in
// TestTasksetChild) that the package respects it.
func TestAvailableUnderTaskset(t *testing.T) {
	if os.Getenv("AFFINITY_TASKSET_CHILD") != "" {
		t.Skip("in the child")
	}
	_, b := twoCPUs(t)
	var one CPUSet
	one.Add(b)
	// The child inherits the mask of the thread that forks it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old, err := getMask()
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.SchedSetaffinityDynamic(0, toMask(one)); err != nil {
		t.Fatal(err)
	}
	cmd := testutil.SelfCommand("-test.run=^TestTasksetChild$", "-test.v")
	cmd.Env = append(os.Environ(), "AFFINITY_TASKSET_CHILD="+strconv.Itoa(b))
	out, err := cmd.CombinedOutput()
	if rerr := unix.SchedSetaffinityDynamic(0, old); rerr != nil {
		t.Fatal(rerr) // before UnlockOSThread returns this thread to the runtime
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: TestTasksetChild") {
		t.Fatalf("child under taskset -c %d: %v\n%s", b, err, out)
	}
}

func TestTasksetChild(t *testing.T) {
	want := os.Getenv("AFFINITY_TASKSET_CHILD")
	if want == "" {
		t.Skip("run by TestAvailableUnderTaskset")
	}
	cpu, _ := strconv.Atoi(want)
	if got := available(t).String(); got != want {
		t.Fatalf("Available() = %s under taskset -c %s", got, want)
	}
	other := 0
	if cpu == 0 {
		other = 1
	}
	if _, err := Pin(other); !errors.Is(err, ErrNotAvailable) || !strings.Contains(err.Error(), "available: "+want) {
		t.Errorf("Pin(%d) outside the taskset: %v", other, err)
	}
	release, err := Pin(cpu)
	if err != nil {
		t.Fatalf("Pin(%d): %v", cpu, err)
	}
	if got, _ := Current(); got != cpu {
		t.Errorf("pinned to %d, running on %d", cpu, got)
	}
	release()
	l, err := Topology()
	if err != nil {
		t.Fatal(err)
	}
	if len(l.CPUs) != 1 || l.CPUs[0].ID != cpu || l.CPUs[0].Siblings.String() != want {
		t.Errorf("Topology() under taskset -c %s: %+v", want, l.CPUs)
	}
}

// Nested pins released outer first: the thread keeps the inner pin's mask
// while that pin holds, and gets its own mask back with the last release.
func TestReleaseOutOfOrder(t *testing.T) {
	a, b := twoCPUs(t)
	runtime.LockOSThread() // so that the checks below look at the pinned thread
	defer runtime.UnlockOSThread()
	before := threadMask(t)
	outer, err := Pin(a)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := Pin(b)
	if err != nil {
		t.Fatal(err)
	}
	outer()
	if m := threadMask(t); m.String() != strconv.Itoa(b) {
		t.Errorf("outer released first: mask %v, want the inner pin's %d", m, b)
	}
	inner()
	if m := threadMask(t); m != before {
		t.Fatalf("both released: mask %v, want %v", m, before)
	}

	// Three deep, the middle one first.
	var sets [3]CPUSet
	var rel [3]func()
	for i, cpu := range []int{a, b, a} {
		sets[i].Add(cpu)
		if rel[i], err = PinSet(sets[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []struct {
		i    int
		want CPUSet
	}{{1, sets[2]}, {2, sets[0]}, {0, before}} {
		rel[step.i]()
		if m := threadMask(t); m != step.want {
			t.Errorf("after releasing pin %d: mask %v, want %v", step.i, m, step.want)
		}
	}

	// The goroutine is unlocked exactly once per pin.
	if threadEnds(t, stayWait, func() { pinOutOfOrder(t, a, b) }) {
		t.Error("pins released out of order left the goroutine locked")
	}
}

// pinOutOfOrder pins to a, then b, and releases a first.
func pinOutOfOrder(t *testing.T, a, b int) {
	r1, err1 := Pin(a)
	r2, err2 := Pin(b)
	if err1 != nil || err2 != nil {
		t.Error(err1, err2)
		return
	}
	r1()
	r2()
}

// The fault as a user met it: after r1 := Pin(0); r2 := Pin(1); r1();
// r2() on a goroutine that then runs on, the thread went back to the
// scheduler narrowed to CPU 0, and Available() and Pin(1) failed on
// whichever goroutines later ran there.
func TestOutOfOrderLeavesNoNarrowedThread(t *testing.T) {
	a, b := twoCPUs(t)
	avail := available(t)
	for range 20 {
		done := make(chan struct{})
		go func() {
			defer close(done)
			pinOutOfOrder(t, a, b)
		}()
		<-done
	}
	var wg sync.WaitGroup
	var bad atomic.Int32
	for range 200 {
		wg.Go(func() {
			got, err := Available()
			release, perr := Pin(b)
			if perr == nil {
				release()
			}
			if err != nil || got != avail || perr != nil {
				bad.Add(1)
			}
		})
	}
	wg.Wait()
	if n := bad.Load(); n != 0 {
		t.Errorf("%d of 200 goroutines saw a narrowed thread (Available() short of %v, or Pin(%d) refused)", n, avail, b)
	}
}

// A thread id left behind by a goroutine that exited pinned, and reused
// by a new thread, is not taken for that thread's pins.
func TestStaleThreadEntry(t *testing.T) {
	a, b := twoCPUs(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := threadMask(t)
	var stale CPUSet
	stale.Add(b)
	tid := unix.Gettid()
	threadsMu.Lock()
	threads[tid] = &threadPins{base: toMask(stale), held: []*pin{{mask: toMask(stale)}}}
	threadsMu.Unlock()
	release, err := Pin(a)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if m := threadMask(t); m != before {
		t.Errorf("after a pin over a stale entry: mask %v, want %v", m, before)
	}
	threadsMu.Lock()
	defer threadsMu.Unlock()
	if _, ok := threads[tid]; ok {
		t.Error("the thread's entry outlived its last pin")
	}
}
