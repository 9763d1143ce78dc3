package shm

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// A Ring is one end of a single-producer single-consumer queue of byte
// messages in a Region: the producer end in one process (or goroutine),
// the consumer end in another. CreateRing lays out a new ring and takes
// one end; AttachRing validates an existing one and takes the other.
//
// One goroutine at a time may use an end's sending (or receiving)
// methods; Close, Len and the accessors may be called from any goroutine,
// and Close wakes a goroutine blocked on the same end.
type Ring struct {
	// Fixed at creation.
	region   *Region
	ring     []byte // the header lines: ring[0:headerSize]
	data     []byte // the data area: exactly capacity bytes
	capacity uint32 // power of two in [MinCapacity, MaxCapacity], from this side's one read of the header
	mask     uint32 // capacity - 1
	maxMsg   uint32 // capacity - recordHeader
	role     Role

	// Shared words (see layout.go), resolved once.
	closedW              *atomic.Uint32
	ownPid, peerPid      *atomic.Uint32
	tail, head           *atomic.Uint32
	dataWait, dataBell   *atomic.Uint32
	spaceWait, spaceBell *atomic.Uint32

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
	// resv: a Reserve is outstanding; its payload starts at data offset
	// resvAt (after a skip record of resvSkip bytes, if any) and may
	// hold up to resvMax bytes.
	resv             bool
	resvAt, resvSkip uint32
	resvMax          int
	peeked           uint32 // bytes of the record the last Peek returned, for Release; 0: none
	err              error  // latched ErrCorrupt: a ring the peer broke stays broken
	spin             time.Duration

	// Any goroutine.
	closed    atomic.Bool
	watchMu   sync.Mutex
	watch     *procWatch // the peer's liveness watch, opened at the first timed-out sleep
	watchPid  int        // the peer's pid from setPeer (preferred to the header's), or the pid found dead
	watchGone bool       // the peer was found dead
}

// Role says which end of a ring a Ring value is.
type Role uint8

const (
	// Producer is the sending end: Send, TrySend, Reserve, Commit.
	Producer Role = 1
	// Consumer is the receiving end: Recv, TryRecv, Peek, Release.
	Consumer Role = 2
)

func (r Role) String() string {
	switch r {
	case Producer:
		return "producer"
	case Consumer:
		return "consumer"
	}
	return fmt.Sprintf("Role(%d)", uint8(r))
}

// Errors returned by ring operations; test with errors.Is.
var (
	// ErrClosed: this end was closed, or the peer closed its end (a
	// consumer first receives everything sent before the close).
	ErrClosed = errors.New("shm: ring closed")
	// ErrCorrupt: the header or an index or length in shared memory is
	// invalid. The ring stays broken: every later call returns it.
	ErrCorrupt = errors.New("shm: ring corrupt")
	// ErrPeerDead: the process at the other end exited while this end
	// was waiting for it.
	ErrPeerDead = errors.New("shm: peer process died")
	// ErrTooLarge: a message longer than MaxMessage.
	ErrTooLarge = errors.New("shm: message too large for the ring")
	// ErrShortBuffer: Recv's buffer is smaller than the next message,
	// which stays in the ring; Recv returns its length.
	ErrShortBuffer = errors.New("shm: buffer too small for the message")
	// ErrWrongSide: a producer method on a consumer end or the reverse,
	// or a call out of order (Commit without Reserve, Send while a
	// reservation is outstanding, an end already attached).
	ErrWrongSide = errors.New("shm: operation not valid on this end of the ring")
)

// DefaultSpin is how long a blocking call spins before it sleeps on a
// machine with cores to spare: Knitting's budget for a single worker. A
// cross-process wake costs a futex wake and a wait, about 5 µs on bare
// metal and 12 µs on a small VM, so a reply within 50 µs is caught
// without either.
const DefaultSpin = 50 * time.Microsecond

// defaultSpin is a new Ring's spin budget: DefaultSpin with 4 or more
// CPUs, none below. Measured on a 2-vCPU VM (64 B and 64 KiB cross-process
// round trips, p50 over 2000, same run): spinning 50 µs gave 117-123 µs,
// sleeping at once 12-16 µs. With two processes on two cores, the spinner
// holds the core its peer needs to produce the reply (and PAUSE loops
// invite the hypervisor to deschedule the vCPU), so the spin never pays.
// The 4-CPU threshold is a judgement, not a measurement: no larger box
// was available to find the crossover.
var defaultSpin = func() time.Duration {
	if runtime.NumCPU() >= 4 {
		return DefaultSpin
	}
	return 0
}()

// CreateRing lays out a new ring of capacity data bytes at offset in
// region and returns its role end. offset must be a multiple of 128, and
// the ring takes RingSize(capacity) bytes; capacity must be a power of
// two in [MinCapacity, MaxCapacity]. The longest message is capacity-8
// bytes. The other end is taken with AttachRing, usually in another
// process.
func CreateRing(region *Region, offset, capacity int, role Role) (*Ring, error) {
	if capacity < MinCapacity || capacity > MaxCapacity || bits.OnesCount64(uint64(capacity)) != 1 {
		return nil, fmt.Errorf("shm: CreateRing: capacity %d is not a power of two in [%d, %d]", capacity, MinCapacity, MaxCapacity)
	}
	ring, err := ringBytes(region, offset, RingSize(capacity), role)
	if err != nil {
		return nil, fmt.Errorf("shm: CreateRing: %w", err)
	}
	clear(ring[:headerSize])
	writeLayout(ring, ourLayout(uint32(capacity)))
	r := newRing(region, ring, uint32(capacity), role)
	r.ownPid.Store(uint32(os.Getpid()))
	return r, nil
}

