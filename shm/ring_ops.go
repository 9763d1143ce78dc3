package shm

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/knit-go/knit"
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

// Every exported operation brackets its work with enter and leave (ring.go),
// so that Region.Close never unmaps memory a call is using; the helpers
// below run inside that bracket.

// tryReserve finds room for a record with an n-byte payload without
// blocking and records it in r.resv*. ok is false when the ring is too
// full; nothing is written then.
func (r *Ring) tryReserve(n int) (ok bool, err error) {
	if err := r.sideErr(RoleProducer); err != nil {
		return false, err
	}
	if r.state.Load()&stateClosed != 0 || r.closedW.Load() != 0 {
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
	// The record goes at pos&mask whatever its size: one that runs past
	// the first capacity bytes continues into the overflow half (see
	// layout.go), so only the bytes in flight limit it.
	rec := recordHeader + align8(uint32(n))
	if r.capacity-(r.pos-r.peer) < rec {
		h := r.head.Load()
		if err := r.checkInFlight(r.pos - h); err != nil {
			return false, r.corrupt(err)
		}
		r.peer = h
		if r.capacity-(r.pos-h) < rec {
			return false, nil
		}
	}
	r.resv, r.resvAt, r.resvMax = true, r.pos&r.mask, n
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
	r.notify(r.dataWait, r.dataWake)
}

func (r *Ring) reserved() []byte {
	a := int(r.resvAt) + recordHeader
	return r.data[a : a+r.resvMax : a+r.resvMax]
}

// TrySend copies p into the ring as one message if there is room now.
// It never blocks, and when it does not send it changes nothing: a ring
// without room for p now is knit.ErrFull, a message longer than
// MaxMessage is ErrTooLarge, and with either end closed it is ErrClosed.
func (r *Ring) TrySend(p []byte) error {
	if err := r.enter(); err != nil {
		return err
	}
	ok, err := r.tryReserve(len(p))
	if ok {
		copy(r.reserved(), p)
		err = r.commit(len(p))
	} else if err == nil {
		err = knit.ErrFull
	}
	r.leave()
	return err
}

// Send copies p into the ring as one message, waiting while the ring is
// full: it spins for the end's spin budget (its knit.Park), then sleeps
// until the consumer makes room, ctx ends (ctx.Err()), either end closes
// (ErrClosed) or the consumer's process dies (ErrPeerDead). With a ctx
// already done it sends nothing and returns ctx.Err(), even when there
// is room.
func (r *Ring) Send(ctx context.Context, p []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := r.enter(); err != nil {
		return err
	}
	err := r.reserve(ctx, len(p))
	if err == nil {
		copy(r.reserved(), p)
		err = r.commit(len(p))
	}
	r.leave()
	return err
}

// Reserve waits, as Send does, for room for an n-byte message and returns
// the n bytes of the ring where its payload goes, for the caller to fill
// in place; Commit publishes it. The slice is shared memory the peer can
// read; it is valid until Commit, or Close of the ring or its region.
// With a ctx already done it reserves nothing and returns ctx.Err(),
// even when there is room.
func (r *Ring) Reserve(ctx context.Context, n int) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := r.enter(); err != nil {
		return nil, err
	}
	defer r.leave()
	if err := r.reserve(ctx, n); err != nil {
		return nil, err
	}
	return r.reserved(), nil
}

func (r *Ring) reserve(ctx context.Context, n int) error {
	for {
		ok, err := r.tryReserve(n)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if err := r.park(ctx, r.head, r.peer, r.spaceWait, r.spaceWake); err != nil {
			return err
		}
	}
}

// Commit publishes the first n bytes of the slice Reserve returned as one
// message (n may be less than reserved; the rest is given back).
func (r *Ring) Commit(n int) error {
	if err := r.enter(); err != nil {
		return err
	}
	defer r.leave()
	if err := r.sideErr(RoleProducer); err != nil {
		return err
	}
	return r.commit(n)
}

func (r *Ring) commit(n int) error {
	if !r.resv {
		return fmt.Errorf("%w: Commit without Reserve", ErrWrongSide)
	}
	if n < 0 || n > r.resvMax {
		return fmt.Errorf("%w: Commit(%d) of a %d-byte reservation", ErrWrongSide, n, r.resvMax)
	}
	r.resv = false
	if r.state.Load()&stateClosed != 0 {
		return ErrClosed
	}
	r.writeHeader(r.resvAt, uint32(n))
	r.publish(r.pos + recordHeader + align8(uint32(n)))
	return nil
}

// ---- consumer ----

