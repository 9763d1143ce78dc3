package shm

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// The ring's memory layout. A ring occupies RingSize(capacity) bytes of a
// region from a line-aligned offset. Header words are uint32 in the
// machine's byte order (both processes run on one machine) and are
// accessed only through sync/atomic on pointers into the mapping; record
// lengths are little-endian, written before the tail that publishes them
// and read after the tail load that reveals them.
//
//	offset   line          written by            contents
//	+0       header        creator, once         magic, version, lineSize, headerSize,
//	                                             capacity, recordHeader, recordAlign,
//	                                             checksum (FNV-1a of the seven before)
//	                       each side, rarely     closed bits, producer pid, consumer pid
//	+128     producer      producer              tail: bytes ever published (mod 2^32)
//	+256     consumer      consumer              head: bytes ever consumed (mod 2^32)
//	+384     data bell     consumer sets flag,   dataWaiting flag, dataWake sequence:
//	                       producer clears+rings the consumer sleeps on dataWake
//	+512     space bell    producer sets flag,   spaceWaiting flag, spaceWake sequence:
//	                       consumer clears+rings the producer sleeps on spaceWake
//	+640     data          producer              2*capacity bytes: capacity bytes of
//	                                             records, then their overflow
//
// Lines are 128 bytes on every architecture: one layout for all, wide
// enough for Apple silicon and Neoverse, whose prefetchers fetch line
// pairs, and the size is in the header, so a peer built for another
// layout is refused rather than misread. Each line has one writer in the
// steady state, so publishing an index never invalidates a line the
// writer itself reads: the producer's hot path writes the tail line and
// reads the header, head and data-bell lines, which stay shared until
// their owner writes them.
//
// Records start 8-byte aligned, at data offset index&(capacity-1):
//
//	[length uint32][reserved uint32][payload, length bytes][pad to 8]
//
// Indices are free-running uint32 byte counts; since capacity <= 2^29,
// tail - head (mod 2^32) is the bytes in flight and is always in
// [0, capacity] and a multiple of 8 for an honest peer. A record is never
// split: one that starts near the end of the first capacity bytes runs on
// into the overflow half, contiguous, so Reserve and Peek can hand out
// one slice and a message of any size up to MaxMessage fits whenever the
// bytes in flight leave room for it (in particular, in an empty ring).
//
// Why the overflow half is never contended: a record starting at index s
// with end e uses data[s&mask : s&mask+(e-s)]. Only a record that crosses
// a multiple of capacity, k*capacity, reaches past data[capacity], and the
// first capacity bytes it skips (data[0 : e-k*capacity]) belong to its own
// indices, so no other record is placed there in that lap. Two records
// that cross different multiples are more than capacity apart (one starts
// before k*capacity, the other ends after (k+1)*capacity), so they are
// never in flight together: the overflow holds at most one record at a
// time. Its pages are touched only by records that cross: a ring of small
// messages uses little more than capacity bytes of memory, though it
// reserves RingSize(capacity) of the region.

const (
	lineSize     = 128
	ringMagic    = 0x524e4b53   // "SKNR" in memory on little-endian machines
	ringVersion  = 2            // 1: records did not overflow; a skip record filled the end of the lap
	headerSize   = 5 * lineSize // bytes before the data area
	recordHeader = 8            // length word + reserved word
	recordAlign  = 8

	// MinCapacity and MaxCapacity bound a ring's capacity, in bytes.
	MinCapacity = 64
	MaxCapacity = 1 << 29
)

// Word offsets from the ring's start.
const (
	offMagic     = 0
	offVersion   = 4
	offLineSize  = 8
	offHdrSize   = 12
	offCapacity  = 16
	offRecHeader = 20
	offRecAlign  = 24
	offChecksum  = 28
	offClosed    = 32
	offProdPid   = 36
	offConsPid   = 40

	offTail         = 1 * lineSize
	offHead         = 2 * lineSize
	offDataWaiting  = 3 * lineSize
	offDataWake     = 3*lineSize + 4
	offSpaceWaiting = 4 * lineSize
	offSpaceWake    = 4*lineSize + 4
)

// Bits of the closed word.
const (
	closedProducer = 1 << 0
	closedConsumer = 1 << 1
)

