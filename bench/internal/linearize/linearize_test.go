package linearize

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/knit-go/knit"
)

// checkTimeout bounds one porcupine check. A history of ~120 operations
// checks in milliseconds; Unknown (time ran out) fails the test.
const checkTimeout = 10 * time.Second

// histories is how many short histories each ring kind is checked on.
func histories() int {
	if testing.Short() {
		return 50
	}
	return 200
}

// caps cycles through small capacities so the rings wrap and fill often;
// 1 is the case Vyukov's original sequence scheme gets wrong.
var caps = []int{1, 2, 4}

type ringCase struct {
	name      string
	roles     []Role
	strict    bool // the FIFO model must accept every history (SPSC)
	unbounded bool // a push never finds it full (Mailbox): the models get no bound
	plain     func(cap int) Queue
	wide      func(cap int) knit.Queue[bigVal] // nil: no wide-value variant
}

var ringCases = []ringCase{
	{"SPSC", []Role{Producer, Consumer}, true, false,
		func(c int) Queue { return newSPSCEnds[uint64](c) },
		func(c int) knit.Queue[bigVal] { return newSPSCEnds[bigVal](c) }},
	{"Words", []Role{Producer, Consumer}, true, false,
		func(c int) Queue {
			tx, rx := knit.NewWords(c, knit.Park{}).Ends()
			return ends[uint64]{tx, rx}
		}, nil},
	{"MPSC", []Role{Producer, Producer, Producer, Consumer}, false, false,
		func(c int) Queue { return knit.NewMPSC[uint64](c, knit.Park{}) },
		func(c int) knit.Queue[bigVal] { return knit.NewMPSC[bigVal](c, knit.Park{}) }},
	{"SPMC", []Role{Producer, Consumer, Consumer, Consumer}, false, false,
		func(c int) Queue { return knit.NewSPMC[uint64](c, knit.Park{}) },
		func(c int) knit.Queue[bigVal] { return knit.NewSPMC[bigVal](c, knit.Park{}) }},
	{"MPMC", []Role{Both, Both, Both, Both}, false, false,
		func(c int) Queue { return knit.NewMPMC[uint64](c, knit.Park{}) },
		func(c int) knit.Queue[bigVal] { return knit.NewMPMC[bigVal](c, knit.Park{}) }},
	{"MPMC 2P2C", []Role{Producer, Producer, Consumer, Consumer}, false, false,
		func(c int) Queue { return knit.NewMPMC[uint64](c, knit.Park{}) },
		func(c int) knit.Queue[bigVal] { return knit.NewMPMC[bigVal](c, knit.Park{}) }},
	// A Broadcast's producer and one subscription are an SPSC ring.
	{"Broadcast, 1 subscriber", []Role{Producer, Consumer}, true, false,
		func(c int) Queue { return newBcastPair[uint64](c) },
		func(c int) knit.Queue[bigVal] { return newBcastPair[bigVal](c) }},
	// Its segments hold 1024 items: 8 MiB of bigVal, too much per history.
	{"Mailbox", []Role{Producer, Producer, Producer, Consumer}, false, true,
		func(int) Queue { return knit.NewMailbox[uint64](knit.Park{}) }, nil},
	{"Mailbox 2P1C", []Role{Producer, Producer, Consumer}, false, true,
		func(int) Queue { return knit.NewMailbox[uint64](knit.Park{}) }, nil},
}

// bcastPair is a Broadcast with one subscription, as a knit.Queue: the
// producer's calls from the Broadcast, the consumer's from the
// subscription (their embedded methods of the same name, Len and Cap,
// are the Broadcast's).
type bcastPair[T any] struct {
	*knit.Broadcast[T]
	*knit.Subscription[T]
}

func newBcastPair[T any](c int) bcastPair[T] {
	b := knit.NewBroadcast[T](c, knit.Park{})
	return bcastPair[T]{b, b.Subscribe()}
}

func (p bcastPair[T]) Len() int { return p.Broadcast.Len() }
func (p bcastPair[T]) Cap() int { return p.Broadcast.Cap() }

