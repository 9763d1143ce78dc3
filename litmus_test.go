package knit

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit/internal/emul"
	"github.com/knit-go/knit/internal/relstore"
	"github.com/knit-go/knit/internal/ringmode"
)

// Litmus tests: the two orderings the rings and the doorbell rely on,
// run as stress tests over the library's own code, two goroutines locked
// to OS threads, counting the outcomes the argument beside each barrier
// forbids. Any forbidden outcome fails.
//
//   - MP (message passing): the producer writes a slot, then publishes the
//     index with a release store (storeRel, STLR on arm64, the Words
//     assembly); the consumer loads the index with an acquire load, then
//     reads the slot. Seeing the new index with the old slot is
//     forbidden; so is the reverse edge (the consumer's read of a slot
//     overtaken by the producer's next write into it, after the
//     consumer's release of head). See "Publication and the doorbell" in
//     bell.go and the ordering notes in ring_arm64.s.
//   - SB (store buffering): the publisher stores the index, then loads the
//     waiter count (Notify); the waiter registers (Prepare), then
//     re-checks the index. Both reading the old value is the lost wakeup.
//     See "Why no wakeup is lost" beside notify in event.go.
//
// On amd64 the MP edges are TSO's and cannot fail; SB is the one x86 may
// reorder, which the bell modes answer. On arm64 every edge is an
// explicit STLR or LDAR, and x86 hosts running the arm64 build under
// qemu-user show nothing about them: the emulated STLR and LDAR become
// x86 stores and loads, which TSO orders for MP whatever the guest code
// says. So MP here means something on native arm64 only (CI's arm64
// runners); under qemu it still checks the library's emulation fence on
// the SB shapes, which is where qemu does reorder (internal/emul).
//
// KNIT_LITMUS_N sets the iterations per shape (items per ring for MP).
// Without it, -short divides the default by 10 and -race by 50, and each
// shape also stops at a time budget, so that a loaded machine, where the
// two threads seldom run at once anyway, makes the test slower and no
// less passing; the log says how many iterations ran.

const litmusEnv = "KNIT_LITMUS_N"

// litmusCount is a shape's iteration count and when it stops early
// (the zero time: never).
type litmusCount struct {
	n        uint64
	deadline time.Time
}

// litmusIters is the count for a shape whose default is def.
func litmusIters(t *testing.T, def int) litmusCount {
	t.Helper()
	if s := os.Getenv(litmusEnv); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n == 0 {
			t.Fatalf("%s=%q: want a positive count", litmusEnv, s)
		}
		return litmusCount{n: n}
	}
	budget := litmusBudget
	if testing.Short() {
		def /= 10
		budget /= 2
	}
	if raceEnabled {
		def /= 50
	}
	return litmusCount{n: uint64(max(def, 100)), deadline: time.Now().Add(budget)}
}

// litmusBudget is a shape's time budget when KNIT_LITMUS_N is not set. A
// quiet 2-vCPU machine runs every default count in well under it.
const litmusBudget = 6 * time.Second

// stop reports, every 1024 iterations, whether the budget is spent.
func (c litmusCount) stop(i uint64) bool {
	return i&1023 == 0 && !c.deadline.IsZero() && time.Now().After(c.deadline)
}

// watchdog is how long a shape may run before it counts as hung: a side
// waiting for ever (a lost wakeup in the harness itself) fails with every
// stack instead of at the test binary's timeout.
func (c litmusCount) watchdog() time.Duration {
	return max(5*time.Minute, time.Duration(c.n)*100*time.Microsecond)
}

// litmusNeedsCPUs skips where the two threads cannot run at once: no
// reordering between them can then be observed.
func litmusNeedsCPUs(t *testing.T) {
	t.Helper()
	if runtime.NumCPU() < 2 || runtime.GOMAXPROCS(0) < 2 {
		t.Skipf("needs two CPUs and GOMAXPROCS >= 2 to run both threads at once (NumCPU %d, GOMAXPROCS %d)",
			runtime.NumCPU(), runtime.GOMAXPROCS(0))
	}
}

// litmusSpin waits until w reaches v: spinning, as both threads are
// meant to be on a CPU at once, and yielding once the wait has lasted
// litmusPatience, for the machine where they are not.
func litmusSpin(w *atomic.Uint64, v uint64) {
	litmusWait(func() bool { return w.Load() >= v })
}