// tryPeek finds the next message without blocking: its payload and the
// bytes its record occupies (0: none).
func (r *Ring) tryPeek() (p []byte, rec uint32, err error) {
	if err := r.sideErr(RoleConsumer); err != nil {
		return nil, 0, err
	}
	if r.state.Load()&stateClosed != 0 {
		return nil, 0, ErrClosed
	}
	if r.err != nil {
		return nil, 0, r.err
	}
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
	// at < capacity and 8-aligned, and a record is at most capacity
	// bytes, so at+rec stays inside the 2*capacity data area whatever
	// the length word says once it passes the check below.
	at := r.pos & r.mask
	n := binary.LittleEndian.Uint32(r.data[at : at+4])
	if n > r.maxMsg {
		return nil, 0, r.corrupt(fmt.Errorf("%w: record length %d, at most %d", ErrCorrupt, n, r.maxMsg))
	}
	rec = recordHeader + align8(n)
	if rec > avail {
		return nil, 0, r.corrupt(fmt.Errorf("%w: %d-byte record at %d with %d bytes in flight", ErrCorrupt, rec, at, avail))
	}
	a := at + recordHeader
	return r.data[a : a+n : a+n], rec, nil
}

// release hands n bytes back to the producer and rings it if it sleeps.
func (r *Ring) release(n uint32) {
	r.pos += n
	r.head.Store(r.pos)
	r.notify(r.spaceWait, r.spaceWake)
}

// TryRecv copies the next message into buf if one is there now, and
// returns its length. It never blocks: an empty ring is knit.ErrEmpty,
// and one that is empty and closed is ErrClosed. If buf is too short it
// returns the message's length and ErrShortBuffer, and the message stays
// in the ring.
func (r *Ring) TryRecv(buf []byte) (int, error) {
	if err := r.enter(); err != nil {
		return 0, err
	}
	defer r.leave()
	p, rec, err := r.tryPeek()
	if err != nil {
		return 0, err
	}
	if rec == 0 {
		return 0, knit.ErrEmpty
	}
	return r.take(buf, p, rec)
}

func (r *Ring) take(buf, p []byte, rec uint32) (int, error) {
	if len(buf) < len(p) {
		return len(p), fmt.Errorf("%w: %d-byte message, %d-byte buffer", ErrShortBuffer, len(p), len(buf))
	}
	n := copy(buf, p)
	r.peeked = 0
	r.release(rec)
	return n, nil
}

// Recv copies the next message into buf and returns its length, waiting
// while the ring is empty: it spins for the end's spin budget (its
// knit.Park), then sleeps until a message arrives, ctx ends (ctx.Err()),
// the producer's process dies (ErrPeerDead) or either end closes
// (ErrClosed; the producer's Close only after everything it sent has been
// received). If buf is too short it returns the message's length and
// ErrShortBuffer, and the message stays in the ring. With a ctx already
// done it takes nothing and returns ctx.Err(), even when a message is
// there.
func (r *Ring) Recv(ctx context.Context, buf []byte) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := r.enter(); err != nil {
		return 0, err
	}
	defer r.leave()
	p, rec, err := r.next(ctx)
	if err != nil {
		return 0, err
	}
	return r.take(buf, p, rec)
}

// next waits for the next message.
func (r *Ring) next(ctx context.Context) ([]byte, uint32, error) {
	for {
		p, rec, err := r.tryPeek()
		if err != nil || rec != 0 {
			return p, rec, err
		}
		if err := r.park(ctx, r.tail, r.peer, r.dataWait, r.dataWake); err != nil {
			return nil, 0, err
		}
	}
}

// Peek waits, as Recv does, for the next message and returns its payload
// in place, without copying; Release consumes it. Until then the message
// stays first in the ring, and Peek returns it again. The slice is shared
// memory: the producer cannot legitimately write it before Release, but a
// hostile one could, so copy what you validate. It is valid until
// Release, or Close of the ring or its region. With a ctx already done
// it returns ctx.Err() and changes nothing, even when a message is there.
func (r *Ring) Peek(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := r.enter(); err != nil {
		return nil, err
	}
	defer r.leave()
	p, rec, err := r.next(ctx)
	if err != nil {
		return nil, err
	}
	r.peeked = rec
	return p, nil
}

// Release consumes the message the last Peek returned.
func (r *Ring) Release() error {
	if err := r.enter(); err != nil {
		return err
	}
	defer r.leave()
	if err := r.sideErr(RoleConsumer); err != nil {
		return err
	}
	if r.peeked == 0 {
		return fmt.Errorf("%w: Release without Peek", ErrWrongSide)
	}
	if r.state.Load()&stateClosed != 0 {
		return ErrClosed
	}
	rec := r.peeked
	r.peeked = 0
	r.release(rec)
	return nil
}
