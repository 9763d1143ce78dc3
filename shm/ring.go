package shm

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/internal/spinpolicy"
)

// A Ring is one end of a single-producer single-consumer queue of byte
// messages in a Region: the producer end in one process (or goroutine),
// the consumer end in another. CreateRing lays out a new ring and takes
// one end; AttachRing validates an existing one and takes the other.
//
// One goroutine at a time may use an end's sending (or receiving)
// methods; Close, Len and the accessors may be called from any goroutine,
// and Close wakes a goroutine blocked on the same end.
//
// The methods follow knit's conventions, with Send and Recv as shm's
// words for byte messages where knit's rings say Push and Pop. TrySend
// and TryRecv never block: they return nil when they moved a message,
// knit.ErrFull (TrySend: no room now) or knit.ErrEmpty (TryRecv: no
// message now) where they would have had to wait, and otherwise one of
// the errors of this package: ErrClosed once the ring is closed (a
// consumer first receives what was sent before the producer closed),
// which matches knit.ErrClosed as well, or ErrTooLarge, ErrShortBuffer,
// ErrWrongSide, ErrCorrupt. The blocking calls (Send, Recv, Reserve,
// Peek) spin, then sleep, as the end's knit.Park says: see CreateRing.
type Ring struct {
	// Fixed at creation.
	region   *Region
	ring     []byte // the header lines: ring[0:headerSize]
	data     []byte // the data area: exactly 2*capacity bytes (records and their overflow)
	capacity uint32 // power of two in [MinCapacity, MaxCapacity], from this side's one read of the header
	mask     uint32 // capacity - 1
	maxMsg   uint32 // capacity - recordHeader
	role     Role

	// Shared words (see layout.go), resolved once.
	closedW              *atomic.Uint32
	ownPid, peerPid      *atomic.Uint32
	tail, head           *atomic.Uint32
	dataWait, dataWake   *atomic.Uint32
	spaceWait, spaceWake *atomic.Uint32

	// Owner state, touched only by the goroutine using the end.
	//
	// pos is this end's own index (producer: tail, consumer: head). It is
	// authoritative: the copy in shared memory is stored to, never read
	// back, so a peer scribbling it cannot move this end.
	pos uint32
	// peer is the peer's index as last loaded and validated (producer:
	// head, consumer: tail): pos-peer (producer) or peer-pos (consumer)
	// is in [0, capacity] and a multiple of 8.
	peer uint32
	// resv: a Reserve is outstanding; its record starts at data offset
	// resvAt and its payload may hold up to resvMax bytes.
	resv    bool
	resvAt  uint32
	resvMax int
	peeked  uint32        // bytes of the record the last Peek returned, for Release; 0: none
	err     error         // latched ErrCorrupt: a ring the peer broke stays broken
	spin    time.Duration // the resolved spin budget of the blocking calls (0: none)

	// Any goroutine.
	//
	// state is stateClosed | stateGone | stateCall * (calls inside the
	// shared memory now). A call that touches the mapping counts itself
	// in with enter and out with leave; enter fails once stateGone is
	// set, and Region.Close unmaps only after setting stateGone and
	// seeing the count drop to zero. The count is per end, so a call
	// pays two uncontended atomic adds on a line of its own Ring.
	state     atomic.Uint32
	peerGone  atomic.Bool // the reaper saw the peer exit (Workers): a sleeper returns ErrPeerDead
	watchMu   sync.Mutex
	watch     *procWatch // the peer's liveness watch, opened at the first timed-out sleep
	watchPid  int        // the peer's pid from setPeer (preferred to the header's), or the pid found dead
	watchGone bool       // the peer was found dead
}

// Role says which end of a ring a Ring value is. Its values are named
// for their type, as knit's Backend and Hint values are: RoleProducer
// is a Role, not knit's Producer interface.
type Role uint8

const (
	// RoleProducer is the sending end: Send, TrySend, Reserve, Commit.
	RoleProducer Role = 1
	// RoleConsumer is the receiving end: Recv, TryRecv, Peek, Release.
	RoleConsumer Role = 2
)

func (r Role) String() string {
	switch r {
	case RoleProducer:
		return "producer"
	case RoleConsumer:
		return "consumer"
	}
	return fmt.Sprintf("Role(%d)", uint8(r))
}

