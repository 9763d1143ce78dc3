package pool

import (
	"sync/atomic"

	"github.com/knit-go/knit"
)

// A CallBatch travels as packets: up to batchChunk calls whose slots sit
// side by side in one object, queued as one job (once per worker that
// may help run it) with one doorbell ring per entry. The workers claim
// the calls in runs (next) and publish each result as its call returns,
// with one atomic Or, ringing the packet's event only if a caller
// registered on that call. Per call that leaves the Or and, on the
// caller's side, the CAS that takes the value and the decrement of live:
// no queue slot, no free-list ring operation and no doorbell of its own.
//
// Results are published one by one, not at the end of a run, because a
// call may block until its caller has seen an earlier result; and the
// ring is not deferred to the end of the run for the same reason. It
// costs no extra wake when the calls are short: the ring readies the
// caller onto this worker's P, where it runs once the worker parks (or
// is taken by another P a few microseconds later, when a call is long).
//
// Runs are claimed before they are run, so a worker holds calls that no
// one else can run. That must not deadlock a call that waits for a later
// call of its own packet (directly, or through tasks it waits on): before
// a worker waits or runs anything nested inside a call of a packet, it
// settles that call's run (batchFrame): it runs the rest of the run, and
// the rest of the packet, itself, nested, before anything else.

// batchChunk is the most calls one packet holds: Knitting's largest
// benchmark shape (100 calls) is one packet, and a packet of ints is 8
// KiB.
const batchChunk = 128

// packetClasses are the packet capacities, so that a small batch does
// not take a packet of batchChunk slots; free packets are kept per class.
var packetClasses = [...]int{8, 32, batchChunk}

// packetFree is how many free packets of a class a task keeps in its
// ring before the excess goes to the sync.Pool.
const packetFree = 16

// packetGrains is how many runs per worker a packet is cut into when the
// pool has several workers: one run per worker would leave a worker
// alone with a slow run; a run per call would make every call an atomic
// add on a line the runners share. A one-worker pool claims the whole
// packet at once: nobody can share it.
//
// Measured with BenchmarkCallBatchGrains (the table is in BENCHMARKS.md,
// "Pool"): 4 and 8 grains are the fastest for short calls and long ones,
// within each other's spread; one call per run costs short calls more
// time and CPU. The benchmark sweeps it through testHooks.grains.
const packetGrains = 4

// packet is one CallBatch chunk.
type packet[In, Out any] struct {
	// next is the first call no runner has claimed; runners add grain.
	// Alone on its line: runners on several workers add to it.
	next atomic.Int64
	_    [knit.CacheLineSize - 8]byte

	batchHome

	// Written by CallBatch before the packet is queued, read-only until
	// the packet is recycled.
	n, grain int64
	t        *Task[In, Out]
	class    int
	elems    []elem[In, Out]
}

// batchHome is the part of a packet its futures own: the owner of every
// call of the packet. It is not generic in the argument type, so that
// WaitAll can tell two futures of one packet by a pointer compare.
type batchHome struct {
	// live counts the futures not yet taken and the queue entries not yet
	// run or abandoned; whoever takes it to zero recycles the packet.
	live atomic.Int64
	// ev is where Waits on the packet's futures sleep: a runner rings it
	// when it publishes a call that has the waiting flag.
	ev knit.Event
	p  *Pool                // read-only
	pk interface{ reuse() } // read-only: the packet, put back when live reaches zero
}

func (h *batchHome) recycle(k int64) {
	if h.live.Add(-k) == 0 {
		h.pk.reuse()
	}
}

func (h *batchHome) event() *knit.Event { return &h.ev }
func (h *batchHome) pool() *Pool        { return h.p }

// elem is one call of a packet: its result (owned by the packet) and its
// argument, side by side.
type elem[In, Out any] struct {
	result[Out]
	in In // written by CallBatch before the packet is queued, then owned by the runner
}

// packetList returns t's free list of packets of class c, making it on
// first use.
func (t *Task[In, Out]) packetList(c int) *freeList[packet[In, Out]] {
	if l := t.packets[c].Load(); l != nil {
		return l
	}
	l := &freeList[packet[In, Out]]{ring: knit.NewMPMC[*packet[In, Out]](packetFree, knit.Park{})}
	if t.packets[c].CompareAndSwap(nil, l) {
		return l
	}
	return t.packets[c].Load()
}

