// Package linearize checks histories of concurrent ring operations for
// linearizability with porcupine (github.com/anishathalye/porcupine).
//
// Record drives a ring from several goroutines with a random mix of
// TryPush, TryPop, TryPushBatch and TryPopBatch, stamping each call and
// return from one global atomic counter, so that "A returned before B was
// called" in the history means exactly that in real time. Two sequential
// specifications judge the result:
//
//   - FIFO (StrictOps with FIFOModel): a bounded FIFO queue. TryPush fails
//     only when the queue is full at its linearization point, TryPop only
//     when it is empty; a TryPushBatch takes, at one instant, exactly as
//     many as fit, a TryPopBatch exactly as many as there are (up to its
//     length). knit's SPSC meets it with single-item tries.
//
//   - Ring (PhasedOps with RingModel): a bounded ring of positions in which
//     a push claims a position and later publishes it, and a pop takes the
//     oldest published position and later frees its slot; each phase is a
//     separate atomic step inside the operation's interval. TryPop fails
//     only when the oldest position is unclaimed or claimed but not yet
//     published; TryPush only when the slot of the position a capacity
//     behind the tail is not yet freed. That is exactly the guarantee of a
//     per-slot-sequence ring (Vyukov's, knit's MPSC/SPMC/MPMC): FIFO by
//     position, nothing lost or duplicated, but a try operation can fail
//     while a slower peer is between its claim and its publish (or its
//     take and its free), even though an operation that started later has
//     already completed. Under the FIFO model such a history is not
//     linearizable; under the ring model it is, and everything else the
//     FIFO model forbids (loss, duplication, reordering, failing while the
//     head item was published long ago) stays forbidden.
//
//     A batch call claims (takes) its items at one instant inside its
//     interval: the longest run of free slots (of published positions
//     from the head), up to its length, with one move of the index; the
//     publishes (frees) follow item by item. A batch that moved fewer
//     than it was given (asked for) found the ring full (empty) right
//     after them, and one that took nothing found nothing published at
//     the head: it never turns into a single take that leaves published
//     items behind. That is the contract of knit's TryPushBatch and
//     TryPopBatch.
//
//   - Broadcast (BroadcastOps with BroadcastModel, recorded with
//     RecordEach): one producer and subscribers that each see every item
//     in order, a follower only after its leader; a push fails only when
//     the slowest subscriber is a lap behind. Strict, for single-item
//     tries; a Broadcast with one subscriber is also checked as an SPSC
//     ring, batches included.
package linearize

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
)

// Queue is the part of a ring the recorder drives: the grid's non-blocking
// calls. knit's multi-ended rings of uint64 (MPSC, SPMC, MPMC, Mailbox)
// satisfy it as they are, an SPSC's or a Words' two ends together do. A
// call that returns an error is recorded as one that moved nothing (a
// try that failed); the batch calls' count is what counts.
type Queue interface {
	TryPush(v uint64) error
	TryPop() (uint64, error)
	TryPushBatch(vs []uint64) (int, error)
	TryPopBatch(dst []uint64) (int, error)
}

// Kind is what an operation was.
type Kind uint8

const (
	OpPush      Kind = iota // TryPush
	OpPop                   // TryPop
	OpPushBatch             // TryPushBatch
	OpPopBatch              // TryPopBatch
)

func (k Kind) String() string {
	return [...]string{"TryPush", "TryPop", "TryPushBatch", "TryPopBatch"}[k]
}

// Op is one completed operation of a history.
type Op struct {
	Client int
	Kind   Kind
	In     []uint64 // pushed values offered (OpPush: one; OpPushBatch: the batch)
	K      int      // OpPopBatch: len(dst)
	N      int      // how many went in (OpPush: 1 or 0) or came out (pops)
	Out    []uint64 // popped values, len N
	Call   int64    // stamp taken just before the call
	Return int64    // stamp taken just after the return
}

// Role says which side of the ring a goroutine drives.
type Role uint8

const (
	Producer Role = 1 << iota
	Consumer
	Both = Producer | Consumer
)

