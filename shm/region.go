package shm

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
)

// A Region is a block of memory mapped MAP_SHARED from a file descriptor
// that can be handed to a child process (exec.Cmd.ExtraFiles) and mapped
// there with OpenFile or OpenFD. Both processes then see the same bytes.
//
// On Linux the descriptor is a memfd (memfd_create, MFD_CLOEXEC) sealed
// against growing and shrinking, so neither process can truncate the
// memory under the other's mapping. On macOS it is a 0600 file created in
// a fresh 0700 directory under os.TempDir and unlinked, with its
// directory, as soon as it is mapped: nothing is left on disk, and only
// processes holding the descriptor can reach it. Other systems return an
// error wrapping errors.ErrUnsupported.
type Region struct {
	mem  []byte   // the mapping; nil once closed
	file *os.File // the descriptor; owned by the Region

	mu     sync.Mutex // guards closed and rings; held while a ring is laid out or attached
	closed bool
	rings  []*Ring // every end made on this region, for Close to stop

	// drained is made by Close before it marks the rings gone: a call
	// that leaves a gone ring with no other call inside it sends on it
	// (without blocking; one token is enough, Close re-checks).
	drained chan struct{}
}

// Errors about regions. Every failure of Create, OpenFile and OpenFD
// wraps one of these or an *os.SyscallError naming the call that failed.
var (
	// ErrBadSize: a size outside (0, MaxRegionSize].
	ErrBadSize = errors.New("shm: bad region size")
	// ErrNotRegion: a descriptor that is not a region Create made (not a
	// sealed memfd on Linux, not a regular file elsewhere, empty, or
	// opened without read and write access).
	ErrNotRegion = errors.New("shm: descriptor is not a shared-memory region")
	// ErrRegionClosed: the Region was closed.
	ErrRegionClosed = errors.New("shm: region closed")
)

// MaxRegionSize bounds Create's size: 1 TiB of address space on 64-bit
// systems, 1 GiB on 32-bit ones.
const MaxRegionSize = 1 << (30 + 10*(^uint(0)>>63))

// Create makes a new region of at least size bytes (rounded up to the page
// size; Len reports the result), zero-filled. name labels it for
// debugging (/proc/PID/fd on Linux); any characters outside [A-Za-z0-9._-]
// are replaced and it is cut to 64 bytes.
func Create(name string, size int) (*Region, error) {
	if size <= 0 || size > MaxRegionSize {
		return nil, fmt.Errorf("%w: %d (want 1 to %d bytes)", ErrBadSize, size, MaxRegionSize)
	}
	page := os.Getpagesize()
	size = (size + page - 1) &^ (page - 1)
	return create(cleanName(name), size)
}

// OpenFile maps the region behind f, a descriptor made by Create in this
// or another process (typically inherited through exec.Cmd.ExtraFiles).
// On success the Region owns f and closes it on Close; on failure f is
// left open, the caller's to close.
func OpenFile(f *os.File) (*Region, error) {
	if f == nil {
		return nil, fmt.Errorf("%w: nil file", ErrNotRegion)
	}
	mem, err := openFD(int(f.Fd()))
	if err != nil {
		return nil, err
	}
	return &Region{mem: mem, file: f}, nil
}

// OpenFD is OpenFile for a raw descriptor number, such as 3 in a child
// started with one ExtraFiles entry. On failure the descriptor is left
// open.
func OpenFD(fd uintptr) (*Region, error) {
	if int(fd) < 0 || uintptr(int(fd)) != fd {
		return nil, fmt.Errorf("%w: fd %d out of range", ErrNotRegion, fd)
	}
	mem, err := openFD(int(fd))
	if err != nil {
		return nil, err
	}
	return &Region{mem: mem, file: os.NewFile(fd, "shm-region")}, nil
}

// Bytes returns the mapping. It is valid until Close; touching it after
// Close faults.
func (r *Region) Bytes() []byte { return r.mem }

// Len is the size of the mapping in bytes.
func (r *Region) Len() int { return len(r.mem) }

// File returns the region's descriptor, to put in exec.Cmd.ExtraFiles. It
// is close-on-exec in this process (ExtraFiles clears that in the child)
// and stays owned by the Region.
func (r *Region) File() *os.File { return r.file }

// Close closes every ring end made on the region (CreateRing,
// AttachRing) as Ring.Close does, so the peers see the close, then unmaps
// the region and closes its descriptor. Calls blocked on those ends, or
// running in other goroutines, return ErrClosed, or an error matching
// both ErrRegionClosed and ErrClosed once the region is gone; the memory
// is unmapped only after every call has left it. Slices that Reserve,
// Peek or Bytes returned are not calls: a goroutine working in one must
// be done with it before Close starts, since touching it afterwards
// faults. The memory itself lives on while another process maps it.
// Close is idempotent.
func (r *Region) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	rings := r.rings
	r.rings = nil
	r.drained = make(chan struct{}, 1)
	r.mu.Unlock()

	// Close each end as Ring.Close would, here rather than through it:
	// this goroutine owns the mapping until it unmaps, so it needs no
	// in-flight accounting, and it marks the end closed in shared memory
	// even if a racing Ring.Close won the local flag and then found the
	// region gone. The bells wake every blocked call; each re-checks its
	// ring, finds it closed and leaves.
	for _, g := range rings {
		g.state.Or(stateClosed)
		g.markClosed()
	}
	// From here on no call enters shared memory (enter fails on
	// stateGone). Wait for those inside to leave: each leave that finds
	// its ring gone and empty sends a token, and the count is re-read
	// after every token, so the last leave cannot be missed.
	for _, g := range rings {
		g.state.Or(stateGone)
	}
	for _, g := range rings {
		for g.state.Load() >= stateCall {
			<-r.drained
		}
	}

	var err error
	if r.mem != nil {
		err = unmap(r.mem)
		r.mem = nil
	}
	if r.file != nil {
		if cerr := r.file.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// cleanName keeps a region's label to a safe, short set of characters: it
// becomes a memfd name or a file name.
func cleanName(name string) string {
	if name == "" {
		name = "knit"
	}
	if len(name) > 64 {
		name = name[:64]
	}
	return strings.Map(func(c rune) rune {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
			return c
		}
		return '_'
	}, name)
}
