package knit

import (
	"sync/atomic"
	"unsafe"
)

// A park word: one goroutine sleeps on it in the Go scheduler and one
// waker wakes it, with no lock and no queue between them. It is the park
// and ready a channel gives a receiver it finds waiting (runtime.gopark,
// runtime.goready: the woken goroutine runs next on the waker's P), less
// the channel's lock. An Event's lone sleeper and each node of its wait
// list sleep on one.
//
// The word's states, and who moves it:
//
//	wordFree  -> wordAwake  the sleeper claims the word (claim; a wait-list
//	                        node is claimed when it is handed out)
//	wordAwake -> wordFree   the sleeper gives it up unslept (unclaim)
//	wordAwake -> g          gopark's unlockf: the sleeper's goroutine,
//	                        already marked waiting
//	wordAwake, g -> wordWoken  the waker (take), which readies g if it
//	                        took one
//	wordWoken -> wordFree   the sleeper, running again (release)
//
// Every move out of wordAwake is a CAS or a swap, so exactly one of the
// unlockf, unclaim and take succeeds from it: a sleeper whose unlockf
// finds wordWoken runs on without sleeping, one whose unclaim fails has
// been taken and owns the wake, and a waker that finds the word free or
// already woken wakes nobody. A goroutine's address is never 0, 1 or 2.
type parkWord struct{ v atomic.Uintptr }

const (
	wordFree uintptr = iota
	wordWoken
	wordAwake
)

// claim makes the caller the word's sleeper, if nobody is.
func (p *parkWord) claim() bool { return p.v.CompareAndSwap(wordFree, wordAwake) }

// unclaim gives a claimed word up without sleeping. It fails when a
// waker has taken the word meanwhile: the caller then owns that wake and
// must release the word.
func (p *parkWord) unclaim() bool { return p.v.CompareAndSwap(wordAwake, wordFree) }

// sleep parks the claimed word's sleeper until a waker takes the word.
func (p *parkWord) sleep() {
	for p.v.Load() != wordWoken {
		gopark(parkWordUnlock, unsafe.Pointer(&p.v), 0, 0, 2)
	}
}

// release frees a woken word for the next claim.
func (p *parkWord) release() { p.v.Store(wordFree) }

// parkWordUnlock is gopark's unlockf: it publishes the sleeper's
// goroutine unless the waker came first. It runs on the system stack,
// where it must not grow the stack; the CAS is the compiler's intrinsic,
// which is why the race detector's builds, whose atomics are calls, keep
// off park words.
//
//go:nosplit
func parkWordUnlock(gp, word unsafe.Pointer) bool {
	return (*atomic.Uintptr)(word).CompareAndSwap(wordAwake, uintptr(gp))
}

// take wakes the word's sleeper, if it has one that no other waker took.
// It returns what it took out of the word, for ready; ok is false when
// there was nothing to take.
func (p *parkWord) take() (taken uintptr, ok bool) {
	for {
		v := p.v.Load()
		if v == wordFree || v == wordWoken {
			return 0, false
		}
		if p.v.CompareAndSwap(v, wordWoken) {
			return v, true
		}
	}
}

// ready finishes take: a sleeper already parked is made runnable, one
// still on its way to gopark will find the word woken and not sleep.
func ready(taken uintptr) {
	if taken == wordAwake {
		return
	}
	// The word held the goroutine's address as a uintptr, out of the
	// collector's sight; parked, the goroutine stays in the runtime's
	// list of all goroutines, so the address is still valid.
	goready(*(*unsafe.Pointer)(unsafe.Pointer(&taken)), 2)
}