// RingSize is how many bytes of a region a ring of capacity bytes takes:
// a 640-byte header and twice the capacity, so that a message is never
// split at the end of the buffer. The second half's memory is used only
// by messages that run past the end of the first.
func RingSize(capacity int) int { return headerSize + 2*capacity }

// word returns the shared word at off in mem. The caller has checked that
// off+4 <= len(mem); off is a multiple of 4 and mem is page-aligned, so
// the atomic access is aligned on every architecture.
func word(mem []byte, off int) *atomic.Uint32 {
	return (*atomic.Uint32)(unsafe.Pointer(&mem[off : off+4][0]))
}

// layout is the header's immutable part, as read into locals.
type layout struct {
	magic, version, lineSize, headerSize, capacity, recordHeader, recordAlign uint32
}

func ourLayout(capacity uint32) layout {
	return layout{ringMagic, ringVersion, lineSize, headerSize, capacity, recordHeader, recordAlign}
}

// checksum is FNV-1a over the layout words, each as 4 little-endian
// bytes. It catches a stray write or a foreign structure at the offset,
// not an adversary (who can recompute it): the bounds checks on every
// index are what stop those.
func (l layout) checksum() uint32 {
	h := uint32(2166136261)
	for _, w := range [...]uint32{l.magic, l.version, l.lineSize, l.headerSize, l.capacity, l.recordHeader, l.recordAlign} {
		for range 4 {
			h ^= w & 0xff
			h *= 16777619
			w >>= 8
		}
	}
	return h
}

func writeLayout(ring []byte, l layout) {
	word(ring, offVersion).Store(l.version)
	word(ring, offLineSize).Store(l.lineSize)
	word(ring, offHdrSize).Store(l.headerSize)
	word(ring, offCapacity).Store(l.capacity)
	word(ring, offRecHeader).Store(l.recordHeader)
	word(ring, offRecAlign).Store(l.recordAlign)
	word(ring, offChecksum).Store(l.checksum())
	// Magic last: an attacher that sees it sees every field above
	// (sequentially consistent atomics).
	word(ring, offMagic).Store(l.magic)
}

// readLayout loads the header once and validates it; avail is how many
// bytes of the region follow the ring's offset. The returned capacity is
// the only header value the ring keeps; it is never re-read.
func readLayout(ring []byte, avail int) (uint32, error) {
	l := layout{
		magic:        word(ring, offMagic).Load(),
		version:      word(ring, offVersion).Load(),
		lineSize:     word(ring, offLineSize).Load(),
		headerSize:   word(ring, offHdrSize).Load(),
		capacity:     word(ring, offCapacity).Load(),
		recordHeader: word(ring, offRecHeader).Load(),
		recordAlign:  word(ring, offRecAlign).Load(),
	}
	sum := word(ring, offChecksum).Load()
	switch {
	case l.magic != ringMagic:
		return 0, fmt.Errorf("%w: bad magic %#x (want %#x): no ring at this offset", ErrCorrupt, l.magic, uint32(ringMagic))
	case l.version != ringVersion:
		return 0, fmt.Errorf("%w: layout version %d, this build speaks %d", ErrCorrupt, l.version, ringVersion)
	case l.lineSize != lineSize || l.headerSize != headerSize || l.recordHeader != recordHeader || l.recordAlign != recordAlign:
		return 0, fmt.Errorf("%w: layout line=%d header=%d record=%d align=%d, want %d %d %d %d", ErrCorrupt,
			l.lineSize, l.headerSize, l.recordHeader, l.recordAlign, lineSize, headerSize, recordHeader, recordAlign)
	case l.capacity < MinCapacity || l.capacity > MaxCapacity || bits.OnesCount32(l.capacity) != 1:
		return 0, fmt.Errorf("%w: capacity %d is not a power of two in [%d, %d]", ErrCorrupt, l.capacity, MinCapacity, MaxCapacity)
	case int64(headerSize)+2*int64(l.capacity) > int64(avail):
		return 0, fmt.Errorf("%w: capacity %d overruns the region (%d bytes after the offset)", ErrCorrupt, l.capacity, avail)
	case sum != l.checksum():
		return 0, fmt.Errorf("%w: header checksum %#x, want %#x", ErrCorrupt, sum, l.checksum())
	}
	return l.capacity, nil
}
