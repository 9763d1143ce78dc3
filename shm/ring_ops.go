package shm

import (
	"context"
	"encoding/binary"
	"fmt"
)

// The record operations. Each end keeps its own index in r.pos and a
// validated copy of the peer's in r.peer; a shared index is loaded only
// when the copy says there is not enough (data or room), and every load is
// checked by checkInFlight before it is used.
//
// Ordering: the producer writes a record's header and payload with plain
// stores and then publishes it with tail.Store; the consumer loads tail
// and only then reads the record. Go's atomics are sequentially
// consistent, and compile to instructions that are (XCHG on amd64, STLR
// and LDAR on arm64) whichever process executes them, so the consumer
// sees the whole record. Symmetrically the consumer copies a payload out
// before head.Store hands its bytes back to the producer.

// checkInFlight validates tail - head computed from a loaded index.
func (r *Ring) checkInFlight(n uint32) error {
	if n > r.capacity || n%recordAlign != 0 {
		return fmt.Errorf("%w: %d bytes in flight in a ring of %d", ErrCorrupt, n, r.capacity)
	}
	return nil
}

// corrupt latches err: once the peer has broken the ring nothing read
// from it can be trusted again.
func (r *Ring) corrupt(err error) error {
	r.err = err
	return err
}

func align8(n uint32) uint32 { return (n + recordAlign - 1) &^ (recordAlign - 1) }

func (r *Ring) sideErr(want Role) error {
	if r.role != want {
		return fmt.Errorf("%w: %v operation on the %v end", ErrWrongSide, want, r.role)
	}
	return nil
}

// ---- producer ----

// tryReserve finds room for a record with an n-byte payload without
// blocking and records it in r.resv*. ok is false when the ring is too
// full; if only the skip record before the wrap fits, it is published, so
// the consumer can move past the wrap and make room at the start.
func (r *Ring) tryReserve(n int) (ok bool, err error) {
	if err := r.sideErr(Producer); err != nil {
		return false, err
	}
	if r.closed.Load() || r.closedW.Load() != 0 {
		return false, ErrClosed
	}
	if r.err != nil {
		return false, r.err
	}
	if r.resv {
		return false, fmt.Errorf("%w: a reservation is outstanding: Commit it first", ErrWrongSide)
	}
	if n < 0 || n > int(r.maxMsg) {
		return false, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, n, r.maxMsg)
	}
	rec := recordHeader + align8(uint32(n))
	at := r.pos & r.mask
	skip := uint32(0)
	if room := r.capacity - at; rec > room { // room >= 8: at is 8-aligned
		skip = room
	}
	need := skip + rec
	if r.capacity-(r.pos-r.peer) < need {
		h := r.head.Load()
		if err := r.checkInFlight(r.pos - h); err != nil {
			return false, r.corrupt(err)
		}
		r.peer = h
		if free := r.capacity - (r.pos - h); free < need {
			if skip != 0 && free >= skip {
				r.writeHeader(at, skipMark)
				r.publish(r.pos + skip)
			}
			return false, nil
		}
	}
	if skip != 0 {
		// Written now, published with the record by Commit's one store.
		r.writeHeader(at, skipMark)
		at = 0
	}
	r.resv, r.resvAt, r.resvSkip, r.resvMax = true, at, skip, n
	return true, nil
}

func (r *Ring) writeHeader(at, length uint32) {
	binary.LittleEndian.PutUint32(r.data[at:at+4], length)
	binary.LittleEndian.PutUint32(r.data[at+4:at+8], 0)
}

// publish stores the new tail and rings the consumer if it sleeps.
func (r *Ring) publish(t uint32) {
	r.pos = t
	r.tail.Store(t)
	r.notify(r.dataWait, r.dataBell)
}

func (r *Ring) reserved() []byte {
	a := int(r.resvAt) + recordHeader
	return r.data[a : a+r.resvMax : a+r.resvMax]
}

// TrySend copies p into the ring as one message if there is room now,
// and reports whether it did. It never blocks. A full ring is (false,
// nil); a message longer than MaxMessage is ErrTooLarge.
func (r *Ring) TrySend(p []byte) (bool, error) {
	ok, err := r.tryReserve(len(p))
	if !ok {
		return false, err
	}
	copy(r.reserved(), p)
	return true, r.Commit(len(p))
}

// Send copies p into the ring as one message, waiting while the ring is
// full: it spins for the spin budget, then sleeps until the consumer
// makes room, ctx ends (ctx.Err()), either end closes (ErrClosed) or the
// consumer's process dies (ErrPeerDead).
func (r *Ring) Send(ctx context.Context, p []byte) error {
	if _, err := r.Reserve(ctx, len(p)); err != nil {
		return err
	}
	copy(r.reserved(), p)
	return r.Commit(len(p))
}

// Reserve waits, as Send does, for room for an n-byte message and returns
// the n bytes of the ring where its payload goes, for the caller to fill
// in place; Commit publishes it. The slice is shared memory the peer can
// read; it is valid until Commit or Close.
func (r *Ring) Reserve(ctx context.Context, n int) ([]byte, error) {
	for {
		ok, err := r.tryReserve(n)
		if err != nil {
			return nil, err
		}
		if ok {
			return r.reserved(), nil
		}
		if err := r.park(ctx, r.head, r.peer, r.spaceWait, r.spaceBell); err != nil {
			return nil, err
		}
	}
}