// litmusWait spins until done reports true. The patience is measured in
// time, not spins: a spin costs more under emulation, and a locked
// thread's yield is a handoff through the scheduler (microseconds, far
// more under qemu-user) that must not land between the barrier and a
// step: with a patience of 4096 spins, the two steps under qemu never
// met.
func litmusWait(done func() bool) {
	var start time.Time
	for spins := 1; !done(); spins++ {
		if spins&1023 != 0 {
			continue
		}
		if start.IsZero() {
			start = time.Now()
		} else if time.Since(start) > litmusPatience {
			runtime.Gosched()
		}
	}
}

// litmusPatience is how long a side spins before it yields.
const litmusPatience = time.Millisecond

// litmusSink keeps litmusDelay's loop from being optimised away.
var litmusSink atomic.Uint64

// litmusDelay busy-waits about k loop steps, without touching shared
// memory in the loop, so that the two threads' steps slide past each
// other from iteration to iteration instead of always meeting at the
// same offset.
func litmusDelay(k uint64) {
	x := k
	for range k {
		x = x*6364136223846793005 + 1442695040888963407
	}
	if x == 0 {
		litmusSink.Add(1)
	}
}

// litmusRand is a per-thread xorshift for the delays.
type litmusRand uint64

func (r *litmusRand) next() uint64 {
	x := uint64(*r)
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	*r = litmusRand(x)
	return x
}

// litmusShape is a two-thread shape: for each iteration i, thread B runs
// setup with A idle, both threads leave a barrier together and run a and
// b, and B runs check once A is done. check returns "" for an allowed
// outcome, else a description of the forbidden one, and which step the
// outcome shows came first (litmusA, litmusB, or 0 where it cannot tell).
type litmusShape struct {
	setup func(i uint64)
	a, b  func(i uint64)
	check func(i uint64) (forbidden string, first int)
}

// Which step came first, as check tells it.
const (
	litmusA = -1
	litmusB = +1
)

// litmusJitter is the width of the random delay added on each side, in
// litmusDelay steps (a nanosecond or two each): the window over which the
// two steps slide past each other around the point where they meet.
const litmusJitter = 64

// runLitmus runs s for up to c.n iterations and returns how many ran and
// how many of those were forbidden, with the first few described.
//
// The two threads leave a barrier together, but not at once: the one
// that arrives last leaves at once, the other when the barrier's line
// reaches it, a cache-line transfer later (microseconds on a shared VM),
// while a reordering needs the two steps within a store buffer's drain
// of each other. So B moves a delay on one side, iteration by iteration,
// toward the point where each step comes first half the time, as the
// outcomes tell it, and a random jitter slides the steps past each other
// around that point. The outcomes say which step came first, not a
// clock: what matters is the order the memory system saw.
func runLitmus(t *testing.T, c litmusCount, s litmusShape) (ran, forbidden uint64, first []string) {
	t.Helper()
	stop := watchdog(t, c.watchdog())
	defer stop()
	var arrive, aDone, aDelay, last atomic.Uint64
	last.Store(c.n)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // thread A
		defer wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		r := litmusRand(0x9e3779b97f4a7c15)
		for i := uint64(1); ; i++ {
			arrive.Add(1)
			if !litmusBarrier(&arrive, 2*i, &last, i) {
				return
			}
			litmusDelay(aDelay.Load() + r.next()%litmusJitter)
			s.a(i)
			aDone.Store(i)
		}
	}()
	func() { // thread B
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		r := litmusRand(0xd1b54a32d192ed03)
		var offset int64 // > 0: B waits that long; < 0: A does
		for i := uint64(1); i <= c.n; i++ {
			if c.stop(i) {
				last.Store(i - 1)
				return
			}
			if s.setup != nil {
				s.setup(i)
			}
			aDelay.Store(uint64(max(-offset, 0)))
			arrive.Add(1)
			litmusSpin(&arrive, 2*i)
			litmusDelay(uint64(max(offset, 0)) + r.next()%litmusJitter)
			s.b(i)
			litmusSpin(&aDone, i)
			ran = i
			msg, who := s.check(i)
			if msg != "" {
				forbidden++
				if len(first) < 5 {
					first = append(first, fmt.Sprintf("iteration %d: %s", i, msg))
				}
			}
			// B's step came first: B waits longer next time, or A
			// less; by a step that grows with the offset, so that a
			// skew of microseconds is reached in a few hundred
			// iterations and a small one is still tracked finely.
			step := litmusStep + max(offset, -offset)/32
			offset = min(max(offset+int64(who)*step, -litmusMaxOffset), litmusMaxOffset)
		}
	}()
	wg.Wait()
	return ran, forbidden, first
}