var _ knit.Queue[int] = bcastPair[int]{}

// ends is a single-producer single-consumer ring's two ends (an SPSC's,
// a Words') as one knit.Queue: the producer's calls from the Producer,
// the consumer's from the Consumer (Len and Cap are the producer's).
type ends[T any] struct {
	knit.Producer[T]
	knit.Consumer[T]
}

func newSPSCEnds[T any](c int) ends[T] {
	tx, rx := knit.NewSPSC[T](c, knit.Park{}).Ends()
	return ends[T]{tx, rx}
}

func (e ends[T]) Len() int { return e.Producer.Len() }
func (e ends[T]) Cap() int { return e.Producer.Cap() }

var _ knit.Queue[int] = ends[int]{}

// opsPer keeps each history near 120 operations whatever the goroutine
// count.
func opsPer(roles []Role) int { return 120 / len(roles) }

// TestKnitRings records many short histories on each ring kind with the
// concurrency its contract allows, and checks every one against the ring
// model. Histories alternate between uint64 items and 8 KiB items
// (wideQueue), and between a mix with TryPushBatch/TryPopBatch and one
// of single-item tries only.
//
// The strict FIFO model must also accept every SPSC history of
// single-item tries. With batches it need not: a batch decides its count
// when it looks at the other side's index and publishes after copying, so
// a consumer that frees room in between makes the count short of what
// fits at the publish; the ring model (the claim at one instant, the
// effect at the publish: see the package comment) is the spec batches
// meet. For the multi-sided rings the FIFO
// verdict is counted and logged, not asserted: a per-slot-sequence ring
// may fail a try while a peer is between its claim and its publish (see
// the package comment and TestModelsByHand).
//
// uint64 operations take tens of ns, so on a loaded machine whose two
// threads rarely run at once they seldom overlap in time; the 8 KiB
// copies widen every operation to microseconds, which is what makes
// overlapping operations, and the windows between claim and publish,
// common. The log says what fraction of operations overlapped another.
func TestKnitRings(t *testing.T) {
	for _, rc := range ringCases {
		t.Run(rc.name, func(t *testing.T) {
			var strictRejects, strictChecked, overlapped, total, unknown int
			for h := range histories() {
				c := caps[h%len(caps)]
				var q Queue
				var wq *wideQueue
				if h%2 == 1 && rc.wide != nil {
					wq = &wideQueue{q: rc.wide(c)}
					q = wq
				} else {
					q = rc.plain(c)
				}
				maxBatch := c + 1
				if h%4 >= 2 {
					maxBatch = 0 // single-item tries only
				}
				ops := Record(q, Config{Roles: rc.roles, Ops: opsPer(rc.roles), MaxBatch: maxBatch, Seed: uint64(h)})
				if rc.unbounded {
					c = math.MaxInt32
				}
				if wq != nil {
					if torn := wq.torn.Load(); torn != 0 {
						t.Fatalf("history %d: %d torn values", h, torn)
					}
				}
				overlapped += Overlapping(ops)
				total += len(ops)
				res := CheckRing(ops, c, checkTimeout)
				if res == porcupine.Unknown && rc.unbounded {
					// The unbounded model's search can outgrow the
					// check's time on some histories (pushes never fail,
					// so every producer's ops stay in flight together);
					// Unknown is no violation, which is Illegal. A few
					// are allowed, counted below.
					unknown++
					continue
				}
				if res != porcupine.Ok {
					t.Fatalf("history %d (cap %d): ring model says %v\n%s", h, c, res, Format(ops))
				}
				if maxBatch != 0 {
					continue
				}
				strictChecked++
				res = CheckFIFO(ops, c, checkTimeout)
				switch {
				case rc.strict && res != porcupine.Ok:
					t.Fatalf("history %d (cap %d): FIFO model says %v\n%s", h, c, res, Format(ops))
				case res == porcupine.Unknown:
					t.Fatalf("history %d (cap %d): FIFO check timed out", h, c)
				case res == porcupine.Illegal:
					strictRejects++
				}
			}
			if unknown > histories()/10 {
				t.Fatalf("the ring model ran out of time on %d of %d histories", unknown, histories())
			}
			t.Logf("%d histories (%d unchecked: the check's time ran out), %d ops, %.0f%% overlapping another; strict FIFO model rejected %d of %d single-item histories",
				histories(), unknown, total, 100*float64(overlapped)/float64(total), strictRejects, strictChecked)
		})
	}
}