// Errors returned by ring operations; test with errors.Is.
var (
	// ErrClosed: this end was closed, or the peer closed its end (a
	// consumer first receives everything sent before the close).
	// errors.Is(ErrClosed, knit.ErrClosed) is true as well, so code that
	// handles a closed knit ring handles a closed shm ring.
	ErrClosed error = closedError{}
	// ErrCorrupt: the header or an index or length in shared memory is
	// invalid. The ring stays broken: every later call returns it.
	ErrCorrupt = errors.New("shm: ring corrupt")
	// ErrPeerDead: the process at the other end exited while this end
	// was waiting for it.
	ErrPeerDead = errors.New("shm: peer process died")
	// ErrTooLarge: a message longer than MaxMessage.
	ErrTooLarge = errors.New("shm: message too large for the ring")
	// ErrShortBuffer: the buffer of Recv or TryRecv is smaller than the
	// next message, which stays in the ring; the call returns its length.
	ErrShortBuffer = errors.New("shm: buffer too small for the message")
	// ErrWrongSide: a producer method on a consumer end or the reverse,
	// or a call out of order (Commit without Reserve, Send while a
	// reservation is outstanding, an end already attached).
	ErrWrongSide = errors.New("shm: operation not valid on this end of the ring")
)

type closedError struct{}

func (closedError) Error() string        { return "shm: ring closed" }
func (closedError) Is(target error) bool { return target == knit.ErrClosed }

// Bits of Ring.state.
const (
	stateClosed = 1 << 0 // Close was called on this end
	stateGone   = 1 << 1 // the region is closing: no call may touch the mapping any more
	stateCall   = 1 << 2 // one call inside the mapping
)

// errGone is what a call on an end of a closed region returns.
var errGone = fmt.Errorf("%w: %w", ErrRegionClosed, ErrClosed)

// CreateRing lays out a new ring of capacity bytes at offset in region
// and returns its role end. offset must be a multiple of 128, and the ring
// takes RingSize(capacity) bytes; capacity must be a power of two in
// [MinCapacity, MaxCapacity]. The longest message is capacity-8 bytes,
// and a message of any length up to that fits whenever the ring holds
// no more than capacity minus the message's record (its length rounded
// up to 8, plus 8). The other end is taken with AttachRing, usually in
// another process.
//
// park says how the end's blocking calls wait (knit.Park{}: the
// default): they spin for park.Spin, then sleep. Spin reads as every knit
// budget (see knit.DefaultSpin): zero is knit.DefaultWorkerSpin where a
// default spins at all, knit.NoSpin sleeps at once. The sleep is on a
// process-shared futex word in the region, the only sleep another
// process can end (a build without one polls: see the package doc),
// whatever park.Backend says: Backend chooses where a goroutine sleeps
// within one process, and shm ignores it.
func CreateRing(region *Region, offset, capacity int, role Role, park knit.Park) (*Ring, error) {
	spin := ringSpin(park)
	if capacity < MinCapacity || capacity > MaxCapacity || bits.OnesCount64(uint64(capacity)) != 1 {
		return nil, fmt.Errorf("shm: CreateRing: capacity %d is not a power of two in [%d, %d]", capacity, MinCapacity, MaxCapacity)
	}
	if err := lockRegion(region); err != nil {
		return nil, fmt.Errorf("shm: CreateRing: %w", err)
	}
	defer region.mu.Unlock()
	ring, err := ringBytes(region, offset, RingSize(capacity), role)
	if err != nil {
		return nil, fmt.Errorf("shm: CreateRing: %w", err)
	}
	clear(ring[:headerSize])
	writeLayout(ring, ourLayout(uint32(capacity)))
	r := newRing(region, ring, uint32(capacity), role, spin)
	r.ownPid.Store(uint32(os.Getpid()))
	region.rings = append(region.rings, r)
	return r, nil
}

