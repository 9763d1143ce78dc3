//go:build amd64 || arm64

package suites

import (
	"unsafe"

	"github.com/knit-go/knit"
)

// limitRing is the all-assembly limit: knit's SPSC indices (each side's
// index with its cached copy of the other's, on a cache line of its own)
// driven by producer and consumer loops written wholly in assembly
// (limitring_$GOARCH.s): no call per item, no closed bit, no doorbell, no
// Go in the loop. A loop holds its own index and its cached copy in
// registers for a whole chunk, so it never loads the line the other side
// polls; knit's SPSC gets the same from its private lines (spscCore). Each item is a release store of the slot's index, as in
// knit, so the rows beside it are read against the floor of the design
// itself. Items are the low bits of their position, so the consumer checks
// order without state.
//
//lint:file-ignore U1000 the index fields are read and written by the assembly, at go_asm.h's offsets
type limitRing struct {
	_         [knit.CacheLineSize]byte
	tail      uint64 // producer's
	headCache uint64
	_         [knit.CacheLineSize - 16]byte
	head      uint64 // consumer's
	tailCache uint64
	_         [knit.CacheLineSize - 16]byte
	buf       unsafe.Pointer // cap slots of 4, 8 or 64 bytes, from a line
	mask      uint64
	_         [knit.CacheLineSize - 16]byte
}

// haveLimitRing says the assembly exists on this GOARCH.
const haveLimitRing = true

// newLimitRing's slots start on a line (knit.CacheLineSize), so that a
// 64-byte item never straddles two.
func newLimitRing(capacity, slot int) *limitRing {
	buf := make([]byte, capacity*slot+knit.CacheLineSize)
	off := -int(uintptr(unsafe.Pointer(unsafe.SliceData(buf)))) & (knit.CacheLineSize - 1)
	return &limitRing{buf: unsafe.Pointer(&buf[off]), mask: uint64(capacity - 1)}
}

// The loops give up after spins unanswered polls, so that Go can preempt
// the thread (a goroutine inside assembly cannot be stopped): callers loop
// around them. The 32 and 64 variants move 4- and 8-byte items, the
// Line variants 64-byte ones.

// limitPush* pushes up to n items and returns how many went in.
//
//go:noescape
func limitPush32(r *limitRing, n, spins uint64) uint64

//go:noescape
func limitPush64(r *limitRing, n, spins uint64) uint64

// limitPop* pops up to n items and returns how many came out and how many
// of them were not the low bits of their position.
//
//go:noescape
func limitPop32(r *limitRing, n, spins uint64) (got, bad uint64)

//go:noescape
func limitPop64(r *limitRing, n, spins uint64) (got, bad uint64)

// limitPushLine and limitPopLine move 64-byte items, a line each, whose
// eight words all hold the item's position.
//
//go:noescape
func limitPushLine(r *limitRing, n, spins uint64) uint64

//go:noescape
func limitPopLine(r *limitRing, n, spins uint64) (got, bad uint64)

// limitPing32 does up to n round trips (push to req, pop the answer from
// rep), resuming one whose request is already out when pending is 1; it
// returns the trips completed, whether a request is still out, and how
// many answers were not the request's position plus one.
//
//go:noescape
func limitPing32(req, rep *limitRing, n, spins, pending uint64) (trips, stillPending, bad uint64)

// limitPong32 answers requests (the position plus one) until spins polls
// find none, and returns how many it answered.
//
//go:noescape
func limitPong32(req, rep *limitRing, spins uint64) uint64