// litmusBarrier is A's wait at iteration i's barrier: it reports false
// once B has said that the run ends before i.
func litmusBarrier(w *atomic.Uint64, v uint64, last *atomic.Uint64, i uint64) bool {
	litmusWait(func() bool { return w.Load() >= v || last.Load() < i })
	return w.Load() >= v
}

// litmusFail fails t if any outcome was forbidden, with the first few.
func litmusFail(t *testing.T, what string, forbidden, ran uint64, first []string) {
	t.Helper()
	if forbidden == 0 {
		return
	}
	for _, m := range first {
		t.Log(m)
	}
	t.Errorf("%s: %d in %d iterations", what, forbidden, ran)
}

// litmusStep is the least one iteration moves the alignment delay, and
// litmusMaxOffset bounds it (tens of µs: a thread descheduled for a while
// must not drag it further).
const (
	litmusStep      = 4
	litmusMaxOffset = 1 << 15
)

// TestLitmusSBControl is the store-buffering shape with storeRel and a
// load and nothing else: x = 1; r1 = y || y = 1; r2 = x, forbidden
// r1 = r2 = 0. It is forbidden where storeRel is a store no later load
// passes (STLR then LDAR on arm64, sync/atomic elsewhere), allowed where
// it is a plain MOV (amd64: relaxedPublish) and under qemu-user on x86.
//
// Where the hardware allows it (relaxedPublish), it must be seen: that is
// the evidence that this harness brings the two steps within a store
// buffer's drain of each other, without which the shapes that pass would
// show nothing, and the reason the doorbell needs its bell modes. The
// test runs on past its count until one is seen, failing only when
// litmusSeenBudget is spent as well. Under qemu it is allowed but too
// rare to require (the reason for the emulation fence): the test reports
// how often it was seen and skips.
func TestLitmusSBControl(t *testing.T) {
	litmusNeedsCPUs(t)
	c := litmusIters(t, 200_000)
	var x, y atomic.Uint64
	var r1, r2 uint64
	var aFirst, bFirst uint64
	shape := litmusShape{
		a: func(i uint64) { storeRel(&x, i); r1 = y.Load() },
		b: func(i uint64) { storeRel(&y, i); r2 = x.Load() },
		check: func(i uint64) (string, int) {
			switch {
			case r1 < i && r2 < i:
				return "both loads read the old value", 0
			case r1 < i:
				aFirst++
				return "", litmusA
			case r2 < i:
				bFirst++
				return "", litmusB
			}
			return "", 0
		},
	}
	start := time.Now()
	ran, got, first := runLitmus(t, c, shape)
	for end := start.Add(litmusSeenBudget); relaxedPublish && got == 0 && time.Now().Before(end); {
		x.Store(0) // each run counts its iterations from 1 again
		y.Store(0)
		more, seen, _ := runLitmus(t, litmusCount{n: c.n, deadline: earliest(end, time.Now().Add(litmusBudget))}, shape)
		ran, got = ran+more, got+seen
	}
	emulated := emul.StoreLoadBroken()
	t.Logf("%s/%s, relaxed storeRel %v, emulated %v: in %d iterations (%v) A's step came first %d times, B's %d, they overlapped %d, and the store-load reordering was seen %d times",
		runtime.GOOS, runtime.GOARCH, relaxedPublish, emulated, ran, time.Since(start).Round(time.Millisecond), aFirst, bFirst, ran-aFirst-bFirst-got, got)
	switch {
	case relaxedPublish:
		if got == 0 {
			t.Errorf("storeRel then Load never reordered in %d iterations, where x86-TSO allows it: the harness did not bring the two steps together, so the SB shapes that pass show nothing", ran)
		}
	case emulated:
		t.Skipf("the reordering is allowed under emulation but too rare to require; seen %d times in %d iterations", got, ran)
	default:
		litmusFail(t, "storeRel then Load reordered: the release store does not order a later acquire load", got, ran, first)
	}
}

// earliest is the earlier of a and b.
func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// litmusSeenBudget is how long TestLitmusSBControl may run, its count
// included, waiting for a reordering the hardware allows: far more than a
// loaded 2-vCPU machine needs, as only a harness that never brings the
// two steps together spends it.
const litmusSeenBudget = 2 * time.Minute

