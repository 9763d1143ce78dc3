//go:build (amd64 || arm64) && !purego

package goid

import (
	"sync"
	"sync/atomic"
)

// Curg identifies the calling goroutine: one load of the current g, in
// the assembly beside this file.
func Curg() uintptr

// Cheap says Curg and ID cost next to nothing, so they may be asked on
// every call of a hot path.
const Cheap = true

// gword returns the word off bytes into the calling goroutine's g, in
// the assembly beside this file.
func gword(off uintptr) uint64

// gwords bounds the search for goid: the first gwords words of a g. The
// runtime's g has been far larger than 256 bytes in every release (it is
// about 450 in Go 1.26, where goid is the word at 152), so the search
// never reads past the g it starts in.
const gwords = 32

// idOffset is the byte offset of goid in the runtime's g, 0 until
// findOffset has found it, and 0 for good if it found none (offset 0 is
// the stack's low bound, never goid). It is found rather than written
// down so that a runtime which moves the field, or a GOEXPERIMENT that
// changes g, costs nothing but the search; and it is checked against the
// runtime's own printing of the id, so a wrong offset is never used.
// Written once, atomically, under idOnce; id reads it with a plain load.
var (
	idOffset uintptr
	idOnce   sync.Once
)

// id is gword(idOffset), or 0 while idOffset is 0 (no goroutine has id
// 0), in the assembly beside this file.
func id() uint64

// ID returns the runtime's id of the calling goroutine, which no other
// goroutine ever has: one load from the g once the offset is known.
func ID() uint64 {
	if id := id(); id != 0 {
		return id
	}
	return idSlow()
}

// idSlow is ID before the search, or where it found nothing: the id read
// from the stack trace, microseconds.
func idSlow() uint64 {
	idOnce.Do(findOffset)
	if off := atomic.LoadUintptr(&idOffset); off != 0 {
		return gword(off)
	}
	return uint64(Stack())
}

// findOffset keeps the offsets at which the g's word equals the id in the
// stack trace, in the calling goroutine and in two goroutines it starts
// (three different ids, so a word that matched one by chance, a status
// or a small count, drops out), and stores the offset if exactly one is
// left.
func findOffset() {
	var match [gwords]bool
	for i := range match {
		match[i] = true
	}
	sample := func() {
		id := uint64(Stack())
		for i := range match {
			if id == 0 || gword(uintptr(i)*8) != id {
				match[i] = false
			}
		}
	}
	sample()
	for range 2 {
		done := make(chan struct{})
		go func() { sample(); close(done) }()
		<-done
	}
	found := uintptr(0)
	for i, ok := range match {
		if ok {
			if found != 0 || i == 0 {
				return // ambiguous: stay with the stack trace
			}
			found = uintptr(i) * 8
		}
	}
	atomic.StoreUintptr(&idOffset, found)
}