// AttachRing validates the ring at offset in region, laid out by
// CreateRing in this or another process, and returns its role end. Each
// end can be held by one Ring: attaching an end already taken fails with
// ErrWrongSide. Validation failures wrap ErrCorrupt.
func AttachRing(region *Region, offset int, role Role) (*Ring, error) {
	ring, err := ringBytes(region, offset, headerSize, role)
	if err != nil {
		return nil, fmt.Errorf("shm: AttachRing: %w", err)
	}
	capacity, err := readLayout(ring, region.Len()-offset)
	if err != nil {
		return nil, fmt.Errorf("shm: AttachRing at offset %d: %w", offset, err)
	}
	ring = region.mem[offset : offset+RingSize(int(capacity))]
	r := newRing(region, ring, capacity, role)
	me := uint32(os.Getpid())
	if !r.ownPid.CompareAndSwap(0, me) {
		return nil, fmt.Errorf("shm: AttachRing: %w: the %v end is already held by pid %d", ErrWrongSide, role, r.ownPid.Load())
	}
	// Start from the indices as they are (both zero for a new ring),
	// checked like any other load from the peer.
	if role == Producer {
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
	return r, nil
}

func ringBytes(region *Region, offset, size int, role Role) ([]byte, error) {
	switch {
	case role != Producer && role != Consumer:
		return nil, fmt.Errorf("%w: role %v", ErrWrongSide, role)
	case region == nil:
		return nil, errors.New("nil region")
	case region.isClosed():
		return nil, ErrRegionClosed
	case offset < 0 || offset%lineSize != 0:
		return nil, fmt.Errorf("offset %d is not a non-negative multiple of %d", offset, lineSize)
	case offset > region.Len() || size > region.Len()-offset:
		return nil, fmt.Errorf("%d bytes at offset %d overrun the region (%d bytes)", size, offset, region.Len())
	}
	return region.mem[offset : offset+size], nil
}

func newRing(region *Region, ring []byte, capacity uint32, role Role) *Ring {
	r := &Ring{
		region:    region,
		ring:      ring[:headerSize:headerSize],
		data:      ring[headerSize : headerSize+int(capacity) : headerSize+int(capacity)],
		capacity:  capacity,
		mask:      capacity - 1,
		maxMsg:    capacity - recordHeader,
		role:      role,
		closedW:   word(ring, offClosed),
		tail:      word(ring, offTail),
		head:      word(ring, offHead),
		dataWait:  word(ring, offDataWaiting),
		dataBell:  word(ring, offDataBell),
		spaceWait: word(ring, offSpaceWaiting),
		spaceBell: word(ring, offSpaceBell),
		spin:      defaultSpin,
	}
	if role == Producer {
		r.ownPid, r.peerPid = word(ring, offProdPid), word(ring, offConsPid)
	} else {
		r.ownPid, r.peerPid = word(ring, offConsPid), word(ring, offProdPid)
	}
	return r
}

// Role reports which end r is.
func (r *Ring) Role() Role { return r.role }

// Cap is the ring's data capacity in bytes.
func (r *Ring) Cap() int { return int(r.capacity) }

// MaxMessage is the longest message the ring carries: Cap() - 8.
func (r *Ring) MaxMessage() int { return int(r.maxMsg) }

// Len is the number of bytes in flight (record headers, padding and skip
// records included) as this end sees it now; 0 if the indices are
// invalid.
func (r *Ring) Len() int {
	n := r.tail.Load() - r.head.Load()
	if n > r.capacity {
		return 0
	}
	return int(n)
}

// SetSpin sets how long the blocking calls spin before they sleep;
// d <= 0 sleeps at once. The default is DefaultSpin on machines with 4
// or more CPUs, 0 below (see defaultSpin). Call it before the
// end is used, from the goroutine that uses it.
func (r *Ring) SetSpin(d time.Duration) { r.spin = max(d, 0) }

// PeerPid is the process id the other end wrote when it took its end,
// or 0 while nobody holds it.
func (r *Ring) PeerPid() int { return int(int32(r.peerPid.Load())) }

// setPeer names the peer's pid when this process started it, so a peer
// that dies before it attaches is still noticed.
func (r *Ring) setPeer(pid int) {
	r.watchMu.Lock()
	r.watchPid = pid
	r.watchMu.Unlock()
}

// Close closes this end: later calls on it return ErrClosed, and the peer
// sees the close (the consumer after draining what was sent). A pending
// reservation is dropped. Close wakes any goroutine blocked on either
// end, here or in the peer, and is idempotent.
func (r *Ring) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	bit := uint32(closedProducer)
	if r.role == Consumer {
		bit = closedConsumer
	}
	r.closedW.Or(bit)
	// Ring both bells unconditionally: a sleeper re-checks the closed
	// word before it sleeps, and the bump makes a sleep that started
	// from the old bell value return at once.
	r.ring1(r.dataBell)
	r.ring1(r.spaceBell)
	r.watchMu.Lock()
	if r.watch != nil {
		r.watch.close()
		r.watch = nil
	}
	r.watchMu.Unlock()
	return nil
}
