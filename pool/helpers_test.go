package pool

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/internal/emul"
	"github.com/knit-go/knit/internal/testutil"
)

// TestMain arms a watchdog over the whole run, for the tests and examples
// that have none of their own, so a hang anywhere ends in a goroutine dump
// well before go test's own timeout.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		os.Exit(m.Run()) // benchmarks take as long as they take
	}
	d := 3 * time.Minute
	if raceEnabled || emulated {
		// Under 10 minutes, go test's default timeout, so that this dump,
		// which names the run's own watchdog, comes first.
		d *= 3
	}
	timer := time.AfterFunc(d, func() {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		fmt.Fprintf(os.Stderr, "watchdog: the test binary still running after %v; goroutines:\n%s\n", d, buf)
		os.Exit(2)
	})
	code := m.Run()
	timer.Stop()
	// Every test closes the pools it makes; a worker still running now
	// is a leak (goleak's VerifyTestMain, without the dependency).
	if code == 0 {
		if leaked := workerGoroutines(5 * time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "pool workers still running after every test:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// workerGoroutines waits up to d for every pool worker goroutine to end
// and returns the stacks of those still running, or "". A worker is
// recognised by its goroutine's entry frame, so the check does not depend
// on goroutine counts (which the runtime and the testing package move).
func workerGoroutines(d time.Duration) string {
	var leaked []string
	eventually(d, func() bool {
		leaked = leaked[:0]
		for _, g := range strings.Split(allStacks(), "\n\n") {
			if strings.Contains(g, "knit/pool.(*worker).main(") {
				leaked = append(leaked, g)
			}
		}
		return len(leaked) == 0
	})
	return strings.Join(leaked, "\n\n")
}

// blockedIn counts the goroutines blocked (parked, or in a system call)
// with one of frames in their stack: how a test waits for a goroutine to be
// asleep rather than for a while.
func blockedIn(frames ...string) int { return testutil.Blocked(frames...) }

// allStacks is every goroutine's stack, however many there are.
func allStacks() string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// watchdog fails the whole test binary, with every goroutine's stack,
// if the test is still running after d: a lost wakeup shows up as a dump
// naming the parked goroutines instead of a hang until go test's timeout.
func watchdog(t *testing.T, d time.Duration) {
	t.Helper()
	if raceEnabled {
		d *= 4
	}
	if emulated {
		d *= 5
	}
	testutil.Watchdog(t, d)
}

// settleParked waits, up to d, for every worker of p to be parked for
// good, and returns the stats then; ok is false if d passed first. A
// worker readied by the last call's ring may still show as parked until
// it runs, wakes and parks again, and a spinning one parks only after its
// spin: so besides every worker counted parked, with the counts the same
// before and after the look, it asks every worker's goroutine to be
// blocked (asleep in the scheduler or the futex call, not runnable).
// Blocked is not enough on the futex backend: a worker whose futex call
// returned to a ring, on a thread not yet run again, still shows in the
// syscall, still counted parked. Its idle bit tells it apart: the ring
// claimed (cleared) that bit before it rang, and only the worker's next
// park sets it again (see sleepers.go), so every bit must be set too.
func settleParked(p *Pool, d time.Duration) (s Stats, ok bool) {
	ok = eventually(d, func() bool {
		s1 := p.Stats()
		if s1.Parked != s1.Workers {
			return false
		}
		mine := map[string]bool{}
		for _, w := range p.workersNow() {
			if w.blk.asleep.Load()&w.bit == 0 {
				return false
			}
			mine[fmt.Sprintf("%p", w)] = true
		}
		const frame = "pool.(*worker).main("
		asleep := testutil.BlockedWhere(func(stack string) bool {
			_, arg, ok := strings.Cut(stack, frame)
			if !ok {
				return false
			}
			recv, _, _ := strings.Cut(arg, ",")
			return mine[strings.TrimSuffix(recv, "?")]
		})
		s = p.Stats()
		return s1 == s && asleep == s.Workers
	})
	return s, ok
}

// emulated reports that the tests run under user-mode emulation (qemu-user
// on an x86 host, as CI's arm64 runs do; see internal/emul). There the
// pool's tests that compute take about ten times as long as natively
// (TestNestedRecursive 0.04 s natively with -tags purego, 0.42 s under
// qemu-aarch64; TestGroupRunsAll 0.02 s and 0.18 s), so watchdogs allow
// five times what they allow natively, which keeps every one at least
// thirty times what its test took under qemu-aarch64.
var emulated = emul.StoreLoadBroken()

// eventually polls cond until it holds or d passes.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

// scale shrinks an iteration count under the race detector, which is
// about ten times slower, so the race run stays within its budget.
func scale(n int) int {
	if raceEnabled {
		return max(n/8, 1)
	}
	return n
}

// shape is a named pool configuration a test runs on.
type shape struct {
	name string
	cfg  Config
}

// configs are the pool shapes most tests run on.
func configs() []shape {
	return []shape{
		{"w1", Config{Workers: 1}},
		{"w1-spin", Config{Workers: 1, Park: knit.Park{Spin: 20 * time.Microsecond}}},
		{"w2", Config{Workers: 2}},
		{"w4", Config{Workers: 4}},
		{"w4-nosteal", Config{Workers: 4, NoSteal: true}},
		{"w3-q2", Config{Workers: 3, QueueSize: 2}},
		{"w1-q1-nosteal", Config{Workers: 1, QueueSize: 1, NoSteal: true}},
	}
}

// eachShape runs body on a fresh pool of every shape, as subtests, and
// closes the pool after.
func eachShape(t *testing.T, shapes []shape, body func(t *testing.T, p *Pool)) {
	t.Helper()
	for _, c := range shapes {
		t.Run(c.name, func(t *testing.T) {
			p := New(c.cfg)
			defer p.Close()
			body(t, p)
		})
	}
}

// checkNoLeak waits for the goroutine count to drop back to base, and
// for every pool worker goroutine to have ended.
func checkNoLeak(t *testing.T, base int) {
	t.Helper()
	if !eventually(5*time.Second, func() bool { return runtime.NumGoroutine() <= base }) {
		t.Fatalf("goroutines: %d, want <= %d\n%s", runtime.NumGoroutine(), base, allStacks())
	}
	if leaked := workerGoroutines(5 * time.Second); leaked != "" {
		t.Fatalf("pool workers still running:\n%s", leaked)
	}
}

// raceEnabled: the race detector is on (watchdogs allow more, allocation
// tests skip).
const raceEnabled = testutil.Race

// spawnWatch checks that code running on a pool's workers starts no
// goroutine. The goroutine count cannot say so alone: it includes the
// goroutines the testing package and the runtime start and end around a
// test, and runtime.NumGoroutine reads the runtime's free lists without
// a lock, so it can read high for a moment while goroutines end
// elsewhere. So a count above the start triggers a look at every stack,
// as report does once whatever the count, and what fails the test is a
// goroutine that was not there at the start and that runs or was started
// by knit code (a context.AfterFunc's goroutine running knit's callback
// counts too).
//
// curgSpawn's goroutines are let through: where curg is not cheap a
// waiter starts one to learn its own identity, and it runs no task and
// ends within microseconds (several may be ending at once).
type spawnWatch struct {
	before map[string]bool // "goroutine N" headers alive at the start
	n0     int
	empty  atomic.Int32 // looks that found nothing; each stops the world
	hit    atomic.Bool  // a look found one: the test fails, no more looks needed
	mu     sync.Mutex
	found  map[string]string // header -> stack, of knit-made goroutines
}

// watchSpawns starts a watch; call it once the pool's workers run.
func watchSpawns() *spawnWatch {
	w := &spawnWatch{before: map[string]bool{}, found: map[string]string{}}
	w.n0 = runtime.NumGoroutine()
	for _, g := range strings.Split(allStacks(), "\n\n") {
		w.before[goroutineHeader(g)] = true
	}
	return w
}

// check looks for new goroutines if the count is above the start's,
// until a look finds one or 8 have found none (the count read high).
func (w *spawnWatch) check() {
	if runtime.NumGoroutine() > w.n0 && w.empty.Load() < 8 && !w.hit.Load() {
		w.look()
	}
}

// look records the goroutines knit code started since the watch began.
func (w *spawnWatch) look() {
	stacks := allStacks()
	w.mu.Lock()
	defer w.mu.Unlock()
	found := false
	for _, g := range strings.Split(stacks, "\n\n") {
		h := goroutineHeader(g)
		if w.before[h] {
			continue
		}
		_, creator, _ := strings.Cut(g, "\ncreated by ")
		if strings.Contains(g, "github.com/knit-go/knit/") && !strings.HasPrefix(creator, "github.com/knit-go/knit/pool.curgSpawn") {
			w.found[h] = g
			found = true
		}
	}
	if found {
		w.hit.Store(true)
	} else {
		w.empty.Add(1)
	}
}

// report fails t with the stacks of the goroutines knit code started.
func (w *spawnWatch) report(t *testing.T, what string) {
	t.Helper()
	w.look()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.found) > 0 {
		var all []string
		for _, g := range w.found {
			all = append(all, g)
		}
		t.Fatalf("%s started %d goroutines:\n%s", what, len(w.found), strings.Join(all, "\n\n"))
	}
}

// goroutineHeader is a stack's "goroutine N" prefix, its id.
func goroutineHeader(stack string) string {
	h, _, _ := strings.Cut(stack, " [")
	return h
}