// TestLitmusSBDoorbell is the lost-wakeup shape over Event: the notifier
// stores the condition with sync/atomic and calls Notify(1); the waiter
// calls Prepare and re-checks. Forbidden: the re-check reads the old
// value and Notify did not move the event word past the waiter's ticket
// (it read no waiter), so a Wait on that ticket would sleep for ever.
func TestLitmusSBDoorbell(t *testing.T) {
	litmusNeedsCPUs(t)
	c := litmusIters(t, 200_000)
	var e Event
	var cond atomic.Uint64
	var tk Ticket
	var seen, woken uint64
	ran, got, first := runLitmus(t, c, litmusShape{
		a: func(i uint64) { cond.Store(i); e.Notify(1) },
		b: func(i uint64) { tk = e.Prepare(); seen = cond.Load() },
		check: func(i uint64) (string, int) {
			moved := e.seq.Load() != uint32(tk)
			e.Cancel(tk)
			switch {
			case seen < i && !moved:
				return "the re-check read the old condition and Notify saw no waiter", 0
			case seen < i:
				woken++
				return "", litmusB // the re-check came before the store
			}
			return "", litmusA
		},
	})
	t.Logf("in %d iterations the re-check missed the store %d times, each time with the word moved", ran, woken)
	litmusFail(t, "lost wakeups", got, ran, first)
	checkEventIdle(t, &e)
}

// sbRings are the rings whose doorbell TestLitmusSBRing runs, each as its
// ringOps: the single attempts (push publishes and rings notEmpty) and
// the bells; every ring's bells relax where bells have modes.
var sbRings = []struct {
	name string
	make func() ringOps[uint64]
}{
	{"SPSC", func() ringOps[uint64] { return NewSPSC[uint64](1, Park{}) }},
	{"Words", func() ringOps[uint64] { return NewWords(1, Park{}) }},
	{"MPSC", func() ringOps[uint64] { return NewMPSC[uint64](1, Park{}).popOps() }},
	{"SPMC", func() ringOps[uint64] { return NewSPMC[uint64](1, Park{}).popOps() }},
	{"MPMC", func() ringOps[uint64] { return NewMPMC[uint64](1, Park{}).popOps() }},
}

// TestLitmusSBRing is the lost-wakeup shape over a ring's own publish and
// the consumer's side of popSlow: the producer pushes (publish, then
// Notify on notEmpty: Words' publish is its assembly); the consumer
// registers with prepare, re-checks with pop, and where the bell was not
// fenced runs fence and pops again, exactly as popSlow does before it
// waits. Forbidden: the re-check found the ring empty and Notify did not
// move the word past the ticket.
//
// The "relaxed" variant puts the bell in modeRelaxed before each
// iteration, as a ring that streamed 4096 positions without a waiter
// would be, so the producer publishes with a plain MOV and the consumer
// must take the bell back with the asymmetric barrier: the path of the
// argument in bell.go that x86 depends on. It runs where bells have
// modes (amd64) and membarrier(2) is available.
func TestLitmusSBRing(t *testing.T) {
	litmusNeedsCPUs(t)
	for _, relaxed := range []bool{false, true} {
		for _, k := range sbRings {
			name := k.name
			if relaxed {
				name += "/relaxed"
			}
			t.Run(name, func(t *testing.T) {
				def := 100_000
				if relaxed {
					if !relaxedPublish {
						t.Skip("bells have no modes in this build: storeRel is not a relaxed store")
					}
					if !waitAsymBarrier() {
						t.Skip("no asymmetric barrier (membarrier) here: bells stay fenced")
					}
					def = 20_000 // a membarrier per iteration
				}
				c := litmusIters(t, def)
				r := k.make()
				b := &r.bellsOf().notEmpty
				var tk Ticket
				var fenced bool
				var v uint64
				var st, pushed status
				var woken uint64
				switches := bellSwitches.Load()
				ran, got, first := runLitmus(t, c, litmusShape{
					setup: func(uint64) {
						if relaxed {
							b.mode.Store(modeRelaxed)
						}
					},
					a: func(i uint64) { pushed = r.push(i) },
					b: func(i uint64) {
						tail, _ := r.indices()
						tk, fenced = b.prepare(tail &^ closedBit)
						v, st = r.pop()
						if st == stEmpty && !fenced {
							b.fence()
							v, st = r.pop()
						}
					},
					check: func(i uint64) (string, int) {
						if pushed != stOK {
							return fmt.Sprintf("push into an empty ring returned status %d", pushed), 0
						}
						var msg string
						switch {
						case st == stEmpty && b.seq.Load() == uint32(tk):
							msg = "the re-check found the ring empty and Notify saw no waiter"
						case st == stEmpty:
							woken++
						case st != stOK:
							msg = fmt.Sprintf("pop returned status %d", st)
						case v != i:
							msg = fmt.Sprintf("popped %d, want %d", v, i)
						}
						b.Cancel(tk)
						if st != stEmpty {
							return msg, litmusA
						}
						// Take the item, so the next iteration starts empty.
						if v, st = r.pop(); st != stOK || v != i {
							msg += fmt.Sprintf("; the item after the push: %d (status %d), want %d", v, st, i)
						}
						return msg, litmusB // the re-check came before the publish
					},
				})
				t.Logf("in %d iterations the re-check found the ring empty %d times, each time with the word moved; bell switches %d",
					ran, woken, bellSwitches.Load()-switches)
				litmusFail(t, "forbidden outcomes", got, ran, first)
				if w := b.Waiters(); w != 0 {
					t.Errorf("%d waiters left registered", w)
				}
			})
		}
	}
}