// Commit publishes the first n bytes of the slice Reserve returned as one
// message (n may be less than reserved; the rest is given back).
func (r *Ring) Commit(n int) error {
	if err := r.sideErr(Producer); err != nil {
		return err
	}
	if !r.resv {
		return fmt.Errorf("%w: Commit without Reserve", ErrWrongSide)
	}
	if n < 0 || n > r.resvMax {
		return fmt.Errorf("%w: Commit(%d) of a %d-byte reservation", ErrWrongSide, n, r.resvMax)
	}
	r.resv = false
	if r.closed.Load() {
		return ErrClosed
	}
	r.writeHeader(r.resvAt, uint32(n))
	r.publish(r.pos + r.resvSkip + recordHeader + align8(uint32(n)))
	return nil
}

// ---- consumer ----

// tryPeek finds the next message without blocking: its payload and the
// bytes its record (with any skip record before it) occupies. It consumes
// a skip record it meets on the way.
func (r *Ring) tryPeek() (p []byte, rec uint32, err error) {
	if err := r.sideErr(Consumer); err != nil {
		return nil, 0, err
	}
	if r.closed.Load() {
		return nil, 0, ErrClosed
	}
	if r.err != nil {
		return nil, 0, r.err
	}
	// At most two rounds: a skip record, then a message (a skip record
	// at data offset 0 is refused, so two never follow each other).
	for range 2 {
		avail := r.peer - r.pos
		if avail == 0 {
			t := r.tail.Load()
			if err := r.checkInFlight(t - r.pos); err != nil {
				return nil, 0, r.corrupt(err)
			}
			r.peer = t
			if avail = t - r.pos; avail == 0 {
				if r.closedW.Load() != 0 {
					return nil, 0, ErrClosed
				}
				return nil, 0, nil
			}
		}
		at := r.pos & r.mask // 8-aligned, so the 8-byte header is inside data
		n := binary.LittleEndian.Uint32(r.data[at : at+4])
		if n == skipMark {
			skip := r.capacity - at
			if at == 0 || skip > avail {
				return nil, 0, r.corrupt(fmt.Errorf("%w: skip record at %d with %d bytes in flight", ErrCorrupt, at, avail))
			}
			r.release(skip)
			continue
		}
		if n > r.maxMsg {
			return nil, 0, r.corrupt(fmt.Errorf("%w: record length %d, at most %d", ErrCorrupt, n, r.maxMsg))
		}
		rec = recordHeader + align8(n)
		if rec > avail || rec > r.capacity-at {
			return nil, 0, r.corrupt(fmt.Errorf("%w: %d-byte record at %d with %d bytes in flight", ErrCorrupt, rec, at, avail))
		}
		a := at + recordHeader
		return r.data[a : a+n : a+n], rec, nil
	}
	return nil, 0, r.corrupt(fmt.Errorf("%w: two skip records in a row", ErrCorrupt))
}

// release hands n bytes back to the producer and rings it if it sleeps.
func (r *Ring) release(n uint32) {
	r.pos += n
	r.head.Store(r.pos)
	r.notify(r.spaceWait, r.spaceBell)
}

// TryRecv copies the next message into buf if one is there now, and
// returns its length. It never blocks: an empty ring is (0, false, nil).
// If buf is too short it returns the message's length and ErrShortBuffer,
// and the message stays in the ring.
func (r *Ring) TryRecv(buf []byte) (int, bool, error) {
	p, rec, err := r.tryPeek()
	if rec == 0 || err != nil {
		return 0, false, err
	}
	return r.take(buf, p, rec)
}

func (r *Ring) take(buf, p []byte, rec uint32) (int, bool, error) {
	if len(buf) < len(p) {
		return len(p), false, fmt.Errorf("%w: %d-byte message, %d-byte buffer", ErrShortBuffer, len(p), len(buf))
	}
	n := copy(buf, p)
	r.peeked = 0
	r.release(rec)
	return n, true, nil
}

// Recv copies the next message into buf and returns its length, waiting
// while the ring is empty: it spins for the spin budget, then sleeps
// until a message arrives, ctx ends (ctx.Err()), the producer's process
// dies (ErrPeerDead) or either end closes (ErrClosed; the producer's
// Close only after everything it sent has been received). If buf is too
// short it returns the message's length and ErrShortBuffer, and the
// message stays in the ring.
func (r *Ring) Recv(ctx context.Context, buf []byte) (int, error) {
	for {
		p, rec, err := r.tryPeek()
		if err != nil {
			return 0, err
		}
		if rec != 0 {
			n, _, err := r.take(buf, p, rec)
			return n, err
		}
		if err := r.park(ctx, r.tail, r.peer, r.dataWait, r.dataBell); err != nil {
			return 0, err
		}
	}
}

// Peek waits, as Recv does, for the next message and returns its payload
// in place, without copying; Release consumes it. Until then the message
// stays first in the ring, and Peek returns it again. The slice is shared
// memory: the producer cannot legitimately write it before Release, but a
// hostile one could, so copy what you validate. It is valid until Release
// or Close.
func (r *Ring) Peek(ctx context.Context) ([]byte, error) {
	for {
		p, rec, err := r.tryPeek()
		if err != nil {
			return nil, err
		}
		if rec != 0 {
			r.peeked = rec
			return p, nil
		}
		if err := r.park(ctx, r.tail, r.peer, r.dataWait, r.dataBell); err != nil {
			return nil, err
		}
	}
}

// Release consumes the message the last Peek returned.
func (r *Ring) Release() error {
	if err := r.sideErr(Consumer); err != nil {
		return err
	}
	if r.peeked == 0 {
		return fmt.Errorf("%w: Release without Peek", ErrWrongSide)
	}
	if r.closed.Load() {
		return ErrClosed
	}
	rec := r.peeked
	r.peeked = 0
	r.release(rec)
	return nil
}