// bigVal makes each copy into and out of a slot take long enough that a
// producer between its claim and its publish (or a consumer between its
// take and its release) is common rather than rare. Every word carries the
// value, so a torn copy shows.
type bigVal [1024]uint64

// wideQueue adapts a ring of bigVal to Queue.
type wideQueue struct {
	q    knit.Queue[bigVal]
	torn atomic.Int64
}

func fill(v uint64) (b bigVal) {
	for i := range b {
		b[i] = v
	}
	return b
}

func (w *wideQueue) check(x *bigVal) uint64 {
	for _, word := range x {
		if word != x[0] {
			w.torn.Add(1)
			break
		}
	}
	return x[0]
}

func (w *wideQueue) TryPush(v uint64) error { return w.q.TryPush(fill(v)) }

func (w *wideQueue) TryPop() (uint64, error) {
	x, err := w.q.TryPop()
	if err != nil {
		return 0, err
	}
	return w.check(&x), nil
}

func (w *wideQueue) TryPushBatch(vs []uint64) (int, error) {
	xs := make([]bigVal, len(vs))
	for i, v := range vs {
		xs[i] = fill(v)
	}
	return w.q.TryPushBatch(xs)
}

func (w *wideQueue) TryPopBatch(dst []uint64) (int, error) {
	xs := make([]bigVal, len(dst))
	n, err := w.q.TryPopBatch(xs)
	for i := range n {
		dst[i] = w.check(&xs[i])
	}
	return n, err
}

// fakeQueue is a mutex-guarded bounded queue with deliberate bugs, the
// negative controls: each must be caught, or the checker proves nothing.
type fakeQueue struct {
	mu        sync.Mutex
	items     []uint64
	cap       int
	lifo      bool // pop the newest item
	dropEvery int  // lose every n-th accepted push (it still reports success)
	failEvery int  // report empty on every n-th pop even when items are there
	pushes    int
	pops      int
}

func (f *fakeQueue) pushLocked(v uint64) bool {
	if len(f.items) == f.cap {
		return false
	}
	f.pushes++
	if f.dropEvery == 0 || f.pushes%f.dropEvery != 0 {
		f.items = append(f.items, v)
	}
	return true
}

func (f *fakeQueue) popLocked() (uint64, bool) {
	f.pops++
	if len(f.items) == 0 || (f.failEvery > 0 && f.pops%f.failEvery == 0) {
		return 0, false
	}
	var v uint64
	if f.lifo {
		v, f.items = f.items[len(f.items)-1], f.items[:len(f.items)-1]
	} else {
		v, f.items = f.items[0], f.items[1:]
	}
	return v, true
}

func (f *fakeQueue) TryPush(v uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.pushLocked(v) {
		return knit.ErrFull
	}
	return nil
}

func (f *fakeQueue) TryPop() (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v, ok := f.popLocked(); ok {
		return v, nil
	}
	return 0, knit.ErrEmpty
}

func (f *fakeQueue) TryPushBatch(vs []uint64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for n < len(vs) && f.pushLocked(vs[n]) {
		n++
	}
	if n < len(vs) {
		return n, knit.ErrFull
	}
	return n, nil
}

func (f *fakeQueue) TryPopBatch(dst []uint64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for n < len(dst) {
		v, ok := f.popLocked()
		if !ok {
			break
		}
		dst[n] = v
		n++
	}
	if n == 0 && len(dst) > 0 {
		return 0, knit.ErrEmpty
	}
	return n, nil
}