// TestLitmusSBOwnEvent is the lost-wakeup shape of code that waits for a
// ring through an Event of its own, as the pool's workers do: the producer
// pushes and Notifies its Event; the consumer Prepares on that Event and
// re-checks with a pop. Forbidden: the re-check found the ring empty and
// Notify saw no waiter. In "fence" the ring's bell is relaxed before each
// iteration, as a ring nobody waits on through its own calls soon is, so
// the push publishes with a plain MOV and only the producer's fence
// (relstore.Fence) orders it before Notify's load; in "kept" the ring is
// kept fenced (internal/ringmode, as the pool's queues are) and the
// producer does not fence.
func TestLitmusSBOwnEvent(t *testing.T) {
	litmusNeedsCPUs(t)
	for _, kept := range []bool{false, true} {
		for _, k := range sbRings {
			name := k.name + "/fence"
			if kept {
				name = k.name + "/kept"
			}
			t.Run(name, func(t *testing.T) { litmusOwnEvent(t, k.make(), kept) })
		}
	}
}

func litmusOwnEvent(t *testing.T, r ringOps[uint64], kept bool) {
	c := litmusIters(t, 100_000)
	b := &r.bellsOf().notEmpty
	if kept && !ringmode.KeepFenced(r) {
		t.Fatalf("ringmode.KeepFenced(%T) = false", r)
	}
	var e Event
	var tk Ticket
	var v uint64
	var st, pushed status
	ran, got, first := runLitmus(t, c, litmusShape{
		setup: func(uint64) {
			if relaxedPublish && !kept {
				b.mode.Store(modeRelaxed)
			}
		},
		a: func(i uint64) {
			pushed = r.push(i)
			if !kept {
				relstore.Fence()
			}
			emul.StoreLoadFence()
			e.Notify(1)
		},
		b: func(i uint64) { tk = e.Prepare(); v, st = r.pop() },
		check: func(i uint64) (string, int) {
			if pushed != stOK {
				return fmt.Sprintf("push into an empty ring returned status %d", pushed), 0
			}
			moved := e.seq.Load() != uint32(tk)
			e.Cancel(tk)
			var msg string
			switch {
			case st == stEmpty && !moved:
				msg = "the re-check found the ring empty and Notify saw no waiter"
			case st == stOK && v != i:
				msg = fmt.Sprintf("popped %d, want %d", v, i)
			case st != stOK && st != stEmpty:
				msg = fmt.Sprintf("pop returned status %d", st)
			}
			if st == stOK {
				return msg, litmusA
			}
			if v, st = r.pop(); st != stOK || v != i {
				msg += fmt.Sprintf("; the item after the push: %d (status %d), want %d", v, st, i)
			}
			return msg, litmusB
		},
	})
	t.Logf("%d iterations", ran)
	litmusFail(t, "lost wakeups", got, ran, first)
	checkEventIdle(t, &e)
	if kept && b.mode.Load() != modeFenced {
		t.Errorf("a ring kept fenced has bell mode %d", b.mode.Load())
	}
}

// waitAsymBarrier waits for the background membarrier registration that
// the first ring started, and reports whether it succeeded.
func waitAsymBarrier() bool {
	if runtime.GOOS != "linux" {
		return false // membarrier(2) is Linux's
	}
	startAsymBarrier()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if asymBarrierReady() {
			return true
		}
	}
	return asymBarrierReady()
}

// litmusPayload is an MP item wider than a word: the consumer checks every
// word, so a slot read before the producer's writes to it were visible
// (or after its next ones) shows as a mixed or wrong value.
type litmusPayload [4]uint64