// AttachRing validates the ring at offset in region, laid out by
// CreateRing in this or another process, and returns its role end. Each
// end can be held by one Ring at a time: attaching an end that a live
// process holds fails with ErrWrongSide; an end whose holder has exited
// can be taken again. Validation failures wrap ErrCorrupt. park is as
// for CreateRing: each end has its own.
func AttachRing(region *Region, offset int, role Role, park knit.Park) (*Ring, error) {
	spin := ringSpin(park)
	if err := lockRegion(region); err != nil {
		return nil, fmt.Errorf("shm: AttachRing: %w", err)
	}
	defer region.mu.Unlock()
	ring, err := ringBytes(region, offset, headerSize, role)
	if err != nil {
		return nil, fmt.Errorf("shm: AttachRing: %w", err)
	}
	capacity, err := readLayout(ring, len(region.mem)-offset)
	if err != nil {
		return nil, fmt.Errorf("shm: AttachRing at offset %d: %w", offset, err)
	}
	ring = region.mem[offset : offset+RingSize(int(capacity))]
	r := newRing(region, ring, capacity, role, spin)
	me := uint32(os.Getpid())
	if err := r.takeEnd(me); err != nil {
		return nil, fmt.Errorf("shm: AttachRing: %w", err)
	}
	// Start from the indices as they are (both zero for a new ring),
	// checked like any other load from the peer.
	if role == RoleProducer {
		r.pos = r.tail.Load()
		r.peer = r.head.Load()
		err = r.checkInFlight(r.pos - r.peer)
	} else {
		r.pos = r.head.Load()
		r.peer = r.tail.Load()
		err = r.checkInFlight(r.peer - r.pos)
	}
	if err == nil && r.pos%recordAlign != 0 {
		err = fmt.Errorf("%w: own index %d is not 8-byte aligned", ErrCorrupt, r.pos)
	}
	if err != nil {
		r.ownPid.CompareAndSwap(me, 0)
		return nil, fmt.Errorf("shm: AttachRing: %w", err)
	}
	region.rings = append(region.rings, r)
	return r, nil
}

// ringSpin is the spin budget of an end's blocking calls, resolved from
// the Park that CreateRing or AttachRing was given.
func ringSpin(p knit.Park) time.Duration {
	return spinpolicy.Resolve(p.Spin, knit.DefaultWorkerSpin)
}

// takeEnd writes this process's pid into the end's slot: free (0), or
// held by a process that has exited. A holder that died mid-operation
// leaves its own index where it last published it, which is where the
// new holder starts: a reservation it never committed, or a message it
// peeked and never released, is simply not there (or delivered again).
func (r *Ring) takeEnd(me uint32) error {
	for range 8 {
		holder := r.ownPid.Load()
		if holder == 0 {
			if r.ownPid.CompareAndSwap(0, me) {
				return nil
			}
			continue
		}
		pid := int(int32(holder))
		if pid <= 0 || holder == me || !processGone(pid) {
			return fmt.Errorf("%w: the %v end is already held by pid %d", ErrWrongSide, r.role, pid)
		}
		if r.ownPid.CompareAndSwap(holder, me) {
			return nil
		}
	}
	return fmt.Errorf("%w: the %v end keeps changing hands", ErrWrongSide, r.role)
}

// processGone reports whether pid has certainly exited (a zombie counts).
func processGone(pid int) bool {
	w, err := watchProcess(pid)
	if err != nil {
		return errors.Is(err, errProcessGone)
	}
	defer w.close()
	return w.exited()
}

// lockRegion locks region.mu if the region is open: CreateRing and
// AttachRing write and read the mapping under the lock, so Close cannot
// unmap it under them, and register the new end before Close can miss it.
func lockRegion(region *Region) error {
	if region == nil {
		return errors.New("nil region")
	}
	region.mu.Lock()
	if region.closed {
		region.mu.Unlock()
		return ErrRegionClosed
	}
	return nil
}

// ringBytes checks the placement of a ring; region.mu is held.
func ringBytes(region *Region, offset, size int, role Role) ([]byte, error) {
	switch {
	case role != RoleProducer && role != RoleConsumer:
		return nil, fmt.Errorf("%w: role %v", ErrWrongSide, role)
	case offset < 0 || offset%lineSize != 0:
		return nil, fmt.Errorf("offset %d is not a non-negative multiple of %d", offset, lineSize)
	case offset > len(region.mem) || size > len(region.mem)-offset:
		return nil, fmt.Errorf("%d bytes at offset %d overrun the region (%d bytes)", size, offset, len(region.mem))
	}
	return region.mem[offset : offset+size], nil
}