// TestNegativeControls runs broken queues through the same recorder and
// checkers. A correct mutex queue must pass both models (the models are
// not too strict); each broken one must be rejected by both models in
// most histories (they are not too loose).
func TestNegativeControls(t *testing.T) {
	cases := []struct {
		name string
		make func(cap int) *fakeQueue
		bad  bool
	}{
		{"mutex FIFO (correct)", func(c int) *fakeQueue { return &fakeQueue{cap: c} }, false},
		{"LIFO", func(c int) *fakeQueue { return &fakeQueue{cap: c, lifo: true} }, true},
		{"drops every 7th push", func(c int) *fakeQueue { return &fakeQueue{cap: c, dropEvery: 7} }, true},
		{"spurious empty every 5th pop", func(c int) *fakeQueue { return &fakeQueue{cap: c, failEvery: 5} }, true},
	}
	const n = 40
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var fifoBad, ringBad int
			for h := range n {
				c := []int{2, 4}[h%2]
				ops := Record(tc.make(c), Config{Roles: []Role{Both, Both, Both}, Ops: 40, MaxBatch: c + 1, Seed: uint64(h)})
				rf, rr := CheckFIFO(ops, c, checkTimeout), CheckRing(ops, c, checkTimeout)
				if rf == porcupine.Unknown || rr == porcupine.Unknown {
					t.Fatalf("history %d: check timed out", h)
				}
				if rf == porcupine.Illegal {
					fifoBad++
				}
				if rr == porcupine.Illegal {
					ringBad++
				}
				if !tc.bad && (rf != porcupine.Ok || rr != porcupine.Ok) {
					t.Fatalf("history %d of a correct queue rejected (FIFO %v, ring %v)\n%s", h, rf, rr, Format(ops))
				}
			}
			t.Logf("rejected: FIFO model %d/%d, ring model %d/%d", fifoBad, n, ringBad, n)
			if tc.bad && (fifoBad < n/2 || ringBad < n/2) {
				t.Errorf("a broken queue passed too often: FIFO model rejected %d/%d, ring model %d/%d", fifoBad, n, ringBad, n)
			}
		})
	}
}

// op builds a history entry by hand.
func op(client int, k Kind, call, ret int64, in []uint64, n int, out ...uint64) Op {
	o := Op{Client: client, Kind: k, In: in, N: n, Out: out, Call: call, Return: ret}
	if k == OpPopBatch {
		o.K = len(in) // by convention in these tables, len(in) is the batch asked for
		o.In = nil
	}
	return o
}

func v(client, seq uint64) uint64 { return (client+1)<<32 | seq }

