package knit

import (
	"sync"
	"sync/atomic"
)

// The wait list: goroutines asleep on a node each (on the node's park
// word, or on its channel), queued FIFO behind a mutex that the list's
// owner holds. Two owners: an Event's queue (its runtime sleepers) and
// each bucket of the portable futex.
//
// The rule that keeps a wake from being lost or doubled: a waiter is
// linked while queued is true, and only a goroutine holding the owner's
// mutex links or unlinks it. Whoever unlinks it owns the one wake that
// will be sent to its node, and sends it after releasing the mutex. Only
// channel nodes can stop waiting on their own. A waiter that stops
// waiting for its own reason (ctx, timeout) takes the mutex and finds out
// which it is: still queued, it unlinks itself and no token will come;
// already unlinked, a token is on its way and the wake is its to report.

// waiter is one goroutine asleep in a waitList.
type waiter struct {
	next, prev *waiter        // guarded by the owner's mutex
	queued     bool           // guarded by the owner's mutex
	addr       *atomic.Uint32 // the word slept on (the portable futex); nil in an Event's queue
	ch         chan struct{}  // buffered 1, so the waker never blocks
	parks      bool           // the sleeper parks on word, not on ch; set before it is queued
	word       parkWord       // claimed when parks is set
	onSema     bool           // under -race: the sleeper blocks on sema (see raceBuild); set before it is queued
	sema       uint32         // the runtime semaphore an onSema sleeper blocks on

	// A Select's node (see select.go): the Select queues one on each
	// ring it waits for, all sharing the Select's channel, so a second
	// token finds the channel full and is dropped (one wakes it). passed
	// is the waker's last touch of the node: until it is set the Select
	// may not reuse a node that a waker unlinked. A Select that sleeps
	// on the futex (BackendFutex) sets word32 instead of using ch: the
	// wake adds one to that word and wakes it.
	sel    bool
	word32 *atomic.Uint32
	passed atomic.Bool
}

// sleep blocks until the waker's wake: a park on the node's word, or a
// token on its channel. Either is addressed to this node alone.
func (w *waiter) sleep() {
	switch {
	case w.parks:
		w.word.sleep()
		w.word.release()
	case w.onSema:
		semacquire(&w.sema)
		raceAcquireNode(w)
	default:
		<-w.ch
	}
}

// wake wakes w's sleeper. w may be recycled as soon as it returns.
func (w *waiter) wake() {
	if w.sel {
		if w.word32 != nil {
			w.word32.Add(1)
			FutexWake(w.word32, 1)
		} else {
			select {
			case w.ch <- struct{}{}:
			default:
			}
		}
		w.passed.Store(true)
		return
	}
	switch {
	case w.parks:
		if g, ok := w.word.take(); ok {
			ready(g)
		}
	case w.onSema:
		raceReleaseNode(w)
		semrelease(&w.sema, false, 0)
	default:
		w.ch <- struct{}{}
	}
}

// waiterPool recycles waiters, so a sleep does not allocate in the steady
// state. A waiter goes back only with its channel empty.
var waiterPool = sync.Pool{New: func() any {
	return &waiter{ch: make(chan struct{}, 1)}
}}

func getWaiter(addr *atomic.Uint32) *waiter {
	w := waiterPool.Get().(*waiter)
	w.addr = addr
	return w
}

func (w *waiter) put() {
	w.addr = nil
	w.parks, w.onSema = false, false
	waiterPool.Put(w)
}

// waitList is a FIFO of waiters; the zero value is empty. Every method
// needs the owner's mutex.
type waitList struct {
	head, tail *waiter
}

func (l *waitList) push(w *waiter) {
	w.queued = true
	w.next = nil
	w.prev = l.tail
	if l.tail != nil {
		l.tail.next = w
	} else {
		l.head = w
	}
	l.tail = w
}

func (l *waitList) remove(w *waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		l.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		l.tail = w.prev
	}
	w.next, w.prev, w.queued = nil, nil, false
}

// take unlinks up to n waiters on addr, oldest first, and returns them
// chained through next, for wakeAll to send to once the mutex is
// released.
func (l *waitList) take(n int, addr *atomic.Uint32) (chain *waiter, k int) {
	var last *waiter
	for w := l.head; w != nil && k < n; {
		next := w.next
		if w.addr == addr {
			l.remove(w)
			if last == nil {
				chain = w
			} else {
				last.next = w
			}
			last = w
			k++
		}
		w = next
	}
	return chain, k
}

// len counts the queued waiters, for the tests' reports.
func (l *waitList) len() int {
	n := 0
	for w := l.head; w != nil; w = w.next {
		n++
	}
	return n
}

// wakeAll sends each waiter of a chain from take its token. It runs
// without the mutex: a send readies a goroutine.
func wakeAll(chain *waiter) {
	for w := chain; w != nil; {
		// Read next before the send: once woken, the waiter recycles w.
		next := w.next
		w.wake()
		w = next
	}
}

// sleepUntil blocks the waiter w, queued on l under mu, until a waker's
// token or stop. It reports true when woken: a waker unlinked w before
// stop was acted on, and that wake must be reported, not swallowed, or
// the waiters behind w would sleep through it. It recycles w either way.
func sleepUntil[T any](w *waiter, mu *sync.Mutex, l *waitList, stop <-chan T) (woken bool) {
	select {
	case <-w.ch:
		woken = true
	case <-stop:
		mu.Lock()
		if w.queued {
			l.remove(w)
			mu.Unlock()
		} else {
			mu.Unlock()
			<-w.ch
			woken = true
		}
	}
	w.put()
	return woken
}