// getPacket returns a free packet of at least m slots, every generation
// pending.
func (t *Task[In, Out]) getPacket(m int) *packet[In, Out] {
	c := 0
	for packetClasses[c] < m {
		c++
	}
	if pk, ok := t.packetList(c).get(); ok {
		return pk
	}
	pk := &packet[In, Out]{t: t, class: c, elems: make([]elem[In, Out], packetClasses[c])}
	pk.p, pk.pk = t.p, pk
	for i := range pk.elems {
		e := &pk.elems[i]
		e.owner = &pk.batchHome
		e.word.Store(1 << stateBits) // generation 1
	}
	return pk
}

func (t *Task[In, Out]) putPacket(pk *packet[In, Out]) { t.packetList(pk.class).put(pk) }

// submit queues the packet's first m calls: one entry, blocking while the
// queues are full, and one more per worker that can help, if there is
// room. It reports false if the pool refused the packet (closed).
func (pk *packet[In, Out]) submit(m int64) bool {
	p := pk.t.p
	w := int64(len(p.workersNow()))
	pk.n = m
	pk.grain = m
	if w > 1 {
		g := grains()
		pk.grain = max(1, (m+w*g-1)/(w*g))
	}
	pk.next.Store(0)
	refs := min(w, (m+pk.grain-1)/pk.grain)
	pk.live.Store(m + refs)
	if p.submit(pk, true) != nil {
		return false
	}
	// The helpers are optional: the first entry runs every call no one
	// else claims. live stays above zero meanwhile: no future has been
	// returned to the caller yet.
	for k := int64(1); k < refs; k++ {
		if p.submit(pk, false) != nil {
			pk.live.Add(k - refs)
			break
		}
	}
	return true
}

// run is one queue entry of the packet: it claims runs until none is
// left. It counts the calls it runs as tasks (taken when claimed,
// completed when published) instead of itself.
func (pk *packet[In, Out]) run(w *worker) uint64 {
	normal := false
	defer func() {
		if !normal {
			// runtime.Goexit in a call: the replacement goroutine goes
			// on claiming for this entry (see batchFrame).
			w.carry = append(w.carry, pk)
		}
	}()
	pk.claimRuns(w)
	normal = true
	w.taken.add(^uint64(0)) // the entry, counted when popped: its calls count instead
	pk.release()
	return 0
}

// claimRuns claims runs of calls and runs them until none is left.
func (pk *packet[In, Out]) claimRuns(w *worker) {
	for {
		a := pk.next.Add(pk.grain) - pk.grain
		if a >= pk.n {
			return
		}
		b := min(a+pk.grain, pk.n)
		w.taken.add(uint64(b - a))
		pk.runRange(w, a, b)
	}
}

// abandon fails every call no runner has claimed (Shutdown's expiry) and
// returns how many.
// abandonRun fails the rest of w's run of pk, unrun (Shutdown gave up:
// calls queued behind a running one never run, as queued tasks do not;
// see ShutdownError). They were counted taken when the run was claimed,
// and count abandoned instead.
func (pk *packet[In, Out]) abandonRun(w *worker) {
	k := w.fr.hi - w.fr.next
	var zero In
	for j := w.fr.next; j < w.fr.hi; j++ {
		e := &pk.elems[j]
		e.in = zero
		e.err = ErrClosed
		pk.publish(e)
	}
	w.fr.hi = w.fr.next
	w.taken.add(-uint64(k))
	pk.t.p.abandoned.Add(uint64(k))
}

func (pk *packet[In, Out]) abandon() int {
	n := 0
	if a := pk.next.Swap(pk.n); a < pk.n {
		var zero In
		for i := a; i < pk.n; i++ {
			e := &pk.elems[i]
			e.in = zero
			e.err = ErrClosed
			pk.publish(e)
		}
		n = int(pk.n - a)
	}
	pk.release()
	return n
}

// release drops one use of the packet: a finished queue entry.
func (pk *packet[In, Out]) release() { pk.recycle(1) }

// reuse puts the packet back on its task's free list.
func (pk *packet[In, Out]) reuse() { pk.t.putPacket(pk) }