// TestLitmusMP streams items 1..n through each ring at capacities 1 and 8
// (every slot reused at once, and a producer writing the slot beside the
// one being read), one producer and one consumer on locked threads, each
// spinning on its Try call, and checks each item popped is the one
// expected, whole. Words runs its assembly (STLR/LDAR on arm64), one item
// at a time and in batches.
func TestLitmusMP(t *testing.T) {
	litmusNeedsCPUs(t)
	mk := func(i uint64) litmusPayload { return litmusPayload{i, i, i, i} }
	ok := func(v litmusPayload, i uint64) bool { return v == mk(i) }
	word := func(i uint64) uint64 { return i }
	wordOK := func(v, i uint64) bool { return v == i }
	for _, c := range []int{1, 8} {
		for _, k := range []struct {
			name string
			q    func(int) Queue[litmusPayload]
		}{
			{"SPSC", func(c int) Queue[litmusPayload] { return joinSPSC(NewSPSC[litmusPayload](c, Park{})) }},
			{"MPSC", func(c int) Queue[litmusPayload] { return NewMPSC[litmusPayload](c, Park{}) }},
			{"SPMC", func(c int) Queue[litmusPayload] { return NewSPMC[litmusPayload](c, Park{}) }},
			{"MPMC", func(c int) Queue[litmusPayload] { return NewMPMC[litmusPayload](c, Park{}) }},
		} {
			t.Run(fmt.Sprintf("%s/cap%d", k.name, c), func(t *testing.T) {
				litmusStream(t, litmusIters(t, 200_000), k.q(c), 1, mk, ok)
			})
		}
		t.Run(fmt.Sprintf("Words/cap%d", c), func(t *testing.T) {
			litmusStream[uint64](t, litmusIters(t, 200_000), joinWords(NewWords(c, Park{})), 1, word, wordOK)
		})
		t.Run(fmt.Sprintf("Words/cap%d/batch", c), func(t *testing.T) {
			litmusStream[uint64](t, litmusIters(t, 200_000), joinWords(NewWords(c, Park{})), 3, word, wordOK)
		})
	}
}

// litmusStream pushes mk(1..c.n) through q from a locked producer
// thread, batch items per call at most (1: TryPush and TryPop), and
// checks on a locked consumer thread that the i-th item popped passes
// ok(v, i). The consumer owns the budget: when it is spent the producer
// stops, and the consumer takes what was pushed.
func litmusStream[T any](t *testing.T, c litmusCount, q Queue[T], batch int, mk func(uint64) T, ok func(T, uint64) bool) {
	t.Helper()
	stop := watchdog(t, c.watchdog())
	defer stop()
	var halt, total atomic.Uint64 // halt: the consumer asks the producer to stop; total: items pushed, then 1<<63 when it has
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		buf := make([]T, batch)
		i := uint64(1)
		for spins := 0; i <= c.n && halt.Load() == 0; spins++ {
			if batch == 1 {
				if q.TryPush(mk(i)) == nil {
					i++
					continue
				}
			} else {
				m := min(uint64(batch), c.n-i+1)
				for j := range m {
					buf[j] = mk(i + j)
				}
				if k, _ := q.TryPushBatch(buf[:m]); k > 0 {
					i += uint64(k)
					continue
				}
			}
			if spins&0xfff == 0xfff {
				runtime.Gosched()
			}
		}
		total.Store((i - 1) | 1<<63)
	}()
	var bad uint64
	var first []string
	i := uint64(1)
	func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		buf := make([]T, batch)
		for spins := 0; ; spins++ {
			if tot := total.Load(); tot != 0 && i > tot&^(1<<63) {
				return
			}
			if c.stop(i) {
				halt.Store(1)
			}
			var got []T
			if batch == 1 {
				if v, err := q.TryPop(); err == nil {
					buf[0] = v
					got = buf[:1]
				}
			} else {
				n, _ := q.TryPopBatch(buf)
				got = buf[:n]
			}
			for _, v := range got {
				if !ok(v, i) {
					bad++
					if len(first) < 5 {
						first = append(first, fmt.Sprintf("item %d: popped %v", i, v))
					}
				}
				i++
			}
			if len(got) == 0 && spins&0xfff == 0xfff {
				runtime.Gosched()
			}
		}
	}()
	wg.Wait()
	t.Logf("%d items", i-1)
	litmusFail(t, "items read stale or overwritten", bad, i-1, first)
	if l := q.Len(); l != 0 {
		t.Errorf("Len = %d after every item was popped", l)
	}
}