// Config shapes one recorded history.
type Config struct {
	Roles    []Role // one goroutine per entry, with the ops it may issue
	Ops      int    // operations per goroutine
	MaxBatch int    // longest TryPushBatch/TryPopBatch; 0 issues no batch ops
	Seed     uint64 // PRNG seed; each goroutine derives its own stream
}

// Record runs cfg's goroutines against q until each has issued cfg.Ops
// operations, and returns every operation with its call and return
// stamps. Pushed values are unique within the history. The goroutines
// start together and jitter between ops (a short spin or a Gosched) so
// that their operations overlap in varied ways.
func Record(q Queue, cfg Config) []Op {
	return RecordEach(func(int) Queue { return q }, cfg)
}

// RecordEach is Record with a queue per client: client c drives q(c), so
// a Broadcast's producer and each of its subscriptions can be clients of
// one history.
func RecordEach(q func(client int) Queue, cfg Config) []Op {
	var (
		clock atomic.Int64
		ready atomic.Int32
		wg    sync.WaitGroup
		hists = make([][]Op, len(cfg.Roles))
	)
	for c, role := range cfg.Roles {
		q := q(c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(cfg.Seed, uint64(c)+1))
			ops := make([]Op, 0, cfg.Ops)
			next := uint64(c+1) << 32 // unique per client
			// Start together: a goroutine that ran its whole script before
			// the next one was scheduled would leave nothing to check.
			ready.Add(1)
			for ready.Load() < int32(len(cfg.Roles)) {
				runtime.Gosched()
			}
			for range cfg.Ops {
				op := Op{Client: c, Kind: pick(rng, role, cfg.MaxBatch)}
				switch op.Kind {
				case OpPush:
					op.In = []uint64{next}
					next++
					op.Call = clock.Add(1)
					err := q.TryPush(op.In[0])
					op.Return = clock.Add(1)
					if err == nil {
						op.N = 1
					}
				case OpPushBatch:
					op.In = make([]uint64, 1+rng.IntN(cfg.MaxBatch))
					for i := range op.In {
						op.In[i] = next
						next++
					}
					op.Call = clock.Add(1)
					op.N, _ = q.TryPushBatch(op.In)
					op.Return = clock.Add(1)
				case OpPop:
					op.Call = clock.Add(1)
					v, err := q.TryPop()
					op.Return = clock.Add(1)
					if err == nil {
						op.N, op.Out = 1, []uint64{v}
					}
				case OpPopBatch:
					op.K = 1 + rng.IntN(cfg.MaxBatch)
					dst := make([]uint64, op.K)
					op.Call = clock.Add(1)
					op.N, _ = q.TryPopBatch(dst)
					op.Return = clock.Add(1)
					op.Out = dst[:op.N]
				}
				ops = append(ops, op)
				jitter(rng)
			}
			hists[c] = ops
		}()
	}
	wg.Wait()
	var all []Op
	for _, h := range hists {
		all = append(all, h...)
	}
	return all
}

func pick(rng *rand.Rand, role Role, maxBatch int) Kind {
	batch := maxBatch > 0 && rng.IntN(4) == 0
	push := role == Producer || (role == Both && rng.IntN(2) == 0)
	switch {
	case push && batch:
		return OpPushBatch
	case push:
		return OpPush
	case batch:
		return OpPopBatch
	}
	return OpPop
}

// jitterSink keeps the spin in jitter from being optimised away.
var jitterSink atomic.Uint32

// jitter spaces a goroutine's operations: often a yield, so that more
// goroutines than processors interleave op by op, otherwise a spin of a
// few hundred ns at most, so that the ones running in parallel drift
// against each other.
func jitter(rng *rand.Rand) {
	if rng.IntN(4) == 0 {
		runtime.Gosched()
		return
	}
	for range rng.IntN(256) {
		jitterSink.Load()
	}
}

// Overlapping counts the operations of ops whose interval overlaps
// another's: the ones whose order a linearization had to choose.
func Overlapping(ops []Op) int {
	n := 0
	for i, a := range ops {
		for j, b := range ops {
			if i != j && a.Call < b.Return && b.Call < a.Return {
				n++
				break
			}
		}
	}
	return n
}