// batchFrame is the run of packet calls a worker is in, innermost first:
// call next is running (or about to), calls [lo, next) have run and are
// not yet counted as completed, and calls up to hi are claimed. The
// worker's own goroutine is the only one that reads or writes it.
type batchFrame struct {
	pk       settler // nil outside a run
	lo, next int64
	hi       int64
}

// settler is a packet, whatever its types.
type settler interface {
	// settle runs the calls the worker's frame claimed and has not
	// started, and then every call of the packet no one has claimed, so
	// that nothing the running call may wait for is held by this worker.
	settle(w *worker)
}

// runRange runs calls [a, b) on w.
func (pk *packet[In, Out]) runRange(w *worker, a, b int64) {
	outer := w.fr
	w.fr = batchFrame{pk: pk, lo: a, next: a, hi: b}
	normal := false
	defer func() {
		if !normal {
			w.fr = outer // runtime.Goexit: the outer frames' handlers run next
		}
	}()
	for w.fr.next < w.fr.hi {
		pk.runSome(w)
	}
	lo, hi := w.fr.lo, w.fr.hi
	w.fr = outer
	normal = true
	w.completed.add(uint64(hi - lo))
}

// runSome runs the calls of w's frame until the frame ends or a call
// panics; the panic becomes that call's result.
func (pk *packet[In, Out]) runSome(w *worker) {
	i := int64(-1)
	defer func() {
		if i >= 0 {
			pk.failed(w, i, recover())
		}
	}()
	fn, p := pk.t.fn, pk.t.p
	for w.fr.next < w.fr.hi {
		i = w.fr.next
		if p.state.Load() == stateAbandon {
			i = -1
			pk.abandonRun(w)
			return
		}
		e := &pk.elems[i]
		e.out = fn(e.in)
		var zero In
		e.in = zero
		pk.publish(e)
		w.fr.next = i + 1
	}
	i = -1
}

// publish turns e's result ready, rings the packet's event if a caller
// registered on e, and closes Done's channel if one was asked for. e's
// out and err were written by this goroutine.
func (pk *packet[In, Out]) publish(e *elem[In, Out]) { e.publish(&pk.ev) }

// publish turns e's result ready and, if a caller registered on it, rings
// ev, its owner's event; and closes Done's channel if one was asked for.
func (e *elem[In, Out]) publish(ev *knit.Event) {
	if w := e.word.Or(ready); w&(waiting|doneWanted) != 0 {
		if w&waiting != 0 {
			ev.NotifyAll()
		}
		e.closeDone(w)
	}
}

// failed records the panic v of call i of w's frame (nil: the call ran
// runtime.Goexit) as its result.
func (pk *packet[In, Out]) failed(w *worker, i int64, v any) {
	e := &pk.elems[i]
	var zero In
	e.in = zero
	w.panicked.inc()
	e.err = panicError(v)
	pk.publish(e)
	fr := &w.fr
	fr.next = i + 1
	if v != nil {
		return
	}
	// runtime.Goexit: this goroutine ends. Count what ran, the failed
	// call included, and leave the rest of the run to the replacement.
	w.completed.add(uint64(i + 1 - fr.lo))
	if i+1 < fr.hi {
		w.carry = append(w.carry, &packetRest[In, Out]{pk: pk, lo: i + 1, hi: fr.hi})
	}
	fr.lo, fr.hi = i+1, i+1
}

// settle: see settler. The frame is w's innermost, and its call next is
// the one running, below the caller on the stack.
func (pk *packet[In, Out]) settle(w *worker) {
	fr := &w.fr
	if i := fr.next; i+1 < fr.hi {
		lo, hi := i+1, fr.hi
		fr.hi = i + 1
		pk.runRange(w, lo, hi)
	}
	// The queue entries of this packet may all be on stacks like this
	// one, their claim loops waiting below a call: claim what is left
	// here, or no one will.
	pk.claimRuns(w)
}

// packetRest is the rest of a run whose goroutine ended in
// runtime.Goexit, run by the replacement; the calls were counted as
// taken when the run was claimed.
type packetRest[In, Out any] struct {
	pk     *packet[In, Out]
	lo, hi int64
}

func (r *packetRest[In, Out]) run(w *worker) uint64 {
	r.pk.runRange(w, r.lo, r.hi)
	return 0
}

// abandon is never called: a rest is carried, not queued.
func (r *packetRest[In, Out]) abandon() int { return 0 }