// TestModelsByHand pins the two models' verdicts on small histories
// written out by hand, including the one that separates them.
func TestModelsByHand(t *testing.T) {
	x, y, z := v(0, 0), v(1, 0), v(0, 1)
	tests := []struct {
		name       string
		cap        int
		ops        []Op
		fifo, ring bool // linearizable under each model
	}{
		{"push pop", 2, []Op{
			op(0, OpPush, 1, 2, []uint64{x}, 1),
			op(1, OpPop, 3, 4, nil, 1, x),
		}, true, true},
		{"pop of an empty queue", 2, []Op{op(1, OpPop, 1, 2, nil, 0)}, true, true},
		{"pop overtakes", 2, []Op{
			op(0, OpPush, 1, 2, []uint64{x}, 1),
			op(0, OpPush, 3, 4, []uint64{z}, 1),
			op(1, OpPop, 5, 6, nil, 1, z),
		}, false, false},
		{"lost item", 2, []Op{
			op(0, OpPush, 1, 2, []uint64{x}, 1),
			op(1, OpPop, 3, 4, nil, 0),
		}, false, false},
		{"full when not full", 2, []Op{
			op(0, OpPush, 1, 2, []uint64{x}, 1),
			op(0, OpPush, 3, 4, []uint64{z}, 0),
		}, false, false},
		{"full at capacity", 1, []Op{
			op(0, OpPush, 1, 2, []uint64{x}, 1),
			op(0, OpPush, 3, 4, []uint64{z}, 0),
		}, true, true},
		{"batch takes what fits", 2, []Op{
			op(0, OpPushBatch, 1, 2, []uint64{x, z, v(0, 2)}, 2),
			op(1, OpPopBatch, 3, 4, []uint64{0, 0, 0}, 2, x, z),
		}, true, true},
		{"batch short of what fits", 4, []Op{
			op(0, OpPushBatch, 1, 2, []uint64{x, z, v(0, 2)}, 2),
		}, false, false},
		{"pop batch short of what is there", 4, []Op{
			op(0, OpPushBatch, 1, 2, []uint64{x, z}, 2),
			op(1, OpPopBatch, 3, 4, []uint64{0, 0}, 1, x),
		}, false, false},
		// The history that separates the models: x's push is still running
		// (claimed, not published) when y's push completes and then a pop
		// finds nothing. No FIFO order explains it; a ring whose head
		// position is x's, not yet published, does.
		{"empty while an earlier claim is in flight", 4, []Op{
			op(0, OpPush, 1, 20, []uint64{x}, 1),
			op(1, OpPush, 2, 3, []uint64{y}, 1),
			op(2, OpPop, 4, 5, nil, 0),
		}, false, true},
		// Its mirror: x's pop is still running (taken, slot not freed) when
		// the pop of the item after it completes, and a push finds the ring
		// full.
		{"full while an earlier take is in flight", 2, []Op{
			op(0, OpPush, 1, 2, []uint64{x}, 1),
			op(0, OpPush, 3, 4, []uint64{z}, 1),
			op(1, OpPop, 5, 30, nil, 1, x),
			op(2, OpPop, 6, 7, nil, 1, z),
			op(0, OpPush, 8, 9, []uint64{v(0, 2)}, 0),
		}, false, true},
		// But once x's push has returned, an empty pop is wrong under both.
		{"empty after the head push completed", 4, []Op{
			op(0, OpPush, 1, 2, []uint64{x}, 1),
			op(1, OpPush, 3, 4, []uint64{y}, 1),
			op(2, OpPop, 5, 6, nil, 0),
		}, false, false},
		// A batch is one claim: it never moves more than fits at once,
		// even while a peer makes room.
		{"batch goes on as a peer makes room", 2, []Op{
			op(0, OpPushBatch, 1, 20, []uint64{x, z, v(0, 2)}, 3),
			op(1, OpPop, 5, 6, nil, 1, x),
		}, false, false},
		// But its items keep their order, and so do a pop batch's.
		{"pop batch out of order", 4, []Op{
			op(0, OpPushBatch, 1, 2, []uint64{x, z}, 2),
			op(1, OpPopBatch, 3, 4, []uint64{0, 0}, 2, z, x),
		}, false, false},
		// And a batch that stopped short met a full ring after its last
		// claim: room made before that claim does not excuse it.
		{"batch short after room was made", 2, []Op{
			op(0, OpPush, 1, 2, []uint64{x}, 1),
			op(1, OpPop, 3, 4, nil, 1, x),
			op(0, OpPushBatch, 5, 6, []uint64{z, v(0, 2), v(0, 3)}, 1),
		}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := CheckFIFO(tt.ops, tt.cap, checkTimeout) == porcupine.Ok
			r := CheckRing(tt.ops, tt.cap, checkTimeout) == porcupine.Ok
			if f != tt.fifo || r != tt.ring {
				t.Errorf("FIFO %v ring %v, want FIFO %v ring %v\n%s", f, r, tt.fifo, tt.ring, Format(tt.ops))
			}
		})
	}
}

