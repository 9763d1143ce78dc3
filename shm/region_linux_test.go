package shm

import (
	"testing"

	"golang.org/x/sys/unix"
)

// A region's memfd is sealed: no process holding it can shrink it under
// another's mapping.
func TestRegionSealed(t *testing.T) {
	r := newRegion(t, 8192)
	fd := int(r.File().Fd())
	if err := unix.Ftruncate(fd, 4096); err != unix.EPERM {
		t.Errorf("shrinking the memfd: %v, want EPERM", err)
	}
	if err := unix.Ftruncate(fd, 1<<20); err != unix.EPERM {
		t.Errorf("growing the memfd: %v, want EPERM", err)
	}
	seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil || seals&regionSeals != regionSeals {
		t.Errorf("seals %#x, %v; want %#x", seals, err, regionSeals)
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("fd flags %#x, %v: want close-on-exec", flags, err)
	}
}