func newRing(region *Region, ring []byte, capacity uint32, role Role, spin time.Duration) *Ring {
	r := &Ring{
		region:    region,
		ring:      ring[:headerSize:headerSize],
		data:      ring[headerSize : headerSize+2*int(capacity) : headerSize+2*int(capacity)],
		capacity:  capacity,
		mask:      capacity - 1,
		maxMsg:    capacity - recordHeader,
		role:      role,
		closedW:   word(ring, offClosed),
		tail:      word(ring, offTail),
		head:      word(ring, offHead),
		dataWait:  word(ring, offDataWaiting),
		dataWake:  word(ring, offDataWake),
		spaceWait: word(ring, offSpaceWaiting),
		spaceWake: word(ring, offSpaceWake),
		spin:      spin,
	}
	if role == RoleProducer {
		r.ownPid, r.peerPid = word(ring, offProdPid), word(ring, offConsPid)
	} else {
		r.ownPid, r.peerPid = word(ring, offConsPid), word(ring, offProdPid)
	}
	return r
}

// enter counts a call into the mapping. It fails with errGone, counting
// nothing, once the region is closing.
func (r *Ring) enter() error {
	if r.state.Add(stateCall)&stateGone != 0 {
		r.leave()
		return errGone
	}
	return nil
}

// leave counts a call out of the mapping; the last one out of a ring of
// a closing region tells Region.Close.
func (r *Ring) leave() {
	if s := r.state.Add(^uint32(stateCall - 1)); s&stateGone != 0 && s < stateCall {
		select {
		case r.region.drained <- struct{}{}:
		default:
		}
	}
}

// Role reports which end r is.
func (r *Ring) Role() Role { return r.role }

// CapBytes is the ring's data capacity in bytes (the capacity given to
// CreateRing). A ring of messages of any length cannot count them as
// knit's rings count items: hence bytes, and the name that says so.
func (r *Ring) CapBytes() int { return int(r.capacity) }

// MaxMessage is the longest message the ring carries: CapBytes() - 8.
func (r *Ring) MaxMessage() int { return int(r.maxMsg) }

// LenBytes is the number of bytes in flight (record headers and padding
// included) as this end sees it now; 0 if the indices are invalid or the
// region is closed.
func (r *Ring) LenBytes() int {
	if err := r.enter(); err != nil {
		return 0
	}
	n := r.tail.Load() - r.head.Load()
	r.leave()
	if n > r.capacity {
		return 0
	}
	return int(n)
}

// PeerPid is the process id the other end wrote when it took its end,
// or 0 while nobody holds it (or once the region is closed).
func (r *Ring) PeerPid() int {
	if err := r.enter(); err != nil {
		return 0
	}
	defer r.leave()
	return int(int32(r.peerPid.Load()))
}

// setPeer names the peer's pid when this process started it, so a peer
// that dies before it attaches is still noticed.
func (r *Ring) setPeer(pid int) {
	r.watchMu.Lock()
	r.watchPid = pid
	r.watchMu.Unlock()
}

// peerExited tells the end that its peer's process has exited (Workers'
// reaper knows before any liveness poll): a call sleeping on it wakes
// and returns ErrPeerDead, having first received what the peer sent.
func (r *Ring) peerExited() {
	r.peerGone.Store(true)
	if err := r.enter(); err != nil {
		return
	}
	r.ring1(r.dataWake)
	r.ring1(r.spaceWake)
	r.leave()
}

// Close closes this end: later calls on it return ErrClosed, and the peer
// sees the close (the consumer after draining what was sent). A pending
// reservation is dropped. Close wakes any goroutine blocked on either
// end, here or in the peer, and is idempotent.
func (r *Ring) Close() error {
	if r.state.Or(stateClosed)&stateClosed != 0 {
		return nil
	}
	if err := r.enter(); err != nil {
		return nil // Region.Close closed the end in shared memory
	}
	r.markClosed()
	r.leave()
	return nil
}

// markClosed sets this end's bit in the shared closed word and rings
// both bells: a sleeper re-checks the closed word (and this end's state)
// before it sleeps, and the bump makes a sleep that started from the old
// bell value return at once. The caller is inside the mapping.
func (r *Ring) markClosed() {
	bit := uint32(closedProducer)
	if r.role == RoleConsumer {
		bit = closedConsumer
	}
	r.closedW.Or(bit)
	r.ring1(r.dataWake)
	r.ring1(r.spaceWake)
	r.watchMu.Lock()
	if r.watch != nil {
		r.watch.close()
		r.watch = nil
	}
	r.watchMu.Unlock()
}