// TestRecordUniqueValues checks the recorder's own bookkeeping on a
// correct queue: every value pushed at most once, every popped value was
// pushed.
func TestRecordUniqueValues(t *testing.T) {
	ops := Record(&fakeQueue{cap: 4}, Config{Roles: []Role{Both, Both}, Ops: 200, MaxBatch: 5, Seed: 1})
	pushed := map[uint64]bool{}
	var popped []uint64
	for _, o := range ops {
		for _, x := range o.In {
			if pushed[x] {
				t.Fatalf("value %s offered twice", vstr(x))
			}
			pushed[x] = true
		}
		popped = append(popped, o.Out...)
		if o.Return <= o.Call {
			t.Fatalf("op returned at %d before its call at %d", o.Return, o.Call)
		}
	}
	for _, x := range popped {
		if !pushed[x] {
			t.Fatalf("popped %s, never pushed", vstr(x))
		}
	}
	slices.Sort(popped)
	if len(slices.Compact(popped)) != len(popped) {
		t.Fatal("a value popped twice")
	}
	if len(ops) != 400 {
		t.Fatal(fmt.Sprint("got ", len(ops), " ops, want 400"))
	}
}

// TestBatchesSeeThroughRacingPeers is a direct check of one property the
// histories test: a TryPopBatch on a ring that holds plenty never returns
// 0, and a TryPushBatch on a ring with plenty of room never returns 0, however
// the goroutines race. A batch whose first slot was taken (or filled) by
// a peer between its index load and its slot check must reload the index,
// as the single-item paths do, not report "empty" ("full"). No false
// alarms are possible (the ring stays between a quarter and three
// quarters full throughout); how often a bug shows depends on the two
// goroutines really running at once. On the ring code this was written
// against, whose batch paths returned 0 on a stale index, it failed in
// the first rounds of every run on a busy 2-vCPU machine.
func TestBatchesSeeThroughRacingPeers(t *testing.T) {
	const size, workers = 1 << 16, 2
	per := size / 4 / workers
	kinds := []struct {
		name  string
		make  func() knit.Queue[uint64]
		multi Role // the side that has several goroutines
	}{
		{"MPMC pop", func() knit.Queue[uint64] { return knit.NewMPMC[uint64](size, knit.Park{}) }, Consumer},
		{"SPMC pop", func() knit.Queue[uint64] { return knit.NewSPMC[uint64](size, knit.Park{}) }, Consumer},
		{"MPMC push", func() knit.Queue[uint64] { return knit.NewMPMC[uint64](size, knit.Park{}) }, Producer},
		{"MPSC push", func() knit.Queue[uint64] { return knit.NewMPSC[uint64](size, knit.Park{}) }, Producer},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			// Rounds until half a second has gone (at least two): the race
			// needs both goroutines on a CPU at once, which a loaded
			// machine grants now and then.
			deadline := time.Now().Add(500 * time.Millisecond)
			for round := 0; round < 2 || time.Now().Before(deadline); round++ {
				q := k.make()
				if k.multi == Consumer {
					for i := range size / 2 {
						if err := q.TryPush(uint64(i)); err != nil {
							t.Fatalf("filling the ring: TryPush = %v", err)
						}
					}
				} else {
					for i := range size / 4 {
						if err := q.TryPush(uint64(i)); err != nil {
							t.Fatalf("filling the ring: TryPush = %v", err)
						}
					}
				}
				var zeros atomic.Int64
				var ready atomic.Int32
				var wg sync.WaitGroup
				for w := range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						ready.Add(1)
						for ready.Load() < workers {
							runtime.Gosched()
						}
						buf := make([]uint64, 3)
						for done := 0; done < per; {
							var n int
							if k.multi == Consumer {
								n, _ = q.TryPopBatch(buf[:1+done%3])
							} else {
								for i := range buf {
									buf[i] = uint64(w)<<32 | uint64(done+i)
								}
								n, _ = q.TryPushBatch(buf[:1+done%3])
							}
							if n == 0 {
								zeros.Add(1)
								done++ // count it, so a broken ring still ends
							}
							done += n
						}
					}()
				}
				wg.Wait()
				if z := zeros.Load(); z != 0 {
					t.Fatalf("round %d: %d batches returned 0 on a ring between 1/4 and 3/4 full", round, z)
				}
			}
		})
	}
}
