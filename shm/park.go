package shm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/knit-go/knit"
)

// Sleeping and waking across processes.
//
// Each direction has a doorbell: a waiting flag and a wake sequence word on
// one line of the ring (dataWait/dataWake: the consumer sleeps there until
// data arrives; spaceWait/spaceWake: the producer, until room is made).
// The protocol, with every access sequentially consistent:
//
//	sleeper, waiting for idx != old       waker, after idx.Store(new)
//
//	seq := wake.Load()
//	waiting.Store(1)         // register  if waiting.Load() != 0 &&
//	if idx.Load() != old {   // re-check     waiting.Swap(0) != 0 {
//	    return                               wake.Add(1)
//	}                                        FutexWakeShared(wake, 1)
//	FutexWaitShared(wake, seq) // sleep   }
//
// No lost wakeup, by the argument beside knit.Event's notify ("Why no
// wakeup is lost"), with the flag as the registration and idx as the
// condition; every access here is sequentially consistent across the
// processes too, since they share the memory. A ring bumps the wake word
// before waking, so a sleeper that has not yet entered the kernel finds
// wake != seq and FutexWaitShared returns at once. The waker pays nothing
// while nobody sleeps: one load of a line that stays shared in its cache.
// Close and a cancelled context ring it too, so they cannot be
// slept through either.
//
// A sleep lasts at most parkSlice. When a slice runs out without a wake,
// the peer's liveness is checked, so a dead peer is noticed within about
// one slice; a peer that is alive but silent keeps the caller waiting
// until its ctx ends, as a socket would.

// parkSlice bounds one futex sleep: the latency of noticing a dead peer,
// and the idle cost of a blocked call, one timer wake per slice, which is
// negligible (BENCHMARKS.md, "Shared memory between processes").
const parkSlice = 50 * time.Millisecond

// Polling when this build has no process-shared futex (the
// knit_futex_fallback tag): sleep from pollMin doubling to pollMax.
const (
	pollMin = 50 * time.Microsecond
	pollMax = time.Millisecond
)

// Slow-path counters, read by the tests: bells rung (each a wake
// syscall), sleeps that ran out their slice unrung, and those of them
// after which the index had moved: the signature of a lost wakeup.
var statRings, statTimeouts, statLate atomic.Uint64

// notify rings wake if the peer registered as sleeping on it.
func (r *Ring) notify(waiting, wake *atomic.Uint32) {
	if waiting.Load() != 0 && waiting.Swap(0) != 0 {
		r.ring1(wake)
	}
}

func (r *Ring) ring1(wake *atomic.Uint32) {
	statRings.Add(1)
	wake.Add(1)
	knit.FutexWakeShared(wake, 1)
}

// spinCheck bounds one stretch of spinning between checks of the end's
// own state, so that Close (of the end or its region) ends a long spin
// budget within about this long.
const spinCheck = 20 * time.Microsecond

// park waits until *idx != old (the peer moved its index), either end is
// closed, ctx ends, or the peer dies. It returns nil for the first two:
// the caller re-runs its operation, which reports the close. The caller
// is inside the mapping (enter), and stays there while it sleeps:
// Region.Close rings the bells and waits for it to leave.
func (r *Ring) park(ctx context.Context, idx *atomic.Uint32, old uint32, waiting, wake *atomic.Uint32) error {
	moved := func() bool {
		m := idx.Load() != old || r.closedW.Load() != 0 || r.state.Load()&(stateClosed|stateGone) != 0
		parkHook()
		return m
	}
	cancellable := ctx.Done() != nil
	if cancellable {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	for left := r.spin; left > 0; left -= spinCheck {
		if knit.SpinUntil(idx, old, min(left, spinCheck)) || r.state.Load()&(stateClosed|stateGone) != 0 {
			return nil
		}
	}
	if cancellable {
		// The ring may run after park has returned (stop cannot wait for
		// it), so it counts itself into the mapping like any call.
		stop := context.AfterFunc(ctx, func() {
			if r.enter() == nil {
				r.ring1(wake)
				r.leave()
			}
		})
		defer stop()
	}
	defer waiting.Store(0)
	ps := pollState{poll: pollMin}
	for {
		seq := wake.Load()
		waiting.Store(1)
		if moved() {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if r.peerGone.Load() {
			// Set by Workers' reaper, which then rings: the peer will
			// never move idx again.
			return fmt.Errorf("%w: pid %d", ErrPeerDead, r.deadPid())
		}
		parkHook()
		sliceOut, err := sleepStep(wake, seq, &ps)
		if err != nil {
			return err
		}
		if !sliceOut {
			// Rung, the word moved, a spurious return, or one poll:
			// re-check.
			continue
		}
		if moved() {
			statLate.Add(1)
			return nil
		}
		if pid, dead := r.peerDead(); dead {
			return fmt.Errorf("%w: pid %d", ErrPeerDead, pid)
		}
	}
}

// pollState is what a park carries from one sleep step to the next when
// the build has no process-shared futex and polls instead.
type pollState struct {
	poll  time.Duration // the next poll's sleep, from pollMin doubling to pollMax
	slept time.Duration // time slept since the last slice ran out
}

// sleepStep sleeps once on wake while it holds seq: until it is rung or
// the word moves, or for at most parkSlice; a build without a
// process-shared futex sleeps one poll instead. It reports whether a
// slice ran out unrung (polling: a slice's worth of polls), after which
// the caller checks the peer's liveness.
func sleepStep(wake *atomic.Uint32, seq uint32, ps *pollState) (sliceOut bool, err error) {
	err = knit.FutexWaitShared(wake, seq, parkSlice)
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, knit.ErrTimeout):
		statTimeouts.Add(1)
		return true, nil
	case errors.Is(err, errors.ErrUnsupported):
		time.Sleep(ps.poll)
		ps.slept += ps.poll
		ps.poll = min(2*ps.poll, pollMax)
		if ps.slept < parkSlice {
			return false, nil
		}
		ps.slept = 0
		return true, nil
	}
	return false, fmt.Errorf("shm: waiting on the ring: %w", err)
}

// deadPid is the pid to name in an ErrPeerDead the reaper caused.
func (r *Ring) deadPid() int {
	r.watchMu.Lock()
	defer r.watchMu.Unlock()
	if r.watchPid != 0 {
		return r.watchPid
	}
	return int(int32(r.peerPid.Load()))
}

// peerDead reports whether the peer's process has exited. The pid comes
// from setPeer or, failing that, from the header once the peer has
// attached; before that the peer cannot be watched and counts as alive.
func (r *Ring) peerDead() (int, bool) {
	r.watchMu.Lock()
	defer r.watchMu.Unlock()
	if r.state.Load()&stateClosed != 0 {
		return 0, false
	}
	if r.watch == nil && !r.watchGone {
		pid := r.watchPid
		if pid == 0 {
			pid = int(int32(r.peerPid.Load()))
		}
		if pid <= 0 || pid == os.Getpid() {
			return pid, false
		}
		w, err := watchProcess(pid)
		switch {
		case errors.Is(err, errProcessGone):
			r.watchGone = true
			r.watchPid = pid
		case err != nil:
			return pid, false
		default:
			r.watch = w
		}
	}
	if r.watchGone {
		return r.watchPid, true
	}
	if r.watch.exited() {
		r.watchGone = true
		r.watchPid = r.watch.pid
		r.watch.close()
		r.watch = nil
		return r.watchPid, true
	}
	return r.watch.pid, false
}
